"""MATLAB's convolution layers: ``convolution1dLayer``, ``convolution2dLayer``,
``convolution3dLayer``, ``groupedConvolution2dLayer`` and ``transposedConv1dLayer``,
``transposedConv2dLayer``, ``transposedConv3dLayer``: thin wrappers of
:func:`dlformat.functional.dlconv` and :func:`dlformat.functional.dltranspconv`.

Learnables are laid out as MATLAB lays them out (MathWorks, each layer's ``Weights`` and ``Bias``
properties): ``FilterSize × NumChannels × NumFilters`` weights and a ``1 × … × 1 × NumFilters``
bias (one leading 1 per slid dimension); grouped ``FilterSize × NumChannelsPerGroup ×
NumFiltersPerGroup × NumGroups``; transposed ``FilterSize × NumFilters × NumChannels``. MATLAB's
``"glorot"`` and ``"he"`` count ``prod(FilterSize)`` times the (per-group) input channels as inputs
and ``prod(FilterSize)`` times the (per-group) filters as outputs, for the transposed layers too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional import _sliding, dlconv, dltranspconv
from ..functional._common import floating_data
from ..functional._convolution import layer_dlconv
from ._base import matlab_constructor
from ._properties import Learnable, Property, auto_size_property, factor_properties, initializer_property
from ._window import PaddedLayer, WindowLayer, padding_property, padding_views, sizes_property

__all__ = [
    "Convolution1DLayer",
    "Convolution2DLayer",
    "Convolution3DLayer",
    "GroupedConvolution2DLayer",
    "TransposedConvolution1DLayer",
    "TransposedConvolution2DLayer",
    "TransposedConvolution3DLayer",
    "convolution1dLayer",
    "convolution2dLayer",
    "convolution3dLayer",
    "groupedConvolution2dLayer",
    "transposedConv1dLayer",
    "transposedConv2dLayer",
    "transposedConv3dLayer",
]


def _num_groups(name: str, value: Any) -> int | str:
    if isinstance(value, str):
        return _validate.choice(name, value, ("channel-wise",), also=", or a positive integer")
    return _validate.positive_integer(name, value)


def _sliding_properties() -> tuple[Property, Property, Property]:
    """``DilationFactor``, ``Padding`` and ``PaddingValue`` of the (grouped) convolution layers."""
    return (
        sizes_property("Spacing of the filter taps, per slid dimension (default 1)."),
        padding_property(
            '"same", "causal" (1-D), or sizes: p, [a b] (both edges), [t b l r] (before and after '
            "each dimension), or a 2×d matrix [before; after]."
        ),
        Property(
            _sliding.padding_value,
            default=0,
            read_only=True,
            doc='A number, "symmetric-include-edge", "symmetric-exclude-edge" or "replicate".',
        ),
    )


def _channel_properties() -> tuple[Property, Property]:
    """``NumChannels`` (``"auto"``: the first input's) and ``NumFilters`` (positional)."""
    return (
        auto_size_property('"auto" or the channels.'),
        Property(_validate.positive_integer, positional=True, read_only=True, doc="Number of filters."),
    )


_FACTORS = """WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor: default 1;
        BiasL2Factor: default 0, as in MATLAB."""
_TORCH = "device, dtype, generator: torch factory arguments for the learnables."


class _ConvolutionLayer(WindowLayer):
    """What every convolution layer declares: filters, stride, learnables, initializers, factors."""

    default_name = "conv"
    lazy_size = "NumChannels"
    lazy_meaning = "channels"
    _window = "filter"
    weights_format: ClassVar[str] = "CU"  # the labels after the filter dimensions
    _function: ClassVar[Callable[..., DLArray]] = dlconv
    _passed: ClassVar[tuple[str, ...]] = ("Stride", "DilationFactor", "Padding", "PaddingValue")
    sized: ClassVar[tuple[str, ...]] = ("FilterSize", "Stride")

    FilterSize = sizes_property("Filter size per slid dimension.", positional=True)
    Weights = Learnable(initializer="WeightsInitializer")
    Bias = Learnable(initializer="BiasInitializer")
    Stride = sizes_property("Step of the filter, per slid dimension (default 1).")
    WeightsInitializer = initializer_property("glorot")
    BiasInitializer = initializer_property("zeros")
    WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")
    BiasLearnRateFactor, BiasL2Factor = factor_properties("Bias", l2=0.0)

    @classmethod
    def _doc_facts(cls) -> dict[str, str]:
        """The learnables' sizes as the docstrings write them (``{filter} × … × NumFilters``,
        ``{ones}NumFilters``), and the factor and torch arguments."""
        dims = cls.dims
        filter_sizes = [f"FilterSize({n})" for n in range(1, dims + 1)] if dims > 1 else ["FilterSize"]
        return {
            **super()._doc_facts(),
            "filter": " × ".join(filter_sizes),
            "ones": "1 × " * dims,
            "factors": _FACTORS,
            "torch": _TORCH,
        }

    @property
    def _filter(self) -> tuple[int, ...]:
        size = self._properties["FilterSize"]
        return (size,) if self.dims == 1 else size

    def _weight_sizes(self, channels: int) -> tuple[int, ...]:
        """The weights' dimensions after the filter size."""
        raise NotImplementedError

    def _fans(self, channels: int) -> tuple[int, int]:
        """MATLAB's ``(numIn, numOut)`` for ``"glorot"`` and ``"he"``: the filter area times the input
        channels, and times the filters."""
        area = math.prod(self._filter)
        return area * channels, area * int(self._properties["NumFilters"])

    def _outputs(self, channels: int) -> tuple[int, ...]:
        """The bias's dimensions after its leading ones: the filters."""
        return (int(self._properties["NumFilters"]),)

    def _learnable_shape(self, name: str) -> tuple[int, ...] | None:
        if name == "Weights":
            return (*self._filter, *self._weight_sizes(self._fixed_size(name)))
        if name == "Bias":
            return (1,) * self.dims + self._outputs(self._fixed_size(name))
        return super()._learnable_shape(name)

    def _initializer(self, name: str) -> tuple[str | Callable[..., object], int, int]:
        num_in, num_out = self._fans(self._fixed_size(name))
        return getattr(self, self._learnable_specs[name].initializer), num_in, num_out

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shape = tuple(getattr(given["Weights"], "shape", ()))
        if len(shape) != self.dims + len(self.weights_format):
            return None
        return self._channels_from(shape[self.dims :])

    def _channels_from(self, sizes: tuple[int, ...]) -> int:
        """The lazy size that weights with these dimensions after the filter size imply."""
        raise NotImplementedError

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller)
        floating_data(X._data, self._caller())
        labels = self._slid(X._fmt)
        self._fit_input(X)
        options = {name: self._properties[name] for name in self._passed}
        weights, fmt = self.Weights, labels + self.weights_format
        # the per-call fast path: spatial filters are already in the weights' canonical order
        # (a "T" in fmt is sorted by dlarray's labelling, which dlconv does)
        if type(self)._function is dlconv and "T" not in fmt and weights.ndim == len(fmt):
            return layer_dlconv(X, weights, fmt, self.Bias, options)
        return type(self)._function(X, weights, self.Bias, WeightsFormat=fmt, **options)


