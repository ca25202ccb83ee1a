"""MATLAB's ``attention``: multi-head scaled dot-product attention of formatted dlarrays."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from einops import rearrange

from .. import _format, _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from ._common import formatted_input, working_dtype

__all__ = ["attention"]

MASKS = ("none", "causal")


@cached_plan()
def sequence_plan(fmt: str) -> tuple[str, str]:
    """Patterns from ``fmt`` to (batch, sequence, channels) and back; the sequence is T or the one S."""
    if "U" in fmt or fmt.count("S") > (0 if "T" in fmt else 1) or ("T" not in fmt and "S" not in fmt):
        raise DLFormatError(
            f'attention attends over "T", or over a single "S" when there is no "T"; it takes '
            f'formats such as "CBT", "CT", "SCB" (with "C"); got "{fmt}"'
        )
    names = _format.axis_names(fmt)
    sequence = "t0" if "T" in fmt else "s0"
    batch = "b0" if "B" in fmt else "1"
    return f"{' '.join(names)} -> {batch} {sequence} c0", f"{batch} {sequence} c0 -> {' '.join(names)}"


def _rows(X: DLArray, role: str) -> torch.Tensor:
    try:
        to_rows, _ = sequence_plan(X._fmt)
    except DLFormatError as error:
        raise DLFormatError(f"attention {role}: {error}") from None
    return rearrange(X._data, to_rows)


def _mask(value: Any, name: str, shape: tuple[int, ...]) -> torch.Tensor:
    """A logical mask (true: attend) broadcast to ``shape``; numeric masks are true where nonzero."""
    data = value._data if isinstance(value, DLArray) else torch.as_tensor(value)
    mask = data != 0 if data.dtype != torch.bool else data
    try:
        return mask.expand(shape)
    except RuntimeError:
        raise DLFormatError(
            f"attention {name} of size {_validate.matlab_size(tuple(mask.shape))} does not fit "
            f"{_validate.matlab_size(shape)}"
        ) from None


@matlab_function
def attention(
    queries: Any,
    keys: Any,
    values: Any,
    numHeads: int,
    *,
    Scale: Any = "auto",
    PaddingMask: Any = None,
    AttentionMask: Any = "none",
    DropoutProbability: float = 0.0,
    DataFormat: str | None = None,
    ReturnWeights: bool = False,
) -> Any:
    """MATLAB's ``Y = attention(queries, keys, values, numHeads)``; ``[Y, weights]`` with
    ``ReturnWeights=True``.

    Each of ``numHeads`` heads takes consecutive blocks of the channels of queries, keys and
    values; the scores ``Scale · q·k`` go through a softmax over the keys, and the heads'
    weighted values are concatenated along ``C``.

    Args:
        queries, keys, values: dlarrays with ``C`` and ``T`` (``"CBT"``), or ``C`` and one
            ``S``; unformatted ones take ``DataFormat`` (or the queries' format, as MATLAB's
            example passes keys and values unformatted). Keys and values share their sequence.
        numHeads: divides the channels of queries, keys and values.
        Scale: ``"auto"`` (``1/sqrt(D)``, ``D`` the key channels divided by ``numHeads``) or a number.
        PaddingMask: ``None``, or a logical/numeric array over the keys' batch and sequence
            (``numObservations × numKeys``, or a formatted dlarray with the keys' ``B`` and ``T`` or
            ``S``, whose first channel is read when it has ``C``, as MATLAB reads it): zero marks
            padding that no query attends to.
        AttentionMask: ``"none"``, ``"causal"`` (query ``m`` never attends to a key ``n > m``), or a
            logical/numeric ``numKeys × numQueries`` (``× numObservations``) array, nonzero where
            query attends to key.
        DropoutProbability: dropout on the attention weights (default 0: none).
        ReturnWeights: also return the attention weights, ``numKeys × numQueries × numHeads ×
            numObservations`` and unformatted, as MATLAB's second output.

    Returns:
        ``Y`` in the queries' format, ``C`` of size ``values``' channels.

    Examples:
        >>> Q = dlf.dlarray(torch.randn(8, 2, 5), "CBT")
        >>> Y, W = F.attention(Q, Q, Q, 2, ReturnWeights=True)
        >>> dlf.dims(Y), tuple(W.shape)
        ('CBT', (5, 5, 2, 2))
    """
    queries, restore = formatted_input(queries, DataFormat, "attention", needs="C")
    keys = _same_layout(keys, queries, DataFormat, "keys")
    values = _same_layout(values, queries, DataFormat, "values")
    heads = _validate.positive_integer("numHeads", numHeads)
    probability = _validate.probability("DropoutProbability", DropoutProbability)
    q, k, v = _rows(queries, "queries"), _rows(keys, "keys"), _rows(values, "values")
    for role, rows in (("queries", q), ("keys", k), ("values", v)):
        if rows.shape[-1] % heads:
            raise DLFormatError(
                f"attention: numHeads ({heads}) must divide the channels of the {role} ({rows.shape[-1]})"
            )
    if (
        q.shape[-1] != k.shape[-1]
        or k.shape[1] != v.shape[1]
        or len({q.shape[0], k.shape[0], v.shape[0]}) > 1
    ):
        raise DLFormatError(
            "attention needs queries and keys with the same channels, keys and values of the same "
            f"length, and one batch size; got queries {tuple(q.shape)}, keys {tuple(k.shape)}, values "
            f"{tuple(v.shape)} as (batch, sequence, channels)"
        )
    automatic = isinstance(Scale, str) and Scale.lower() == "auto"
    scale = 1 / math.sqrt(k.shape[-1] // heads) if automatic else _validate.real("Scale", Scale)
    batch, queries_count, keys_count = q.shape[0], q.shape[1], k.shape[1]
    allowed = _allowed(AttentionMask, PaddingMask, batch, queries_count, keys_count, q.device)
    dtype = working_dtype(q.dtype, k.dtype, v.dtype)
    q, k, v = (rearrange(rows.to(dtype), "b n (h d) -> b h n d", h=heads) for rows in (q, k, v))
    causal = isinstance(AttentionMask, str) and AttentionMask.lower() == "causal"
    if not ReturnWeights:  # torch's fused kernel; it cannot return the weights
        attended = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=allowed,
            dropout_p=probability,
            is_causal=causal and allowed is None,
            scale=scale,
        )
        return restore(_merge_heads(attended, queries))
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    elif causal:
        lower = torch.ones(queries_count, keys_count, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~lower, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if allowed is not None:  # a query with no key to attend to gets zero weights, as the fused kernel gives
        weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    weights = F.dropout(weights, probability)
    attended = weights @ v
    return restore(_merge_heads(attended, queries)), DLArray._wrap(
        rearrange(weights, "b h q k -> k q h b"), ""
    )


def _merge_heads(attended: torch.Tensor, queries: DLArray) -> DLArray:
    """(batch, heads, sequence, head channels) back in the queries' format, heads concatenated along C."""
    _, back = sequence_plan(queries._fmt)
    merged = rearrange(attended, "b h n d -> b n (h d)")
    return DLArray._wrap(rearrange(merged, back), queries._fmt)


