"""``load_network``: a network (or layer graph, or layer array) MATLAB saved, as working dlformat objects.

:mod:`._mcos` decodes the file into a :class:`~._mcos.SavedNetwork` (every layer's class, saveobj
version and saved fields, with no interpretation). Here each layer goes through the mapper of its
MATLAB class (``_MAPPERS``), which reads the saved fields as MATLAB's public property values and
calls the dlformat constructor of the same class; the network is then assembled with the saved
names and connections. The saved forms per class and version, and the evidence for each mapping
(a MATLAB-written file, or only MathWorks' documented properties), are in
docs/loading_networks.md.

Every saved value goes through the readers below (``_ints``, ``_float``, ``_text``, ...), the one
place that checks it: a field a mapper needs and does not find, a value of the wrong kind, size or
range (NaN or Inf where a whole number belongs, a char matrix where text belongs), or a value a
mapper does not handle (a padding mode, a normalization type) is a DLFormatError naming the layer,
its class, the field and the value (cut to a bounded length): nothing is guessed and no layer is
replaced by one that passes its input through. A constructor's own refusal of a saved value is
reported with the same layer and class.

A class is added by registering its mapper with ``@_maps("ClassName")``, or, for a class whose
saveobj struct holds MATLAB's public properties by name, one ``_public(...)`` line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._errors import MESSAGE_LIMIT, DLFormatError, cut, shown
from ..layers._properties import PerChannel, matlab_shape
from ._mcos import (
    GRAPH_CLASS,
    LAYER_ARRAY,
    LAYER_GRAPH,
    FunctionHandle,
    MatlabObject,
    SavedLayer,
    SavedLearnable,
    SavedNetwork,
)
from ._mcos import NETWORK_CLASSES as NETWORK_CLASSES  # the saved network classes (cli, _network_file)

Factory = Callable[[dict[str, Any]], Any]
_Mapper = Callable[[SavedLayer], Any]
_MAPPERS: dict[str, _Mapper] = {}
_PACKAGE = "nnet.cnn.layer."

# dlformat layer classes load_network does not map, and why (docs/loading_networks.md lists them;
# tests/io/test_saved_forms.py checks that every other class of dlformat.layers has a mapper)
NOT_MAPPED = {
    "FunctionLayer": "MATLAB saves its function as MATLAB source text, which is never run: supply it "
    "through custom_layers",
    "ClassificationLayer": "the base class of user-defined classification output layers: a saved one "
    "is the user's own class, whose code the file does not hold: supply it through custom_layers",
    "RegressionLayer": "the base class of user-defined regression output layers: a saved one is the "
    "user's own class, whose code the file does not hold: supply it through custom_layers",
    # refused by their mapper with the way around, rather than listed for custom_layers
    "NetworkLayer": "the saved form of the network it holds is not known (no MATLAB-written file, no "
    "public source of its saveobj): in MATLAB, expandLayers(net) replaces it by the layers it holds",
    "NeuralODELayer": "the saved form of the network it holds is not known: rebuild it in Python with "
    "neuralODELayer and load its learnables with load_learnables",
}


def _maps(*classes: str) -> Callable[[_Mapper], _Mapper]:
    """Register a mapper for MATLAB layer classes (named without ``nnet.cnn.layer.``)."""

    def register(mapper: _Mapper) -> _Mapper:
        for name in classes:
            _MAPPERS[_PACKAGE + name] = mapper
        return mapper

    return register


# ---------------------------------------------------------------------------------------------
# reading saved fields: every value a mapper uses is checked here


def _layer_where(layer: SavedLayer) -> str:
    version = "" if layer.version is None else f", saveobj version {layer.version}"
    return f"layer '{cut(layer.name)}' (class {cut(layer.matlab_class)}{version})"


def _where(layer: SavedLayer, field: str) -> str:
    return f"{_layer_where(layer)}, field {field!r}"


def _has(layer: SavedLayer, field: str) -> bool:
    """Whether the layer saves ``field`` (a dotted path into saved structs: ``Normalization.Type``)."""
    try:
        _value(layer, field)
    except DLFormatError:
        return False
    return True


def _value(layer: SavedLayer, field: str) -> Any:
    """The saved value of ``field``, a name or a dotted path through saved structs."""
    value: Any = layer.properties
    walked: list[str] = []
    for part in field.split("."):
        if not isinstance(value, dict):
            raise DLFormatError(
                f"{_where(layer, '.'.join(walked))}: expected a struct holding {part!r}, the file saves "
                f"{shown(value)}"
            )
        walked.append(part)
        if part not in value:
            raise DLFormatError(f"{_where(layer, field)}: the file does not save it; cannot map the layer")
        value = value[part]
    return value


def _empty(value: Any) -> bool:
    """MATLAB's ``[]`` (any empty array): a size left to be fixed (``"auto"``), a statistic not yet
    computed, a learnable without its value (a layer array saved before training)."""
    return value is None or (isinstance(value, np.ndarray) and value.size == 0)


def _numbers(layer: SavedLayer, field: str, *, finite: bool = True) -> list[float]:
    """A saved numeric (or logical) array, in MATLAB's column-major order."""
    value = _value(layer, field)
    array = np.asarray(value) if isinstance(value, (np.ndarray, bool, int, float)) else None
    if array is None or array.dtype.kind not in "biuf":
        raise DLFormatError(f"{_where(layer, field)}: expected numbers, the file saves {shown(value)}")
    values = [float(item) for item in array.ravel(order="F")]
    if finite and not all(math.isfinite(item) for item in values):
        raise DLFormatError(f"{_where(layer, field)}: expected finite numbers, the file saves {shown(array)}")
    return values


def _ints(layer: SavedLayer, field: str) -> list[int]:
    """Whole numbers (sizes, counts, indices): finite, whole and at most 2^53 in magnitude, where a
    MATLAB double still holds every integer."""
    values = _numbers(layer, field)
    if any(item != int(item) or abs(item) > 2**53 for item in values):
        raise DLFormatError(f"{_where(layer, field)}: expected whole numbers, the file saves {shown(values)}")
    return [int(item) for item in values]


def _sizes(layer: SavedLayer, field: str) -> list[int]:
    """Sizes and counts (``FilterSize``, ``NumFilters``, ...): positive whole numbers."""
    values = _ints(layer, field)
    if not values or min(values) < 1:
        raise DLFormatError(
            f"{_where(layer, field)}: expected positive whole numbers, the file saves {shown(values)}"
        )
    return values


def _size(layer: SavedLayer, field: str) -> int:
    return int(_one(layer, field, _sizes(layer, field), "positive whole number"))


def _one(layer: SavedLayer, field: str, values: list[Any], what: str) -> Any:
    if len(values) != 1:
        raise DLFormatError(f"{_where(layer, field)}: expected one {what}, the file saves {shown(values)}")
    return values[0]


def _int(layer: SavedLayer, field: str) -> int:
    return int(_one(layer, field, _ints(layer, field), "whole number"))


def _float(layer: SavedLayer, field: str) -> float:
    return float(_one(layer, field, _numbers(layer, field), "number"))


def _flag(layer: SavedLayer, field: str, default: bool | None = None) -> bool:
    if default is not None and not _has(layer, field):
        return default
    return bool(_one(layer, field, _numbers(layer, field), "logical"))


def _auto(read: Callable[[SavedLayer, str], Any]) -> Callable[[SavedLayer, str], Any]:
    """``read``, or ``"auto"`` where the file saves ``[]`` (a size MATLAB fixes from the data:
    an untrained layer array saves ``NumChannels`` so) or the word itself."""

    def reader(layer: SavedLayer, field: str) -> Any:
        value = _value(layer, field)
        if _empty(value) or (isinstance(value, str) and _text(layer, field) == "auto"):
            return "auto"
        return read(layer, field)

    return reader