class _Padded(_ConvolutionLayer, PaddedLayer):
    """The (grouped) convolution layers: dilation, padding and :func:`dlconv`."""

    DilationFactor, Padding, PaddingValue = _sliding_properties()
    sized = ("FilterSize", "Stride", "DilationFactor")
    padded: ClassVar[dict[str, tuple[str, ...]]] = {"Padding": ("same",)}  # 1-D: "causal" too

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)  # a variant's dims first
        if cls.dims == 1:
            cls.padded = {"Padding": ("same", "causal")}

    @property
    def PaddingSize(self) -> Any:
        """The explicit padding as MATLAB shows it: ``"causal"`` is ``[(FilterSize-1)*DilationFactor 0]``
        (``None`` for ``"same"``, which depends on the input)."""
        if self.Padding == "causal":
            return ((self.FilterSize - 1) * self.DilationFactor, 0)
        return super().PaddingSize


class _Convolution(_Padded):
    """The convolution layers' family: ``Convolution2DLayer`` is its 2-D variant."""

    _kind = "Convolution"
    _matlab_names = "convolution{dims}dLayer"
    NumChannels, NumFilters = _channel_properties()

    # by slid dimensions: the explicit paddings, and where "same" puts an odd amount
    _doc_fields: ClassVar[dict[str, str | dict[int, str]]] = {
        "padding": {
            1: '``"same"`` (output ``ceil(n/Stride)``; an odd amount puts the extra element at the end), '
            '``"causal"`` (``(FilterSize-1)*DilationFactor`` before the data only), ``p`` (both edges) or '
            "``[l r]``.",
            2: '``"same"`` (output ``ceil(n/Stride)``; an odd amount puts the extra row at the bottom and '
            "the extra column at the right), ``p``, ``[a b]`` (``a`` top and bottom, ``b`` left and right) "
            "or ``[t b l r]``.",
            3: '``"same"`` (the extra element after the data), ``p``, ``[a b c]`` (both edges of each '
            "dimension), ``[t b l r f k]`` or the 2×3 matrix ``[t l f; b r k]``.",
        }
    }
    _doc_template = """MATLAB's {dims} {kind} layer (``{name}``).

    ``Y`` is the cross-correlation of the input with each filter (MATLAB's convolution: filters
    are not flipped) plus the filter's bias; see :func:`dlformat.functional.dlconv`. It slides
    over {slides}; every other dimension is kept, and ``C`` becomes ``NumFilters``.

    Args:
        FilterSize: {size}.
        NumFilters: the number of filters (output channels).
        Stride, DilationFactor: a positive integer, or one per slid dimension (default 1).
        Padding: ``0`` (default), {padding}
        PaddingValue: ``0`` (default), another number, ``"symmetric-include-edge"``,
            ``"symmetric-exclude-edge"`` or ``"replicate"``.
        NumChannels: ``"auto"`` (from the first input) or the input channels.
        WeightsInitializer: ``"glorot"`` (default), ``"he"``, ``"narrow-normal"``, ``"zeros"``,
            ``"ones"`` or a callable ``f(sz)``; BiasInitializer likewise, default ``"zeros"``.
        Weights: ``{filter} × NumChannels × NumFilters`` (fixes ``NumChannels``); Bias: ``{ones}NumFilters``.
        {factors}
        Name: the layer name (automatic names: ``conv``, ``conv_1``, ...).
        {torch}
"""

    def _weight_sizes(self, channels: int) -> tuple[int, ...]:
        return (channels, self.NumFilters)

    def _channels_from(self, sizes: tuple[int, ...]) -> int:
        return int(sizes[0])


