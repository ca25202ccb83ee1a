"""MATLAB's pooling layers: ``maxPooling1dLayer``/``2d``/``3d``, ``averagePooling1dLayer``/``2d``/``3d``,
``globalMaxPooling1dLayer``/``2d``/``3d`` and ``globalAveragePooling1dLayer``/``2d``/``3d``: thin
wrappers of :func:`dlformat.functional.maxpool` and :func:`dlformat.functional.avgpool`.

``maxPooling2dLayer(..., HasUnpoolingOutputs=true)`` adds the outputs ``indices`` and ``size`` that
``maxUnpooling2dLayer`` takes (see :class:`MaxUnpooling2DLayer`).

The layers slide over the input's ``S`` dimensions, or ``T`` standing in for the last one
(``"CBT"`` for the 1-D layers, ``"SCBT"`` for the 2-D ones); see :mod:`._window`. The global layers
keep pooled ``S`` dimensions as singletons; the 1-D ones pool a ``"CBT"`` sequence's ``T`` away
(``"CB"`` out), so that a sequence becomes one vector per observation.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from .. import _validate
from .._dlarray import DLArray, require_dimensions, require_formatted
from .._errors import DLFormatError
from ..functional import _sliding, avgpool, maxpool, maxunpool
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import Property
from ._window import PaddedLayer, WindowLayer, padding_property, sizes_property, slid_labels

__all__ = [
    "AveragePooling1DLayer",
    "AveragePooling2DLayer",
    "AveragePooling3DLayer",
    "GlobalAveragePooling1DLayer",
    "GlobalAveragePooling2DLayer",
    "GlobalAveragePooling3DLayer",
    "GlobalMaxPooling1DLayer",
    "GlobalMaxPooling2DLayer",
    "GlobalMaxPooling3DLayer",
    "MaxPooling1DLayer",
    "MaxPooling2DLayer",
    "MaxPooling3DLayer",
    "MaxUnpooling2DLayer",
    "averagePooling1dLayer",
    "averagePooling2dLayer",
    "averagePooling3dLayer",
    "globalAveragePooling1dLayer",
    "globalAveragePooling2dLayer",
    "globalAveragePooling3dLayer",
    "globalMaxPooling1dLayer",
    "globalMaxPooling2dLayer",
    "globalMaxPooling3dLayer",
    "maxPooling1dLayer",
    "maxPooling2dLayer",
    "maxPooling3dLayer",
    "maxUnpooling2dLayer",
]


class _Pooling(PaddedLayer):
    """What the max and average pooling layers declare: pool size, stride, padding, and the
    functional core's pooling (``statistic``) they call with these properties (``_passed``)."""

    sized: ClassVar[tuple[str, ...]] = ("PoolSize", "Stride")
    padded: ClassVar[dict[str, tuple[str, ...]]] = {"Padding": ("same",)}
    statistic: ClassVar[Any] = maxpool
    _measure: ClassVar[str] = "maximum"  # what the statistic is, as the docstrings say
    _passed: ClassVar[tuple[str, ...]] = ("Stride", "Padding")

    PoolSize = sizes_property("Size of the pooling regions, per slid dimension.", positional=True)
    Stride = sizes_property("Step of the pooling regions, per slid dimension (default 1, as MATLAB).")
    Padding = padding_property(
        '"same", or sizes: p, [a b], [t b l r], or a 2×d matrix; smaller than PoolSize.'
    )

    _doc_template = """MATLAB's {dims} {kind} layer (``{name}``): the {cls._measure} of each pooling region.

    It pools over {slides}; every other dimension is kept. See
    :func:`dlformat.functional.{cls.statistic.__name__}`.

    Args:
        PoolSize: {size}.
        Stride: a positive integer, or one per pooled dimension (default 1, as in MATLAB).
        Padding: ``0`` (default), ``"same"`` (output ``ceil(n/Stride)``, the extra element after
            the data, MATLAB's bottom/right), or explicit sizes as for the convolution layers;
            smaller than ``PoolSize``.{extra}
        Name: the layer name (automatic names: ``{cls.default_name}``, ``{cls.default_name}_1``, ...).
"""

    def _check_properties(self) -> None:
        super()._check_properties()
        self._check_size_limit("Padding", "PoolSize")

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller)
        X = DLArray._wrap(floating_data(X._data, self._caller()), X._fmt)
        options = {name: self._properties[name] for name in self._passed}
        pooled: DLArray = type(self).statistic(X, self.PoolSize, PoolFormat=self._slid(X._fmt), **options)
        return pooled


