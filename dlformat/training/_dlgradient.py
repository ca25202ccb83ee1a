"""MATLAB's ``dlgradient``: gradients of a traced scalar, in the containers of the variables."""

from __future__ import annotations

from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from . import _parameters
from ._dlfeval import inside_dlfeval

__all__ = ["dlgradient"]


def _loss_tensor(loss: Any) -> torch.Tensor:
    data = loss._data if isinstance(loss, DLArray) else loss
    if not isinstance(data, torch.Tensor):
        raise DLFormatError(
            f"dlgradient needs a dlarray scalar to differentiate; got {_validate.describe(loss)}"
        )
    if data.numel() != 1:
        shown = loss._sizes() if isinstance(loss, DLArray) else _validate.matlab_size(tuple(data.shape))
        raise DLFormatError(
            f"dlgradient: the value to differentiate must be a scalar (one element), as a loss is; got "
            f"{shown} ({data.numel()} elements). Reduce it first, e.g. with a loss function"
        )
    if not data.is_floating_point():
        raise DLFormatError(
            f"dlgradient: the value to differentiate must be real floating; got dtype {data.dtype}"
        )
    if not data.requires_grad:
        raise DLFormatError(
            "dlgradient: the value to differentiate is not traced: it does not depend on any traced "
            "dlarray. Compute it inside the function dlfeval evaluates, from the dlarrays passed to "
            "dlfeval or from a network's learnables"
        )
    return data.reshape(())


@matlab_function
def dlgradient(loss: Any, *wrt: Any, RetainData: bool = False, EnableHigherDerivatives: bool = False) -> Any:
    """MATLAB's ``[dydx1, ..., dydxk] = dlgradient(y, x1, ..., xk)``, inside :func:`dlfeval`.

    Each ``x`` is a dlarray (or tensor), or a tuple, list, dict or Learnables table of them
    (``net.Learnables``); its gradient comes back in the same container, dlarrays with their
    format, table rows with the same ``Layer`` and ``Parameter``. A variable ``y`` does not depend
    on gets zeros, as in MATLAB. One ``x`` returns its gradient, several a tuple.

    Args:
        RetainData: keep the trace so that ``dlgradient`` can be called again on it (torch's
            ``retain_graph``).
        EnableHigherDerivatives: trace the gradient computation itself, for gradients of
            gradients (torch's ``create_graph``; implies ``RetainData``).
    """
    if not inside_dlfeval():
        raise DLFormatError(
            "dlgradient must be called inside a function evaluated by dlfeval, as in MATLAB: "
            "[loss, gradients] = dlf.dlfeval(modelLoss, net, X, T)"
        )
    retain = _validate_flag("RetainData", RetainData)
    higher = _validate_flag("EnableHigherDerivatives", EnableHigherDerivatives)
    target = _loss_tensor(loss)
    if not wrt:
        raise DLFormatError(
            "dlgradient needs at least one variable to differentiate with respect to, e.g. "
            "dlgradient(loss, net.Learnables)"
        )
    groups = []
    tensors: list[torch.Tensor] = []
    for position, variable in enumerate(wrt, 2):
        leaves, structure = _parameters.flatten("dlgradient", f"argument {position}", variable)
        for index, leaf in enumerate(leaves):
            data = _parameters.as_tensor(leaf)
            if not data.is_floating_point():
                raise DLFormatError(
                    f"dlgradient: argument {position} {structure.where(index)} is not floating (dtype "
                    f"{data.dtype}); gradients exist for floating data only"
                )
            if not data.requires_grad and not isinstance(data, torch.nn.Parameter):
                raise DLFormatError(
                    f"dlgradient: argument {position} {structure.where(index)} is not traced; pass it to "
                    "dlfeval as an argument (dlfeval traces the dlarrays it is given) or compute it from one"
                )
            tensors.append(data)
        groups.append((leaves, structure))
    differentiable = [index for index, tensor in enumerate(tensors) if tensor.requires_grad]
    try:
        found = torch.autograd.grad(
            target,
            [tensors[index] for index in differentiable],
            retain_graph=retain or higher,
            create_graph=higher,
            allow_unused=True,
        )
    except RuntimeError as error:
        if "second time" in str(error):
            raise DLFormatError(
                "dlgradient: the trace was already used by an earlier dlgradient call; pass RetainData=True "
                "to the earlier call to differentiate the same value again"
            ) from None
        raise
    gradients: list[torch.Tensor | None] = [None] * len(tensors)
    for index, value in zip(differentiable, found, strict=True):
        gradients[index] = value
    results = []
    position = 0
    for leaves, structure in groups:
        values = []
        for leaf in leaves:
            gradient = gradients[position]
            data = _parameters.as_tensor(leaf)
            values.append(_parameters.like(leaf, torch.zeros_like(data) if gradient is None else gradient))
            position += 1
        results.append(_parameters.rebuild(structure, values))
    return results[0] if len(results) == 1 else tuple(results)


def _validate_flag(name: str, value: object) -> bool:
    if isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1)):
        return bool(value)
    raise DLFormatError(
        f"dlgradient {name} must be true or false (a logical); got {_validate.describe(value)}"
    )
