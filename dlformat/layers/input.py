"""MATLAB's input layers: where a network's data enters, with its format checked (and normalized).

One place holds the normalization math of every input layer (:meth:`_InputLayer._normalize`):
MathWorks' imageInputLayer, image3dInputLayer, featureInputLayer and sequenceInputLayer pages
define the same five normalizations over the same statistics (``Mean``, ``StandardDeviation``,
``Min``, ``Max``), given as one number, one per channel, or one per element.

Statistics may be left empty: MATLAB builds such networks (``dlnetwork(layers)``,
``analyzeNetwork``) and ``trainnet``/``trainNetwork`` compute them from the training data
(``ResetInputNormalization``). So construction and initialization never need them: a run that
only finds sizes and formats (:func:`sizes_only`) passes the data on unnormalized, which has the
normalized data's size and format. Data that runs through a layer whose statistics are still
empty is an error naming the layer, the statistics and how to get them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from ._base import Layer, matlab_constructor
from ._properties import Property, choice_property

__all__ = [
    "FeatureInputLayer",
    "Image3DInputLayer",
    "ImageInputLayer",
    "SequenceInputLayer",
    "featureInputLayer",
    "image3dInputLayer",
    "imageInputLayer",
    "sequenceInputLayer",
    "sizes_only",
]

NORMALIZATIONS = ("none", "zerocenter", "zscore", "rescale-symmetric", "rescale-zero-one")
# the statistics each normalization reads, in MATLAB's words
STATISTICS_OF = {
    "none": (),
    "zerocenter": ("Mean",),
    "zscore": ("Mean", "StandardDeviation"),
    "rescale-symmetric": ("Min", "Max"),
    "rescale-zero-one": ("Min", "Max"),
}
STATISTICS = ("Mean", "StandardDeviation", "Min", "Max")
DIMENSIONS = ("auto", "channel", "element", "all")

# set while a network runs only to find its sizes (initialize, analyzeNetwork): per thread and
# per task, so a predict elsewhere still refuses empty statistics
_SIZES_ONLY: ContextVar[bool] = ContextVar("dlformat_input_sizes_only", default=False)


@contextmanager
def sizes_only() -> Iterator[None]:
    """Within: input layers whose normalization statistics are still empty pass their data on
    unnormalized (same size and format), for runs that only find sizes and formats."""
    token = _SIZES_ONLY.set(True)
    try:
        yield
    finally:
        _SIZES_ONLY.reset(token)


def _normalization_property(default: str) -> Property:
    check = partial(_validate.choice_or_callable, allowed=NORMALIZATIONS)
    return Property(
        check,
        default=default,
        read_only=True,
        doc='"none", "zerocenter", "zscore", "rescale-symmetric", "rescale-zero-one" or a callable f(X).',
    )


def _statistic(name: str, value: object) -> torch.Tensor | None:
    """A statistic as given (its shape kept: one value, one per channel or one per element)."""
    if value is None:
        return None
    if isinstance(value, DLArray):
        value = value._data
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise DLFormatError(
            f"{name} must be a number or a numeric array; got {_validate.describe(value)}"
        ) from None
    if array.size == 0:
        return None  # MATLAB's [] : not set
    if array.ndim == 0:
        array = array.reshape(1, 1)  # a MATLAB scalar is 1×1
    if not np.isfinite(array).all():
        raise DLFormatError(f"{name} must hold finite numbers; got {_validate.describe(value)}")
    return torch.from_numpy(array.copy())


def _strip_trailing_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape without its trailing ones: MATLAB's h×w×1 array is its h×w array."""
    while shape and shape[-1] == 1:
        shape = shape[:-1]
    return shape