class _MaxPooling(_Pooling):
    """The max pooling layers' family: ``MaxPooling2DLayer`` is its 2-D variant."""

    default_name = "maxpool"
    statistic = maxpool
    _kind = "Max Pooling"
    _matlab_names = "maxPooling{dims}dLayer"
    _measure = "maximum"
    _doc_fields: ClassVar[dict[str, str | dict[int, str]]] = {
        # the 2-D layer's extra option
        "extra": {
            1: "",
            2: """
        HasUnpoolingOutputs: ``False`` (default); ``True`` adds MATLAB's outputs ``indices`` (the
            1-based linear index into the input of each region's maximum, formatted as the
            pooled output) and ``size`` (the input's size, an unformatted row of sizes), which
            :class:`MaxUnpooling2DLayer` takes.""",
            3: "",
        },
    }


class _AveragePooling(_Pooling):
    """The average pooling layers' family: ``AveragePooling2DLayer`` is its 2-D variant."""

    default_name = "avgpool"
    statistic = avgpool
    _passed = ("Stride", "Padding", "PaddingValue")
    _kind = "Average Pooling"
    _matlab_names = "averagePooling{dims}dLayer"
    _measure = "average"
    _doc_fields: ClassVar[dict[str, str | dict[int, str]]] = {
        "extra": """
        PaddingValue: ``0`` (default: padded elements count as zeros in every average) or
            ``"mean"`` (each average over the input elements of its region only).""",
    }
    PaddingValue = Property(
        _sliding.average_padding_value,
        default=0,
        read_only=True,
        doc='0 or "mean": what padded elements count as.',
    )


class MaxPooling1DLayer(_MaxPooling, dims=1):
    """
    Examples:
        >>> layer = dlf.maxPooling1dLayer(2, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(3, 2, 10), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (3, 2, 5))
    """


class MaxPooling2DLayer(_MaxPooling, dims=2):
    """
    Examples:
        >>> layer = dlf.maxPooling2dLayer(2, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(28, 28, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), layer.PoolSize
        ('SSCB', (14, 14, 3, 2), (2, 2))
    """

    HasUnpoolingOutputs = Property(
        _validate.flag,
        default=False,
        read_only=True,
        doc='Outputs "indices" and "size" too, for maxUnpooling2dLayer.',
    )

    def _check_properties(self) -> None:
        super()._check_properties()
        # MATLAB's output names with unpooling outputs (its connectLayers source: 'out',
        # 'indices', 'size')
        self._ports["out"] = ("out", "indices", "size") if self.HasUnpoolingOutputs else ("out",)

    def predict(self, X: DLArray) -> Any:
        if not self.HasUnpoolingOutputs:
            return super().predict(X)
        X = require_dimensions(X, "C", self._caller)
        X = DLArray._wrap(floating_data(X._data, self._caller()), X._fmt)
        options = {name: self._properties[name] for name in self._passed}
        pooled, indices, size = maxpool(
            X, self.PoolSize, PoolFormat=self._slid(X._fmt), ReturnIndices=True, **options
        )
        # the size travels through the network as data: an unformatted 1×n row of the input's sizes
        sizes = DLArray._wrap(torch.tensor([list(size)], dtype=torch.float64, device=X.device), "")
        return pooled, indices, sizes


class MaxPooling3DLayer(_MaxPooling, dims=3):
    """
    Examples:
        >>> layer = dlf.maxPooling3dLayer(2, Stride=2, Padding="same")
        >>> tuple(layer(dlf.dlarray(torch.randn(5, 6, 7, 2, 1), "SSSCB")).shape)
        (3, 3, 4, 2, 1)
    """