def _same_layout(X: Any, queries: DLArray, DataFormat: str | None, role: str) -> DLArray:
    """Keys or values as formatted dlarrays: their own format, or else the queries' one."""
    if isinstance(X, DLArray) and X._fmt:
        return X
    data = X._data if isinstance(X, DLArray) else torch.as_tensor(X)
    return dlarray(data, DataFormat or queries._fmt)


def _allowed(
    attention_mask: Any, padding_mask: Any, batch: int, queries: int, keys: int, device: torch.device
) -> torch.Tensor | None:
    """One (batch, 1, queries, keys) logical mask combining the attention and padding masks, or None."""
    allowed = None
    if isinstance(attention_mask, str):
        mode = _validate.choice("AttentionMask", attention_mask, MASKS)
        if mode == "causal" and padding_mask is not None:
            allowed = torch.ones(queries, keys, dtype=torch.bool, device=device).tril()[None, None]
    else:
        mask = (
            attention_mask._data if isinstance(attention_mask, DLArray) else torch.as_tensor(attention_mask)
        )
        if mask.ndim == 2:
            mask = mask[..., None]
        if mask.ndim != 3:
            raise DLFormatError(
                "attention AttentionMask must be numKeys × numQueries (× numObservations); got "
                f"{_validate.matlab_size(tuple(mask.shape))}"
            )
        mask = _mask(mask, "AttentionMask", (keys, queries, batch))
        allowed = rearrange(mask, "k q b -> b 1 q k").to(device)
    if padding_mask is not None:
        if isinstance(padding_mask, DLArray) and padding_mask._fmt:
            fmt, data = padding_mask._fmt, padding_mask._data
            if "C" in fmt:  # MATLAB reads the first channel only
                data, fmt = data.select(fmt.index("C"), 0), fmt.replace("C", "")
            data = data.movedim(fmt.index("B"), 0) if "B" in fmt else data[None]
            data = data.reshape(data.shape[0], -1)  # (batch, sequence)
        else:
            data = padding_mask._data if isinstance(padding_mask, DLArray) else torch.as_tensor(padding_mask)
            data = data if data.ndim == 2 else data.reshape(1, -1)
        keep = _mask(data, "PaddingMask", (batch, keys)).to(device)
        keep = keep[:, None, None, :]
        allowed = keep if allowed is None else allowed & keep
    return allowed
