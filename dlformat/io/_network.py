"""``load_network``: a network MATLAB saved, as a working dlformat network.

:mod:`._mcos` decodes the file into a :class:`~._mcos.SavedNetwork` (every layer's class, saveobj
version and saved fields, with no interpretation). Here each layer goes through the mapper of its
MATLAB class (``_MAPPERS``), which reads the saved fields as MATLAB's public property values and
calls the dlformat constructor of the same class; the network is then assembled with the saved
names and connections. The saved forms per class and version, and the evidence for each mapping,
are in docs/loading_networks.md.

A field a mapper needs and does not find, or a value it does not handle (a padding mode, a
normalization type), is a DLFormatError naming the layer, its class and the field: nothing is
guessed and no layer is replaced by one that passes its input through.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._errors import DLFormatError
from ..layers._properties import PerChannel, matlab_shape
from ._mcos import FunctionHandle, SavedLayer, SavedLearnable, SavedNetwork

Factory = Callable[[dict[str, Any]], Any]
_Mapper = Callable[[SavedLayer], Any]
_MAPPERS: dict[str, _Mapper] = {}
NETWORK_CLASSES = ("SeriesNetwork", "DAGNetwork", "dlnetwork")  # the saved classes load_network reads
_PACKAGE = "nnet.cnn.layer."


def _maps(*classes: str) -> Callable[[_Mapper], _Mapper]:
    """Register a mapper for MATLAB layer classes (named without ``nnet.cnn.layer.``)."""

    def register(mapper: _Mapper) -> _Mapper:
        for name in classes:
            _MAPPERS[_PACKAGE + name] = mapper
        return mapper

    return register


# ---------------------------------------------------------------------------------------------
# reading saved fields


def _where(layer: SavedLayer, field: str) -> str:
    return (
        f"layer '{layer.name}' (class {layer.matlab_class}, saveobj version {layer.version}), field {field!r}"
    )


def _field(layer: SavedLayer, field: str) -> Any:
    if field not in layer.properties:
        raise DLFormatError(f"{_where(layer, field)}: the file does not save it; cannot map the layer")
    return layer.properties[field]


def _numbers(layer: SavedLayer, field: str) -> list[float]:
    value = _field(layer, field)
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise DLFormatError(f"{_where(layer, field)}: expected numbers, the file saves {value!r}")
    return [float(item) for item in array.ravel(order="F")]


def _ints(layer: SavedLayer, field: str) -> list[int]:
    values = _numbers(layer, field)
    if any(item != int(item) for item in values):
        raise DLFormatError(f"{_where(layer, field)}: expected whole numbers, the file saves {values}")
    return [int(item) for item in values]


def _int(layer: SavedLayer, field: str) -> int:
    values = _ints(layer, field)
    if len(values) != 1:
        raise DLFormatError(f"{_where(layer, field)}: expected one number, the file saves {values}")
    return values[0]


def _float(layer: SavedLayer, field: str) -> float:
    values = _numbers(layer, field)
    if len(values) != 1:
        raise DLFormatError(f"{_where(layer, field)}: expected one number, the file saves {values}")
    return values[0]


def _flag(layer: SavedLayer, field: str, default: bool | None = None) -> bool:
    if field not in layer.properties and default is not None:
        return default
    values = _numbers(layer, field)
    if len(values) != 1:
        raise DLFormatError(f"{_where(layer, field)}: expected one logical, the file saves {values}")
    return bool(values[0])


def _text(layer: SavedLayer, field: str) -> str:
    value = _field(layer, field)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "OTU":
        value = value.ravel()[0]  # a 1×1 string array
    if not isinstance(value, str):
        raise DLFormatError(f"{_where(layer, field)}: expected text, the file saves {value!r}")
    return value


def _choice(layer: SavedLayer, field: str, allowed: Mapping[str, Any]) -> Any:
    value = _text(layer, field)
    if value not in allowed:
        raise DLFormatError(
            f"{_where(layer, field)}: the value {value!r} is not handled by load_network "
            f"(handled: {', '.join(repr(key) for key in allowed)})"
        )
    return allowed[value]


def _require(layer: SavedLayer, field: str, expected: Any, default: Any = None) -> None:
    """A field whose other values would change what the layer computes: only ``expected`` is
    handled (a missing field counts as ``default`` where one is given)."""
    if field not in layer.properties and default is not None:
        value: Any = default
    else:
        raw = _field(layer, field)
        value = raw if isinstance(raw, str) else _numbers(layer, field)
    if value != expected:
        raise DLFormatError(
            f"{_where(layer, field)}: the value {value!r} is not handled by load_network "
            f"(handled: {expected!r})"
        )


def _tensor(value: Any) -> torch.Tensor:
    return torch.as_tensor(np.ascontiguousarray(value))


def _learnable(layer: SavedLayer, field: str) -> SavedLearnable:
    entry = layer.learnables.get(field)
    if entry is None or entry.value is None:
        raise DLFormatError(f"{_where(layer, field)}: the file saves no value for this learnable")
    return entry


def _factor(layer: SavedLayer, field: str, value: Any) -> float:
    array = np.asarray(value)
    if array.size != 1 or array.dtype.kind not in "biuf":
        raise DLFormatError(f"{_where(layer, field)}: expected one factor, the file saves {value!r}")
    return float(array.ravel()[0])


def _learnables(
    layer: SavedLayer, fields: Mapping[str, str], shapes: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Each saved learnable struct as the public options: ``Weights`` with ``WeightLearnRateFactor``
    and ``WeightL2Factor`` (``fields`` maps each saved field to its factors' prefix);
    ``shapes[field]`` reshapes a saved value into its public form."""
    options: dict[str, Any] = {}
    for field, prefix in fields.items():
        entry = _learnable(layer, field)
        value = entry.value
        if shapes and field in shapes:
            value = shapes[field](value)
        options[field] = _tensor(value)
        options[f"{prefix}LearnRateFactor"] = _factor(
            layer, f"{field}.LearnRateFactor", entry.learn_rate_factor
        )
        options[f"{prefix}L2Factor"] = _factor(layer, f"{field}.L2Factor", entry.l2_factor)
    return options


