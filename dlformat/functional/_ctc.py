"""MATLAB's ``ctc``: connectionist temporal classification loss over torch's ``ctc_loss``.

MathWorks (``ctc``, https://www.mathworks.com/help/deeplearning/ref/dlarray.ctc.html):
``loss = ctc(Y, targets, YMask, targetsMask)`` with ``Y`` the formatted predictions, the masks
marking the valid time steps and target elements, the loss reduced by the mean over the batch
dimension, and ``BlankIndex`` ``"first"`` (default) or ``"last"`` placing the blank at the first or
last element of the vocabulary. What that text leaves open is chosen here and written in
docs/training_loop.md: ``Y`` holds probabilities (a softmax output; the loss takes their log),
``targets`` are 1-based indices into ``Y``'s channels (so never the blank's), and each mask is
``B × T`` (``B × S``) and marks a leading run of valid elements.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from ._common import as_data, floating_data, formatted_input

__all__ = ["ctc"]


def _batch_by_steps(caller: str, name: str, value: Any, rows: int) -> torch.Tensor:
    """A ``B × n`` array (unformatted, or formatted ``"BT"``) as a tensor."""
    if isinstance(value, DLArray) and value._fmt not in ("", "BT"):
        raise DLFormatError(f'{caller}: {name} must be unformatted or formatted "BT"; got "{value._fmt}"')
    data = as_data(value, f"{caller} {name}")
    if data.ndim == 1 and rows == 1:
        data = data.reshape(1, -1)
    if data.ndim != 2 or data.shape[0] != rows:
        raise DLFormatError(
            f"{caller}: {name} must be B×n with B = {rows} (the batch size of Y); got "
            f"{_validate.matlab_size(tuple(data.shape))}"
        )
    return data


def _lengths(caller: str, name: str, mask: torch.Tensor) -> torch.Tensor:
    """The valid length of each row of a mask that marks a leading run of valid elements."""
    valid = mask != 0
    lengths = valid.sum(dim=1)
    leading = torch.arange(mask.shape[1], device=mask.device) < lengths[:, None]
    if not torch.equal(valid, leading):
        raise DLFormatError(
            f"{caller}: each row of {name} must mark a leading run of valid elements (ones, then zeros)"
        )
    return lengths


@matlab_function
def ctc(
    Y: Any, targets: Any, YMask: Any, targetsMask: Any, *, BlankIndex: Any = "first", DataFormat: Any = None
) -> DLArray:
    """MATLAB's ``loss = ctc(Y, targets, YMask, targetsMask)``: the CTC loss, mean over the batch.

    Args:
        Y: probabilities (a softmax output over ``C``), formatted ``"CBT"`` or unformatted with
            ``DataFormat``; ``C`` holds the vocabulary with the blank.
        targets: ``B × S`` class indices, 1-based into ``Y``'s channels (never the blank).
        YMask: ``B × T``, nonzero at the valid time steps of each sequence (a leading run).
        targetsMask: ``B × S``, nonzero at the valid target elements (a leading run).
        BlankIndex: ``"first"`` (default: channel 1 is the blank) or ``"last"``.

    Returns an unformatted scalar dlarray: the mean over observations of
    ``−log p(target | Y)``, the probability summed over all alignments of the target to ``Y``.

    Examples:
        >>> Y = dlf.dlarray(torch.full((3, 1, 2), 1 / 3), "CBT")
        >>> loss = dlf.ctc(Y, torch.tensor([[2]]), torch.ones(1, 2), torch.ones(1, 1))
        >>> round(dlf.extractdata(loss).item(), 6)  # 3 alignments of 1/9 each: −log(1/3)
        1.098612
    """
    X, _ = formatted_input(Y, DataFormat, "ctc", needs="CBT")
    if X._fmt != "CBT":
        raise DLFormatError(f'ctc: Y must have format "CBT" (channels, batch, time); got "{X._fmt}"')
    probabilities = floating_data(X._data, "ctc")
    channels, batch, steps = probabilities.shape
    blank = _validate.choice("ctc: BlankIndex", BlankIndex, ("first", "last"))
    blank_channel = 0 if blank == "first" else channels - 1
    labels = _batch_by_steps("ctc", "targets", targets, batch)
    y_mask = _batch_by_steps("ctc", "YMask", YMask, batch)
    if y_mask.shape[1] != steps:
        raise DLFormatError(
            f"ctc: YMask must have T = {steps} columns, one per time step of Y; got {y_mask.shape[1]}"
        )
    y_lengths = _lengths("ctc", "YMask", y_mask)
    target_mask = _batch_by_steps("ctc", "targetsMask", targetsMask, batch)
    if target_mask.shape != labels.shape:
        raise DLFormatError(
            f"ctc: targetsMask must have the size of targets ({_validate.matlab_size(tuple(labels.shape))}); "
            f"got {_validate.matlab_size(tuple(target_mask.shape))}"
        )
    t_lengths = _lengths("ctc", "targetsMask", target_mask)
    valid = target_mask != 0
    chosen = labels[valid]
    if chosen.numel() and (
        not torch.equal(chosen, chosen.round()) or chosen.min() < 1 or chosen.max() > channels
    ):
        raise DLFormatError(
            f"ctc: targets must be integer class indices from 1 to {channels} (the channels of Y)"
        )
    indices = torch.where(valid, labels, 1).round().long() - 1
    if bool((indices[valid] == blank_channel).any()):
        raise DLFormatError(
            f'ctc: targets hold the blank\'s index {blank_channel + 1} (BlankIndex "{blank}"); targets '
            "must be other classes"
        )
    log_probabilities = torch.log(probabilities).permute(2, 1, 0)  # torch's T × B × C
    losses = F.ctc_loss(
        log_probabilities,
        indices,
        y_lengths.long(),
        t_lengths.long(),
        blank=blank_channel,
        reduction="none",
        zero_infinity=False,
    )
    # torch's ctc_loss gradient assumes log_softmax outputs: it carries an extra exp(log p) at each
    # valid time step, which log_softmax's backward would cancel. Y is probabilities here, so
    # subtract that term (zero in value: x - x.detach() is exactly 0) to get d(loss)/dY itself.
    valid_steps = (torch.arange(steps, device=y_lengths.device)[:, None] < y_lengths[None, :]).to(
        log_probabilities.dtype
    )
    spurious = (log_probabilities.exp() * valid_steps[:, :, None]).sum(dim=(0, 2))
    losses = losses - (spurious - spurious.detach())
    return DLArray._wrap(losses.mean(), "")
