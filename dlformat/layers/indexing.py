"""MATLAB's ``indexing1dLayer``: the first or last element along ``T`` (or the one ``S``), dropped.

After a ``sequenceInputLayer`` and attention, ``indexing1dLayer("last")`` turns a sequence of
vectors into one vector per observation (``"CBT"`` in, ``"CB"`` out).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._tracing import cached_plan
from ._base import Layer, matlab_constructor
from ._properties import Property
from .recurrent import _flag

__all__ = ["Indexing1DLayer", "indexing1dLayer"]

INDICES = ("first", "last")


@cached_plan()
def _indexed_label(fmt: str, caller: str) -> str:
    """The label the layer indexes: ``T`` when there is one, else the single ``S``."""
    if "T" in fmt:
        return "T"
    if fmt.count("S") == 1:
        return "S"
    raise DLFormatError(
        f'{caller} needs a "T" dimension or exactly one "S" dimension to index; got format "{fmt}"'
    )


def _select_in_memory_order(data: torch.Tensor, axis: int, index: int) -> torch.Tensor:
    """``data.select(axis, index)``, with a gradient laid out as ``data`` is.

    ``select``'s backward writes into zeros laid out in the logical order of its input. For a
    permuted view (a ``"CBT"`` label over batch-first memory) that is the transposed layout, and
    every operation before it then runs its backward on strided gradients (a transformer's
    backward took 1.2× as long). Selecting from the view in memory order gives the gradient the
    input's layout."""
    order = sorted(range(data.ndim), key=data.stride, reverse=True)
    kept = [dim for dim in order if dim != axis]
    picked = data.permute(order).select(order.index(axis), index)
    return picked.permute(sorted(range(len(kept)), key=kept.__getitem__))


class Indexing1DLayer(Layer):
    """Takes the first or last element along the time (or single spatial) dimension and drops it.

    With ``T`` in the input it indexes ``T``, otherwise the one ``S`` (``"CBT"`` or ``"SCB"``
    in, ``"CB"`` out). With ``HasPaddingMaskInput`` the layer has a second input ``"mask"``
    (ones for data, zeros for padding, in the input's format with each size equal or 1): per
    observation it takes the first or last position the mask marks as data (the first or last
    position overall where it marks none).

    Args:
        Index: ``"first"`` (default) or ``"last"``.
        HasPaddingMaskInput: a second input ``"mask"`` (default false).
        Name: the layer name.

    Examples:
        >>> layer = dlf.indexing1dLayer("last")
        >>> Y = layer(dlf.dlarray(torch.arange(12.0).reshape(2, 2, 3), "CBT"))
        >>> dlf.dims(Y), dlf.stripdims(Y).tolist()
        ('CB', [[2.0, 5.0], [8.0, 11.0]])
    """

    default_name = "indexing1d"
    matlab_type = "1-D Indexing"

    Index = Property(
        partial(_validate.choice, allowed=INDICES), default="first", positional=True, read_only=True,
        doc='"first" or "last".',
    )  # fmt: skip
    HasPaddingMaskInput = Property(_flag, default=False, read_only=True, doc="A second input: the mask.")

    def _check_properties(self) -> None:
        self._ports["in"] = ("in", "mask") if self.HasPaddingMaskInput else ("in",)

    def predict(self, X: DLArray, *mask: Any) -> DLArray:
        if not isinstance(X, DLArray) or not X._fmt:
            raise DLFormatError(f"{self._caller()} needs a formatted dlarray; got {_validate.describe(X)}")
        label = _indexed_label(X._fmt, self._caller())
        axis = X._fmt.index(label)
        output = X._fmt.replace(label, "", 1)
        if not mask:
            return DLArray._wrap(
                _select_in_memory_order(X._data, axis, 0 if self.Index == "first" else -1), output
            )
        index = self._masked_positions(X, mask[0], axis)
        return DLArray._wrap(X._data.gather(axis, index).squeeze(axis), output)

    def _masked_positions(self, X: DLArray, mask: Any, axis: int) -> torch.Tensor:
        """Per observation, the first or last position the mask marks as data, shaped for gather."""
        data = mask._data if isinstance(mask, DLArray) else torch.as_tensor(mask)
        if isinstance(mask, DLArray) and mask._fmt and mask._fmt != X._fmt:
            raise DLFormatError(
                f'{self._caller()}: the mask must have the input\'s format "{X._fmt}"; got "{mask._fmt}"'
            )
        shape = tuple(X._data.shape)
        if data.ndim != len(shape) or any(m not in (1, n) for m, n in zip(data.shape, shape, strict=True)):
            raise DLFormatError(
                f"{self._caller()}: the mask must have the input's dimensions, each of the input's size "
                f"or 1; got size {tuple(data.shape)} for input size {shape}"
            )
        batch = X._fmt.find("B")
        valid = data.to(X.device) != 0
        for dim in range(valid.ndim):
            if dim not in (axis, batch):
                valid = valid.any(dim=dim, keepdim=True)
        length = shape[axis]
        positions = torch.arange(length, device=X.device).reshape(
            [-1 if d == axis else 1 for d in range(len(shape))]
        )
        if self.Index == "first":
            index = torch.where(valid, positions, length).amin(dim=axis, keepdim=True)
        else:
            index = torch.where(valid, positions, -1).amax(dim=axis, keepdim=True)
        # a mask marking no data gives length (first) or -1 (last): the plain first or last position
        index = index.remainder(length)
        return index.expand(*[1 if d == axis else n for d, n in enumerate(shape)])


indexing1dLayer = matlab_constructor(Indexing1DLayer, "indexing1dLayer")
