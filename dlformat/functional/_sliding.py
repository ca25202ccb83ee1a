"""What convolution and pooling share: the dimensions a window slides over, the torch layout
those dimensions take, and MATLAB's padding, decided in one place.

MATLAB's rules (MathWorks, ``dlconv``, ``maxpool``, ``avgpool`` and ``convolution2dLayer``,
"Padding"):

- ``"same"`` pads so that the output has ``ceil(inputSize/stride)`` elements along each slid
  dimension; "if the padding that must be added vertically has an odd value, then the software
  adds extra padding to the bottom", and to the right horizontally: here the extra element goes
  after the data along every dimension.
- A number pads every edge by it; a vector of one number per dimension pads both edges of that
  dimension; a ``2 × d`` matrix ``[pre; post]`` (MATLAB's ``[t l; b r]``) gives each edge its own
  amount, and so does the layers' vector of ``2·d`` numbers (``[t b l r]``, ``[l r]``).
- ``"causal"`` (MATLAB's 1-D layers) pads ``(filterSize − 1)·dilation`` before the data only.

torch pads both edges of a dimension alike, so unequal padding is done here, explicitly, with
``torch.nn.functional.pad`` (or by gathering mirrored indices), and the torch operation then runs
unpadded; equal zero padding goes to the torch operation itself, which is faster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from .. import _validate
from .._errors import DLFormatError
from .._tracing import cached_plan

__all__ = [
    "PADDING_MODES",
    "Window",
    "average_padding_value",
    "check_fits",
    "edges",
    "from_torch",
    "pad",
    "padding_spec",
    "padding_value",
    "sizes",
    "symmetric",
    "to_torch",
    "window_plan",
]

PADDING_MODES = ("symmetric-include-edge", "symmetric-exclude-edge", "replicate")


def padding_value(name: str, value: Any) -> float | str:
    """A convolution's ``PaddingValue`` (``dlconv``, the layers): a number or one of
    :data:`PADDING_MODES`."""
    if isinstance(value, (str, bytes)):
        return _validate.choice(name, value, PADDING_MODES, also=", or a number")
    return _validate.real(name, value)


def average_padding_value(name: str, value: Any) -> int | str:
    """Average pooling's ``PaddingValue`` (``avgpool``, the layers): ``0`` or ``"mean"``."""
    if isinstance(value, (str, bytes)):
        return _validate.choice(name, value, ("mean",), also=", or 0")
    if _validate.real(name, value) != 0:
        raise DLFormatError(f'{name} must be 0 or "mean"; got {_validate.describe(value)}')
    return 0


Edges = tuple[tuple[int, int], ...]
Spec = str | Edges


class Window(NamedTuple):
    """How the data of one format meets a torch convolution or pooling operation.

    ``permutation`` takes the stored (canonical) dimensions to ``batch..., C, slid...``;
    ``inverse`` takes them back; ``batch`` counts the dimensions folded into torch's batch (every
    dimension that is neither ``C`` nor slid over: ``B``, ``U``, a ``T`` not slid over, ...);
    ``channel`` says whether the format has ``C``; ``slid`` are the positions slid over.
    """

    permutation: tuple[int, ...]
    inverse: tuple[int, ...]
    batch: int
    channel: bool
    slid: tuple[int, ...]


@cached_plan()
def window_plan(fmt: str, spatial: int, time: bool, caller: str, source: str) -> Window:
    """The window of an operation over ``spatial`` ``S`` dimensions (and ``T`` if ``time``).

    ``spatial`` is 0 or the number of ``S`` dimensions of ``fmt``: the operation slides over all
    of them or, for an operation over ``T`` only, none (they then count as batch). ``source``
    names what set the slid dimensions (the weights' format, ``PoolFormat``) for the errors.
    """
    have = fmt.count("S")
    if spatial and spatial != have:
        raise DLFormatError(
            f'{caller}: {source} make(s) the operation slide over {spatial} "S" dimension(s), and the '
            f'input of format "{fmt}" has {have}; give one "S" per spatial dimension of the input'
        )
    if time and "T" not in fmt:
        raise DLFormatError(
            f'{caller}: {source} make(s) the operation slide over "T", and the input of format "{fmt}" '
            'has no "T"'
        )
    slid = tuple(
        index for index, label in enumerate(fmt) if (label == "S" and spatial) or (label == "T" and time)
    )
    if not slid:
        raise DLFormatError(
            f'{caller} slides over "S" dimensions, or over "T" when asked to; the input of format "{fmt}" '
            f'has no "S": label the spatial dimensions "S", or say the operation runs over "T" ({source})'
        )
    if len(slid) > 3:
        raise DLFormatError(
            f"{caller} slides over at most 3 dimensions (1-D, 2-D or 3-D); {source} and the input of "
            f'format "{fmt}" make {len(slid)}'
        )
    channel = "C" in fmt
    batch = tuple(index for index, label in enumerate(fmt) if index not in slid and label != "C")
    permutation = batch + ((fmt.index("C"),) if channel else ()) + slid
    inverse = tuple(sorted(range(len(fmt)), key=permutation.__getitem__))
    return Window(permutation, inverse, len(batch), channel, slid)


