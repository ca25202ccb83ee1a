"""MATLAB's ``functionLayer``: a Python callable as a layer."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .. import _validate
from .._errors import DLFormatError
from ._base import Layer, _port_names, checked_port_names, matlab_constructor
from ._properties import Property

__all__ = ["FunctionLayer", "functionLayer"]


def _callable(name: str, value: object) -> Callable[..., Any]:
    if not callable(value):
        raise DLFormatError(f"{name} must be a function (a callable); got {_validate.describe(value)}")
    return value


def _logical(name: str, value: object) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise DLFormatError(f"{name} must be true or false (1 or 0); got {_validate.describe(value)}")


def _optional_count(name: str, value: object) -> int | None:
    return None if value is None else _validate.positive_integer(name, value)


def _optional_names(name: str, value: object) -> tuple[str, ...] | None:
    return None if value is None else checked_port_names(name, value)


def _arity(function: Callable[..., Any]) -> int:
    """How many inputs ``function`` takes, as MATLAB reads ``nargin``: its positional parameters."""
    name = getattr(function, "__name__", type(function).__name__)
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        raise DLFormatError(
            f"functionLayer cannot read how many inputs {name} takes; give NumInputs"
        ) from None
    kinds = [parameter.kind for parameter in parameters]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        raise DLFormatError(f"functionLayer: {name} takes any number of inputs (*args); give NumInputs")
    count = sum(
        kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for kind in kinds
    )
    if count == 0:
        raise DLFormatError(f"functionLayer: {name} takes no inputs; a layer needs at least one")
    return count


class FunctionLayer(Layer):
    """MATLAB's ``functionLayer(fun)``: a layer that calls ``fun`` on its inputs.

    Args:
        PredictFcn: the function, ``Y = fun(X1, ..., Xn)`` (a tuple for several outputs).
        NumInputs: default: the number of ``fun``'s positional parameters, as MATLAB reads
            ``nargin``; required for ``*args`` functions.
        NumOutputs: default 1 (Python cannot ask a function how many values it returns).
        InputNames, OutputNames: default ``in``/``in1``, ``in2``, ... and ``out``/``out1``, ...
        Formattable: ``False`` (MATLAB's default): ``fun`` receives unformatted dlarrays (the
            data in the input's canonical layout) and its results get the first input's format;
            ``True``: formatted dlarrays in and out.
        Acceleratable: MATLAB's caching hint; recorded, no effect here (``torch.compile`` decides).
        Description: a one-line description.
        Name: the layer name.

    Examples:
        >>> layer = dlf.functionLayer(lambda X: X + 1, Name="plus1")
        >>> Y = layer(dlf.dlarray(torch.zeros(3, 2), "CB"))
        >>> layer.NumInputs, dlf.dims(Y), float(dlf.extractdata(Y)[0, 0])
        (1, 'CB', 1.0)
    """

    default_name = "layer"  # MATLAB's custom layers share this prefix (layer_1, layer_2, ...)
    matlab_type = "Function"

    PredictFcn = Property(_callable, positional=True, read_only=True, doc="The function the layer calls.")
    Formattable = Property(
        _logical, default=False, read_only=True, doc="Whether fun takes formatted dlarrays."
    )
    Acceleratable = Property(_logical, default=False, read_only=True, doc="MATLAB's caching hint.")
    NumInputs = Property(_optional_count, default=None, read_only=True, doc="Number of inputs.")
    NumOutputs = Property(_optional_count, default=None, read_only=True, doc="Number of outputs.")
    InputNames = Property(_optional_names, default=None, read_only=True, doc="Input names.")
    OutputNames = Property(_optional_names, default=None, read_only=True, doc="Output names.")
    Description = Property(_validate.text, default="", doc="A one-line description.")

    def _check_properties(self) -> None:
        for side, count_name, names_name, default in (
            ("in", "NumInputs", "InputNames", lambda: _arity(self.PredictFcn)),
            ("out", "NumOutputs", "OutputNames", lambda: 1),
        ):
            count, names = self._properties[count_name], self._properties[names_name]
            if names is not None and count is not None and len(names) != count:
                raise DLFormatError(
                    f"functionLayer {names_name} names {len(names)} ports; {count_name} is {count}"
                )
            count = count if count is not None else len(names) if names is not None else default()
            names = names if names is not None else _port_names(side, count)
            self._properties[count_name], self._properties[names_name] = count, names
            self._ports[side] = names

    def predict(self, *X: Any) -> Any:
        if len(X) != self.NumInputs:
            raise DLFormatError(f"{self._caller()} takes {self.NumInputs} inputs; got {len(X)}")
        result = self.PredictFcn(*X)
        if self.NumOutputs > 1 and (not isinstance(result, (tuple, list)) or len(result) != self.NumOutputs):
            raise DLFormatError(
                f"{self._caller()} has NumOutputs {self.NumOutputs}; its function must return a tuple of "
                f"{self.NumOutputs} values, got {_validate.describe(result)}"
            )
        return tuple(result) if self.NumOutputs > 1 else result


functionLayer = matlab_constructor(FunctionLayer, "functionLayer")
