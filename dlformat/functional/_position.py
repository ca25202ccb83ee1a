"""Position embeddings and encodings: learned tables, sinusoids and rotary embeddings."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from einops import rearrange

from .. import _format, _validate
from .._dlarray import DLArray, require_formatted
from .._errors import DLFormatError
from .._tracing import cached_plan

__all__ = ["position_embedding", "rotary", "sinusoid", "timing_signal_1d"]

POSITION_DIMENSIONS = ("auto", "temporal", "spatial")
SINUSOID_LAYOUTS = ("interleaved", "halves")
ROTARY_PAIRINGS = ("half", "interleaved")


class _PositionPlan(NamedTuple):
    axis: int  # the position dimension, in the input
    label: str  # "T" or "S"
    output_format: str
    channel: int  # where C sits in the output
    position: int  # where the position dimension sits in the output
    adds_channel: bool  # the input has no C: the output gains one at ``channel``


@cached_plan(1024)
def _plan(fmt: str, position_dimension: str) -> _PositionPlan:
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
    adds_channel = "C" not in fmt
    output_format = _format.canonical(fmt + "C") if adds_channel else fmt
    # canonical order keeps the input's dimensions in order around an inserted C
    channel = output_format.index("C")
    index = fmt.index(label)
    position = index + 1 if adds_channel and channel <= index else index
    return _PositionPlan(index, label, output_format, channel, position, adds_channel)


@cached_plan()
def _values_plan(fmt: str) -> tuple[str, str, str]:
    """For layers that map each element to a channel vector (index or value → C channels).

    Returns (output format, pattern dropping a size-1 C, pattern putting the channels in C's place).
    """
    output = fmt if "C" in fmt else _format.canonical(fmt + "C")
    names = _format.axis_names(fmt)
    kept = [name for name in names if name != "c0"]
    drop = f"{' '.join('1' if name == 'c0' else name for name in names)} -> {' '.join(kept)}"
    place = f"{' '.join(kept)} c0 -> {' '.join(_format.axis_names(output))}"
    return output, drop, place


def _per_element(
    X: Any, what: str, caller: Callable[[], str]
) -> tuple[torch.Tensor, Callable[[torch.Tensor], DLArray]]:
    """For layers that read one value per element: the values without ``C``, and how to place
    the channel vectors computed from them (``(..., channels)``) in ``C``'s place.

    ``what`` says what each element holds, for the error when ``C`` has more than one entry.
    """
    data = require_formatted(X, caller)._data
    if "C" in X._fmt and data.shape[X._fmt.index("C")] != 1:
        raise DLFormatError(
            f'{caller()} reads one {what} per element, so the input\'s "C" must have size 1 (or be '
            f"absent); it has size {data.shape[X._fmt.index('C')]}"
        )
    output, drop, place = _values_plan(X._fmt)
    values = rearrange(data, drop) if "C" in X._fmt else data
    return values, lambda vectors: DLArray._wrap(rearrange(vectors, place), output)


def _position_plan_of(
    X: Any, position_dimension: str, caller: Callable[[], str]
) -> tuple[_PositionPlan, int]:
    """The plan for a formatted input and the length of its position dimension."""
    X = require_formatted(X, caller)
    try:
        plan = _plan(X._fmt, position_dimension)
    except DLFormatError as error:
        raise DLFormatError(f"{caller()}: {error}") from None
    return plan, X._data.shape[plan.axis]


def _channels_fastest(plan: _PositionPlan, data: torch.Tensor) -> bool:
    """Whether ``data`` holds C with a smaller stride than its position dimension (batch-first memory)."""
    return not plan.adds_channel and data.stride(plan.channel) < data.stride(plan.axis)


def _broadcast(table: torch.Tensor, offset: int, plan: _PositionPlan, data: torch.Tensor) -> DLArray:
    """Columns ``offset ..`` of a (channels, positions) table, as a view in ``data``'s output layout.

    One ``as_strided`` call builds the view, stride 0 along every dimension but C and the
    position one: on small inputs this is the whole cost of the layer, a quarter of what
    einops.repeat costs (einops stays the tool for permutations). When ``data`` is laid out
    with C fastest and the table is not (or the reverse), the used columns are copied into
    ``data``'s order first, O(channels × positions): otherwise adding the view to ``data``
    would read the table with a stride of a whole row per element.
    """
    sizes = list(data.shape)
    length = sizes[plan.axis]
    if plan.adds_channel:
        sizes.insert(plan.channel, table.shape[0])
    else:
        sizes[plan.channel] = table.shape[0]
    if not plan.adds_channel and _channels_fastest(plan, data) != (table.stride(0) < table.stride(1)):
        # the first copy makes the columns dense, which lets torch use its blocked transpose (2× faster)
        table, offset = table.narrow(1, offset, length).contiguous().t().contiguous().t(), 0
    elif offset or not isinstance(offset, int):  # not storage_offset() arithmetic: dynamo cannot trace that
        table = table.narrow(1, offset, length)
    strides = [0] * len(sizes)
    strides[plan.channel], strides[plan.position] = table.stride()
    return DLArray._wrap(table.as_strided(sizes, strides), plan.output_format)


def position_offset(value: Any, name: str = "PositionOffset") -> Any:
    """A position offset: an integer >= 0, or a 0-d integer tensor (one compiled graph for every offset).

    In eager mode a tensor becomes its integer; under ``torch.compile`` it stays a tensor, and
    an integer that varies becomes a symbolic one: neither recompiles per offset.
    """
    if isinstance(value, torch.Tensor):
        integral = not (value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool)
        if value.ndim != 0 or not integral:
            raise DLFormatError(
                f"{name} must be an integer >= 0 or a 0-d integer tensor; got {_validate.describe(value)}"
            )
        if torch.compiler.is_compiling():
            return value
        value = int(value)
    elif torch.compiler.is_compiling() and isinstance(value, int):
        # a symbolic integer cannot be inspected as a Python number; torch checks it instead
        torch._check(value >= 0, lambda: f"{name} must be an integer >= 0")
        return value
    return _validate.nonnegative_integer(name, value)


def _embed(
    X: Any, weights: torch.Tensor, position_dimension: str, offset: Any, caller: Callable[[], str]
) -> DLArray:
    """The shared forward of position embeddings; ``offset`` from :func:`position_offset`.

    ``caller()`` names the layer or function in error messages (built only when one is raised).
    """
    plan, length = _position_plan_of(X, position_dimension, caller)
    max_position = weights.shape[1]
    if isinstance(
        offset, torch.Tensor
    ):  # compiled, offset as data: gather the columns, bounds checked by torch
        columns = offset.to(weights.device) + torch.arange(length, device=weights.device)
        return _broadcast(weights.index_select(1, columns), 0, plan, X._data)
    if offset + length > max_position:
        start = f"PositionOffset {offset} plus " if offset else ""
        raise DLFormatError(
            f'{caller()}: {start}the input\'s {length} positions along "{plan.label}" reach position '
            f"{offset + length}, beyond MaxPosition {max_position}; shorten the input or build the "
            f"layer with a larger MaxPosition"
        )
    return _broadcast(weights, offset, plan, X._data)


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
        adding it to another dlarray costs one pass; never write into it in place.
    """
    position_dimension = _validate.choice("position_dimension", position_dimension, POSITION_DIMENSIONS)
    offset = position_offset(offset, "offset")
    if not isinstance(weights, torch.Tensor) or weights.ndim != 2:
        raise DLFormatError(
            f"weights must be a 2-D tensor (OutputSize × MaxPosition); got {_validate.describe(weights)}"
        )
    return _embed(X, weights, position_dimension, offset, lambda: "position_embedding")


# -- sinusoidal building blocks ---------------------------------------------------------------------
def _working_dtype(dtype: torch.dtype) -> torch.dtype:
    """Float32, or float64 when given float64: sinusoids are never computed in half precision."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _as_positions(positions: object) -> torch.Tensor:
    if isinstance(positions, int) and not isinstance(positions, bool):
        return torch.arange(_validate.nonnegative_integer("positions", positions), dtype=torch.float32)
    if isinstance(positions, torch.Tensor):
        return positions
    try:
        return torch.as_tensor(positions)
    except (TypeError, ValueError, RuntimeError):
        raise DLFormatError(
            "positions must be a count, a tensor or a sequence of numbers; "
            f"got {_validate.describe(positions)}"
        ) from None


def _frequencies(count: int, dim: int, base: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Vaswani et al.'s angular frequencies base^(-2k/dim) for k = 0 .. count-1."""
    exponents = torch.arange(count, dtype=torch.float64, device=device) * (2.0 / dim)
    return torch.pow(torch.tensor(float(base), dtype=torch.float64, device=device), -exponents).to(dtype)


def _base(value: object) -> float:
    number = _validate.factor("base", value)
    if number <= 1:
        raise DLFormatError(f"base must be a finite number > 1; got {_validate.describe(value)}")
    return number


def sinusoid(positions: object, dim: int, base: float = 10000, layout: str = "interleaved") -> torch.Tensor:
    """Vaswani et al.'s sinusoidal encoding of ``positions``, shape ``(*positions.shape, dim)``.

    Channel pair k has angle p · base^(-2k/dim). ``layout="interleaved"`` puts sin in channel
    2k and cos in 2k+1 (MATLAB's and NeoML's order; an odd ``dim`` ends with a sin channel);
    ``"halves"`` puts every sin first, then every cos (``dim`` even).

    Args:
        positions: a count ``n`` (positions 0 .. n-1) or a tensor (any shape, any real dtype).
        dim: channels, positive.
        base: the geometric base of the wavelengths (> 1).

    Returns:
        float32, or float64 for float64 positions, on the positions' device.
    """
    dim = _validate.positive_integer("dim", dim)
    layout = _validate.choice("layout", layout, SINUSOID_LAYOUTS)
    if layout == "halves" and dim % 2:
        raise DLFormatError(f'layout "halves" needs an even dim; got {dim}')
    positions = _as_positions(positions)
    dtype = _working_dtype(positions.dtype)
    pairs = (dim + 1) // 2
    angles = positions.to(dtype)[..., None] * _frequencies(pairs, dim, _base(base), dtype, positions.device)
    if layout == "halves":
        return torch.cat([angles.sin(), angles.cos()], dim=-1)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)[..., :dim]