def _text(layer: SavedLayer, field: str) -> str:
    """A char row vector or a string scalar (a char matrix of more rows, or a string array, is not
    text)."""
    value = _value(layer, field)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "OTU":
        value = value.ravel()[0]  # a 1×1 string array
    if not isinstance(value, str):
        raise DLFormatError(f"{_where(layer, field)}: expected text, the file saves {shown(value)}")
    return value


def _number_or_text(layer: SavedLayer, field: str) -> float | str:
    """A property that holds a number or a word (``PaddingValue``: 0, ``"mean"``, ...)."""
    value = _value(layer, field)
    textual = isinstance(value, str) or (isinstance(value, np.ndarray) and value.dtype.kind in "OTU")
    return _text(layer, field) if textual else _float(layer, field)


def _choice(layer: SavedLayer, field: str, allowed: Mapping[str, Any] | Sequence[str]) -> Any:
    value = _text(layer, field)
    if value not in allowed:
        raise DLFormatError(
            f"{_where(layer, field)}: the value {shown(value)} is not handled by load_network "
            f"(handled: {', '.join(repr(key) for key in allowed)})"
        )
    return allowed[value] if isinstance(allowed, Mapping) else value


def _require(layer: SavedLayer, field: str, expected: Any, default: Any = None) -> None:
    """A field whose other values would change what the layer computes: only ``expected`` is
    handled (a missing field, or one saved ``[]`` as an untrained layer array saves what the network
    decides when it is assembled, counts as ``default`` where one is given)."""
    if default is not None and (not _has(layer, field) or _empty(_value(layer, field))):
        value: Any = default
    elif isinstance(expected, str):
        value = _text(layer, field)
    else:
        value = _numbers(layer, field, finite=False)
    if value != expected:
        raise DLFormatError(
            f"{_where(layer, field)}: the value {shown(value)} is not handled by load_network "
            f"(handled: {shown(expected)})"
        )


def _array(layer: SavedLayer, field: str, value: Any) -> np.ndarray:
    """A saved numeric array (a learnable's or a state's value), in its saved shape."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        raise DLFormatError(
            f"{_where(layer, field)}: expected a numeric array, the file saves {shown(value)}"
        )
    return value


def _tensor(value: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.ascontiguousarray(value))


def _learnable(layer: SavedLayer, field: str) -> SavedLearnable:
    entry = layer.learnables.get(field)
    if entry is None:
        raise DLFormatError(f"{_where(layer, field)}: the file saves no learnable by this name")
    return entry


def _factor(layer: SavedLayer, field: str, value: Any) -> float:
    array = np.asarray(value) if isinstance(value, np.ndarray) else None
    if array is None or array.size != 1 or array.dtype.kind not in "biuf" or not np.isfinite(array).all():
        raise DLFormatError(
            f"{_where(layer, field)}: expected one finite factor, the file saves {shown(value)}"
        )
    return float(array.ravel()[0])


def _factor_names(cls: type, field: str) -> tuple[str, str] | None:
    """The constructor's ``<prefix>LearnRateFactor``/``<prefix>L2Factor`` of a learnable (its
    class's Factor declarations), or None for a learnable without factors."""
    from ..layers._properties import Factor

    names: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for name, declared in vars(klass).items():
            if isinstance(declared, Factor) and field in declared.parameters:
                names[declared.kind] = name
    if not names:
        return None
    return names["LearnRateFactor"], names["L2Factor"]


def _learnables(
    layer: SavedLayer,
    fields: Iterable[str],
    shapes: Mapping[str, Callable[[np.ndarray], np.ndarray]] | None = None,
) -> dict[str, Any]:
    """Each saved learnable struct as constructor options: its value (reshaped to MATLAB's public
    shape by ``shapes[field]``; left out where the file saves none, as a layer array saved before
    training does) and its learn-rate and L2 factors under the names the layer's dlformat class
    declares (``WeightLearnRateFactor`` for ``Weights``)."""
    cls = _class(_short(layer))
    options: dict[str, Any] = {}
    for field in fields:
        entry = _learnable(layer, field)
        if entry.value is not None:
            value = _array(layer, field, entry.value)
            options[field] = _tensor(shapes[field](value) if shapes and field in shapes else value)
        names = _factor_names(cls, field)
        if names is not None:
            options[names[0]] = _factor(layer, f"{field}.LearnRateFactor", entry.learn_rate_factor)
            options[names[1]] = _factor(layer, f"{field}.L2Factor", entry.l2_factor)
    return options


def _shared_factors(layer: SavedLayer, options: dict[str, Any], fields: tuple[str, ...], prefix: str) -> None:
    """One ``<prefix>LearnRateFactor``/``<prefix>L2Factor`` pair for several learnables, as
    MATLAB's public properties have it; saved factors that differ cannot be represented."""
    for kind in ("LearnRateFactor", "L2Factor"):
        values = {
            _factor(layer, f"{field}.{kind}", getattr(_learnable(layer, field), _ATTRIBUTE[kind]))
            for field in fields
        }
        if len(values) != 1:
            raise DLFormatError(
                f"{_layer_where(layer)}: the learnables {', '.join(fields)} save different {kind}s "
                f"{sorted(values)}; MATLAB's public {prefix}{kind} is one value"
            )
        options[f"{prefix}{kind}"] = values.pop()


_ATTRIBUTE = {"LearnRateFactor": "learn_rate_factor", "L2Factor": "l2_factor"}


def _state(layer: SavedLayer, field: str) -> torch.Tensor | None:
    """A saved state value (batch normalization's statistics, a recurrent state), or None where
    the file saves ``[]`` (a layer not trained yet)."""
    value = layer.state.get(field)
    return None if _empty(value) else _tensor(_array(layer, field, value))


def _padding(
    layer: SavedLayer,
    mode_field: str = "PaddingMode",
    size_field: str = "PaddingSize",
    modes: Sequence[str] = ("manual", "same"),
) -> Any:
    """MATLAB's public ``Padding`` (or ``Cropping``) from the saved form: version 2 of the
    convolution (1 of the pooling) layers saves ``Padding`` 1×2 ``[top/bottom left/right]``;
    later versions ``PaddingMode`` (``"manual"``, ``"same"``) and ``PaddingSize`` in MATLAB's
    public shape (``[t b l r]``; ``[l r]`` for 1-D layers, 2×3 for 3-D ones), which the
    constructor reads as MATLAB's ``Padding``."""
    if mode_field == "PaddingMode" and not _has(layer, mode_field) and _has(layer, "Padding"):
        sizes = _ints(layer, "Padding")
        if len(sizes) != 2:
            raise DLFormatError(
                f"{_where(layer, 'Padding')}: expected [top/bottom left/right], the file saves {sizes}"
            )
        return [sizes[0], sizes[0], sizes[1], sizes[1]]
    mode = _choice(layer, mode_field, modes)
    if mode != "manual":
        return mode
    return _ints(layer, size_field)  # column-major: a 3-D layer's 2×3 [t l f; b r k] as [t b l r f k]


def _classes(layer: SavedLayer) -> list[str] | str:
    """An output layer's class names (``Categories`` or, in version 1, ``ClassNames``); ``"auto"``
    where a layer saved before training holds none."""
    field = "Categories" if _has(layer, "Categories") else "ClassNames"
    value = _value(layer, field)
    if hasattr(value, "categories") and not isinstance(value, np.ndarray):
        names = [str(item) for item in value.categories]
    elif isinstance(value, np.ndarray) and value.dtype == object:
        names = [_cell_text(layer, field, item) for item in value.ravel(order="F")]
    elif isinstance(value, str):
        names = [value]
    else:
        raise DLFormatError(f"{_where(layer, field)}: expected class names, the file saves {shown(value)}")
    return names or "auto"


