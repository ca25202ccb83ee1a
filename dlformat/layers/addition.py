"""MATLAB's ``additionLayer``: the element-wise sum of several inputs of one format."""

from __future__ import annotations

from .. import _validate
from .._dlarray import DLArray, require_formatted
from .._errors import DLFormatError
from ._base import Layer, _port_names, matlab_constructor
from ._properties import Property

__all__ = ["AdditionLayer", "additionLayer"]


def _at_least_two(name: str, value: object) -> int:
    number = _validate.positive_integer(name, value)
    if number < 2:
        raise DLFormatError(f"{name} must be an integer >= 2; got {number}")
    return number


class AdditionLayer(Layer):
    """Adds ``NumInputs`` inputs element-wise.

    Every input must have the same format; sizes must match or be 1 (broadcast), as MATLAB's
    dlarray arithmetic allows. Inputs are named ``in1``, ``in2``, ...

    Args:
        NumInputs: number of inputs (integer >= 2).
        Name: the layer name.

    Examples:
        >>> add = dlf.additionLayer(2, Name="add")
        >>> add.InputNames
        ('in1', 'in2')
    """

    default_name = "addition"
    NumInputs = Property(_at_least_two, positional=True, read_only=True, doc="Number of inputs.")

    def _check_properties(self) -> None:
        self._ports["in"] = _port_names("in", self.NumInputs)

    def predict(self, *inputs: DLArray) -> DLArray:
        if len(inputs) != self.NumInputs:
            raise DLFormatError(f"{self._caller()} takes {self.NumInputs} inputs; got {len(inputs)}")
        arrays = [require_formatted(X, self._caller) for X in inputs]
        formats = {X._fmt for X in arrays}
        if len(formats) > 1:
            listed = ", ".join(f'in{index} "{X._fmt}"' for index, X in enumerate(arrays, 1))
            raise DLFormatError(f"{self._caller()} needs inputs of one format; got {listed}")
        try:
            total = arrays[0]
            for X in arrays[1:]:
                total = total + X
        except (RuntimeError, DLFormatError):
            listed = ", ".join(
                f"in{index} {_validate.matlab_size(tuple(X.shape))}" for index, X in enumerate(arrays, 1)
            )
            raise DLFormatError(
                f'{self._caller()}: the "{arrays[0]._fmt}" inputs have sizes that neither match nor are 1: '
                f"{listed}"
            ) from None
        return total


additionLayer = matlab_constructor(AdditionLayer, "additionLayer")