class AveragePooling1DLayer(_AveragePooling, dims=1):
    """
    Examples:
        >>> layer = dlf.averagePooling1dLayer(3, Padding="same", PaddingValue="mean")
        >>> dlf.extractdata(layer(dlf.dlarray(torch.ones(1, 1, 4), "CBT"))).flatten().tolist()
        [1.0, 1.0, 1.0, 1.0]
    """


class AveragePooling2DLayer(_AveragePooling, dims=2):
    """
    Examples:
        >>> layer = dlf.averagePooling2dLayer(2, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(28, 28, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('SSCB', (14, 14, 3, 2))
    """


class AveragePooling3DLayer(_AveragePooling, dims=3):
    """
    Examples:
        >>> layer = dlf.averagePooling3dLayer([2, 2, 1])
        >>> tuple(layer(dlf.dlarray(torch.randn(4, 4, 4, 2, 1), "SSSCB")).shape)
        (3, 3, 4, 2, 1)
    """


class _GlobalPooling(WindowLayer):
    """A global pooling layer: the statistic over the whole slid dimensions."""

    sized = ()
    statistic: ClassVar[Any] = maxpool
    _measure: ClassVar[str] = "maximum"

    _doc_template = """MATLAB's {dims} {kind} layer (``{name}``): the {cls._measure} over {over}.

    {kept} See :func:`dlformat.functional.{cls.statistic.__name__}` (``poolsize="global"``).

    Args:
        Name: the layer name (automatic names: ``{cls.default_name}``, ``{cls.default_name}_1``, ...).

    Examples:
        >>> layer = dlf.{name}()
        >>> Y = layer(dlf.dlarray(torch.randn({sizes}), "{fmt}"))
        >>> dlf.dims(Y), tuple(Y.shape)
        {result}
"""
    _doc_fields: ClassVar[dict[str, str | dict[int, str]]] = {
        "over": {
            1: '``T`` of ``"CBT"`` sequences, or ``S`` of ``"SCB"`` and ``"SCBT"`` data',
            2: 'the two ``S`` dimensions (``"SSCB"``, ``"SSCBT"``)',
            3: 'the three ``S`` dimensions (``"SSSCB"``, ``"SSSCBT"``)',
        },
        "kept": {
            1: "Pooled ``S`` dimensions stay, of size 1; a pooled ``T`` is removed.",
            2: "Pooled dimensions stay, of size 1; ``C``, ``B`` and ``T`` are kept.",
            3: "Pooled dimensions stay, of size 1; ``C``, ``B`` and ``T`` are kept.",
        },
        # the example: input sizes and format, and what it prints
        "sizes": {1: "4, 2, 9", 2: "7, 7, 4, 2", 3: "3, 4, 5, 4, 2"},
        "fmt": {1: "CBT", 2: "SSCB", 3: "SSSCB"},
        "result": {1: "('CB', (4, 2))", 2: "('SSCB', (1, 1, 4, 2))", 3: "('SSSCB', (1, 1, 1, 4, 2))"},
    }

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "C", self._caller)
        # MATLAB's 2-D and 3-D global pooling pages give no output format for T standing in for an
        # S dimension, so only the S forms are taken there
        labels = slid_labels(X._fmt, self.dims, self._caller(), self.dims == 1)
        pooled: DLArray = type(self).statistic(X, "global", PoolFormat=labels)
        if "T" not in labels:
            return pooled
        time = pooled._fmt.index("T")  # a sequence pooled over time: one vector per observation
        return DLArray._wrap(pooled._data.squeeze(time), pooled._fmt.replace("T", ""))


class _GlobalMaxPooling(_GlobalPooling):
    default_name = "gmpool"
    statistic = maxpool
    _kind = "Global Max Pooling"
    _matlab_names = "globalMaxPooling{dims}dLayer"
    _measure = "maximum"


class _GlobalAveragePooling(_GlobalPooling):
    default_name = "gapool"
    statistic = avgpool
    _kind = "Global Average Pooling"
    _matlab_names = "globalAveragePooling{dims}dLayer"
    _measure = "average"


class GlobalMaxPooling1DLayer(_GlobalMaxPooling, dims=1): ...