def timing_signal_1d(
    length: int, channels: int, min_timescale: float = 1.0, max_timescale: float = 1.0e4, start_index: int = 0
) -> torch.Tensor:
    """tensor2tensor's ``get_timing_signal_1d``: shape ``(1, length, channels)``, float32.

    Unlike :func:`sinusoid`, the ``channels // 2`` timescales are spaced geometrically from
    ``min_timescale`` to ``max_timescale`` inclusive (inverse timescale k is
    min_timescale · exp(-k · ln(max/min) / max(n-1, 1))), sin fills the first half and cos the
    second, and an odd ``channels`` gets a final zero channel. Positions are
    ``start_index .. start_index + length - 1``.
    """
    length = _validate.nonnegative_integer("length", length)
    channels = _validate.positive_integer("channels", channels)
    start_index = _validate.nonnegative_integer("start_index", start_index)
    low = _validate.factor("min_timescale", min_timescale)
    high = _validate.factor("max_timescale", max_timescale)
    if not 0 < low <= high:
        raise DLFormatError(
            f"need 0 < min_timescale <= max_timescale; got {min_timescale} and {max_timescale}"
        )
    count = channels // 2
    increment = math.log(high / low) / max(count - 1, 1)
    inverse = low * torch.exp(torch.arange(count, dtype=torch.float64) * -increment)
    position = torch.arange(length, dtype=torch.float64) + start_index
    scaled = position[:, None] * inverse[None, :]
    signal = torch.cat(
        [scaled.sin(), scaled.cos(), torch.zeros(length, channels % 2, dtype=torch.float64)], dim=1
    )
    return signal.to(torch.float32).reshape(1, length, channels)