class Convolution1DLayer(_Convolution, dims=1):
    """
    Examples:
        >>> layer = dlf.convolution1dLayer(3, 8, Padding="causal")
        >>> Y = layer(dlf.dlarray(torch.randn(4, 2, 10), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Weights.shape), tuple(layer.Bias.shape)
        ('CBT', (8, 2, 10), (3, 4, 8), (1, 8))
    """


class Convolution2DLayer(_Convolution, dims=2):
    """
    Examples:
        >>> layer = dlf.convolution2dLayer(3, 16, Padding="same")
        >>> Y = layer(dlf.dlarray(torch.randn(28, 28, 1, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Weights.shape), layer.Name
        ('SSCB', (28, 28, 16, 2), (3, 3, 1, 16), '')
    """


class Convolution3DLayer(_Convolution, dims=3):
    """
    Examples:
        >>> layer = dlf.convolution3dLayer(2, 4, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(8, 8, 8, 3, 1), "SSSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Bias.shape)
        ('SSSCB', (4, 4, 4, 4, 1), (1, 1, 1, 4))
    """


class GroupedConvolution2DLayer(_Padded):
    """MATLAB's grouped 2-D convolution layer (``groupedConvolution2dLayer``).

    The channels are split into ``NumGroups`` groups of ``NumChannelsPerGroup``; each group has
    its own ``NumFiltersPerGroup`` filters over its own channels, and the output holds the groups'
    outputs one after another (``NumFiltersPerGroup × NumGroups`` channels).
    ``NumGroups="channel-wise"`` makes one group per input channel (depth-wise convolution). It
    slides as :class:`Convolution2DLayer` does; see :func:`dlformat.functional.dlconv`.

    Args:
        FilterSize: ``[h w]``, or one integer for both.
        NumFiltersPerGroup: filters per group.
        NumGroups: a positive integer, or ``"channel-wise"`` (one group per channel, fixed by the
            first input).
        Stride, DilationFactor, Padding, PaddingValue: as for :class:`Convolution2DLayer`.
        NumChannelsPerGroup: ``"auto"`` (the first input's channels over ``NumGroups``, which must
            divide them) or the channels per group.
        WeightsInitializer, BiasInitializer: as for :class:`Convolution2DLayer` (MATLAB's fans
            count the per-group channels and filters).
        Weights: ``FilterSize(1) × FilterSize(2) × NumChannelsPerGroup × NumFiltersPerGroup ×
            NumGroups``; Bias: ``1 × 1 × NumFiltersPerGroup × NumGroups``.
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor (default 1), BiasL2Factor
        (default 0); Name (automatic names: ``groupconv``, ...); device, dtype, generator.

    Examples:
        >>> layer = dlf.groupedConvolution2dLayer(3, 2, "channel-wise", Padding="same")
        >>> Y = layer(dlf.dlarray(torch.randn(8, 8, 5, 2), "SSCB"))
        >>> tuple(Y.shape), tuple(layer.Weights.shape), layer.NumChannelsPerGroup
        ((8, 8, 10, 2), (3, 3, 1, 2, 5), 1)
    """

    dims = 2
    default_name = "groupconv"
    matlab_type = "2-D Grouped Convolution"
    weights_format = "CUU"
    # the lazy size is every input channel, kept out of the MATLAB properties: the groups
    # (channel-wise) or the channels per group follow from it
    lazy_size = "NumChannels"

    NumFiltersPerGroup = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Filters per group."
    )
    NumGroups = Property(_num_groups, positional=True, read_only=True, doc='Groups, or "channel-wise".')
    NumChannelsPerGroup = auto_size_property('"auto" or the channels per group.')

    def _check_properties(self) -> None:
        super()._check_properties()
        groups, per_group = self.NumGroups, self.NumChannelsPerGroup
        if groups == "channel-wise" and per_group not in ("auto", 1):
            raise DLFormatError(
                f'{self._caller()}: NumGroups "channel-wise" has one channel per group; got '
                f"NumChannelsPerGroup {per_group}"
            )
        known = per_group != "auto" and groups != "channel-wise"
        self._properties["NumChannels"] = per_group * groups if known else "auto"

    def _groups(self, channels: int) -> int:
        return channels if self.NumGroups == "channel-wise" else int(self.NumGroups)

    def _per_group(self, channels: int) -> int:
        return channels // self._groups(channels)

    def _weight_sizes(self, channels: int) -> tuple[int, ...]:
        return (self._per_group(channels), self.NumFiltersPerGroup, self._groups(channels))

    def _fans(self, channels: int) -> tuple[int, int]:
        area = math.prod(self._filter)
        return area * self._per_group(channels), area * self.NumFiltersPerGroup

    def _outputs(self, channels: int) -> tuple[int, ...]:
        return (self.NumFiltersPerGroup, self._groups(channels))

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shape = tuple(getattr(given["Weights"], "shape", ()))
        return int(shape[2] * shape[4]) if len(shape) == 5 else None

    def _size_of(self, X: DLArray) -> int:
        channels = int(X.shape[X._fmt.index("C")])
        if channels % self._groups(channels):
            raise DLFormatError(
                f'{self._caller()} has NumGroups {self.NumGroups}; the "{X._fmt}" input has {channels} '
                "channels, which the groups must divide evenly"
            )
        return channels

    def _sizes_fixed(self) -> None:
        """MATLAB shows the channels per group once they are known."""
        if self._sizes_known():
            self._properties["NumChannelsPerGroup"] = self._per_group(self._properties["NumChannels"])

    def _init_learnables(self, given: dict[str, Any], generator: Any) -> None:
        super()._init_learnables(given, generator)
        self._sizes_fixed()

    def _fit_input(self, X: Any) -> None:
        super()._fit_input(X)
        self._sizes_fixed()


