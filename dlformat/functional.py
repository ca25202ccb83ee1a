"""Stateless, format-aware functions behind dlformat's layers (like ``torch.nn.functional``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

import einops
import torch

from . import _format, _validate
from ._dlarray import DLArray
from ._errors import DLFormatError
from ._tracing import constant_under_compile

__all__ = ["position_embedding"]

POSITION_DIMENSIONS = ("auto", "temporal", "spatial")


class _PositionPlan(NamedTuple):
    index: int  # the position dimension, in the input
    label: str  # "T" or "S"
    output_format: str
    pattern: str  # einops repeat pattern from the (C, positions) table to the output
    broadcast: tuple[tuple[str, int], ...]  # (axis name, input dimension) of every other output axis


@lru_cache(maxsize=1024)
def _position_plan(fmt: str, position_dimension: str) -> _PositionPlan:
    spatial = fmt.count("S")
    if position_dimension == "temporal" or (position_dimension == "auto" and "T" in fmt):
        if "T" not in fmt:
            raise DLFormatError(
                f'PositionDimension "temporal" needs a "T" dimension; the input format "{fmt}" has none'
            )
        label = "T"
    elif spatial == 1:
        label = "S"
    elif position_dimension == "spatial":
        raise DLFormatError(
            f'PositionDimension "spatial" needs exactly one "S" dimension; the input format "{fmt}" '
            f"has {spatial}"
        )
    else:
        raise DLFormatError(
            f'PositionDimension "auto" embeds the "T" dimension, or else a single "S" dimension; the '
            f'input format "{fmt}" has no "T" and {spatial} "S" dimensions. Give the input a "T" '
            f'dimension or exactly one "S"'
        )
    output_format = fmt if "C" in fmt else _format.canonical(fmt + "C")
    input_axes = _format.axis_names(fmt)
    output_axes = _format.axis_names(output_format)
    index = fmt.index(label)
    position_axis, channel_axis = input_axes[index], "c0"
    broadcast = tuple(
        (axis, input_axes.index(axis)) for axis in output_axes if axis not in (channel_axis, position_axis)
    )
    pattern = f"{channel_axis} {position_axis} -> {' '.join(output_axes)}"
    return _PositionPlan(index, label, output_format, pattern, broadcast)


_plan = constant_under_compile(_position_plan)


def _embed(
    X: Any, weights: torch.Tensor, position_dimension: str, offset: int, caller: Callable[[], str]
) -> DLArray:
    """The shared forward of position embeddings; arguments already validated.

    ``caller()`` names the layer or function in error messages (built only when one is raised).
    """
    if not isinstance(X, DLArray) or not X._fmt:
        got = "an unformatted dlarray" if isinstance(X, DLArray) else f"a {type(X).__name__}"
        raise DLFormatError(
            f'{caller()} needs a formatted dlarray input, such as dlarray(x, "CBT"); got {got}'
        )
    try:
        plan = _plan(X._fmt, position_dimension)
    except DLFormatError as error:
        raise DLFormatError(f"{caller()}: {error}") from None
    shape = X._data.shape
    length = shape[plan.index]
    max_position = weights.shape[1]
    if offset + length > max_position:
        start = f"PositionOffset {offset} plus " if offset else ""
        raise DLFormatError(
            f'{caller()}: {start}the input\'s {length} positions along "{plan.label}" reach position '
            f"{offset + length}, beyond MaxPosition {max_position}; shorten the input or build the "
            f"layer with a larger MaxPosition"
        )
    table = weights[:, offset : offset + length]
    sizes = {axis: shape[dimension] for axis, dimension in plan.broadcast}
    return DLArray._wrap(einops.repeat(table, plan.pattern, **sizes), plan.output_format)


def position_embedding(
    X: DLArray, weights: torch.Tensor, position_dimension: str = "auto", offset: int = 0
) -> DLArray:
    """MATLAB's position embedding of ``X``: column ``offset + i`` of ``weights`` at position ``i``.

    Args:
        X: a formatted dlarray; only its format and sizes are read, never its values.
        weights: ``OutputSize × MaxPosition``; column ``p`` embeds 0-based position ``p``.
        position_dimension: ``"auto"`` (``T`` if present, else the single ``S``),
            ``"temporal"`` or ``"spatial"``.
        offset: the position of the first element (cached decoding).

    Returns:
        A dlarray of ``X``'s format with ``C`` added if missing (size ``OutputSize``).
        It is a broadcast view of ``weights`` (stride 0 along every other dimension):
        adding it to another dlarray costs one pass, and writing into it is an error.
    """
    position_dimension = _validate.choice("position_dimension", position_dimension, POSITION_DIMENSIONS)
    offset = _validate.nonnegative_integer("offset", offset)
    if not isinstance(weights, torch.Tensor) or weights.ndim != 2:
        raise DLFormatError(
            f"weights must be a 2-D tensor (OutputSize × MaxPosition); got {_validate.describe(weights)}"
        )
    return _embed(X, weights, position_dimension, offset, lambda: "position_embedding")