def rotary(
    x: torch.Tensor, positions: object, base: float = 10000, scale: float = 1.0, pairing: str = "half"
) -> torch.Tensor:
    """Rotary position embedding (RoFormer) of ``x``, whose last dimension holds the features.

    Feature pair k rotates by angle p · base^(-2k/d), for position p. ``pairing="half"`` pairs
    feature k with k + d/2 (LLaMA, PositionalEmbeddings.jl); ``"interleaved"`` pairs 2k with
    2k+1 (RoFormer's paper). The result is multiplied by ``scale``, as PositionalEmbeddings.jl
    does. Computed in float32 (float64 for float64 input), returned in ``x``'s dtype.

    Args:
        x: ``(..., d)`` with ``d`` even.
        positions: broadcastable to ``x.shape[:-1]``.
    """
    if not isinstance(x, torch.Tensor) or x.ndim < 1 or x.shape[-1] % 2:
        raise DLFormatError(
            f"rotary needs a tensor whose last dimension is even; got {_validate.describe(x)}"
        )
    pairing = _validate.choice("pairing", pairing, ROTARY_PAIRINGS)
    scale = float(_validate.factor("scale", scale))
    dtype = _working_dtype(x.dtype)
    d = x.shape[-1]
    positions = _as_positions(positions).to(device=x.device)
    angles = positions.to(dtype)[..., None] * _frequencies(d // 2, d, _base(base), dtype, x.device)
    cos, sin = angles.cos(), angles.sin()
    value = x.to(dtype)
    if pairing == "half":
        first, second = value[..., : d // 2], value[..., d // 2 :]
        rotated = torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)
    else:
        even, odd = value[..., 0::2], value[..., 1::2]
        rotated = torch.stack([even * cos - odd * sin, odd * cos + even * sin], dim=-1).flatten(-2)
    return (rotated * scale).to(x.dtype)