class GlobalMaxPooling2DLayer(_GlobalMaxPooling, dims=2): ...


class GlobalMaxPooling3DLayer(_GlobalMaxPooling, dims=3): ...


class GlobalAveragePooling1DLayer(_GlobalAveragePooling, dims=1): ...


class GlobalAveragePooling2DLayer(_GlobalAveragePooling, dims=2): ...


class GlobalAveragePooling3DLayer(_GlobalAveragePooling, dims=3): ...


class MaxUnpooling2DLayer(Layer):
    """MATLAB's ``maxUnpooling2dLayer``: unpools the output of a 2-D max pooling layer.

    Inputs, as MATLAB names them: ``in`` (the feature map to unpool), ``indices`` and ``size``
    (the outputs of the same names of a ``maxPooling2dLayer`` with ``HasUnpoolingOutputs=True``).
    The output has the size ``size`` and ``in``'s format: zeros, with each element of ``in`` at its
    index (:func:`dlformat.functional.maxunpool`). Connect ``indices`` and ``size`` with
    ``connectLayers(net, "maxpool/indices", "unpool/indices")`` and ``".../size"``.

    Args:
        Name: the layer name (automatic names: ``maxunpool``, ``maxunpool_1``, ...).

    Examples:
        >>> pool = dlf.maxPooling2dLayer(2, Stride=2, HasUnpoolingOutputs=True)
        >>> X = dlf.dlarray(torch.arange(16.0).reshape(4, 4, 1, 1), "SSCB")
        >>> Y, indices, size = pool(X)
        >>> Z = dlf.maxUnpooling2dLayer()(Y, indices, size)
        >>> pool.OutputNames, dlf.dims(Z), dlf.extractdata(Z)[:2, :2, 0, 0].tolist()
        (('out', 'indices', 'size'), 'SSCB', [[0.0, 0.0], [0.0, 5.0]])
    """

    default_name = "maxunpool"
    matlab_type = "2-D Max Unpooling"
    default_inputs = 3

    def _check_properties(self) -> None:
        self._ports["in"] = ("in", "indices", "size")

    def predict(self, X: DLArray, indices: Any, size: Any) -> DLArray:
        X = require_formatted(X, self._caller)
        sizes = size._data if isinstance(size, DLArray) else torch.as_tensor(size)
        try:
            return maxunpool(X, indices, sizes.reshape(-1).tolist())
        except DLFormatError as error:
            raise DLFormatError(f"{self._caller()}: {error}") from None


maxPooling1dLayer = matlab_constructor(MaxPooling1DLayer, "maxPooling1dLayer")
maxPooling2dLayer = matlab_constructor(MaxPooling2DLayer, "maxPooling2dLayer")
maxPooling3dLayer = matlab_constructor(MaxPooling3DLayer, "maxPooling3dLayer")
maxUnpooling2dLayer = matlab_constructor(MaxUnpooling2DLayer, "maxUnpooling2dLayer")
averagePooling1dLayer = matlab_constructor(AveragePooling1DLayer, "averagePooling1dLayer")
averagePooling2dLayer = matlab_constructor(AveragePooling2DLayer, "averagePooling2dLayer")
averagePooling3dLayer = matlab_constructor(AveragePooling3DLayer, "averagePooling3dLayer")
globalMaxPooling1dLayer = matlab_constructor(GlobalMaxPooling1DLayer, "globalMaxPooling1dLayer")
globalMaxPooling2dLayer = matlab_constructor(GlobalMaxPooling2DLayer, "globalMaxPooling2dLayer")
globalMaxPooling3dLayer = matlab_constructor(GlobalMaxPooling3DLayer, "globalMaxPooling3dLayer")
globalAveragePooling1dLayer = matlab_constructor(GlobalAveragePooling1DLayer, "globalAveragePooling1dLayer")
globalAveragePooling2dLayer = matlab_constructor(GlobalAveragePooling2DLayer, "globalAveragePooling2dLayer")
globalAveragePooling3dLayer = matlab_constructor(GlobalAveragePooling3DLayer, "globalAveragePooling3dLayer")
