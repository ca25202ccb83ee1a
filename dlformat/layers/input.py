"""MATLAB's input layers: where a network's data enters, with its format checked (and normalized)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from ._base import Layer, matlab_constructor
from ._properties import Property, choice_property

__all__ = ["FeatureInputLayer", "SequenceInputLayer", "featureInputLayer", "sequenceInputLayer"]

NORMALIZATIONS = ("none", "zerocenter", "zscore")


def _statistic(name: str, value: object) -> torch.Tensor | None:
    if value is None:
        return None
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DLFormatError(
            f"{name} must be a number or a numeric vector; got {_validate.describe(value)}"
        ) from None
    if array.size == 0 or not np.isfinite(array).all():
        raise DLFormatError(f"{name} must hold finite numbers; got {_validate.describe(value)}")
    return torch.from_numpy(array.reshape(-1).copy())


class _InputLayer(Layer):
    """Shared behaviour: format check, optional normalization, plain tensors read in the layer's format."""

    default_inputs = 0
    trailing = "B"  # the labels after the spatial ones and C

    Normalization = choice_property(
        NORMALIZATIONS,
        "none",
        '"none", "zerocenter" (subtract Mean) or "zscore" (subtract Mean, divide by StandardDeviation).',
    )
    Mean = Property(_statistic, default=None, read_only=True, buffer=True, doc="Per-channel (or one) mean.")
    StandardDeviation = Property(
        _statistic, default=None, read_only=True, buffer=True, doc="Per-channel (or one) deviation."
    )

    def _check_properties(self) -> None:
        for name in ("Mean", "StandardDeviation"):
            statistic = getattr(self, name)
            if statistic is not None and statistic.numel() not in (1, self._channels):
                raise DLFormatError(
                    f"{type(self).__name__} {name} must have 1 or {self._channels} (one per channel) "
                    f"elements; got {statistic.numel()}"
                )
            if statistic is not None and name == "StandardDeviation" and (statistic <= 0).any():
                raise DLFormatError(f"{type(self).__name__} StandardDeviation must be positive")

    def example_input(
        self, device: torch.device | str | None = None, dtype: torch.dtype | None = None
    ) -> DLArray:
        """A small input of this layer's sizes and format (batch 1, the shortest sequence): what
        ``initialize(net)`` and ``analyzeNetwork(net)`` run when given no data."""
        shape = (*self._spatial, self._channels, 1, *self._example_length())
        return dlarray(torch.ones(shape, device=device, dtype=dtype), self.InputFormat)

    def _example_length(self) -> tuple[int, ...]:
        return ()

    @property
    def _channels(self) -> int:
        raise NotImplementedError

    @property
    def _spatial(self) -> tuple[int, ...]:
        return ()

    @property
    def InputFormat(self) -> str:
        """The format the layer's data must have (plain tensors are read in this order)."""
        return "S" * len(self._spatial) + "C" + self.trailing

    def predict(self, data: Any) -> DLArray:
        expected = self.InputFormat
        X = data if isinstance(data, DLArray) and data._fmt else dlarray(data, expected)
        if X._fmt != expected:
            raise DLFormatError(
                f'{self._caller()} needs data of format "{expected}"; got "{X._fmt}". Label batch-first '
                f'data with its own order, e.g. dlarray(x, "BTC"), and it is permuted to "{expected}"'
            )
        sizes = tuple(X.shape[: len(self._spatial) + 1])
        wanted = (*self._spatial, self._channels)
        if sizes != wanted:
            raise DLFormatError(
                f"{self._caller()} needs {_validate.matlab_size(wanted)} "
                f"({'spatial × ' * len(self._spatial)}channels) per element; the data has "
                f"{_validate.matlab_size(sizes)}"
            )
        self._check_extra(X)
        if self.Normalization == "none":
            return X
        return DLArray._wrap(self._normalize(X._data), X._fmt)

    def _check_extra(self, X: DLArray) -> None:
        """Further checks of a subclass (sequence length)."""

    def _normalize(self, data: torch.Tensor) -> torch.Tensor:
        mean = self.Mean
        if mean is None or (self.Normalization == "zscore" and self.StandardDeviation is None):
            needed = "Mean" if self.Normalization == "zerocenter" else "Mean and StandardDeviation"
            raise DLFormatError(
                f'{self._caller()} with Normalization "{self.Normalization}" needs {needed}; set them at '
                f"construction (MATLAB computes them in trainnet, which dlformat does not port)"
            )
        shape = [1] * data.ndim
        shape[len(self._spatial)] = -1
        data = data - mean.to(data.dtype).view(shape)
        if self.Normalization == "zscore":
            data = data / self.StandardDeviation.to(data.dtype).view(shape)
        return data