def _padding(layer: SavedLayer, mode_field: str = "PaddingMode", size_field: str = "PaddingSize") -> Any:
    """MATLAB's public ``Padding`` from the saved form: version 2 of the convolution (1 of the
    pooling) layers saves ``Padding`` 1×2 ``[top/bottom left/right]``; later versions
    ``PaddingMode`` (``"manual"``, ``"same"``) and ``PaddingSize`` 1×4 ``[t b l r]``."""
    if mode_field not in layer.properties and "Padding" in layer.properties and mode_field == "PaddingMode":
        sizes = _ints(layer, "Padding")
        if len(sizes) != 2:
            raise DLFormatError(
                f"{_where(layer, 'Padding')}: expected [top/bottom left/right], the file saves {sizes}"
            )
        return [sizes[0], sizes[0], sizes[1], sizes[1]]
    mode = _choice(layer, mode_field, {"manual": "manual", "same": "same"})
    if mode == "same":
        return "same"
    sizes = _ints(layer, size_field)
    if len(sizes) != 4:
        raise DLFormatError(f"{_where(layer, size_field)}: expected [t b l r], the file saves {sizes}")
    return sizes


def _classes(layer: SavedLayer) -> list[str]:
    value = layer.properties.get("Categories", layer.properties.get("ClassNames"))
    if value is None:
        raise DLFormatError(f"{_where(layer, 'Categories')}: the file saves no class names")
    if hasattr(value, "categories") and not isinstance(value, np.ndarray):
        return [str(item) for item in value.categories]
    return [str(item) for item in np.asarray(value, dtype=object).ravel(order="F")]


# ---------------------------------------------------------------------------------------------
# one mapper per MATLAB class


def _dlf() -> Any:
    import dlformat

    return dlformat


