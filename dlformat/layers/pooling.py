"""MATLAB's pooling layers: ``maxPooling1dLayer``/``2d``/``3d``, ``averagePooling1dLayer``/``2d``/``3d``,
``globalMaxPooling1dLayer``/``2d``/``3d`` and ``globalAveragePooling1dLayer``/``2d``/``3d``: thin
wrappers of :func:`dlformat.functional.maxpool` and :func:`dlformat.functional.avgpool`.

The layers slide over the input's ``S`` dimensions, or ``T`` standing in for the last one
(``"CBT"`` for the 1-D layers, ``"SCBT"`` for the 2-D ones); see :mod:`._window`. The global layers
keep pooled ``S`` dimensions as singletons; the 1-D ones pool a ``"CBT"`` sequence's ``T`` away
(``"CB"`` out), so that a sequence becomes one vector per observation.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional import avgpool, maxpool
from ..functional._common import floating_data
from ._base import matlab_constructor
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
]

_WORDS = {1: "1-D", 2: "2-D", 3: "3-D"}


def _average_padding_value(name: str, value: Any) -> float | str:
    if isinstance(value, (str, bytes)):
        return _validate.choice(name, value, ("mean",), also=", or 0")
    if _validate.real(name, value) != 0:
        raise DLFormatError(f'{name} must be 0 or "mean"; got {_validate.describe(value)}')
    return 0


def _no_unpooling(name: str, value: Any) -> bool:
    if value is not False and value not in (0,):
        raise DLFormatError(
            f"{name} true (the indices and sizes outputs for maxUnpooling2dLayer) is not supported by "
            "dlformat; leave it false"
        )
    return False


def _input(layer: WindowLayer, X: Any) -> tuple[DLArray, str]:
    X = require_dimensions(X, "C", layer._caller)
    return DLArray._wrap(floating_data(X._data, layer._caller()), X._fmt), layer._slid(X._fmt)


class _Pooling(PaddedLayer):
    """What the max and average pooling layers declare: pool size, stride, padding."""

    sized: ClassVar[tuple[str, ...]] = ("PoolSize", "Stride")
    padded: ClassVar[dict[str, tuple[str, ...]]] = {"Padding": ("same",)}

    PoolSize = sizes_property("Size of the pooling regions, per slid dimension.", positional=True)
    Stride = sizes_property("Step of the pooling regions, per slid dimension (default 1, as MATLAB).")
    Padding = padding_property(
        '"same", or sizes: p, [a b], [t b l r], or a 2×d matrix; smaller than PoolSize.'
    )

    def _check_properties(self) -> None:
        super()._check_properties()
        self._check_size_limit("Padding", "PoolSize")

    def _pool_arguments(self, fmt: str) -> dict[str, Any]:
        return {"Stride": self.Stride, "Padding": self.Padding, "PoolFormat": self._slid(fmt)}


_POOLING_DOC = """MATLAB's {dims} {kind} pooling layer (``{name}``): the {statistic} of each pooling region.

    It pools over {slides}; every other dimension is kept. See
    :func:`dlformat.functional.{function}`.

    Args:
        PoolSize: {size}.
        Stride: a positive integer, or one per pooled dimension (default 1, as in MATLAB).
        Padding: ``0`` (default), ``"same"`` (output ``ceil(n/Stride)``, the extra element after
            the data, MATLAB's bottom/right), or explicit sizes as for the convolution layers;
            smaller than ``PoolSize``.{extra}
        Name: the layer name (automatic names: ``{prefix}``, ``{prefix}_1``, ...).

    Attributes:
        PaddingMode, PaddingSize: MATLAB's read-only views of ``Padding``.

    Examples:
{examples}
"""

_SLIDES = {
    1: '``T`` of ``"CBT"`` sequences, or ``S`` of ``"SCB"`` and ``"SCBT"`` data',
    2: 'the two ``S`` of ``"SSCB"`` and ``"SSCBT"`` data, or ``S`` and ``T`` of ``"SCBT"``',
    3: 'the three ``S`` of ``"SSSCB"`` and ``"SSSCBT"`` data, or two ``S`` and ``T`` of ``"SSCBT"``',
}
_SIZE = {
    1: "a positive integer, the region length",
    2: "``[h w]``, or one integer for both",
    3: "``[h w d]``, or one integer for all three",
}
_UNPOOLING = """
        HasUnpoolingOutputs: ``False`` (default); ``True`` (MATLAB's extra outputs for
            ``maxUnpooling2dLayer``) is not supported and raises an error."""
_MEAN = """
        PaddingValue: ``0`` (default: padded elements count as zeros in every average) or
            ``"mean"`` (each average over the input elements of its region only)."""


def _pooling_doc(dims: int, kind: str, examples: str) -> str:
    maximum = kind == "max"
    extra = (_UNPOOLING if dims == 2 else "") if maximum else _MEAN
    return _POOLING_DOC.format(
        dims=_WORDS[dims],
        kind=kind,
        name=f"{kind if maximum else 'average'}Pooling{dims}dLayer",
        statistic="maximum" if maximum else "average",
        slides=_SLIDES[dims],
        function="maxpool" if maximum else "avgpool",
        size=_SIZE[dims],
        extra=extra,
        prefix="maxpool" if maximum else "avgpool",
        examples=examples,
    )


class _MaxPooling(_Pooling):
    default_name = "maxpool"

    def predict(self, X: DLArray) -> DLArray:
        X, _ = _input(self, X)
        return maxpool(X, self.PoolSize, **self._pool_arguments(X._fmt))


class _AveragePooling(_Pooling):
    default_name = "avgpool"
    PaddingValue = Property(
        _average_padding_value, default=0, read_only=True, doc='0 or "mean": what padded elements count as.'
    )

    def predict(self, X: DLArray) -> DLArray:
        X, _ = _input(self, X)
        return avgpool(X, self.PoolSize, PaddingValue=self.PaddingValue, **self._pool_arguments(X._fmt))


class MaxPooling1DLayer(_MaxPooling):
    __doc__ = _pooling_doc(
        1,
        "max",
        """        >>> layer = dlf.maxPooling1dLayer(2, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(3, 2, 10), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (3, 2, 5))""",
    )
    dims = 1
    matlab_type = "1-D Max Pooling"


class MaxPooling2DLayer(_MaxPooling):
    __doc__ = _pooling_doc(
        2,
        "max",
        """        >>> layer = dlf.maxPooling2dLayer(2, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(28, 28, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), layer.PoolSize
        ('SSCB', (14, 14, 3, 2), (2, 2))""",
    )
    dims = 2
    matlab_type = "2-D Max Pooling"
    HasUnpoolingOutputs = Property(
        _no_unpooling, default=False, read_only=True, doc="Must be False: unpooling outputs are not ported."
    )


class MaxPooling3DLayer(_MaxPooling):
    __doc__ = _pooling_doc(
        3,
        "max",
        """        >>> layer = dlf.maxPooling3dLayer(2, Stride=2, Padding="same")
        >>> tuple(layer(dlf.dlarray(torch.randn(5, 6, 7, 2, 1), "SSSCB")).shape)
        (3, 3, 4, 2, 1)""",
    )
    dims = 3
    matlab_type = "3-D Max Pooling"


class AveragePooling1DLayer(_AveragePooling):
    __doc__ = _pooling_doc(
        1,
        "average",
        """        >>> layer = dlf.averagePooling1dLayer(3, Padding="same", PaddingValue="mean")
        >>> dlf.extractdata(layer(dlf.dlarray(torch.ones(1, 1, 4), "CBT"))).flatten().tolist()
        [1.0, 1.0, 1.0, 1.0]""",
    )
    dims = 1
    matlab_type = "1-D Average Pooling"


class AveragePooling2DLayer(_AveragePooling):
    __doc__ = _pooling_doc(
        2,
        "average",
        """        >>> layer = dlf.averagePooling2dLayer(2, Stride=2)
        >>> Y = layer(dlf.dlarray(torch.randn(28, 28, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('SSCB', (14, 14, 3, 2))""",
    )
    dims = 2
    matlab_type = "2-D Average Pooling"


class AveragePooling3DLayer(_AveragePooling):
    __doc__ = _pooling_doc(
        3,
        "average",
        """        >>> layer = dlf.averagePooling3dLayer([2, 2, 1])
        >>> tuple(layer(dlf.dlarray(torch.randn(4, 4, 4, 2, 1), "SSSCB")).shape)
        (3, 3, 4, 2, 1)""",
    )
    dims = 3
    matlab_type = "3-D Average Pooling"


class _GlobalPooling(WindowLayer):
    """A global pooling layer: the statistic over the whole slid dimensions."""

    sized = ()
    statistic: ClassVar[Any] = maxpool

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


_GLOBAL_DOC = """MATLAB's {dims} global {kind} pooling layer (``{name}``): the {statistic} over {over}.

    {kept} See :func:`dlformat.functional.{function}` (``poolsize="global"``).

    Args:
        Name: the layer name (automatic names: ``{prefix}``, ``{prefix}_1``, ...).

    Examples:
        >>> layer = dlf.{name}()
        >>> Y = layer(dlf.dlarray(torch.randn({sizes}), "{fmt}"))
        >>> dlf.dims(Y), tuple(Y.shape)
        {result}
"""

_GLOBAL_OVER = {
    1: '``T`` of ``"CBT"`` sequences, or ``S`` of ``"SCB"`` and ``"SCBT"`` data',
    2: 'the two ``S`` dimensions (``"SSCB"``, ``"SSCBT"``)',
    3: 'the three ``S`` dimensions (``"SSSCB"``, ``"SSSCBT"``)',
}
_GLOBAL_EXAMPLE = {
    1: ("4, 2, 9", "CBT", "('CB', (4, 2))"),
    2: ("7, 7, 4, 2", "SSCB", "('SSCB', (1, 1, 4, 2))"),
    3: ("3, 4, 5, 4, 2", "SSSCB", "('SSSCB', (1, 1, 1, 4, 2))"),
}


def _global_doc(dims: int, kind: str) -> str:
    maximum = kind == "max"
    sizes, fmt, result = _GLOBAL_EXAMPLE[dims]
    return _GLOBAL_DOC.format(
        dims=_WORDS[dims],
        kind=kind,
        name=f"global{'Max' if maximum else 'Average'}Pooling{dims}dLayer",
        statistic="maximum" if maximum else "average",
        over=_GLOBAL_OVER[dims],
        kept="Pooled ``S`` dimensions stay, of size 1; a pooled ``T`` is removed."
        if dims == 1
        else "Pooled dimensions stay, of size 1; ``C``, ``B`` and ``T`` are kept.",
        function="maxpool" if maximum else "avgpool",
        prefix="gmpool" if maximum else "gapool",
        sizes=sizes,
        fmt=fmt,
        result=result,
    )


class _GlobalMaxPooling(_GlobalPooling):
    default_name = "gmpool"
    statistic = maxpool


class _GlobalAveragePooling(_GlobalPooling):
    default_name = "gapool"
    statistic = avgpool


class GlobalMaxPooling1DLayer(_GlobalMaxPooling):
    __doc__ = _global_doc(1, "max")
    dims = 1
    matlab_type = "1-D Global Max Pooling"


class GlobalMaxPooling2DLayer(_GlobalMaxPooling):
    __doc__ = _global_doc(2, "max")
    dims = 2
    matlab_type = "2-D Global Max Pooling"


class GlobalMaxPooling3DLayer(_GlobalMaxPooling):
    __doc__ = _global_doc(3, "max")
    dims = 3
    matlab_type = "3-D Global Max Pooling"


class GlobalAveragePooling1DLayer(_GlobalAveragePooling):
    __doc__ = _global_doc(1, "average")
    dims = 1
    matlab_type = "1-D Global Average Pooling"


class GlobalAveragePooling2DLayer(_GlobalAveragePooling):
    __doc__ = _global_doc(2, "average")
    dims = 2
    matlab_type = "2-D Global Average Pooling"


class GlobalAveragePooling3DLayer(_GlobalAveragePooling):
    __doc__ = _global_doc(3, "average")
    dims = 3
    matlab_type = "3-D Global Average Pooling"


maxPooling1dLayer = matlab_constructor(MaxPooling1DLayer, "maxPooling1dLayer")
maxPooling2dLayer = matlab_constructor(MaxPooling2DLayer, "maxPooling2dLayer")
maxPooling3dLayer = matlab_constructor(MaxPooling3DLayer, "maxPooling3dLayer")
averagePooling1dLayer = matlab_constructor(AveragePooling1DLayer, "averagePooling1dLayer")
averagePooling2dLayer = matlab_constructor(AveragePooling2DLayer, "averagePooling2dLayer")
averagePooling3dLayer = matlab_constructor(AveragePooling3DLayer, "averagePooling3dLayer")
globalMaxPooling1dLayer = matlab_constructor(GlobalMaxPooling1DLayer, "globalMaxPooling1dLayer")
globalMaxPooling2dLayer = matlab_constructor(GlobalMaxPooling2DLayer, "globalMaxPooling2dLayer")
globalMaxPooling3dLayer = matlab_constructor(GlobalMaxPooling3DLayer, "globalMaxPooling3dLayer")
globalAveragePooling1dLayer = matlab_constructor(GlobalAveragePooling1DLayer, "globalAveragePooling1dLayer")
globalAveragePooling2dLayer = matlab_constructor(GlobalAveragePooling2DLayer, "globalAveragePooling2dLayer")
globalAveragePooling3dLayer = matlab_constructor(GlobalAveragePooling3DLayer, "globalAveragePooling3dLayer")
