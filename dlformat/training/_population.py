"""``BatchNormalizationStatistics="population"``: batch normalization's statistics of the whole
training set, computed in one more pass over it after training.

MathWorks' batchNormalizationLayer page: with ``"moving"`` the layer keeps the running estimates
training updated; with ``"population"``, once training finishes, the software passes through the
training data once more and sets ``TrainedMean`` and ``TrainedVariance`` to the mean and variance
computed from the entire training set. What the page leaves open, dlformat's choices:

- the pass takes the observations in order, in mini-batches of ``MiniBatchSize``, the last one
  short when ``MiniBatchSize`` does not divide their number (every observation counts once);
- during the pass each batch normalization layer normalizes by its mini-batch's own statistics,
  as in training (so the layers after it see what they saw in training, Ioffe and Szegedy's
  population statistics); every other layer behaves as at inference (no dropout);
- the variance is the biased one (divided by the number of values ``M``), the variance batch
  normalization normalizes by, over every value of the channel (observations, ``S``, ``T``,
  ``U``); padded time steps of sequences count, as they do in the moving statistics.
"""

from __future__ import annotations

from typing import Any

import torch

from ..layers import BatchNormalizationLayer
from ._data import Data, as_arguments

__all__ = ["set_population_statistics"]


class _Moments:
    """Count, mean and sum of squared deviations per channel, merged batch by batch (Chan et
    al.'s pairwise update, in float64: no cancellation of a large mean)."""

    def __init__(self) -> None:
        self.count = 0
        self.mean: torch.Tensor | None = None
        self.squares: torch.Tensor | None = None

    def add(self, values: torch.Tensor) -> None:
        """``values``: channels × M."""
        n = values.shape[1]
        mean = values.mean(1)
        squares = (values - mean[:, None]).pow(2).sum(1)
        if self.mean is None or self.squares is None:
            self.count, self.mean, self.squares = n, mean, squares
            return
        total = self.count + n
        delta = mean - self.mean
        self.mean = self.mean + delta * (n / total)
        self.squares = self.squares + squares + delta.pow(2) * (self.count * n / total)
        self.count = total


def set_population_statistics(
    net: Any, X: Data, batch_size: int, device: torch.device, dtype: torch.dtype
) -> None:
    """Sets each batch normalization layer's ``TrainedMean``/``TrainedVariance`` of ``net`` to the
    mean and biased variance of its inputs over one pass of the training data ``X``."""
    layers = [layer for layer in net.Layers if isinstance(layer, BatchNormalizationLayer)]
    if not layers:
        return
    moments = {id(layer): _Moments() for layer in layers}

    def recorded(layer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        data, fmt = args[0]._data, args[0]._fmt
        channel = fmt.index("C")
        moments[id(layer)].add(data.detach().movedim(channel, 0).reshape(data.shape[channel], -1).double())
        return args, {**kwargs, "training": True}  # normalized by the mini-batch, as in training

    handles = [layer.register_forward_pre_hook(recorded, with_kwargs=True) for layer in layers]
    home = next((value.device for _, _, value in net.Learnables), torch.device("cpu"))
    net.to(device)
    try:
        with torch.no_grad():
            for begin in range(0, len(X), batch_size):
                indices = torch.arange(begin, min(begin + batch_size, len(X)))
                net(*as_arguments(X.batch(indices, device, dtype)), training=False)
    finally:
        for handle in handles:
            handle.remove()
    for layer in layers:
        measured = moments[id(layer)]
        assert measured.mean is not None and measured.squares is not None  # every layer ran
        # the assignment puts them on the statistics' device, in their dtype (or, for start values
        # the layer made, in the precision of the statistics and the learnables: Layer._assigned_dtype)
        layer.TrainedMean = measured.mean.reshape(-1, 1)
        layer.TrainedVariance = (measured.squares / measured.count).reshape(-1, 1)
    net.to(home)