def _no_normalization(value: Any) -> bool:
    """An input layer's saved Normalization that normalizes nothing (saved empty, or "none")."""
    if isinstance(value, np.ndarray):
        return value.size == 0
    return value is None or (isinstance(value, str) and value == "none")


@_maps("ImageInputLayer")
def _image_input(layer: SavedLayer) -> Any:
    sizes = _ints(layer, "InputSize")
    normalization = _field(layer, "Normalization")
    options: dict[str, Any] = {}
    if _no_normalization(normalization):
        options["Normalization"] = "none"
    elif isinstance(normalization, dict):
        kind = normalization.get("Type")
        if kind == "zerocenter":
            options["Normalization"] = "zerocenter"
            options["Mean"] = _tensor(np.asarray(normalization["AverageImage"], dtype=np.float32))
        elif kind == "none":
            options["Normalization"] = "none"
        else:
            raise DLFormatError(
                f"{_where(layer, 'Normalization.Type')}: the value {kind!r} is not handled by load_network "
                "(handled: 'zerocenter', 'none')"
            )
    else:
        raise DLFormatError(f"{_where(layer, 'Normalization')}: unexpected saved form {normalization!r}")
    if "NormalizationDimension" in layer.properties:
        options["NormalizationDimension"] = _text(layer, "NormalizationDimension")
    _require(layer, "SplitComplexInputs", [0.0], default=[0.0])
    augmentations = layer.properties.get("Augmentations")
    if augmentations is not None and np.asarray(augmentations).size:
        raise DLFormatError(
            f"{_where(layer, 'Augmentations')}: data augmentation at the input is not handled by load_network"
        )
    return _dlf().imageInputLayer(sizes, Name=layer.name, **options)


@_maps("SequenceInputLayer")
def _sequence_input(layer: SavedLayer) -> Any:
    normalization = _field(layer, "Normalization")
    if not _no_normalization(normalization):
        raise DLFormatError(
            f"{_where(layer, 'Normalization')}: the saved normalization {normalization!r} is not handled by "
            "load_network (handled: none)"
        )
    _require(layer, "SplitComplexInputs", [0.0], default=[0.0])
    options = {"MinLength": _int(layer, "MinLength")} if "MinLength" in layer.properties else {}
    return _dlf().sequenceInputLayer(_ints(layer, "InputSize"), Name=layer.name, **options)


@_maps("Convolution2DLayer")
def _convolution(layer: SavedLayer) -> Any:
    # DistributeOverTime (saved true after a sequence input) is how MATLAB runs a 2-D convolution
    # on "SSCBT" data, per time step, as dlformat's layer does; convolving over time is not
    _require(layer, "ConvolveOverTime", [0.0], default=[0.0])
    shape = (*_ints(layer, "FilterSize"), _int(layer, "NumChannels"), _int(layer, "NumFilters"))
    options = _learnables(
        layer,
        {"Weights": "Weight", "Bias": "Bias"},
        {"Weights": _shaped(layer, "Weights", shape), "Bias": _shaped(layer, "Bias", (1, 1, shape[-1]))},
    )
    if "PaddingValue" in layer.properties:
        options["PaddingValue"] = _float(layer, "PaddingValue")
    return _dlf().convolution2dLayer(
        _ints(layer, "FilterSize"),
        _int(layer, "NumFilters"),
        Stride=_ints(layer, "Stride"),
        DilationFactor=_ints(layer, "DilationFactor") if "DilationFactor" in layer.properties else 1,
        Padding=_padding(layer),
        NumChannels=_int(layer, "NumChannels"),
        Name=layer.name,
        **options,
    )


@_maps("TransposedConvolution2DLayer")
def _transposed_convolution(layer: SavedLayer) -> Any:
    _require(layer, "OutputSizeOffset", [0.0, 0.0], default=[0.0, 0.0])
    mode = _choice(layer, "CroppingMode", {"manual": "manual", "same": "same"})
    cropping: Any = "same" if mode == "same" else _ints(layer, "CroppingSize")
    return _dlf().transposedConv2dLayer(
        _ints(layer, "FilterSize"),
        _int(layer, "NumFilters"),
        Stride=_ints(layer, "Stride"),
        Cropping=cropping,
        NumChannels=_int(layer, "NumChannels"),
        Name=layer.name,
        **_learnables(layer, {"Weights": "Weight", "Bias": "Bias"}),
    )


