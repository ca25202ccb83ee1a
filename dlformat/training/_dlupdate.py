"""MATLAB's ``dlupdate``: apply a function to every learnable parameter (and matching arrays)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..networks import DLNetwork
from . import _parameters

__all__ = ["dlupdate"]


def dlupdate(fun: Callable[..., Any], net_or_params: Any, *more: Any) -> Any:
    """MATLAB's ``netUpdated = dlupdate(fun, net)``, ``[params, X1..Xm] = dlupdate(fun, params, A1..An)``.

    ``fun`` is called once per learnable with the parameter and the matching value of each
    ``A`` (arranged as the parameters are: same containers, or Learnables tables with the same
    rows for a network). It returns the new value, or a tuple whose first element is the new value
    and whose others are extra outputs, each collected into a container like the parameters.

    For a network, the new values are written into its learnables in place and the network is
    returned; any other container comes back as a new container (the values passed in are not
    changed), as MATLAB's value semantics have it.

    Examples:
        >>> params = {"w": dlf.dlarray(torch.ones(2, dtype=torch.float64), "C")}
        >>> grads = {"w": dlf.dlarray(torch.tensor([0.5, -0.5], dtype=torch.float64), "C")}
        >>> grads = dlf.dlupdate(lambda g, w: g + 0.1 * w, grads, params)  # L2 regularization
        >>> dlf.extractdata(grads["w"]).tolist()
        [0.6, -0.4]
    """
    if not callable(fun):
        raise DLFormatError(f"dlupdate needs a function as its first argument; got {_validate.describe(fun)}")
    if isinstance(net_or_params, DLNetwork):
        keys, leaves, _ = _parameters.network_rows(net_or_params)
        others = [
            _parameters.matched("dlupdate", f"argument {index}", value, keys)
            for index, value in enumerate(more, 3)
        ]
        structure = None
    else:
        leaves, structure = _parameters.flatten("dlupdate", "the parameters", net_or_params)
        others = []
        for index, value in enumerate(more, 3):
            values, arrangement = _parameters.flatten("dlupdate", f"argument {index}", value)
            _parameters.same_structure(
                "dlupdate", f"argument {index}", structure, arrangement, "the parameters"
            )
            others.append(values)
    outputs: list[list[Any]] = []
    for position, leaf in enumerate(leaves):
        result = fun(leaf, *(values[position] for values in others))
        parts = result if isinstance(result, tuple) else (result,)
        if outputs and len(parts) != len(outputs):
            raise DLFormatError(
                f"dlupdate: the function returned {len(parts)} output(s) for one parameter and "
                f"{len(outputs)} for another; it must return the same number each time"
            )
        if not outputs:
            outputs = [[] for _ in parts]
        for collected, part in zip(outputs, parts, strict=True):
            collected.append(part)
    if not outputs:  # no learnables at all
        outputs = [[]]
    if structure is None:
        assert isinstance(net_or_params, DLNetwork)
        _write(net_or_params, keys, leaves, outputs[0])
        extras = [_parameters.network_table(keys, values) for values in outputs[1:]]
        return (net_or_params, *extras) if extras else net_or_params
    containers = [_parameters.rebuild(structure, values) for values in outputs]
    return containers[0] if len(containers) == 1 else tuple(containers)


def _write(net: DLNetwork, keys: list[tuple[str, str]], parameters: list[Any], values: list[Any]) -> None:
    """Copy ``values`` into the network's parameters (checked first: all or nothing)."""
    prepared = []
    for (layer, name), parameter, value in zip(keys, parameters, values, strict=True):
        data = value._data if isinstance(value, DLArray) else value
        if not isinstance(data, torch.Tensor) or tuple(data.shape) != tuple(parameter.shape):
            got = (
                _validate.describe(value)
                if not isinstance(data, torch.Tensor)
                else _validate.matlab_size(data.shape)
            )
            raise DLFormatError(
                f"dlupdate: the new value of {layer}/{name} must be an array of the parameter's size "
                f"{_validate.matlab_size(parameter.shape)}; got {got}"
            )
        prepared.append(data)
    with torch.no_grad():
        for parameter, data in zip(parameters, prepared, strict=True):
            parameter.copy_(data)