class _InputLayer(Layer):
    """Shared behaviour: format check, optional normalization, plain tensors read in the layer's format."""

    default_inputs = 0
    trailing = "B"  # the labels after the spatial ones and C

    Normalization = _normalization_property("none")
    NormalizationDimension = choice_property(
        DIMENSIONS,
        "auto",
        'What one statistic covers: "auto" (as given), "channel", "element" or "all".',
    )
    Mean = Property(_statistic, default=None, read_only=True, buffer=True, doc="Mean (zerocenter, zscore).")
    StandardDeviation = Property(
        _statistic, default=None, read_only=True, buffer=True, doc="Standard deviation (zscore)."
    )
    Min = Property(_statistic, default=None, read_only=True, buffer=True, doc="Minimum (rescale-*).")
    Max = Property(_statistic, default=None, read_only=True, buffer=True, doc="Maximum (rescale-*).")
    SplitComplexInputs = Property(
        lambda name, value: _only_false(name, value),
        default=False,
        read_only=True,
        doc="Split complex input into real and imaginary channels (only false is supported).",
    )

    def _check_properties(self) -> None:
        for name in STATISTICS:
            statistic = getattr(self, name)
            if statistic is not None:
                self._statistic_view(name, statistic)  # refuses a shape that fits no dimension
        if self.StandardDeviation is not None and (self.StandardDeviation <= 0).any():
            raise DLFormatError(f"{type(self).__name__} StandardDeviation must be positive")
        low, high = self.Min, self.Max
        if low is not None and high is not None:
            span = high.reshape(self._statistic_view("Max", high)) - low.reshape(
                self._statistic_view("Min", low)
            )
            if (span <= 0).any():
                raise DLFormatError(
                    f"{type(self).__name__} Max must be greater than Min everywhere (the rescaling "
                    "divides by Max - Min)"
                )

    # -- sizes ------------------------------------------------------------------------------
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

    def example_input(
        self, device: torch.device | str | None = None, dtype: torch.dtype | None = None
    ) -> DLArray:
        """A small input of this layer's sizes and format (batch 1, the shortest sequence): what
        ``initialize(net)`` and ``analyzeNetwork(net)`` run when given no data."""
        shape = (*self._spatial, self._channels, 1, *self._example_length())
        return dlarray(torch.ones(shape, device=device, dtype=dtype), self.InputFormat)

    def _example_length(self) -> tuple[int, ...]:
        return ()

    # -- statistics -------------------------------------------------------------------------
    def _statistic_kinds(self, statistic: torch.Tensor) -> set[str]:
        """What one given statistic covers: ``"all"`` (one number), ``"channel"`` (one per
        channel: a vector, or 1×1×c) or ``"element"`` (h×w×c, one per element)."""
        shape = tuple(statistic.shape)
        kinds = set()
        if statistic.numel() == 1:
            kinds.add("all")
        if statistic.numel() == self._channels and sum(size > 1 for size in shape) <= 1:
            kinds.add("channel")
        if _strip_trailing_ones(shape) == _strip_trailing_ones((*self._spatial, self._channels)):
            kinds.add("element")
        return kinds

    def _statistic_view(self, name: str, statistic: torch.Tensor) -> tuple[int, ...]:
        """The shape that lines ``statistic`` up with data of the layer's format (S..., C, then
        ones for B and T); an error naming the accepted shapes when it fits none."""
        kinds = self._statistic_kinds(statistic)
        if self.NormalizationDimension != "auto":
            kinds &= {self.NormalizationDimension}
        if not kinds:
            raise DLFormatError(self._shape_message(name, statistic))
        ones = (1,) * len(self._spatial)
        trailing = (1,) * len(self.trailing)
        if "channel" in kinds:
            return (*ones, self._channels, *trailing)
        if "all" in kinds:
            return (*ones, 1, *trailing)
        return (*self._spatial, self._channels, *trailing)

    def _shape_message(self, name: str, statistic: torch.Tensor) -> str:
        ones = "1×" * len(self._spatial)
        allowed = {
            "all": "a scalar",
            "channel": f"one value per channel ({ones}{self._channels})",
            "element": f"one value per element ({_validate.matlab_size((*self._spatial, self._channels))})",
        }
        dimension = self.NormalizationDimension
        keys = ("all", "channel", "element") if self._spatial else ("all", "channel")
        shown = [allowed[key] for key in (keys if dimension == "auto" else (dimension,))]
        given = "" if dimension == "auto" else f' for NormalizationDimension "{dimension}"'
        return (
            f"{type(self).__name__} {name} must be {' or '.join(shown)}{given}; got an array of size "
            f"{_validate.matlab_size(tuple(statistic.shape)) or '1×1'}"
        )

    # -- calling ----------------------------------------------------------------------------
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
        if not X._data.is_floating_point():
            # MATLAB's input layers pass integer and logical images on as single
            X = DLArray._wrap(X._data.to(torch.get_default_dtype()), X._fmt)
        if self.Normalization == "none":
            return X
        return self._normalize(X)

    def _check_extra(self, X: DLArray) -> None:
        """Further checks of a subclass (sequence length)."""

    def _missing_statistics(self) -> list[str]:
        """The statistics the layer's normalization reads that are still empty (MATLAB's ``[]``)."""
        how = self.Normalization
        names = STATISTICS_OF.get(how, ()) if isinstance(how, str) else ()
        return [name for name in names if getattr(self, name) is None]

    def _missing_message(self, missing: list[str]) -> str:
        """Names the layer, the empty statistics and the two ways to get them."""
        them = "it" if len(missing) == 1 else "them"
        each = "a scalar or" if len(missing) == 1 else "each a scalar or"
        given = ", ".join(f"{name}=..." for name in missing)
        return (
            f'{self._caller()} has Normalization "{self.Normalization}" but its '
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} empty: nothing has computed "
            f"{them} yet. Either give {them} to the layer ({given}: {each} one value per channel, "
            f"{self._channel_size()}), or train the network first with trainnet or trainNetwork, "
            f"which compute {them} from the training data (ResetInputNormalization); "
            f'Normalization="none" does not normalize'
        )

    def _channel_size(self) -> str:
        """A per-channel statistic's size: 1×...×1×c for images, c values for vectors."""
        if self._spatial:
            return "1×" * len(self._spatial) + str(self._channels)
        return f"{self._channels} value{'s' if self._channels > 1 else ''}"

    def _statistics(self, names: tuple[str, ...], data: torch.Tensor) -> list[torch.Tensor]:
        """The named statistics (all given), shaped to broadcast against ``data``."""
        return [
            getattr(self, name).to(data.dtype).reshape(self._statistic_view(name, getattr(self, name)))
            for name in names
        ]

    def _normalize(self, X: DLArray) -> DLArray:
        """Every input layer's normalization (MathWorks' definitions):

        - zerocenter: ``x - Mean``; zscore: ``(x - Mean) / StandardDeviation``;
        - rescale-zero-one: ``(x - Min) / (Max - Min)``, in [0, 1] for data within [Min, Max];
        - rescale-symmetric: ``2 (x - Min) / (Max - Min) - 1``, in [-1, 1];
        - a callable: ``f(X)`` on the formatted data, which must keep its size.
        """
        how = self.Normalization
        if callable(how):
            return self._call_normalization(how, X)
        missing = self._missing_statistics()
        if missing:
            if _SIZES_ONLY.get():
                return X  # only sizes are wanted: the normalized data would have these
            raise DLFormatError(self._missing_message(missing))
        data = X._data
        if how == "zerocenter":
            (mean,) = self._statistics(STATISTICS_OF[how], data)
            data = data - mean
        elif how == "zscore":
            mean, deviation = self._statistics(STATISTICS_OF[how], data)
            data = (data - mean) / deviation
        else:
            low, high = self._statistics(STATISTICS_OF[how], data)
            data = (data - low) / (high - low)
            if how == "rescale-symmetric":
                data = 2 * data - 1
        return DLArray._wrap(data, X._fmt)

    def _call_normalization(self, function: Callable[[DLArray], Any], X: DLArray) -> DLArray:
        result = function(X)
        data = result._data if isinstance(result, DLArray) else result
        if not isinstance(data, torch.Tensor) or tuple(data.shape) != tuple(X.shape):
            raise DLFormatError(
                f"{self._caller()}: the Normalization function must return data of the input's size "
                f"{_validate.matlab_size(tuple(X.shape))}; got {_validate.describe(result)}"
            )
        return DLArray._wrap(data, X._fmt)


