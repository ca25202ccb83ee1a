"""MATLAB's learn-rate and L2 factors, and torch optimizer groups that honour them.

MATLAB scales the global learning rate by a parameter's learn-rate factor and the global
L2 regularisation by its L2 factor, adding ``l2 * factor * w`` to the gradient (coupled
decay, as ``weight_decay`` in ``torch.optim.SGD`` and ``Adam``; not AdamW's).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch import nn

from . import _validate
from ._errors import DLFormatError
from .layers._base import Layer

__all__ = ["getL2Factor", "getLearnRateFactor", "param_groups", "setL2Factor", "setLearnRateFactor"]


def param_groups(module: nn.Module | Iterable[nn.Module], lr: float, l2: float = 0.0) -> list[dict[str, Any]]:
    """Optimizer parameter groups, one per distinct (learn-rate factor, L2 factor) pair.

    Each group has ``lr = lr * LearnRateFactor`` and ``weight_decay = l2 * L2Factor``,
    plus the two factors under ``"learn_rate_factor"`` and ``"l2_factor"``. Parameters
    of dlformat layers carry their own factors; every other parameter has factor 1.
    Parameters whose learn-rate factor is 0, or that do not require grad, are left out
    (frozen). A parameter shared between layers must have the same factors in each.

    Examples:
        >>> net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)])
        >>> groups = dlf.param_groups(net, lr=0.01, l2=1e-4)
        >>> [(group["lr"], group["weight_decay"]) for group in groups]  # Bias: L2Factor 0
        [(0.01, 0.0001), (0.01, 0.0)]
        >>> optimizer = torch.optim.SGD(groups)
    """
    lr = _validate.factor("lr", lr)
    l2 = _validate.factor("l2", l2)
    factors_of: dict[int, tuple[float, float]] = {}
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    if not isinstance(module, nn.Module):  # a list of layers, as MATLAB's layer arrays
        items = list(module) if isinstance(module, (list, tuple)) else None
        if items is None or not all(isinstance(item, nn.Module) for item in items):
            raise DLFormatError(
                f"param_groups needs a module or a list of layers; got {_validate.describe(module)}"
            )
        module = nn.ModuleList(items)
    for name, submodule in module.named_modules():
        for parameter_name, parameter in submodule.named_parameters(recurse=False):
            if isinstance(submodule, Layer) and parameter_name in submodule.learnables:
                factors = submodule.factors(parameter_name)
                learn_rate, l2_factor = factors["LearnRateFactor"], factors["L2Factor"]
                if isinstance(learn_rate, tuple) or isinstance(l2_factor, tuple):
                    raise DLFormatError(
                        f"param_groups: {parameter_name} of layer {submodule.Name!r} has a per-gate factor "
                        "vector, which a torch optimizer group (one lr, one weight_decay) cannot hold; train "
                        "with trainnet or the solver functions (sgdmupdate, adamupdate, rmspropupdate), "
                        "which apply it row by row"
                    )
                pair = (learn_rate, l2_factor)
            else:
                pair = (1.0, 1.0)
            seen = factors_of.setdefault(id(parameter), pair)
            if seen != pair:
                raise DLFormatError(
                    f"parameter {parameter_name!r} of module {name or '(root)'!r} is shared with another "
                    f"layer that gives it factors {seen}; a shared parameter needs the same (learn-rate, "
                    f"L2) factors everywhere, here {pair}"
                )
            if seen is pair and pair[0] > 0 and parameter.requires_grad:
                groups.setdefault(pair, []).append(parameter)
    return [
        {
            "params": params,
            "lr": lr * learn_rate_factor,
            "weight_decay": l2 * l2_factor,
            "learn_rate_factor": learn_rate_factor,
            "l2_factor": l2_factor,
        }
        for (learn_rate_factor, l2_factor), params in groups.items()
    ]


def _find_layer(net: nn.Module, layer_name: object) -> Layer:
    name = _validate.text("layer name", layer_name)
    matches = [module for module in net.modules() if isinstance(module, Layer) and module.Name == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise DLFormatError(f"{len(matches)} layers are named {name!r}; layer names must be unique")
    names = sorted(module.Name for module in net.modules() if isinstance(module, Layer) and module.Name)
    raise DLFormatError(
        f"no layer named {name!r}; the named dlformat layers are: {', '.join(names) or 'none'}"
    )


def _target(function: str, args: tuple[Any, ...], values: int) -> tuple[Layer, str]:
    """Resolve MATLAB's ``(layer, parameterName, ...)`` or ``(net, layerName, parameterName, ...)``.

    MATLAB tells the two forms apart by the number of arguments; so does this.
    """
    tail = "parameterName, value" if values else "parameterName"
    if len(args) == 2 + values and isinstance(args[0], Layer):
        return args[0], _validate.text("parameter name", args[1])
    if len(args) == 3 + values and isinstance(args[0], nn.Module):
        return _find_layer(args[0], args[1]), _validate.text("parameter name", args[2])
    first = type(args[0]).__name__ if args else "nothing"
    raise DLFormatError(
        f"{function} takes (layer, {tail}) or (net, layerName, {tail}); got {len(args)} "
        f"argument(s), the first a {first}"
    )


def _set(function: str, kind: str, args: tuple[Any, ...]) -> nn.Module:
    layer, parameter = _target(function, args, values=1)
    layer.set_factor(parameter, kind, args[-1])
    module: nn.Module = args[0]
    return module


def _get(function: str, kind: str, args: tuple[Any, ...]) -> float | tuple[float, ...]:
    layer, parameter = _target(function, args, values=0)
    return layer.factors(parameter)[kind]


def setLearnRateFactor(*args: Any) -> nn.Module:
    """MATLAB's ``setLearnRateFactor(layer, "Weights", f)`` or ``(net, layerName, "Weights", f)``.

    Changes the layer in place and returns the first argument, so MATLAB's
    ``layer = setLearnRateFactor(layer, ...)`` ports unchanged. ``f`` is finite, ``>= 0``.
    """
    return _set("setLearnRateFactor", "LearnRateFactor", args)


def setL2Factor(*args: Any) -> nn.Module:
    """MATLAB's ``setL2Factor``; arguments as :func:`setLearnRateFactor`."""
    return _set("setL2Factor", "L2Factor", args)


def getLearnRateFactor(*args: Any) -> float | tuple[float, ...]:
    """MATLAB's ``getLearnRateFactor(layer, "Weights")`` or ``(net, layerName, "Weights")``: a
    float, or a recurrent layer's per-gate vector as a tuple."""
    return _get("getLearnRateFactor", "LearnRateFactor", args)


def getL2Factor(*args: Any) -> float | tuple[float, ...]:
    """MATLAB's ``getL2Factor``; arguments as :func:`getLearnRateFactor`."""
    return _get("getL2Factor", "L2Factor", args)