def _input_size(name: str, value: object) -> int | tuple[int, ...]:
    if isinstance(value, (tuple, list, np.ndarray, torch.Tensor)) and not (
        isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim == 0
    ):
        sizes = tuple(_validate.positive_integer(name, size) for size in value)
        if len(sizes) == 1:
            return sizes[0]
        if not 2 <= len(sizes) <= 4:
            raise DLFormatError(
                f"{name} must be a channel count c, or [h c], [h w c] or [h w d c] for image sequences; "
                f"got {len(sizes)} sizes"
            )
        return sizes
    return _validate.positive_integer(name, value)


class SequenceInputLayer(_InputLayer):
    """MATLAB's ``sequenceInputLayer``: sequence data of format ``"CBT"`` (``"SCBT"``, ... for images).

    Args:
        InputSize: channels ``c``, or ``(h, c)``, ``(h, w, c)``, ``(h, w, d, c)`` for sequences of
            1-D, 2-D or 3-D images (one ``S`` per spatial size).
        Normalization: ``"none"``, ``"zerocenter"`` or ``"zscore"``, with ``Mean`` and
            ``StandardDeviation`` (one value, or one per channel) given here.
        MinLength: the shortest sequence accepted (default 1).
        Name: the layer name.

    Shape:
        - Input: a dlarray of format ``"CBT"`` (after canonical ordering, so ``dlarray(x, "BTC")``
          works), or a plain tensor already in that order.
        - Output: the same data, normalized if asked.

    Examples:
        >>> layer = dlf.sequenceInputLayer(2, Normalization="zscore", Mean=[1, 2], StandardDeviation=[2, 4])
        >>> Y = layer(dlf.dlarray(torch.tensor([[[3.0]], [[6.0]]]), "CBT"))
        >>> dlf.extractdata(Y).flatten().tolist()
        [1.0, 1.0]
    """

    default_name = "sequenceinput"
    trailing = "BT"
    InputSize = Property(
        _input_size, positional=True, read_only=True, doc="Channels, or (h, ..., c) for images."
    )
    MinLength = Property(
        _validate.positive_integer, default=1, read_only=True, doc="Shortest accepted sequence."
    )

    def _example_length(self) -> tuple[int, ...]:
        return (self.MinLength,)

    @property
    def _channels(self) -> int:
        size = self.InputSize
        return size if isinstance(size, int) else size[-1]

    @property
    def _spatial(self) -> tuple[int, ...]:
        size = self.InputSize
        return () if isinstance(size, int) else size[:-1]

    def _check_extra(self, X: DLArray) -> None:
        length = X.shape[-1]
        if length < self.MinLength:
            raise DLFormatError(
                f"{self._caller()} needs sequences of at least MinLength={self.MinLength} steps; got {length}"
            )


class FeatureInputLayer(_InputLayer):
    """MATLAB's ``featureInputLayer``: feature vectors of format ``"CB"``.

    Args:
        NumFeatures: channels per observation.
        Normalization, Mean, StandardDeviation: as for :class:`SequenceInputLayer`.
        Name: the layer name.

    Examples:
        >>> layer = dlf.featureInputLayer(4, Name="features")
        >>> dlf.dims(layer(torch.randn(4, 8)))  # plain data is read in the layer's format
        'CB'
    """

    default_name = "featureinput"
    NumFeatures = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Features per observation."
    )

    @property
    def _channels(self) -> int:
        return int(self.NumFeatures)


sequenceInputLayer = matlab_constructor(SequenceInputLayer, "sequenceInputLayer")
featureInputLayer = matlab_constructor(FeatureInputLayer, "featureInputLayer")