def to_torch(data: torch.Tensor, window: Window) -> tuple[torch.Tensor, torch.Size]:
    """``data`` as torch's ``N × C × slid...`` and the sizes of the dimensions folded into ``N``."""
    moved = data.permute(window.permutation)
    lead = moved.shape[: window.batch]
    if window.batch == 1 and window.channel:  # already N × C × slid...: no reshape, no autograd node
        return moved, lead
    channels = moved.shape[window.batch] if window.channel else 1
    return moved.reshape(math.prod(lead), channels, *moved.shape[moved.ndim - len(window.slid) :]), lead


def from_torch(result: torch.Tensor, window: Window, lead: torch.Size) -> torch.Tensor:
    """A torch ``N × C × slid...`` result back in the stored order of the input's format."""
    if window.batch == 1 and window.channel:  # the shape is already lead, C, slid... (to_torch's case)
        return result.permute(window.inverse)
    kept = result.shape[1:] if window.channel else result.shape[2:]
    return result.reshape(*lead, *kept).permute(window.inverse)


def as_dtype(data: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``data.to(dtype)``, skipping the call when it would change nothing (it runs on every call)."""
    return data if data.dtype == dtype else data.to(dtype)


# -- option values ------------------------------------------------------------------------------
# Plain Python on numbers and lists, so that torch.compile folds it; arrays and tensors are read
# into lists first.
def _integers(caller: str, name: str, value: Any) -> tuple[list[int], tuple[int, ...]]:
    """``value`` (a number, a vector or a matrix: lists, tuples, NumPy arrays or tensors) as its
    integers in row order, and its shape (``()`` for a number)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().tolist()
    elif isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    if isinstance(value, (list, tuple)) and value and all(isinstance(row, (list, tuple)) for row in value):
        rows = [list(row) for row in value]
        shape: tuple[int, ...] = (len(rows), len(rows[0]))
        if any(len(row) != shape[1] for row in rows):
            shape = (-1,)  # ragged: refused below
        items = [item for row in rows for item in row]
    elif isinstance(value, (list, tuple)):
        items, shape = list(value), (len(value),)
    else:
        items, shape = [value], ()
    numbers = [_validate._real_scalar(item) for item in items]
    if not items or -1 in shape or any(number is None or not math.isfinite(number) for number in numbers):
        raise DLFormatError(
            f"{caller}: {name} must be a number or a vector of numbers; got {_validate.describe(value)}"
        )
    if any(number != int(number) for number in numbers):  # type: ignore[arg-type]
        raise DLFormatError(f"{caller}: {name} must hold integers; got {_validate.describe(value)}")
    return [int(number) for number in numbers], shape  # type: ignore[arg-type]


def _plain_integers(value: Any) -> bool:
    """Whether ``value`` is a Python int or a tuple of them (not bool): the form the layers store,
    read on every call without the general parsing below."""
    if type(value) is int:
        return True
    return type(value) is tuple and all(type(item) is int for item in value)


def sizes(caller: str, name: str, value: Any, count: int) -> tuple[int, ...]:
    """A positive integer for each of ``count`` slid dimensions: a scalar, or one per dimension."""
    if _plain_integers(value):  # fast path: the values the layers store
        if type(value) is int and value >= 1:
            return (value,) * count
        if type(value) is tuple and len(value) == count and min(value, default=0) >= 1:
            return value
    numbers, shape = _integers(caller, name, value)
    if len(numbers) not in (1, count) or (len(shape) > 1 and 1 not in shape) or min(numbers) < 1:
        raise DLFormatError(
            f"{caller}: {name} must be a positive integer or a vector of {count} positive integers "
            f"(one per slid dimension); got {_validate.describe(value)}"
        )
    return tuple(numbers) if len(numbers) == count else (numbers[0],) * count


def padding_spec(caller: str, name: str, value: Any, count: int, words: tuple[str, ...]) -> Spec:
    """MATLAB's padding (or cropping) as one of ``words`` (``"same"``, ``"causal"``) or a
    ``(pre, post)`` pair for each of ``count`` dimensions."""
    if isinstance(value, (str, np.str_)):
        return _validate.choice(f"{caller}: {name}", value, words, also=", or nonnegative integers")
    if _plain_integers(value) and type(value) is tuple and len(value) == 2 * count and min(value) >= 0:
        return tuple(zip(value[::2], value[1::2], strict=True))  # fast path: a layer's [t b l r]
    numbers, shape = _integers(caller, name, value)
    if min(numbers) < 0:
        raise DLFormatError(f"{caller}: {name} must be nonnegative; got {_validate.describe(value)}")
    if shape == (2, count):  # MATLAB's [t l f; b r k]: the first row before, the second after
        return tuple(zip(numbers[:count], numbers[count:], strict=True))
    if (len(shape) < 2 or 1 in shape) and len(numbers) == 2 * count:  # the layers' [t b l r]
        return tuple(zip(numbers[::2], numbers[1::2], strict=True))
    if (len(shape) < 2 or 1 in shape) and len(numbers) in (1, count):  # both edges of each dimension
        return tuple((number, number) for number in (numbers * count)[:count])
    forms = [f'"{word}"' for word in words] + [
        "a nonnegative integer",
        f"{count} nonnegative integers (one per dimension)",
        f"{2 * count} nonnegative integers (before and after each dimension, as [t b l r])",
        f"a 2×{count} matrix [before; after]",
    ]
    raise DLFormatError(
        f"{caller}: {name} for {count} slid dimension(s) must be one of: {', '.join(forms)}; got "
        f"{_validate.describe(value)} of size {_validate.matlab_size(shape) or '1'}"
    )


def edges(spec: Spec, inputs: tuple[int, ...], reach: tuple[int, ...], strides: tuple[int, ...]) -> Edges:
    """The ``(pre, post)`` padding of each slid dimension: ``"same"`` gives ``ceil(n/stride)``
    outputs with the odd element after the data (MATLAB's bottom and right); ``"causal"`` pads
    ``reach − 1`` before. ``reach`` is the extent of the dilated filter or pooling window."""
    if spec == "same":
        result = []
        for size, extent, stride in zip(inputs, reach, strides, strict=True):
            total = max((-(-size // stride) - 1) * stride + extent - size, 0)
            result.append((total // 2, total - total // 2))
        return tuple(result)
    if spec == "causal":
        return tuple((extent - 1, 0) for extent in reach)
    assert not isinstance(spec, str)
    return spec


def check_fits(caller: str, inputs: tuple[int, ...], padding: Edges, reach: tuple[int, ...]) -> None:
    """An error when the window does not fit in the padded data (the output would be empty)."""
    for size, (pre, post), extent in zip(inputs, padding, reach, strict=True):
        if size + pre + post < extent:
            raise DLFormatError(
                f"{caller}: the window spans {extent} elements and the padded input only "
                f"{size + pre + post} ({size} + {pre} + {post} padding); pad more or use a smaller window"
            )


def flat_padding(padding: Edges) -> list[int]:
    """``padding`` in ``torch.nn.functional.pad``'s order: the last dimension first."""
    return [amount for pair in reversed(padding) for amount in pair]


def pad(data: torch.Tensor, padding: Edges, value: float | str) -> torch.Tensor:
    """``N × C × slid...`` data padded with a number, or mirrored/replicated (MATLAB's
    ``PaddingValue``): torch's own kernels where they do MATLAB's padding, else :func:`mirror_pad`."""
    if not isinstance(value, str):
        return F.pad(data, flat_padding(padding), value=value)
    if value == "replicate":
        return F.pad(data, flat_padding(padding), mode="replicate")
    narrower = all(max(pair) < size for pair, size in zip(padding, data.shape[2:], strict=True))
    if value == "symmetric-exclude-edge" and narrower:
        return F.pad(data, flat_padding(padding), mode="reflect")
    return mirror_pad(data, padding, value)


def mirror_pad(data: torch.Tensor, padding: Edges, mode: str) -> torch.Tensor:
    """Pad by gathering indices: ``"replicate"`` repeats the edge; ``"symmetric-include-edge"``
    mirrors including the edge element (``[3 2 1 | 1 2 3 | 3 2 1]``, NumPy's ``"symmetric"``);
    ``"symmetric-exclude-edge"`` mirrors without it (``[3 2 | 1 2 3 | 2 1]``, torch's ``"reflect"``).
    Padding wider than the data keeps mirroring, as ``padarray`` does."""
    for offset, (pre, post) in enumerate(padding):
        if pre or post:
            dim = 2 + offset
            index = torch.tensor(_mirror_indices(data.shape[dim], pre, post, mode), device=data.device)
            data = data.index_select(dim, index)
    return data


def _mirror_indices(size: int, pre: int, post: int, mode: str) -> tuple[int, ...]:
    positions = range(-pre, size + post)
    if mode == "replicate":
        return tuple(min(max(position, 0), size - 1) for position in positions)
    period = 2 * size if mode == "symmetric-include-edge" else 2 * size - 2
    if period == 0:  # one element: every mirror is the element itself
        return (0,) * len(positions)
    indices = []
    for position in positions:
        folded = position % period
        indices.append(folded if folded < size else period - 1 - folded + (mode == "symmetric-exclude-edge"))
    return tuple(indices)


def symmetric(padding: Edges, limit: Sequence[int] | None = None) -> tuple[int, ...] | None:
    """The per-dimension padding when every dimension is padded alike on both edges (and, with
    ``limit``, by no more than it: torch pooling pads at most half the window), else ``None``."""
    if any(pre != post for pre, post in padding):
        return None
    amounts = tuple(pre for pre, _ in padding)
    if limit is not None and any(amount > bound for amount, bound in zip(amounts, limit, strict=True)):
        return None
    return amounts
