"""MATLAB's ``analyzeNetwork``: each layer's output format and sizes, learnables, where formats stop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .. import _validate
from .._display import finite_note, learnables_summary, text_table
from .._dlarray import DLArray
from .._errors import DLFormatError, LayerError
from ._graph import DLNetwork

__all__ = ["NetworkAnalysis", "analyzeNetwork"]


@dataclass(frozen=True)
class LayerReport:
    Name: str
    Type: str
    Activations: str  # "64(C) × 8(B) × 20(T)", or "" when the layer did not run
    Learnables: str  # "Weights 64×128, Bias 64×1"
    Count: int


@dataclass(frozen=True)
class NetworkAnalysis:
    """The result of :func:`analyzeNetwork`; ``str()`` gives the printed table."""

    rows: list[LayerReport]
    total: int
    error: str | None = None  # the message of the first layer where formats cannot flow
    failed_layer: str | None = None

    def __str__(self) -> str:
        rows = (
            (str(index), row.Name, row.Type, row.Activations or "—", row.Learnables or "—", f"{row.Count:,}")
            for index, row in enumerate(self.rows, 1)
        )
        lines = text_table(("#", "Name", "Type", "Activations", "Learnables", "Count"), rows)
        lines.append(f"Total learnables: {self.total:,}")
        if self.error:
            lines.append(f"Formats stop flowing at layer '{self.failed_layer}': {self.error}")
        return "\n".join(lines)


def _describe(value: Any) -> str:
    if isinstance(value, DLArray):
        return value._sizes()
    if isinstance(value, torch.Tensor):
        return _validate.matlab_size(tuple(value.shape))
    return type(value).__name__


def analyzeNetwork(net: DLNetwork, *X: Any, show: bool = True) -> NetworkAnalysis:
    """Run ``net`` once (inference mode, no gradients) and report every layer.

    Args:
        net: a dlnetwork; initialized first if it is not.
        X: example inputs in ``net.InputNames`` order (default: one small example per input
            layer, batch 1).
        show: print the table (MATLAB opens its Network Analyzer; dlformat prints).

    Returns:
        A :class:`NetworkAnalysis`: one row per layer with its type, output format and sizes
        (e.g. ``64(C) × 8(B) × 20(T)``), learnable shapes and counts, the total, and the first
        layer where formats cannot flow, if any (its message names it).
    """
    if not isinstance(net, DLNetwork):
        raise DLFormatError(f"analyzeNetwork needs a dlnetwork; got {_validate.describe(net)}")
    outputs: dict[str, str] = {}
    error = failed = None
    try:
        hooks = [
            layer.register_forward_hook(
                lambda module, args, result, name=name: outputs.__setitem__(name, _describe(result))
            )
            for name, layer in net.layers.items()
        ]
        try:
            net.run_example(X)  # lazy layers create their learnables here, as initialize(net) would
        finally:
            for hook in hooks:
                hook.remove()
    except LayerError as caught:
        error, failed = caught.reason, caught.layer
    rows = []
    for name, layer in net._by_name.items():
        shown, count = learnables_summary(layer)
        note = finite_note(layer)
        shown = f"{shown} ({note})" if note else shown
        rows.append(LayerReport(name, layer.matlab_type, outputs.get(name, ""), shown, count))
    analysis = NetworkAnalysis(rows, sum(row.Count for row in rows), error, failed)
    if show:
        print(analysis)
    return analysis