@_maps("BatchNormalizationLayer")
def _batch_normalization(layer: SavedLayer) -> Any:
    _require(layer, "IsMovingAverageMode", [0.0], default=[0.0])
    options = {
        field: _float(layer, field) for field in ("MeanDecay", "VarianceDecay") if field in layer.properties
    }
    return _dlf().batchNormalizationLayer(
        NumChannels=_int(layer, "NumChannels"),
        Epsilon=_float(layer, "Epsilon"),
        TrainedMean=_tensor(_channel_vector(_field(layer, "TrainedMean"))),
        TrainedVariance=_tensor(_channel_vector(_field(layer, "TrainedVariance"))),
        Name=layer.name,
        **options,
        **_learnables(
            layer,
            {"Offset": "Offset", "Scale": "Scale"},
            {"Offset": _channel_vector, "Scale": _channel_vector},
        ),
    )


@_maps("MaxPooling2DLayer")
def _max_pooling(layer: SavedLayer) -> Any:
    _require(layer, "PoolOverTime", [0.0], default=[0.0])  # DistributeOverTime: as for convolution
    return _dlf().maxPooling2dLayer(
        _ints(layer, "PoolSize"),
        Stride=_ints(layer, "Stride"),
        Padding=_padding(layer),
        HasUnpoolingOutputs=_flag(layer, "HasUnpoolingOutputs", default=False),
        Name=layer.name,
    )