class _TransposedConvolution(_ConvolutionLayer):
    """The transposed convolution layers' family: ``TransposedConvolution2DLayer`` is its 2-D variant."""

    default_name = "transconv"
    _function = dltranspconv
    _passed = ("Stride", "Cropping")
    _kind = "Transposed Convolution"
    _matlab_names = "transposedConv{dims}dLayer"
    padded: ClassVar[dict[str, tuple[str, ...]]] = {"Cropping": ("same",)}
    NumChannels, NumFilters = _channel_properties()
    Cropping = padding_property(
        '"same" (output Stride times the input), or sizes: p, [a b], [t b l r], or a 2×d matrix.'
    )
    CroppingMode, CroppingSize = padding_views("Cropping", ' or ``"same"``')
    _doc_fields: ClassVar[dict[str, str | dict[int, str]]] = {
        "cropping": {
            1: "``p`` (both ends) or ``[l r]``.",
            2: "``p``, ``[a b]`` (``a`` top and bottom, ``b`` left and right) or ``[t b l r]``.",
            3: "``p``, ``[a b c]``, ``[t b l r f k]`` or the 2×3 matrix ``[t l f; b r k]``.",
        }
    }
    _doc_template = """MATLAB's {dims} {kind} layer (``{name}``).

    Every input element adds its filter-weighted copy into a ``FilterSize`` window of the
    output, windows ``Stride`` apart; the full output ``(n-1)*Stride + FilterSize`` long is then
    cropped (see :func:`dlformat.functional.dltranspconv`). It slides over {slides}.

    Args:
        FilterSize: {size}.
        NumFilters: the number of filters (output channels).
        Stride: a positive integer, or one per slid dimension (default 1).
        Cropping: ``0`` (default), ``"same"`` (output ``Stride*n``; an odd amount is cropped at
            the top/left, as MATLAB does), {cropping}
        NumChannels: ``"auto"`` (from the first input) or the input channels.
        WeightsInitializer (default ``"glorot"``), BiasInitializer (default ``"zeros"``): as for
            the convolution layers.
        Weights: ``{filter} × NumFilters × NumChannels`` (fixes ``NumChannels``); Bias: ``{ones}NumFilters``.
        {factors}
        Name: the layer name (automatic names: ``transconv``, ...).
        {torch}
"""

    def _weight_sizes(self, channels: int) -> tuple[int, ...]:
        return (self.NumFilters, channels)

    def _channels_from(self, sizes: tuple[int, ...]) -> int:
        return int(sizes[1])


