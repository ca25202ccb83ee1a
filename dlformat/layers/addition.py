"""MATLAB's combination layers: ``additionLayer`` and ``multiplicationLayer`` (element-wise, one
format), ``concatenationLayer`` and ``depthConcatenationLayer`` (joined along one dimension)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import reduce
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray, require_formatted
from .._errors import DLFormatError
from ..functional._common import floating_data
from ._base import Layer, _port_names, matlab_constructor
from ._properties import Property

__all__ = [
    "AdditionLayer",
    "ConcatenationLayer",
    "DepthConcatenationLayer",
    "MultiplicationLayer",
    "additionLayer",
    "concatenationLayer",
    "depthConcatenationLayer",
    "multiplicationLayer",
]


def _at_least_two(name: str, value: object) -> int:
    number = _validate.positive_integer(name, value)
    if number < 2:
        raise DLFormatError(f"{name} must be an integer >= 2; got {number}")
    return number


def _listed_sizes(arrays: list[DLArray]) -> str:
    sizes = (_validate.matlab_size(tuple(X.shape)) for X in arrays)
    return ", ".join(f"in{index} {size}" for index, size in enumerate(sizes, 1))


def _number_of_inputs() -> Property:
    return Property(_at_least_two, positional=True, read_only=True, doc="Number of inputs (>= 2).")


class _CombinationLayer(Layer):
    """``NumInputs`` inputs named ``in1``, ``in2``, ... of one format, combined into one output.
    Each subclass declares ``NumInputs`` (:func:`_number_of_inputs`) where MATLAB's constructor
    takes it."""

    def _check_properties(self) -> None:
        self._ports["in"] = _port_names("in", self.NumInputs)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        """MATLAB's display lists ``InputNames`` after ``NumInputs`` (the additionLayer page:
        ``InputNames: {'in1'  'in2'}``; ``{1×1000000 cell}`` when the names do not fit a line)."""
        groups = super()._display_groups()
        heading, names = groups[0]
        at = names.index("NumInputs") + 1
        return [(heading, [*names[:at], "InputNames", *names[at:]]), *groups[1:]]

    def _inputs(self, inputs: tuple[DLArray, ...]) -> list[DLArray]:
        """The inputs, formatted, of one format, floating; errors name each input."""
        if len(inputs) != self.NumInputs:
            raise DLFormatError(f"{self._caller()} takes {self.NumInputs} inputs; got {len(inputs)}")
        arrays = [require_formatted(X, self._caller) for X in inputs]
        formats = {X._fmt for X in arrays}
        if len(formats) > 1:
            listed = ", ".join(f'in{index} "{X._fmt}"' for index, X in enumerate(arrays, 1))
            raise DLFormatError(f"{self._caller()} needs inputs of one format; got {listed}")
        return [DLArray._wrap(floating_data(X._data, self._caller()), X._fmt) for X in arrays]


class _ElementwiseLayer(_CombinationLayer):
    """Combines its inputs element by element; sizes must match or be 1 (broadcast), as MATLAB's
    dlarray arithmetic allows."""

    combine: Callable[[Any, Any], Any] = staticmethod(operator.add)
    NumInputs = _number_of_inputs()

    def predict(self, *inputs: DLArray) -> DLArray:
        arrays = self._inputs(inputs)
        try:
            return reduce(self.combine, arrays)
        except (RuntimeError, DLFormatError):
            raise DLFormatError(
                f'{self._caller()}: the "{arrays[0]._fmt}" inputs have sizes that neither match nor are 1: '
                f"{_listed_sizes(arrays)}"
            ) from None


class AdditionLayer(_ElementwiseLayer):
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
    combine = staticmethod(operator.add)


class MultiplicationLayer(_ElementwiseLayer):
    """Multiplies ``NumInputs`` inputs element-wise (MATLAB's ``multiplicationLayer``).

    Every input must have the same format; sizes must match or be 1 (broadcast). Inputs are
    named ``in1``, ``in2``, ...

    Args:
        NumInputs: number of inputs (integer >= 2).
        Name: the layer name.

    Examples:
        >>> layer = dlf.multiplicationLayer(2)
        >>> X = dlf.dlarray(torch.full((3, 2), 2.0), "CB")
        >>> dlf.extractdata(layer(X, X))[0].tolist()
        [4.0, 4.0]
    """

    default_name = "multiplication"
    combine = staticmethod(operator.mul)


class _JoiningLayer(_CombinationLayer):
    """Concatenates its inputs along one dimension; every other size must match."""

    def _axis(self, X: DLArray) -> int:
        raise NotImplementedError

    def predict(self, *inputs: DLArray) -> DLArray:
        arrays = self._inputs(inputs)
        axis = self._axis(arrays[0])
        others = {tuple(size for index, size in enumerate(X.shape) if index != axis) for X in arrays}
        if len(others) > 1:
            raise DLFormatError(
                f'{self._caller()}: the "{arrays[0]._fmt}" inputs must have the same size in every '
                f"dimension but {self._joined(arrays[0])}; got {_listed_sizes(arrays)}"
            )
        return DLArray._wrap(torch.cat([X._data for X in arrays], axis), arrays[0]._fmt)

    def _joined(self, X: DLArray) -> str:
        axis = self._axis(X)
        return f'dimension {axis + 1} ("{X._fmt[axis]}")'


class ConcatenationLayer(_JoiningLayer):
    """Concatenates ``NumInputs`` inputs along dimension ``Dim`` (MATLAB's ``concatenationLayer``).

    ``Dim`` counts from 1 over the dimensions of the input's format, in MATLAB's order (``S``
    first, then ``C``, ``B``, ``T``): for ``"SSCB"`` data, 1 and 2 are the spatial dimensions and
    3 the channels; for ``"CBT"`` data 1 is the channels. Every input must have the same format
    and the same size in every other dimension. Inputs are named ``in1``, ``in2``, ...

    Args:
        Dim: the concatenation dimension (positive integer, or ``finddim``'s one-number result).
        NumInputs: number of inputs (integer >= 2).
        Name: the layer name.

    Examples:
        >>> concat = dlf.concatenationLayer(3, 2, Name="concat")
        >>> X = dlf.dlarray(torch.ones(4, 5, 3, 2), "SSCB")
        >>> tuple(concat(X, X).shape)
        (4, 5, 6, 2)
    """

    default_name = "concat"
    Dim = Property(  # finddim's one-number result is taken too, as MATLAB's 1×1 is a scalar
        _validate.dimension_number, positional=True, read_only=True, doc="Concatenation dimension."
    )
    NumInputs = _number_of_inputs()  # after Dim, as in MATLAB's concatenationLayer(dim, numInputs)

    def _axis(self, X: DLArray) -> int:
        if self.Dim > len(X._fmt):
            raise DLFormatError(
                f'{self._caller()} has Dim {self.Dim}; the "{X._fmt}" inputs have {len(X._fmt)} '
                "dimensions (Dim counts them from 1 in the format's order)"
            )
        return int(self.Dim) - 1


class DepthConcatenationLayer(_JoiningLayer):
    """Concatenates ``NumInputs`` inputs along the channel dimension ``C`` (MATLAB's
    ``depthConcatenationLayer``); every other size must match. Inputs are named ``in1``, ...

    Args:
        NumInputs: number of inputs (integer >= 2).
        Name: the layer name.

    Examples:
        >>> X, Z = dlf.dlarray(torch.ones(4, 5, 3, 2), "SSCB"), dlf.dlarray(torch.ones(4, 5, 2, 2), "SSCB")
        >>> tuple(dlf.depthConcatenationLayer(2)(X, Z).shape)
        (4, 5, 5, 2)
    """

    default_name = "depthcat"
    NumInputs = _number_of_inputs()

    def _axis(self, X: DLArray) -> int:
        if "C" not in X._fmt:
            raise DLFormatError(f'{self._caller()} needs inputs with a "C" dimension; got format "{X._fmt}"')
        return X._fmt.index("C")


additionLayer = matlab_constructor(AdditionLayer, "additionLayer")
multiplicationLayer = matlab_constructor(MultiplicationLayer, "multiplicationLayer")
concatenationLayer = matlab_constructor(ConcatenationLayer, "concatenationLayer")
depthConcatenationLayer = matlab_constructor(DepthConcatenationLayer, "depthConcatenationLayer")