def _only_false(name: str, value: object) -> bool:
    if isinstance(value, (bool, np.bool_)) or value in (0, 1):
        if bool(value):
            raise DLFormatError(
                f"{name}=true (complex input split into real and imaginary channels) is not supported "
                "by dlformat; pass real data"
            )
        return False
    raise DLFormatError(f"{name} must be true or false; got {_validate.describe(value)}")


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


def _image_size(name: str, value: object, spatial: int) -> tuple[int, ...]:
    """``[h w c]`` (``[h w]`` for one channel) or ``[h w d c]``: MATLAB's image InputSize."""
    if not isinstance(value, (tuple, list, np.ndarray, torch.Tensor)) or (
        isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim != 1
    ):
        raise DLFormatError(f"{name} must be a row vector of sizes; got {_validate.describe(value)}")
    sizes = tuple(_validate.positive_integer(name, size) for size in value)
    if len(sizes) == spatial == 2:
        sizes = (*sizes, 1)  # grayscale: imageInputLayer's page allows [h w] (image3dInputLayer's does not)
    if len(sizes) != spatial + 1:
        wanted = "[h w c] (or [h w] for one channel)" if spatial == 2 else "[h w d c]"
        raise DLFormatError(f"{name} must be {wanted}; got {len(sizes)} sizes")
    return sizes