def _cell_text(layer: SavedLayer, field: str, item: Any) -> str:
    if isinstance(item, np.ndarray) and item.size == 1 and item.dtype.kind in "OTU":
        item = item.ravel()[0]
    if not isinstance(item, str):
        raise DLFormatError(
            f"{_where(layer, field)}: expected text in each cell, the file saves {shown(item)}"
        )
    return item


# ---------------------------------------------------------------------------------------------
# one mapper per MATLAB class


def _dlf() -> Any:
    import dlformat

    return dlformat


def _class(name: str) -> type:
    """The dlformat layer class of a MATLAB class name (they are the same)."""
    cls: type = getattr(_dlf().layers, name)
    return cls


Reader = Callable[[SavedLayer, str], Any]


def _named(
    constructor: str,
    *positional: tuple[str, Reader],
    options: Sequence[tuple[str, Reader]] = (),
    learnables: Sequence[str] = (),
    shapes: Mapping[str, Callable[[np.ndarray], np.ndarray]] | None = None,
) -> _Mapper:
    """The mapper of a class whose saveobj struct holds MATLAB's public properties by name: the
    ``positional`` fields (name and reader) are the constructor's positional arguments, in order,
    the ``options`` fields its name-value arguments of the same names, ``learnables`` its learnable
    structs (value and factors). Every field is required: a saved form that differs is an error
    naming the field, never a default in its place."""

    def mapper(layer: SavedLayer) -> Any:
        arguments = [read(layer, field) for field, read in positional]
        named = {field: read(layer, field) for field, read in options}
        named.update(_learnables(layer, learnables, shapes))
        return getattr(_dlf(), constructor)(*arguments, Name=layer.name, **named)

    return mapper


def _public(matlab_class: str, constructor: str, *positional: tuple[str, Reader], **named: Any) -> None:
    """Register :func:`_named`'s mapper for ``matlab_class``."""
    _maps(matlab_class)(_named(constructor, *positional, **named))


# -- input layers -------------------------------------------------------------------------------

# The saved fields that hold each normalization statistic, in the order they are looked for.
# AverageImage: the zerocenter Mean of every MATLAB-written file seen (docs/loading_networks.md);
# the public property names: the form assumed where no file has been seen (zscore, rescale-*).
_STATISTIC_FIELDS = {
    "Mean": ("AverageImage", "Mean"),
    "StandardDeviation": ("StandardDeviation",),
    "Min": ("Min",),
    "Max": ("Max",),
}


def _normalization(layer: SavedLayer) -> dict[str, Any]:
    """An input layer's ``Normalization`` and the statistics it reads, from the saved form.

    MATLAB saves the normalization as a struct array, one struct per transform (``[]`` for
    none): ``{Version, Type, ...}`` with the statistics in it (zerocenter: ``AverageImage``). A
    statistic saved ``[]`` (a layer array saved before training) is left unset. A function
    handle is MATLAB code: it is never run, and refused with the way to supply it."""
    from ..layers.input import NORMALIZATIONS, STATISTICS_OF

    saved = _value(layer, "Normalization")
    handle = _function_handle(saved)
    if handle is not None:
        raise DLFormatError(
            f"{_where(layer, 'Normalization')}: the saved normalization is the MATLAB function "
            f"{cut(handle.text)}, which load_network does not run (nothing saved in a file is evaluated); "
            f"supply the layer with its Python function: custom_layers={{{cut(layer.name)!r}: factory}}, "
            "factory returning e.g. dlf.imageInputLayer(..., Normalization=python_fn)"
        )
    if _empty(saved):
        return {"Normalization": "none"}
    if isinstance(saved, list):
        raise DLFormatError(
            f"{_where(layer, 'Normalization')}: the file saves {len(saved)} normalizations; an input "
            "layer has one"
        )
    if isinstance(saved, dict):  # MATLAB's form: the statistics in the struct
        container, prefix = saved, "Normalization."
        kind = _choice(layer, "Normalization.Type", NORMALIZATIONS)
    elif isinstance(saved, str):  # the public form: the name, the statistics beside it in the layer
        container, prefix = layer.properties, ""
        kind = _choice(layer, "Normalization", NORMALIZATIONS)
    else:
        raise DLFormatError(
            f"{_where(layer, 'Normalization')}: the saved normalization {shown(saved)} is neither a "
            "normalization struct nor a normalization's name"
        )
    options: dict[str, Any] = {"Normalization": kind}
    for statistic in STATISTICS_OF[kind]:
        fields = [field for field in _STATISTIC_FIELDS[statistic] if field in container]
        if not fields:
            raise DLFormatError(
                f"{_where(layer, prefix + 'Type' if prefix else 'Normalization')}: the saved {kind!r} "
                f"normalization holds no {statistic} (looked for: {', '.join(_STATISTIC_FIELDS[statistic])}; "
                f"it saves: {cut(', '.join(map(str, container)))}); no MATLAB-written file with this "
                "normalization has been seen, see docs/loading_networks.md"
            )
        value = container[fields[0]]
        if not _empty(value):
            options[statistic] = _tensor(_array(layer, prefix + fields[0], value))
    return options


def _function_handle(value: Any) -> FunctionHandle | None:
    """The function handle a saved normalization is, or holds (in any field)."""
    if isinstance(value, FunctionHandle):
        return value
    if isinstance(value, dict):
        return next((item for item in value.values() if isinstance(item, FunctionHandle)), None)
    return None


def _input_options(layer: SavedLayer) -> dict[str, Any]:
    """What every input layer saves beside its size: the normalization with its statistics and
    dimension; complex inputs are not handled."""
    options = _normalization(layer)
    if _has(layer, "NormalizationDimension"):
        options["NormalizationDimension"] = _text(layer, "NormalizationDimension")
    _require(layer, "SplitComplexInputs", [0.0], default=[0.0])
    return options


@_maps("ImageInputLayer", "Image3DInputLayer")
def _image_input(layer: SavedLayer) -> Any:
    augmentations = layer.properties.get("Augmentations")
    if not _empty(augmentations):
        raise DLFormatError(
            f"{_where(layer, 'Augmentations')}: data augmentation at the input is not handled by load_network"
        )
    constructor = "image3dInputLayer" if layer.matlab_class.endswith("3DInputLayer") else "imageInputLayer"
    return getattr(_dlf(), constructor)(_ints(layer, "InputSize"), Name=layer.name, **_input_options(layer))


@_maps("SequenceInputLayer")
def _sequence_input(layer: SavedLayer) -> Any:
    options = _input_options(layer)
    if _has(layer, "MinLength"):
        options["MinLength"] = _int(layer, "MinLength")
    return _dlf().sequenceInputLayer(_ints(layer, "InputSize"), Name=layer.name, **options)


@_maps("FeatureInputLayer")
def _feature_input(layer: SavedLayer) -> Any:
    # MATLAB's public InputSize is the number of features (dlformat's NumFeatures)
    return _dlf().featureInputLayer(_int(layer, "InputSize"), Name=layer.name, **_input_options(layer))


# -- convolution and pooling --------------------------------------------------------------------


def _dims(layer: SavedLayer) -> int:
    """1, 2 or 3: the slid dimensions of a convolution or pooling class, from its name."""
    return next(d for d in (1, 2, 3) if f"{d}D" in layer.matlab_class.rsplit(".", 1)[-1])