class TransposedConvolution1DLayer(_TransposedConvolution, dims=1):
    """
    Examples:
        >>> layer = dlf.transposedConv1dLayer(4, 3, Stride=2, Cropping="same")
        >>> Y = layer(dlf.dlarray(torch.randn(5, 2, 6), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Weights.shape)
        ('CBT', (3, 2, 12), (4, 3, 5))
    """


class TransposedConvolution2DLayer(_TransposedConvolution, dims=2):
    """
    Examples:
        >>> layer = dlf.transposedConv2dLayer(4, 8, Stride=2, Cropping="same")
        >>> Y = layer(dlf.dlarray(torch.randn(7, 7, 16, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Weights.shape)
        ('SSCB', (14, 14, 8, 2), (4, 4, 8, 16))
    """


class TransposedConvolution3DLayer(_TransposedConvolution, dims=3):
    """
    Examples:
        >>> layer = dlf.transposedConv3dLayer(2, 4, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(3, 3, 3, 6, 1), "SSSCB"))
        >>> tuple(Y.shape), tuple(layer.Weights.shape)
        ((6, 6, 6, 4, 1), (2, 2, 2, 4, 6))
    """


convolution1dLayer = matlab_constructor(Convolution1DLayer, "convolution1dLayer")
convolution2dLayer = matlab_constructor(Convolution2DLayer, "convolution2dLayer")
convolution3dLayer = matlab_constructor(Convolution3DLayer, "convolution3dLayer")
groupedConvolution2dLayer = matlab_constructor(GroupedConvolution2DLayer, "groupedConvolution2dLayer")
transposedConv1dLayer = matlab_constructor(TransposedConvolution1DLayer, "transposedConv1dLayer")
transposedConv2dLayer = matlab_constructor(TransposedConvolution2DLayer, "transposedConv2dLayer")
transposedConv3dLayer = matlab_constructor(TransposedConvolution3DLayer, "transposedConv3dLayer")