class SequenceInputLayer(_InputLayer):
    """MATLAB's ``sequenceInputLayer``: sequence data of format ``"CBT"`` (``"SCBT"``, ... for images).

    Args:
        InputSize: channels ``c``, or ``(h, c)``, ``(h, w, c)``, ``(h, w, d, c)`` for sequences of
            1-D, 2-D or 3-D images (one ``S`` per spatial size).
        Normalization: ``"none"`` (default), ``"zerocenter"``, ``"zscore"``,
            ``"rescale-symmetric"``, ``"rescale-zero-one"`` or a callable ``f(X)``; the statistics
            it reads (``Mean``, ``StandardDeviation``, ``Min``, ``Max``) are given here, each one
            value, one per channel, or (image sequences) one per element ``h×w×c``.
        NormalizationDimension: ``"auto"`` (as the statistics are shaped), ``"channel"``,
            ``"element"`` or ``"all"``: the shape the statistics must have.
        SplitComplexInputs: only ``False`` (complex data is not supported).
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
        Normalization, Mean, StandardDeviation, Min, Max, SplitComplexInputs: as for
            :class:`SequenceInputLayer`; ``NormalizationDimension`` is ``"auto"``, ``"channel"``
            or ``"all"``.
        Name: the layer name.

    Examples:
        >>> layer = dlf.featureInputLayer(4, Name="features")
        >>> dlf.dims(layer(torch.randn(4, 8)))  # plain data is read in the layer's format
        'CB'
    """

    default_name = "featureinput"
    NormalizationDimension = choice_property(
        ("auto", "channel", "all"), "auto", 'What one statistic covers: "auto", "channel" or "all".'
    )
    NumFeatures = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Features per observation."
    )

    @property
    def _channels(self) -> int:
        return int(self.NumFeatures)


sequenceInputLayer = matlab_constructor(SequenceInputLayer, "sequenceInputLayer")
featureInputLayer = matlab_constructor(FeatureInputLayer, "featureInputLayer")


class _ImageInputLayer(_InputLayer):
    """MATLAB's image input layers: ``InputSize`` ``[h w c]`` or ``[h w d c]``, default
    normalization ``"zerocenter"``."""

    Normalization = _normalization_property("zerocenter")
    InputSize: Any  # declared by each subclass, with its number of spatial sizes

    @property
    def _channels(self) -> int:
        return int(self.InputSize[-1])

    @property
    def _spatial(self) -> tuple[int, ...]:
        return tuple(self.InputSize[:-1])


class ImageInputLayer(_ImageInputLayer):
    """MATLAB's ``imageInputLayer``: 2-D images of format ``"SSCB"``, normalized.

    Args:
        InputSize: ``(h, w, c)``, or ``(h, w)`` for one channel.
        Normalization: ``"zerocenter"`` (default: subtract ``Mean``), ``"zscore"`` (then divide
            by ``StandardDeviation``), ``"rescale-symmetric"`` (to [-1, 1] from ``Min``/``Max``),
            ``"rescale-zero-one"`` (to [0, 1]), ``"none"``, or a callable ``f(X)``.
        NormalizationDimension: ``"auto"`` (default: as the statistics are shaped),
            ``"channel"``, ``"element"`` or ``"all"``: the shape the statistics must have.
        Mean, StandardDeviation, Min, Max: one number, one per channel (``1×1×c``) or one per
            element (``h×w×c``). ``trainnet`` computes them from the training data
            (``ResetInputNormalization``); outside training, a normalization whose statistics
            are unset is an error when data arrives.
        SplitComplexInputs: only ``False``.
        Name: the layer name.

    Shape:
        - Input: ``"SSCB"`` data of ``h × w × c`` per observation (a plain tensor is read as
          ``"SSCB"``); integer images are converted to the default float dtype.
        - Output: the same format and size, normalized.

    Examples:
        >>> layer = dlf.imageInputLayer(
        ...     [28, 28, 1], Normalization="zscore", Mean=0.13, StandardDeviation=0.31
        ... )
        >>> Y = layer(torch.full((28, 28, 1, 2), 0.44))
        >>> dlf.dims(Y), round(dlf.extractdata(Y)[0, 0, 0, 0].item(), 6)
        ('SSCB', 1.0)
    """

    default_name = "imageinput"
    InputSize = Property(partial(_image_size, spatial=2), positional=True, read_only=True, doc="[h w c].")


class Image3DInputLayer(_ImageInputLayer):
    """MATLAB's ``image3dInputLayer``: 3-D images (volumes) of format ``"SSSCB"``, normalized.

    Args:
        InputSize: ``(h, w, d, c)``.
        Normalization, NormalizationDimension, Mean, StandardDeviation, Min, Max,
            SplitComplexInputs, Name: as for :class:`ImageInputLayer`, with per-channel statistics
            ``1×1×1×c`` and per-element ones ``h×w×d×c``.

    Examples:
        >>> layer = dlf.image3dInputLayer([4, 4, 3, 2], Normalization="rescale-zero-one", Min=0, Max=255)
        >>> Y = layer(dlf.dlarray(torch.full((4, 4, 3, 2, 5), 51.0), "SSSCB"))
        >>> dlf.dims(Y), round(dlf.extractdata(Y).max().item(), 6)
        ('SSSCB', 0.2)
    """

    default_name = "image3dinput"
    matlab_type = "3-D Image Input"
    InputSize = Property(partial(_image_size, spatial=3), positional=True, read_only=True, doc="[h w d c].")


imageInputLayer = matlab_constructor(ImageInputLayer, "imageInputLayer")
image3dInputLayer = matlab_constructor(Image3DInputLayer, "image3dInputLayer")