def _shaped(layer: SavedLayer, field: str, shape: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """A reshape to MATLAB's public shape, which the saved array may lack only in trailing
    singleton dimensions (MATLAB drops them: a 3×3×64×1 filter bank is saved 3×3×64)."""

    def reshape(value: np.ndarray) -> np.ndarray:
        if value.size != int(np.prod(shape)):
            raise DLFormatError(
                f"{_where(layer, field)}: the saved array is {'×'.join(map(str, value.shape))}, expected "
                f"{'×'.join(map(str, shape))}"
            )
        return value.reshape(shape, order="F")

    return reshape


def _column(value: np.ndarray) -> np.ndarray:
    """A per-channel or per-unit vector saved 1×1×C (or C×1) as dlformat's C×1 column."""
    return np.asarray(value).reshape(-1, 1, order="F")


def _channel_vector(value: np.ndarray) -> np.ndarray:
    """A per-channel vector in the size MATLAB saved it (1×1×C after image input, C×1 after feature
    or sequence input: the layer reports it so, as MATLAB does); another vector shape as C×1."""
    value = np.asarray(value)
    sizes = PerChannel.sizes(value.size)
    return value if value.ndim >= 2 and matlab_shape(value.shape) in sizes else _column(value)


def _fc_weights(value: np.ndarray) -> np.ndarray:
    """MATLAB's public OutputSize×InputSize matrix from weights saved H×W×C×OutputSize (after
    spatial layers): the input flattened column-major, as MATLAB's ``reshape(W, [], K)'``."""
    if value.ndim <= 2:
        return value
    return np.asarray(value.reshape(-1, value.shape[-1], order="F").T)


@_maps("FullyConnectedLayer")
def _fully_connected(layer: SavedLayer) -> Any:
    options = _learnables(
        layer, {"Weights": "Weight", "Bias": "Bias"}, {"Weights": _fc_weights, "Bias": _column}
    )
    weights = options["Weights"]
    return _dlf().fullyConnectedLayer(
        int(weights.shape[0]), InputSize=int(weights.shape[1]), Name=layer.name, **options
    )


def _named(constructor: str, *fields: tuple[str, Callable[[SavedLayer, str], Any]]) -> _Mapper:
    """A layer whose constructor takes its saved ``fields`` (name and reader) as positional
    arguments, in order, and its name."""

    def mapper(layer: SavedLayer) -> Any:
        arguments = [read(layer, field) for field, read in fields]
        return getattr(_dlf(), constructor)(*arguments, Name=layer.name)

    return mapper


_maps("ReLULayer")(_named("reluLayer"))
_maps("GlobalAveragePooling2DLayer")(_named("globalAveragePooling2dLayer"))
_maps("SoftmaxLayer")(_named("softmaxLayer"))
# layers whose only property is the name (no MATLAB-written file saves one here)
_maps("MaxUnpooling2DLayer")(_named("maxUnpooling2dLayer"))  # saveobj: Version 1, Name (its source)
_maps("IdentityLayer")(_named("identityLayer"))
_maps("MishLayer")(_named("mishLayer"))
_maps("FlattenLayer")(_named("flattenLayer"))
_maps("LeakyReLULayer")(_named("leakyReluLayer", ("Scale", _float)))
_maps("DropoutLayer")(_named("dropoutLayer", ("Probability", _float)))
_maps("AdditionLayer")(_named("additionLayer", ("NumInputs", _int)))
_maps("DepthConcatenationLayer")(_named("depthConcatenationLayer", ("NumInputs", _int)))
_maps("ConcatenationLayer")(_named("concatenationLayer", ("Dim", _int), ("NumInputs", _int)))


@_maps("ClassificationOutputLayer")
def _classification(layer: SavedLayer) -> Any:
    weights = layer.properties.get("ClassWeights")
    if weights is not None and np.asarray(weights).size and not isinstance(weights, str):
        return _dlf().classificationLayer(
            Classes=_classes(layer), ClassWeights=_tensor(np.asarray(weights)), Name=layer.name
        )
    return _dlf().classificationLayer(Classes=_classes(layer), Name=layer.name)


@_maps("PixelClassificationLayer")
def _pixel_classification(layer: SavedLayer) -> Any:
    weights = layer.properties.get("ClassWeights")
    if weights is not None and np.asarray(weights).size and not isinstance(weights, str):
        raise DLFormatError(f"{_where(layer, 'ClassWeights')}: class weights are not handled by load_network")
    return _dlf().pixelClassificationLayer(Classes=_classes(layer), Name=layer.name)


@_maps("DicePixelClassificationLayer")
def _dice_pixel_classification(layer: SavedLayer) -> Any:
    # the saveobj struct of MathWorks' source (Version 1): Name, OutputSize, Categories, ChannelDim;
    # no MATLAB-written file saves one here. An untrained layer saves no categories: "auto"
    classes = _classes(layer)
    return _dlf().dicePixelClassificationLayer(Classes=classes or "auto", Name=layer.name)


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


@_maps("RegressionOutputLayer")
def _regression(layer: SavedLayer) -> Any:
    names = layer.properties.get("ResponseNames")
    responses = (
        [str(item) for item in np.asarray(names, dtype=object).ravel(order="F")] if names is not None else []
    )
    return _dlf().regressionLayer(ResponseNames=responses, Name=layer.name)


def _recurrent_state(layer: SavedLayer, options: dict[str, Any], fields: tuple[str, ...]) -> None:
    for field in fields:
        value = layer.state.get(field)
        if value is not None and np.asarray(value).size:
            options[field] = _tensor(np.asarray(value))


_RECURRENT_LEARNABLES = {
    "InputWeights": "InputWeights",
    "RecurrentWeights": "RecurrentWeights",
    "Bias": "Bias",
}


def _recurrent(layer: SavedLayer, constructor: str, states: tuple[str, ...], **extra: Any) -> Any:
    for field in ("HasStateInputs", "HasStateOutputs"):
        _require(layer, field, [0.0], default=[0.0])
    for field, default in (("StateActivationFunction", "tanh"), ("GateActivationFunction", "sigmoid")):
        if field in layer.properties:
            _require(layer, field, default)
    options = _learnables(layer, _RECURRENT_LEARNABLES)
    _recurrent_state(layer, options, states)
    return getattr(_dlf(), constructor)(
        _int(layer, "NumHiddenUnits"),
        InputSize=_int(layer, "InputSize"),
        # the saved form of the public OutputMode ("sequence" or "last")
        OutputMode="sequence" if _flag(layer, "ReturnSequence") else "last",
        Name=layer.name,
        **options,
        **extra,
    )


@_maps("LSTMLayer")
def _lstm(layer: SavedLayer) -> Any:
    return _recurrent(layer, "lstmLayer", ("HiddenState", "CellState"))


@_maps("BiLSTMLayer")
def _bilstm(layer: SavedLayer) -> Any:
    return _recurrent(layer, "bilstmLayer", ("HiddenState", "CellState"))


@_maps("GRULayer")
def _gru(layer: SavedLayer) -> Any:
    mode = _choice(
        layer,
        "ResetGateMode",
        {
            "after-multiplication": "after-multiplication",
            "before-multiplication": "before-multiplication",
            "recurrent-bias-after-multiplication": "recurrent-bias-after-multiplication",
        },
    )
    return _recurrent(layer, "gruLayer", ("HiddenState",), ResetGateMode=mode)


@_maps("Resize2DLayer")
def _resize(layer: SavedLayer) -> Any:
    scale = _field(layer, "Scale")
    sizes: dict[str, Any] = (
        {"OutputSize": _ints(layer, "OutputSize")}
        if np.asarray(scale).size == 0
        else {"Scale": _numbers(layer, "Scale")}
    )
    return _dlf().resize2dLayer(
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
    return _dlf().positionEmbeddingLayer(
        _int(layer, "OutputSize"),
        _int(layer, "MaxPosition"),
        PositionDimension=_text(layer, "PositionDimension"),
        Weights=_tensor(np.asarray(_field(layer, "Weights"))),
        WeightLearnRateFactor=_float(layer, "WeightLearnRateFactor"),
        WeightL2Factor=_float(layer, "WeightL2Factor"),
        Name=layer.name,
    )


def _shared_factors(layer: SavedLayer, options: dict[str, Any], fields: tuple[str, ...], prefix: str) -> None:
    """One ``<prefix>LearnRateFactor``/``<prefix>L2Factor`` pair for several learnables, as
    MATLAB's public properties have it; saved factors that differ cannot be represented."""
    for kind in ("LearnRateFactor", "L2Factor"):
        values = {options.pop(f"{field}{kind}") for field in fields}
        if len(values) != 1:
            raise DLFormatError(
                f"{_where(layer, kind)}: the learnables {', '.join(fields)} save different factors "
                f"{sorted(values)}; "
                f"MATLAB's public {prefix}{kind} is one value"
            )
        options[f"{prefix}{kind}"] = values.pop()


_ATTENTION_WEIGHTS = ("QueryWeights", "KeyWeights", "ValueWeights", "OutputWeights")
_ATTENTION_BIASES = ("QueryBias", "KeyBias", "ValueBias", "OutputBias")


@_maps("SelfAttentionLayer")
def _self_attention(layer: SavedLayer) -> Any:
    options = _learnables(layer, {field: field for field in _ATTENTION_WEIGHTS + _ATTENTION_BIASES})
    _shared_factors(layer, options, _ATTENTION_WEIGHTS, "Weight")
    _shared_factors(layer, options, _ATTENTION_BIASES, "Bias")
    return _dlf().selfAttentionLayer(
        _int(layer, "NumHeads"),
        _int(layer, "NumKeyChannels"),
        NumValueChannels=_int(layer, "NumValueChannels"),
        OutputSize=_int(layer, "OutputSize"),
        InputSize=_int(layer, "InputSize"),
        AttentionMask=_choice(layer, "AttentionMask", {"none": "none", "causal": "causal"}),
        DropoutProbability=_float(layer, "DropoutProbability"),
        HasPaddingMaskInput=_flag(layer, "HasPaddingMaskInput"),
        HasScoresOutput=_flag(layer, "HasScoresOutput"),
        Name=layer.name,
        **options,
    )


@_maps("Indexing1DLayer")
def _indexing(layer: SavedLayer) -> Any:
    index = _field(layer, "Index")
    value: Any = _text(layer, "Index") if np.asarray(index).dtype.kind in "OTU" else _int(layer, "Index")
    return _dlf().indexing1dLayer(
        value, HasPaddingMaskInput=_flag(layer, "HasPaddingMaskInput"), Name=layer.name
    )


@_maps("InputLayer")
def _input_layer(layer: SavedLayer) -> Any:
    # no MATLAB-written file saves one here: the fields read are the public properties (the form
    # of the R2023b layers saved without saveobj, Indexing1DLayer's); another form fails naming them
    sizes = [size if np.isnan(size) else int(size) for size in _numbers(layer, "InputSize")]
    fmt = "" if np.asarray(_field(layer, "InputFormat")).size == 0 else _text(layer, "InputFormat")
    return _dlf().inputLayer(sizes, fmt, Name=layer.name)


# ---------------------------------------------------------------------------------------------
# layers that cannot be mapped, and the user's replacements


def mapped(layer: SavedLayer) -> Any:
    """The dlformat layer load_network makes of a saved layer by itself, or ``None`` for a class it
    does not map (a FunctionLayer, a user classdef layer)."""
    mapper = _MAPPERS.get(layer.matlab_class)
    return None if mapper is None else mapper(layer)


def short_class(matlab_class: str) -> str:
    """``"Convolution2DLayer"`` of ``"nnet.cnn.layer.Convolution2DLayer"``."""
    return matlab_class.rsplit(".", 1)[-1]


def _describe(layer: SavedLayer) -> str:
    shown = []
    for key, value in layer.properties.items():
        if key.startswith("nnet.") or key in ("Version",):
            continue
        if isinstance(value, FunctionHandle):
            text = value.text
        elif isinstance(value, np.ndarray) and value.size > 4:
            text = f"{value.dtype} array {'×'.join(map(str, value.shape))}"
        else:
            text = repr(value)
        shown.append(f"{key}={text}")
    line = f"  - '{layer.name}' (class {layer.matlab_class}): {', '.join(shown)}"
    if layer.expression is not None:
        line += f"\n    its MATLAB expression: {layer.expression}"
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
                    f"custom_layers[{key!r}] returned {type(made).__name__} for layer '{layer.name}'; "
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
        listing = "\n".join(_describe(layer) for layer in unmapped)
        example = short_class(unmapped[0].matlab_class)
        raise DLFormatError(
            f"network {saved.variable!r} ({saved.kind}) has {len(unmapped)} layer(s) load_network cannot map "
            f"(no code is saved for them, or their class is not supported):\n{listing}\n"
            "Supply a replacement for each: load_network(path, custom_layers={"
            f"{example!r}: factory}}), keyed by class name (a user class's name, or 'FunctionLayer') or by "
            "layer name, where factory(properties: dict) returns a dlformat layer given the saved properties "
            "(Name included); a FunctionLayer is typically "
            "dlf.functionLayer(python_fn, Name=properties['Name'])"
        )
    return made, replaced


# ---------------------------------------------------------------------------------------------
# networks


def build(saved: SavedNetwork, custom_layers: Mapping[str, Factory] | None = None) -> Any:
    """The dlformat network of a :class:`SavedNetwork`."""
    layers, replaced = _layers(saved, custom_layers or {})
    return assemble(saved.kind, layers, saved.connections, _initialized(saved), example=replaced)


def assemble(kind: str, layers: list[Any], connections: Any, initialized: bool, example: bool = True) -> Any:
    """A ``SeriesNetwork`` (layers in order), ``DAGNetwork`` or ``dlnetwork`` of ``layers`` joined
    by ``(source, destination)`` connections; a dlnetwork initialized when ``initialized``.

    ``example=False``: where every layer already has its sizes and learnables (a saved network's
    own layers, with their saved values), initializing would create nothing, and the example run
    that ``initialize`` makes is skipped (about a third of building a small dlnetwork); a layer
    that does not fit its input then reports it at the first call instead. With ``True`` (the
    user's replacement layers, whose code may fail) the example always runs."""
    dlf = _dlf()
    if kind == "SeriesNetwork":
        return dlf.assembleNetwork(layers)
    graph = dlf.layerGraph() if kind == "DAGNetwork" else dlf.dlnetwork(Initialize=False)
    for layer in layers:
        graph.addLayers(layer)
    for source, destination in connections:
        graph.connectLayers(source, destination)
    if kind == "DAGNetwork":
        return dlf.assembleNetwork(graph)
    if initialized and (example or not graph._settled()):
        graph.initialize()
    return graph


def _initialized(saved: SavedNetwork) -> bool:
    value = saved.properties.get("Initialized")
    return value is None or bool(np.asarray(value).ravel()[0])


def load_network(
    path: str | os.PathLike[str],
    variable: str | None = None,
    custom_layers: Mapping[str, Factory] | None = None,
) -> Any:
    """Load a network MATLAB saved (``save("net.mat", "net")``) as a dlformat network.

    A ``SeriesNetwork`` or ``DAGNetwork`` becomes dlformat's network of that kind (``predict``,
    ``classify``); a ``dlnetwork`` a :class:`~dlformat.DLNetwork`, initialized as saved. Every layer
    becomes the dlformat layer of its MATLAB class with MATLAB's public property values,
    learnables (with their learn-rate and L2 factors) and state as saved; names and connections
    are kept. See docs/loading_networks.md.

    Args:
        path: the .mat file (MAT version 7 or 7.3), or a ``.pt`` file ``dlformat convert`` wrote
            (read as plain data with ``torch.load(weights_only=True)``; no mat-io needed).
        variable: the variable holding the network, needed when the file saves several.
        custom_layers: replacements for layers that cannot be mapped (a ``FunctionLayer``, a user
            classdef layer): ``{class name or layer name: factory}``, ``factory(properties)``
            returning a dlformat layer from the layer's saved properties (``Name`` included).

    Raises:
        DLFormatError: the file saves no network, several and no ``variable``, a layer class
            or saved value that cannot be mapped (named with its layer, class and field), or
            mat-io is missing (with the command that installs it).
    """
    from . import _open, _read, whos

    path = Path(path)
    if path.suffix == ".pt":  # what `dlformat convert` wrote: no mat-io needed
        from ._network_file import read_network_file

        return read_network_file(path)
    opened = _open(path)  # scanned once: the scan lists the variables and guards the reading
    if variable is None:
        scanned = opened[1]
        if scanned.version == 73:  # only h5py lists an HDF5 file's variables
            listed = [(str(entry.path), entry_class(entry)) for entry in whos(path)]
        else:
            listed = [(item.name, item.matlab_class) for item in scanned.variables]
        candidates = [(name, kind) for name, kind in listed if kind in NETWORK_CLASSES]
        if not candidates:
            raise DLFormatError(
                f"{path} saves no SeriesNetwork, DAGNetwork or dlnetwork; its variables: "
                + ", ".join(f"{name} ({kind})" for name, kind in listed if kind)
            )
        if len(candidates) > 1:
            raise DLFormatError(
                f"{path} saves {len(candidates)} networks: "
                + ", ".join(f"{name} ({kind})" for name, kind in candidates)
                + "; pick one with variable=..."
            )
        variable = candidates[0][0]
    value = _read(*opened, [variable])[variable]
    if not isinstance(value, SavedNetwork):
        kind = type(value).__name__
        raise DLFormatError(f"variable {variable!r} of {path} is not a network (it is {kind})")
    return build(value, custom_layers)


def entry_class(entry: Any) -> str:
    """The class of a top-level variable as whos lists it (``"SeriesNetwork (object)"``)."""
    if any(mark in entry.path for mark in ".{("):
        return ""
    return str(entry.matlab_class).removesuffix(" (object)")
