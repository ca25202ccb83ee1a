"""MATLAB's legacy ``sequenceFoldingLayer`` and ``sequenceUnfoldingLayer`` (old CNN-LSTM networks).

Folding turns a batch of sequences into a batch of their time steps (``"SSCBT"`` in, ``"SSCB"``
out, ``N·T`` observations) so that image layers run on each time step; its second output
``"miniBatchSize"`` tells the unfolding layer how to restore the sequences. MathWorks marks both
"not recommended": dlformat's image layers take ``"SSCBT"`` data themselves.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, require_formatted
from .._errors import DLFormatError
from ._base import Layer, matlab_constructor

__all__ = ["SequenceFoldingLayer", "SequenceUnfoldingLayer", "sequenceFoldingLayer", "sequenceUnfoldingLayer"]

BATCH_PORT = "miniBatchSize"


class SequenceFoldingLayer(Layer):
    """Folds the time steps of a batch of sequences into the batch: ``N`` sequences of ``T`` steps
    become ``N·T`` observations, observation ``n + N·t`` (0-based) being step ``t`` of sequence
    ``n``, MATLAB's column-major reshape of ``h×w×c×N×T`` to ``h×w×c×(N·T)``.

    Outputs: ``"out"``, the input's format without ``T`` (``"SSCBT"`` gives ``"SSCB"``,
    ``"SSSCBT"`` gives ``"SSSCB"``, ``"CBT"`` gives ``"CB"``); ``"miniBatchSize"``, ``N`` (an
    unformatted scalar dlarray), which must be connected to the ``"miniBatchSize"`` input of the
    matching :class:`SequenceUnfoldingLayer`, as MATLAB requires. The input needs ``B`` and ``T``.

    Examples:
        >>> Y, N = dlf.sequenceFoldingLayer()(dlf.dlarray(torch.randn(8, 8, 3, 2, 5), "SSCBT"))
        >>> dlf.dims(Y), tuple(Y.shape), int(N)
        ('SSCB', (8, 8, 3, 10), 2)
    """

    default_name = "seqfold"
    matlab_type = "Sequence Folding"

    def _check_properties(self) -> None:
        self._ports["out"] = ("out", BATCH_PORT)

    def predict(self, X: DLArray) -> tuple[DLArray, DLArray]:
        X = require_formatted(X, self._caller)
        fmt = X._fmt
        if "B" not in fmt or "T" not in fmt:
            raise DLFormatError(
                f'{self._caller()} needs a batch of sequences, a dlarray with "B" and "T" dimensions '
                f'(such as "SSCBT" or "CBT"); got format "{fmt}"'
            )
        batch, time = fmt.index("B"), fmt.index("T")
        # T just before B, then one dimension: index t·N + n, MATLAB's column-major n + N·t
        data = X._data.movedim(time, batch).flatten(batch, batch + 1)
        size = torch.tensor(float(X.shape[batch]), dtype=X.dtype, device=X.device)
        return DLArray._wrap(data, fmt.replace("T", "")), DLArray._wrap(size, "")


class SequenceUnfoldingLayer(Layer):
    """Restores the sequences a :class:`SequenceFoldingLayer` folded: ``N·T`` observations become
    ``N`` sequences of ``T`` steps (``"SSCB"`` in, ``"SSCBT"`` out).

    Inputs: ``"in"``, data with ``B`` and without ``T``; ``"miniBatchSize"``, ``N``: connect the
    folding layer's ``"miniBatchSize"`` output to it
    (``connectLayers(net, "seqfold/miniBatchSize", "sequnfold/miniBatchSize")``). The number of
    observations must be a multiple of ``N``.

    Examples:
        >>> fold, unfold = dlf.sequenceFoldingLayer(), dlf.sequenceUnfoldingLayer()
        >>> X = dlf.dlarray(torch.randn(4, 4, 3, 2, 5), "SSCBT")
        >>> Y, N = fold(X)
        >>> Z = unfold(Y, N)
        >>> dlf.dims(Z), torch.equal(dlf.stripdims(Z), dlf.stripdims(X))
        ('SSCBT', True)
    """

    default_name = "sequnfold"
    matlab_type = "Sequence Unfolding"

    def _check_properties(self) -> None:
        self._ports["in"] = ("in", BATCH_PORT)

    def predict(self, X: DLArray, miniBatchSize: Any) -> DLArray:
        X = require_formatted(X, self._caller)
        fmt = X._fmt
        if "B" not in fmt or "T" in fmt:
            raise DLFormatError(
                f'{self._caller()} needs folded data, a dlarray with a "B" dimension and no "T" (such as '
                f'"SSCB"); got format "{fmt}"'
            )
        sequences = _batch_size(self._caller(), miniBatchSize)
        batch = fmt.index("B")
        observations = int(X.shape[batch])
        if observations % sequences:
            raise DLFormatError(
                f"{self._caller()}: {observations} observations cannot be {sequences} sequences of equal "
                f"length (miniBatchSize {sequences}); connect the miniBatchSize output of the folding layer"
            )
        data = X._data.unflatten(batch, (observations // sequences, sequences)).movedim(batch, batch + 1)
        return DLArray._wrap(data, fmt[: batch + 1] + "T" + fmt[batch + 1 :])


def _batch_size(caller: str, value: Any) -> int:
    """The folding layer's ``miniBatchSize`` output (or a positive integer) as an int."""
    data = value._data if isinstance(value, DLArray) else value
    size = np.asarray(data.detach().cpu() if isinstance(data, torch.Tensor) else data)
    if size.size != 1:
        raise DLFormatError(
            f"{caller}: miniBatchSize must be one positive integer (the folding layer's miniBatchSize "
            f"output); got {_validate.describe(value)}"
        )
    return _validate.positive_integer(f"{caller}: miniBatchSize", size.reshape(()).item())


sequenceFoldingLayer = matlab_constructor(SequenceFoldingLayer, "sequenceFoldingLayer")
sequenceUnfoldingLayer = matlab_constructor(SequenceUnfoldingLayer, "sequenceUnfoldingLayer")