def _shaped(layer: SavedLayer, field: str, shape: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """A reshape to MATLAB's public shape, which the saved array may lack only in trailing
    singleton dimensions (MATLAB drops them: a 3×3×64×1 filter bank is saved 3×3×64)."""

    def reshape(value: np.ndarray) -> np.ndarray:
        if value.size != math.prod(shape):
            raise DLFormatError(
                f"{_where(layer, field)}: the saved array is {'×'.join(map(str, value.shape))}, expected "
                f"{'×'.join(map(str, shape))}"
            )
        return value.reshape(shape, order="F")

    return reshape


def _sliding(layer: SavedLayer, modes: Sequence[str] = ("manual", "same")) -> dict[str, Any]:
    """Stride and padding of a convolution or pooling layer; the padding value where saved."""
    options: dict[str, Any] = {"Stride": _ints(layer, "Stride"), "Padding": _padding(layer, modes=modes)}
    if _has(layer, "PaddingValue"):
        options["PaddingValue"] = _number_or_text(layer, "PaddingValue")
    return options


@_maps("Convolution1DLayer", "Convolution2DLayer", "Convolution3DLayer")
def _convolution(layer: SavedLayer) -> Any:
    # DistributeOverTime (saved true after a sequence input) is how MATLAB runs a 2-D convolution
    # on "SSCBT" data, per time step, as dlformat's layer does; convolving over time is not
    _require(layer, "ConvolveOverTime", [0.0], default=[0.0])
    dims = _dims(layer)
    filters, channels = _size(layer, "NumFilters"), _auto(_size)(layer, "NumChannels")
    size = _sizes(layer, "FilterSize")
    shapes = {}
    if channels != "auto":
        shapes = {
            "Weights": _shaped(layer, "Weights", (*size, channels, filters)),
            "Bias": _shaped(layer, "Bias", (*(1,) * dims, filters)),
        }
    options = _learnables(layer, ("Weights", "Bias"), shapes)
    dilation = _ints(layer, "DilationFactor") if _has(layer, "DilationFactor") else 1  # not in version 2
    modes = ("manual", "same", "causal") if dims == 1 else ("manual", "same")
    return getattr(_dlf(), f"convolution{dims}dLayer")(
        size,
        filters,
        DilationFactor=dilation,
        NumChannels=channels,
        Name=layer.name,
        **_sliding(layer, modes),
        **options,
    )


@_maps("GroupedConvolution2DLayer")
def _grouped_convolution(layer: SavedLayer) -> Any:
    size, filters = _sizes(layer, "FilterSize"), _size(layer, "NumFiltersPerGroup")
    groups, channels = _size(layer, "NumGroups"), _auto(_size)(layer, "NumChannelsPerGroup")
    shapes = {"Bias": _shaped(layer, "Bias", (1, 1, filters, groups))}
    if channels != "auto":
        shapes["Weights"] = _shaped(layer, "Weights", (*size, channels, filters, groups))
    return _dlf().groupedConvolution2dLayer(
        size,
        filters,
        groups,
        DilationFactor=_ints(layer, "DilationFactor"),
        NumChannelsPerGroup=channels,
        Name=layer.name,
        **_sliding(layer),
        **_learnables(layer, ("Weights", "Bias"), shapes),
    )


@_maps("TransposedConvolution1DLayer", "TransposedConvolution2DLayer", "TransposedConvolution3DLayer")
def _transposed_convolution(layer: SavedLayer) -> Any:
    dims = _dims(layer)
    offset = _ints(layer, "OutputSizeOffset") if _has(layer, "OutputSizeOffset") else [0]
    if any(offset):
        raise DLFormatError(
            f"{_where(layer, 'OutputSizeOffset')}: the value {offset} is not handled by load_network "
            "(handled: zeros)"
        )
    size, filters = _sizes(layer, "FilterSize"), _size(layer, "NumFilters")
    channels = _auto(_size)(layer, "NumChannels")
    shapes = {"Bias": _shaped(layer, "Bias", (*(1,) * dims, filters))}
    if channels != "auto":  # MATLAB's public layout: FilterSize × NumFilters × NumChannels
        shapes["Weights"] = _shaped(layer, "Weights", (*size, filters, channels))
    return getattr(_dlf(), f"transposedConv{dims}dLayer")(
        size,
        filters,
        Stride=_ints(layer, "Stride"),
        Cropping=_padding(layer, "CroppingMode", "CroppingSize"),
        NumChannels=channels,
        Name=layer.name,
        **_learnables(layer, ("Weights", "Bias"), shapes),
    )


@_maps(*(f"{kind}Pooling{d}DLayer" for kind in ("Max", "Average") for d in (1, 2, 3)))
def _pooling(layer: SavedLayer) -> Any:
    _require(layer, "PoolOverTime", [0.0], default=[0.0])  # DistributeOverTime: as for convolution
    dims, average = _dims(layer), "Average" in _short(layer)
    options = _sliding(layer)
    if not average:
        options.pop("PaddingValue", None)  # max pooling pads with -Inf, whatever is saved
        unpooling = _flag(layer, "HasUnpoolingOutputs", default=False)
        if dims == 2:
            options["HasUnpoolingOutputs"] = unpooling
        elif unpooling:
            raise DLFormatError(f"{_where(layer, 'HasUnpoolingOutputs')}: unpooling outputs are not handled")
    kind = "average" if average else "max"
    return getattr(_dlf(), f"{kind}Pooling{dims}dLayer")(_ints(layer, "PoolSize"), Name=layer.name, **options)


# -- fully connected ----------------------------------------------------------------------------


def _fc_weights(layer: SavedLayer, outputs: int) -> Callable[[np.ndarray], np.ndarray]:
    """MATLAB's public OutputSize×InputSize matrix from the saved weights: the matrix itself after
    sequence or flattened data, or H×W×C×OutputSize after spatial layers (the input flattened
    column-major, as MATLAB's ``reshape(W, [], K)'``). The layout is told from the saved
    OutputSize, never from the array's rank: MATLAB drops trailing singletons, so the weights of
    one output after an image input are saved H×W×C."""

    def matrix(value: np.ndarray) -> np.ndarray:
        if value.ndim == 2 and value.shape[0] == outputs:
            return value  # K×I (or 1×W: the same public matrix either way)
        if value.size % outputs:
            raise DLFormatError(
                f"{_where(layer, 'Weights')}: the saved array is {'×'.join(map(str, value.shape))}, which "
                f"holds no {outputs} outputs (OutputSize)"
            )
        return np.asarray(value.reshape(-1, outputs, order="F").T)

    return matrix


def _column(value: np.ndarray) -> np.ndarray:
    """A per-channel or per-unit vector saved 1×1×C (or C×1) as dlformat's C×1 column."""
    return np.asarray(value).reshape(-1, 1, order="F")


def _channel_vector(value: np.ndarray) -> np.ndarray:
    """A per-channel vector in the size MATLAB saved it (1×1×C after image input, C×1 after feature
    or sequence input: the layer reports it so, as MATLAB does); another vector shape as C×1."""
    value = np.asarray(value)
    sizes = PerChannel.sizes(value.size)
    return value if value.ndim >= 2 and matlab_shape(value.shape) in sizes else _column(value)


def _size_product(layer: SavedLayer, field: str) -> int | str:
    """A saved size as one number: ``[H W C]`` (SeriesNetworks save an FC layer's sizes so) is
    H·W·C, ``[1 1 K]`` is K; ``[]`` is ``"auto"`` (dlnetworks save InputSize so)."""
    if _empty(_value(layer, field)):
        return "auto"
    return math.prod(_sizes(layer, field))


@_maps("FullyConnectedLayer")
def _fully_connected(layer: SavedLayer) -> Any:
    outputs = _size_product(layer, "OutputSize")
    if outputs == "auto":
        raise DLFormatError(f"{_where(layer, 'OutputSize')}: the file saves [], an FC layer needs its size")
    options = _learnables(
        layer,
        ("Weights", "Bias"),
        {"Weights": _fc_weights(layer, int(outputs)), "Bias": _column},
    )
    inputs = _size_product(layer, "InputSize") if _has(layer, "InputSize") else "auto"
    if "Weights" in options:
        stored = int(options["Weights"].shape[1])
        if inputs not in ("auto", stored):
            raise DLFormatError(
                f"{_where(layer, 'InputSize')}: the file saves {_ints(layer, 'InputSize')} "
                f"({inputs} inputs), its weights hold {stored}"
            )
        inputs = stored
    return _dlf().fullyConnectedLayer(outputs, InputSize=inputs, Name=layer.name, **options)


# -- normalization ------------------------------------------------------------------------------

_OFFSET_SCALE = {"Offset": _channel_vector, "Scale": _channel_vector}


@_maps("BatchNormalizationLayer")
def _batch_normalization(layer: SavedLayer) -> Any:
    _require(layer, "IsMovingAverageMode", [0.0], default=[0.0])
    options: dict[str, Any] = {
        field: _float(layer, field) for field in ("MeanDecay", "VarianceDecay") if _has(layer, field)
    }
    for field in ("TrainedMean", "TrainedVariance"):
        value = _state(layer, field)
        if value is not None:
            options[field] = _tensor(_channel_vector(value.numpy()))
    return _dlf().batchNormalizationLayer(
        NumChannels=_auto(_int)(layer, "NumChannels"),
        Epsilon=_float(layer, "Epsilon"),
        Name=layer.name,
        **options,
        **_learnables(layer, ("Offset", "Scale"), _OFFSET_SCALE),
    )


def _number_or_word(layer: SavedLayer, field: str) -> int | str:
    """A count MATLAB may save as a word (``NumGroups``: ``"all-channels"``, ``"channel-wise"``)."""
    value = _value(layer, field)
    return _text(layer, field) if isinstance(value, str) else _int(layer, field)


_public(
    "LayerNormalizationLayer",
    "layerNormalizationLayer",
    options=(("Epsilon", _float), ("NumChannels", _auto(_int)), ("OperationDimension", _text)),
    learnables=("Offset", "Scale"),
    shapes=_OFFSET_SCALE,
)
_public(
    "GroupNormalizationLayer",
    "groupNormalizationLayer",
    ("NumGroups", _number_or_word),
    options=(("Epsilon", _float), ("NumChannels", _auto(_int))),
    learnables=("Offset", "Scale"),
    shapes=_OFFSET_SCALE,
)
_public(
    "InstanceNormalizationLayer",
    "instanceNormalizationLayer",
    options=(("Epsilon", _float), ("NumChannels", _auto(_int))),
    learnables=("Offset", "Scale"),
    shapes=_OFFSET_SCALE,
)
_public(
    "CrossChannelNormalizationLayer",
    "crossChannelNormalizationLayer",
    ("WindowChannelSize", _int),
    options=(("Alpha", _float), ("Beta", _float), ("K", _float)),
)

# -- layers saved by their name and a few public properties -------------------------------------

for _name, _constructor in (
    ("ReLULayer", "reluLayer"),
    ("TanhLayer", "tanhLayer"),
    ("SigmoidLayer", "sigmoidLayer"),
    ("SwishLayer", "swishLayer"),
    ("SoftplusLayer", "softplusLayer"),
    ("SoftmaxLayer", "softmaxLayer"),  # VectorFormat, ChannelDim: internal (docs/loading_networks.md)
    ("FlattenLayer", "flattenLayer"),
    ("SequenceFoldingLayer", "sequenceFoldingLayer"),
    ("SequenceUnfoldingLayer", "sequenceUnfoldingLayer"),
    ("MaxUnpooling2DLayer", "maxUnpooling2dLayer"),  # saveobj: Version 1, Name (MathWorks' source)
    ("IdentityLayer", "identityLayer"),
    ("MishLayer", "mishLayer"),
    *(
        (f"Global{kind}Pooling{d}DLayer", f"global{kind}Pooling{d}dLayer")
        for kind in ("Average", "Max")
        for d in (1, 2, 3)
    ),
):
    _public(_name, _constructor)
_public("LeakyReLULayer", "leakyReluLayer", ("Scale", _float))
_public("ClippedReLULayer", "clippedReluLayer", ("Ceiling", _float))
_public("ELULayer", "eluLayer", ("Alpha", _float))
_public("GELULayer", "geluLayer", options=(("Approximation", _text),))
_public("PReLULayer", "preluLayer", learnables=("Alpha",))
_public("DropoutLayer", "dropoutLayer", ("Probability", _float))
_public("SpatialDropoutLayer", "spatialDropoutLayer", options=(("Probability", _float),))
_public("AdditionLayer", "additionLayer", ("NumInputs", _int))
_public("MultiplicationLayer", "multiplicationLayer", ("NumInputs", _int))
_public("DepthConcatenationLayer", "depthConcatenationLayer", ("NumInputs", _int))
_public("ConcatenationLayer", "concatenationLayer", ("Dim", _int), ("NumInputs", _int))
_public(
    "WordEmbeddingLayer",
    "wordEmbeddingLayer",
    ("Dimension", _int),
    ("NumWords", _int),
    options=(("OOVMode", _text),),
    learnables=("Weights",),
)
_public(
    "EmbeddingConcatenationLayer",
    "embeddingConcatenationLayer",
    options=(("InputSize", _auto(_int)),),
    learnables=("Weights",),
)
_public(
    "PatchEmbeddingLayer",
    "patchEmbeddingLayer",
    ("PatchSize", _ints),
    ("OutputSize", _int),
    options=(("InputSize", _auto(_int)), ("SpatialFlattenMode", _text)),
    learnables=("Weights", "Bias"),
)
_public(
    "SinusoidalPositionEncodingLayer",
    "sinusoidalPositionEncodingLayer",
    ("OutputSize", _int),
    options=(("Positions", _auto(_int)), ("PositionOffset", _int)),
)


def _auto_or_number(layer: SavedLayer, field: str) -> float | str:
    """``"auto"`` saved as the word, or a number (attentionLayer's ``Scale``)."""
    return _text(layer, field) if isinstance(_value(layer, field), str) else _float(layer, field)


_public(
    "AttentionLayer",
    "attentionLayer",
    ("NumHeads", _int),
    options=(
        ("Scale", _auto_or_number),
        ("AttentionMask", _text),
        ("DropoutProbability", _float),
        ("HasPaddingMaskInput", _flag),
        ("HasScoresOutput", _flag),
    ),
)


@_maps("Crop2DLayer")
def _crop(layer: SavedLayer) -> Any:
    mode = _choice(layer, "Mode", ("centercrop", "custom"))
    # MATLAB's crop2dLayer(location) makes a "custom" layer; crop2dLayer("centercrop") the other
    return _dlf().crop2dLayer(_ints(layer, "Location") if mode == "custom" else mode, Name=layer.name)


# -- output layers ------------------------------------------------------------------------------


def _class_weights(layer: SavedLayer) -> dict[str, Any]:
    """``ClassWeights`` where the file saves them (``"none"``: text or ``[]``)."""
    if not _has(layer, "ClassWeights") or isinstance(_value(layer, "ClassWeights"), str):
        return {}
    if _empty(_value(layer, "ClassWeights")):
        return {}
    return {"ClassWeights": _numbers(layer, "ClassWeights")}


@_maps("ClassificationOutputLayer")
def _classification(layer: SavedLayer) -> Any:
    return _dlf().classificationLayer(Classes=_classes(layer), Name=layer.name, **_class_weights(layer))


@_maps("PixelClassificationLayer")
def _pixel_classification(layer: SavedLayer) -> Any:
    if _class_weights(layer):
        raise DLFormatError(f"{_where(layer, 'ClassWeights')}: class weights are not handled by load_network")
    return _dlf().pixelClassificationLayer(Classes=_classes(layer), Name=layer.name)


@_maps("RegressionOutputLayer")
def _regression(layer: SavedLayer) -> Any:
    names: list[str] = []
    if _has(layer, "ResponseNames"):
        value = _value(layer, "ResponseNames")
        items = value.ravel(order="F") if isinstance(value, np.ndarray) else [value]
        names = [_cell_text(layer, "ResponseNames", item) for item in items]
    return _dlf().regressionLayer(ResponseNames=names, Name=layer.name)


# -- recurrent ----------------------------------------------------------------------------------

_RECURRENT_LEARNABLES = ("InputWeights", "RecurrentWeights", "Bias")


def _recurrent(layer: SavedLayer, constructor: str, states: tuple[str, ...], **extra: Any) -> Any:
    for field in ("HasStateInputs", "HasStateOutputs"):
        _require(layer, field, [0.0], default=[0.0])
    from ..functional._recurrent import GATE_ACTIVATIONS, STATE_ACTIVATIONS

    for field, allowed in (
        ("StateActivationFunction", STATE_ACTIVATIONS),
        ("GateActivationFunction", GATE_ACTIVATIONS),
    ):
        if _has(layer, field):
            extra[field] = _choice(layer, field, allowed)
    learnables: tuple[str, ...] = _RECURRENT_LEARNABLES
    if "Projected" in layer.matlab_class:
        learnables += ("InputProjector", "OutputProjector")
        extra.update(
            OutputProjectorSize=_int(layer, "OutputProjectorSize"),
            InputProjectorSize=_int(layer, "InputProjectorSize"),
        )
    options = _learnables(layer, learnables)
    for field in states:
        value = _state(layer, field)
        if value is not None:
            options[field] = value
    return getattr(_dlf(), constructor)(
        _int(layer, "NumHiddenUnits"),
        InputSize=_auto(_int)(layer, "InputSize"),
        # the saved form of the public OutputMode ("sequence" or "last")
        OutputMode="sequence" if _flag(layer, "ReturnSequence") else "last",
        Name=layer.name,
        **options,
        **extra,
    )


@_maps("LSTMLayer", "LSTMProjectedLayer")
def _lstm(layer: SavedLayer) -> Any:
    projected = "Projected" in layer.matlab_class
    return _recurrent(layer, "lstmProjectedLayer" if projected else "lstmLayer", ("HiddenState", "CellState"))


@_maps("BiLSTMLayer")
def _bilstm(layer: SavedLayer) -> Any:
    return _recurrent(layer, "bilstmLayer", ("HiddenState", "CellState"))


@_maps("GRULayer", "GRUProjectedLayer")
def _gru(layer: SavedLayer) -> Any:
    from ..functional._recurrent import RESET_GATE_MODES

    mode = _choice(layer, "ResetGateMode", RESET_GATE_MODES)
    constructor = "gruProjectedLayer" if "Projected" in layer.matlab_class else "gruLayer"
    return _recurrent(layer, constructor, ("HiddenState",), ResetGateMode=mode)


# -- attention, embeddings, resizing, indexing ---------------------------------------------------


@_maps("Resize2DLayer", "Resize3DLayer")
def _resize(layer: SavedLayer) -> Any:
    sizes: dict[str, Any] = (
        {"OutputSize": _ints(layer, "OutputSize")}
        if _empty(_value(layer, "Scale"))
        else {"Scale": _numbers(layer, "Scale")}
    )
    return getattr(_dlf(), f"resize{_dims(layer)}dLayer")(
        **sizes,
        EnableReferenceInput=_flag(layer, "EnableReferenceInput"),
        Name=layer.name,
        **{
            field: _text(layer, field)
            for field in ("Method", "GeometricTransformMode", "NearestRoundingMode")
        },
    )


@_maps("PositionEmbeddingLayer")
def _position_embedding(layer: SavedLayer) -> Any:
    # version 1 saves Weights as a plain array, its factors beside it (docs/loading_networks.md)
    options: dict[str, Any] = {}
    if not _empty(_value(layer, "Weights")):
        options["Weights"] = _tensor(_array(layer, "Weights", _value(layer, "Weights")))
    return _dlf().positionEmbeddingLayer(
        _int(layer, "OutputSize"),
        _int(layer, "MaxPosition"),
        PositionDimension=_text(layer, "PositionDimension"),
        WeightLearnRateFactor=_float(layer, "WeightLearnRateFactor"),
        WeightL2Factor=_float(layer, "WeightL2Factor"),
        Name=layer.name,
        **options,
    )


_ATTENTION_WEIGHTS = ("QueryWeights", "KeyWeights", "ValueWeights", "OutputWeights")
_ATTENTION_BIASES = ("QueryBias", "KeyBias", "ValueBias", "OutputBias")


@_maps("SelfAttentionLayer")
def _self_attention(layer: SavedLayer) -> Any:
    options = {
        field: _tensor(_array(layer, field, _learnable(layer, field).value))
        for field in _ATTENTION_WEIGHTS + _ATTENTION_BIASES
        if _learnable(layer, field).value is not None
    }
    _shared_factors(layer, options, _ATTENTION_WEIGHTS, "Weight")
    _shared_factors(layer, options, _ATTENTION_BIASES, "Bias")
    return _dlf().selfAttentionLayer(
        _int(layer, "NumHeads"),
        _int(layer, "NumKeyChannels"),
        NumValueChannels=_auto(_int)(layer, "NumValueChannels"),
        OutputSize=_auto(_int)(layer, "OutputSize"),
        InputSize=_auto(_int)(layer, "InputSize"),
        AttentionMask=_choice(layer, "AttentionMask", ("none", "causal")),
        DropoutProbability=_float(layer, "DropoutProbability"),
        HasPaddingMaskInput=_flag(layer, "HasPaddingMaskInput"),
        HasScoresOutput=_flag(layer, "HasScoresOutput"),
        Name=layer.name,
        **options,
    )


@_maps("Indexing1DLayer")
def _indexing(layer: SavedLayer) -> Any:
    index = _value(layer, "Index")
    text = isinstance(index, str) or (isinstance(index, np.ndarray) and index.dtype.kind in "OTU")
    value: Any = _text(layer, "Index") if text else _int(layer, "Index")
    return _dlf().indexing1dLayer(
        value, HasPaddingMaskInput=_flag(layer, "HasPaddingMaskInput"), Name=layer.name
    )


@_maps("InputLayer")
def _input_layer(layer: SavedLayer) -> Any:
    # no MATLAB-written file saves one here: the fields read are the public properties (the form
    # of the R2023b layers saved without saveobj, Indexing1DLayer's); another form fails naming them
    sizes: list[Any] = []
    for size in _numbers(layer, "InputSize", finite=False):
        if not (math.isnan(size) or (math.isfinite(size) and size >= 1 and size == int(size))):
            raise DLFormatError(
                f"{_where(layer, 'InputSize')}: expected positive whole numbers or NaN, the file saves "
                f"{shown(size)}"
            )
        sizes.append(size if math.isnan(size) else int(size))
    fmt = "" if _empty(_value(layer, "InputFormat")) else _text(layer, "InputFormat")
    return _dlf().inputLayer(sizes, fmt, Name=layer.name)


@_maps("DicePixelClassificationLayer")
def _dice_pixel_classification(layer: SavedLayer) -> Any:
    # the saveobj struct of MathWorks' source (Version 1): Name, OutputSize, Categories, ChannelDim;
    # no MATLAB-written file saves one here. An untrained layer saves no categories: "auto"
    return _dlf().dicePixelClassificationLayer(Classes=_classes(layer), Name=layer.name)


@_maps("NetworkLayer", "NeuralODELayer")
def _nested_network(layer: SavedLayer) -> Any:
    # the saved form of a network nested in a layer is not known here (no MATLAB-written file, no
    # public source of its saveobj): refused with the way around, never guessed
    raise DLFormatError(
        f"{_where(layer, 'Network')}: a layer holding a network is not mapped by load_network (the "
        "saved form of the nested network is not known to dlformat). In MATLAB, expandLayers(net) "
        "replaces network layers by the layers they hold; save that network instead"
        if layer.matlab_class.endswith("NetworkLayer")
        else f"{_where(layer, 'Network')}: a neuralODELayer is not mapped by load_network (the saved "
        "form of its network is not known to dlformat); rebuild it in Python with "
        "dlf.neuralODELayer(dlf.dlnetwork(...), TimeInterval) and load its learnables with "
        "dlformat.io.load_learnables"
    )


# ---------------------------------------------------------------------------------------------
# layers that cannot be mapped, and the user's replacements


def mapped(layer: SavedLayer) -> Any:
    """The dlformat layer load_network makes of a saved layer by itself, or ``None`` for a class it
    does not map (a FunctionLayer, a user classdef layer). A constructor's refusal of a saved
    value is reported with the layer's name and class."""
    mapper = _MAPPERS.get(layer.matlab_class)
    if mapper is None:
        return None
    try:
        return mapper(layer)
    except DLFormatError as error:
        text = str(error)
        if text.startswith(f"layer '{cut(layer.name)}' (class "):
            raise
        raise DLFormatError(f"{_layer_where(layer)}: {cut(text, MESSAGE_LIMIT)}") from None


def short_class(matlab_class: str) -> str:
    """``"Convolution2DLayer"`` of ``"nnet.cnn.layer.Convolution2DLayer"``."""
    return matlab_class.rsplit(".", 1)[-1]


def _short(layer: SavedLayer) -> str:
    return short_class(layer.matlab_class)


def _describe(layer: SavedLayer) -> str:
    shown_fields = []
    for key, value in layer.properties.items():
        if key.startswith("nnet.") or key in ("Version",):
            continue
        if isinstance(value, FunctionHandle):
            text = cut(value.text)
        elif isinstance(value, np.ndarray) and value.size > 4:
            text = f"{value.dtype} array {'×'.join(map(str, value.shape))}"
        else:
            text = shown(value)
        shown_fields.append(f"{cut(key, 80)}={text}")
    fields = cut(", ".join(shown_fields), MESSAGE_LIMIT)
    line = f"  - '{cut(layer.name)}' (class {cut(layer.matlab_class)}): {fields}"
    if layer.expression is not None:
        line += f"\n    its MATLAB expression: {cut(layer.expression)}"
    reason = NOT_MAPPED.get(_short(layer)) if layer.matlab_class.startswith(_PACKAGE) else None
    if reason is not None:
        line += f"\n    ({reason})"
    return line


def _custom(layer: SavedLayer, custom_layers: Mapping[str, Factory]) -> Any:
    for key in (layer.name, layer.matlab_class, short_class(layer.matlab_class)):
        if key in custom_layers:
            properties = dict(layer.properties)
            properties.setdefault("Name", layer.name)
            made = custom_layers[key](properties)
            from ..layers import Layer

            if not isinstance(made, Layer):
                raise DLFormatError(
                    f"custom_layers[{key!r}] returned {type(made).__name__} for layer '{cut(layer.name)}'; "
                    "it must return a dlformat layer"
                )
            if made.Name != layer.name:
                made.Name = layer.name
            return made
    return None


def _layers(saved: SavedNetwork, custom_layers: Mapping[str, Factory]) -> tuple[list[Any], bool]:
    """The layers, and whether any is the user's replacement."""
    made: list[Any] = []
    replaced = False
    unmapped: list[SavedLayer] = []
    for layer in saved.layers:
        replacement = _custom(layer, custom_layers)
        if replacement is not None:
            made.append(replacement)
            replaced = True
            continue
        layer_made = mapped(layer)
        if layer_made is None:
            unmapped.append(layer)
            continue
        made.append(layer_made)
    if unmapped:
        listing = "\n".join(_describe(layer) for layer in unmapped[:20])
        if len(unmapped) > 20:
            listing += f"\n  ... and {len(unmapped) - 20} more"
        example = short_class(unmapped[0].matlab_class)
        raise DLFormatError(
            f"{_kind_text(saved)} has {len(unmapped)} layer(s) load_network "
            f"cannot map (no code is saved for them, or their class is not supported):\n{listing}\n"
            "Supply a replacement for each: load_network(path, custom_layers={"
            f"{cut(example)!r}: factory}}), keyed by class name (a user class's name, or 'FunctionLayer') "
            "or by layer name, where factory(properties: dict) returns a dlformat layer given the saved "
            "properties (Name included); a FunctionLayer is typically "
            "dlf.functionLayer(python_fn, Name=properties['Name'])"
        )
    return made, replaced


def _kind_text(saved: SavedNetwork) -> str:
    """``network 'net' (SeriesNetwork)``, ``layer graph 'lgraph'``, ``layer array 'layers'``."""
    name = repr(cut(saved.variable))
    if saved.kind == LAYER_GRAPH:
        return f"layer graph {name}"
    if saved.kind == LAYER_ARRAY:
        return f"layer array {name}"
    return f"network {name} ({saved.kind})"


# ---------------------------------------------------------------------------------------------
# networks, layer graphs and layer arrays


def build(saved: SavedNetwork, custom_layers: Mapping[str, Factory] | None = None) -> Any:
    """The dlformat object of a :class:`SavedNetwork`: a network of its kind, a layer graph, or
    (a saved Layer array) a list of layers."""
    layers, replaced = _layers(saved, custom_layers or {})
    if saved.kind == LAYER_ARRAY:
        return layers
    return assemble(saved.kind, layers, saved.connections, _initialized(saved), example=replaced)


def assemble(kind: str, layers: list[Any], connections: Any, initialized: bool, example: bool = True) -> Any:
    """A ``SeriesNetwork`` (layers in order), ``DAGNetwork``, ``dlnetwork`` or layer graph of
    ``layers`` joined by ``(source, destination)`` connections; a dlnetwork initialized when
    ``initialized``.

    ``example=False``: where every layer already has its sizes and learnables (a saved network's
    own layers, with their saved values), initializing would create nothing, and the example run
    that ``initialize`` makes is skipped (about a third of building a small dlnetwork); a layer
    that does not fit its input then reports it at the first call instead. With ``True`` (the
    user's replacement layers, whose code may fail) the example always runs."""
    dlf = _dlf()
    if kind == "SeriesNetwork":
        return dlf.assembleNetwork(layers)
    graph = dlf.dlnetwork(Initialize=False) if kind == "dlnetwork" else dlf.layerGraph()
    for layer in layers:
        graph.addLayers(layer)
    for source, destination in connections:
        graph.connectLayers(source, destination)
    if kind == "DAGNetwork":
        return dlf.assembleNetwork(graph)
    if kind == "dlnetwork" and initialized and (example or not graph._settled()):
        graph.initialize()
    return graph


def _initialized(saved: SavedNetwork) -> bool:
    value = saved.properties.get("Initialized")
    if value is None:
        return True
    array = np.asarray(value) if isinstance(value, np.ndarray) else None
    if array is None or array.size != 1 or array.dtype.kind not in "biuf":
        raise DLFormatError(
            f"variable {cut(saved.variable)!r}: the dlnetwork's Initialized is {shown(value)}, "
            "not one logical"
        )
    return bool(array.ravel()[0])


def saved_network(value: Any, variable: str, listed_as: str) -> SavedNetwork:
    """What a variable listed as a network, layer graph or layer array (``listed_as``: its class as
    ``whos`` tells) decoded into, as a :class:`SavedNetwork`; an error saying what it decoded into
    instead (a file whose subsystem offset is stale or zeroed, whose object metadata is broken, or
    whose object reference names another object)."""
    from ._mcos import _layer, layer_array, layer_graph

    kind = readable_kind(listed_as)
    if isinstance(value, SavedNetwork) and value.kind in (kind, None):
        return value
    if isinstance(value, MatlabObject) and value.classname == GRAPH_CLASS and kind == LAYER_GRAPH:
        return layer_graph(value, variable)
    if kind == LAYER_ARRAY:
        if isinstance(value, np.ndarray) and value.dtype == object and value.size:
            if all(isinstance(item, SavedLayer) for item in value.ravel()):
                return layer_array(tuple(value.ravel(order="F")), variable)
        if isinstance(value, MatlabObject) and value.classname.startswith(_PACKAGE):
            return layer_array((_layer(value, variable),), variable)
    raise DLFormatError(
        f"variable {cut(variable)!r} is listed as {cut(listed_as) or 'a network'} but does not decode into "
        f"one: it decodes into {_decoded(value)} (the file's object data is broken: a stale or zeroed "
        "subsystem offset in its header, broken object metadata, or a reference to another object)"
    )


def _decoded(value: Any) -> str:
    """What a variable decoded into, for an error message."""
    if isinstance(value, MatlabObject):
        return f"an object of class {cut(value.classname)}"
    if isinstance(value, SavedNetwork):
        return f"a {value.kind}"
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of size {'×'.join(map(str, value.shape))}"
    return f"a {type(value).__name__}"


def readable_kind(matlab_class: str) -> str | None:
    """The kind load_network reads from a variable ``whos`` lists with ``matlab_class``
    (``"SeriesNetwork"``, ``"nnet.cnn.LayerGraph"``, ``"nnet.cnn.layer.Layer"``), or None."""
    if matlab_class in NETWORK_CLASSES:
        return matlab_class
    if matlab_class == GRAPH_CLASS:
        return LAYER_GRAPH
    if matlab_class.startswith(_PACKAGE) and "." not in matlab_class[len(_PACKAGE) :]:
        return LAYER_ARRAY
    return None


def load_network(
    path: str | os.PathLike[str],
    variable: str | None = None,
    custom_layers: Mapping[str, Factory] | None = None,
) -> Any:
    """Load a network MATLAB saved (``save("net.mat", "net")``) as a dlformat network.

    A ``SeriesNetwork`` or ``DAGNetwork`` becomes dlformat's network of that kind (``predict``,
    ``classify``); a ``dlnetwork`` a :class:`~dlformat.DLNetwork`, initialized as saved. A saved
    ``LayerGraph`` (an architecture, often untrained) becomes a dlformat ``layerGraph``, and a
    saved ``Layer`` array a list of dlformat layers, learnables as saved (a layer saved before
    training has none: its sizes stay ``"auto"``). Every layer becomes the dlformat layer of its
    MATLAB class with MATLAB's public property values, learnables (with their learn-rate and L2
    factors) and state as saved; names and connections are kept. See docs/loading_networks.md.

    Args:
        path: the .mat file (MAT version 7 or 7.3), or a ``.pt`` file ``dlformat convert`` wrote
            (read as plain data with ``torch.load(weights_only=True)``; no mat-io needed).
        variable: the variable to load, needed when the file saves several networks (or, saving
            none, several layer graphs or layer arrays).
        custom_layers: replacements for layers that cannot be mapped (a ``FunctionLayer``, a user
            classdef layer): ``{class name or layer name: factory}``, ``factory(properties)``
            returning a dlformat layer from the layer's saved properties (``Name`` included).

    Raises:
        DLFormatError: the file saves no network, several and no ``variable``, a layer class
            or saved value that cannot be mapped (named with its layer, class and field), or
            mat-io is missing (with the command that installs it).
    """
    path = Path(path)
    if path.suffix == ".pt":  # what `dlformat convert` wrote: no mat-io needed
        from ._network_file import read_network_file

        return read_network_file(path)
    return build(read_saved(path, variable), custom_layers)


def read_saved(path: str | os.PathLike[str], variable: str | None = None) -> SavedNetwork:
    """The network, layer graph or layer array a .mat file saves (``variable``, or the one it
    saves), decoded but not mapped; ``dlformat inspect`` shows it as it is."""
    from . import _open, _read, whos

    path = Path(path)
    opened = _open(path)  # scanned once: the scan lists the variables and guards the reading
    scanned = opened[1]
    if scanned.version == 73:  # only h5py lists an HDF5 file's variables
        listed = [(str(entry.path), entry_class(entry)) for entry in whos(path)]
    else:
        listed = [(item.name, item.matlab_class) for item in scanned.variables]
    kinds = {name: readable_kind(kind) for name, kind in listed if kind}
    if variable is None:
        variable = _pick(path, listed, kinds)
    value = _read(*opened, [variable])[variable]
    listed_as = dict(listed).get(variable, "")
    if kinds.get(variable) is None and not isinstance(value, SavedNetwork):
        raise DLFormatError(
            f"variable {cut(variable)!r} of {path} is not a network, layer graph or layer array "
            f"(it is {_decoded(value)})"
        )
    return saved_network(value, variable, listed_as)


def _pick(path: Path, listed: list[tuple[str, str]], kinds: Mapping[str, str | None]) -> str:
    """The one network the file saves; without any, its one layer graph or layer array."""
    networks = [(name, kind) for name, kind in listed if kinds.get(name) in NETWORK_CLASSES]
    candidates = networks or [(name, kind) for name, kind in listed if kinds.get(name) is not None]
    if not candidates:
        raise DLFormatError(
            f"{path} saves no SeriesNetwork, DAGNetwork, dlnetwork, LayerGraph or Layer array; "
            "its variables: "
            + cut(", ".join(f"{name} ({kind})" for name, kind in listed if kind), MESSAGE_LIMIT)
        )
    if len(candidates) > 1:
        what = "networks" if networks else "layer graphs or layer arrays"
        raise DLFormatError(
            f"{path} saves {len(candidates)} {what}: "
            + cut(", ".join(f"{name} ({kind})" for name, kind in candidates), MESSAGE_LIMIT)
            + "; pick one with variable=..."
        )
    return candidates[0][0]


def entry_class(entry: Any) -> str:
    """The class of a top-level variable as whos lists it (``"SeriesNetwork (object)"``)."""
    if any(mark in entry.path for mark in ".{("):
        return ""
    return str(entry.matlab_class).removesuffix(" (object)")
