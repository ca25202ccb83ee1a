"""MATLAB objects (MCOS classdef objects) through mat-io, and saved networks described in plain Python.

MATLAB saves a classdef object as a small reference (a uint32 column) in the variable and the
object's state in the file's subsystem block; a ``SeriesNetwork``, ``DAGNetwork`` or ``dlnetwork``
saves the struct its ``saveobj`` method returns. mat-io (the optional ``dlformat[matlab]``
extra) decodes both. This module turns what mat-io returns into dlformat's value forms
(docs/matlab_io.md) and each network into a :class:`SavedNetwork`: the layers in saved order with
their saved fields, learnables and state, the connections and the input and output names, with
no interpretation of what the fields mean (docs/loading_networks.md maps them per class and
saveobj version).

The file has already passed dlformat's structural scan, objects and subsystem included
(:mod:`._scan`, :mod:`._matv73`), before mat-io opens it: mat-io's version 5 reader is a copy of
SciPy's, which allocates what a header declares. mat-io reports a failure to decode an object as
a warning and returns the object's raw metadata; here every such warning is an error.
"""

from __future__ import annotations

import io
import re
import sys
import types
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from .._categorical import Categorical
from .._errors import DLFormatError, cut
from . import _matv5

# dlformat is installed from its repository, not from a package registry: name the extra and
# the README's command, as _matv73.INSTALL does
INSTALL = (
    'the dlformat[matlab] extra; install it with pip install -e ".[matlab]" from the dlformat repository'
)
NETWORK_CLASSES = ("SeriesNetwork", "DAGNetwork", "dlnetwork")
LAYER_ARRAY_CLASS = "nnet.cnn.layer.Layer"  # the base class MATLAB saves a Layers array as
GRAPH_CLASS = "nnet.cnn.LayerGraph"
LAYER_GRAPH = "LayerGraph"  # the kind of a SavedNetwork describing a saved LayerGraph
LAYER_ARRAY = "Layer"  # the kind of a SavedNetwork describing a saved Layer array
# the saved fields that make each class's MATLAB State (docs/loading_networks.md)
_STATE_FIELDS = {
    "BatchNormalizationLayer": ("TrainedMean", "TrainedVariance"),
    "LSTMLayer": ("HiddenState", "CellState"),
    "BiLSTMLayer": ("HiddenState", "CellState"),
    "GRULayer": ("HiddenState",),
}
_FUNCTION_TEXT = re.compile(r"sf%\d+(@.*)\Z", re.DOTALL)


def matio(reading: Path | None = None) -> Any:
    """The mat-io package, or a DLFormatError that says how to install it."""
    if isinstance(sys.modules.get("matio.v7.matreader7"), types.ModuleType):  # imported already
        return sys.modules["matio"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas' notes on options mat-io sets at import
            import matio
        import matio.utils.matclass
        import matio.utils.matheaders
        import matio.v5.matreader5
        import matio.v7.matreader7
    except ImportError:
        where = f"cannot read {reading}: " if reading is not None else ""
        raise DLFormatError(
            f"{where}MATLAB objects (networks, string, table, categorical, ...) need the optional "
            f"package mat-io (Python 3.11 or later), {INSTALL}"
        ) from None
    return matio


@dataclass(frozen=True)
class MatlabObject:
    """A MATLAB classdef object with no closer Python form: its class and its saved properties
    (each in dlformat's value form; a class with a ``saveobj`` method saves one property, ``any``,
    holding what ``saveobj`` returned)."""

    classname: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class FunctionHandle:
    """A MATLAB function handle as saved: its text (``"@(X)X.^2"`` for an anonymous function, the
    function's name otherwise), its type (``"anonymous"``, ``"simple"``, ...), the file it was made
    in, and the variables an anonymous function captured (``None`` where they were not decoded).
    Nothing here is ever evaluated."""

    text: str
    type: str
    file: str
    workspace: Any = None


@dataclass(frozen=True)
class SavedLearnable:
    """A learnable parameter as a layer saves it: MATLAB stores each as a struct with ``Value``,
    ``LearnRateFactor``, ``L2Factor`` and ``Initializer`` (a struct naming the initializer's
    class); a field the file lacks is ``None``."""

    value: np.ndarray | None
    learn_rate_factor: Any = None
    l2_factor: Any = None
    initializer: Any = None
    version: int | None = None


@dataclass(frozen=True)
class SavedLayer:
    """One layer as MATLAB saved it.

    ``matlab_class`` is the layer's own class (``"nnet.cnn.layer.Convolution2DLayer"``), read from
    the object's metadata; ``version`` is the ``Version`` field of its saveobj struct (``None`` for
    a layer saved without saveobj: FunctionLayer, user classdef layers). ``properties`` holds every
    saved field except ``Version``, in dlformat's value form, learnables included as
    :class:`SavedLearnable`; ``learnables`` repeats those by field name. ``state`` holds the
    fields that make the layer's MATLAB ``State`` (batch normalization's ``TrainedMean`` and
    ``TrainedVariance``; a recurrent layer's ``HiddenState`` and ``CellState``, saved as structs
    whose ``Value`` is given here). ``expression`` is a FunctionLayer's MATLAB text (never
    evaluated)."""

    name: str
    matlab_class: str
    version: int | None
    properties: dict[str, Any]
    learnables: dict[str, SavedLearnable] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    expression: str | None = None


@dataclass(frozen=True)
class SavedNetwork:
    """A network as MATLAB saved it.

    ``kind`` is ``"SeriesNetwork"``, ``"DAGNetwork"`` or ``"dlnetwork"`` (or ``"LayerGraph"``,
    ``"Layer"``: a layer graph or layer array saved on its own); ``version`` the saveobj
    struct's ``Version``. ``connections`` are ``(source, destination)`` pairs as the file holds
    them (``"layer"`` or ``"layer/port"``; a SeriesNetwork saves none: its layers run in order).
    ``input_names``/``output_names`` are as saved (a SeriesNetwork saves neither; they are its
    first and last layers). ``classes`` maps each classification output layer's name to its class
    names. ``properties`` keeps the rest of the saveobj struct."""

    variable: str
    kind: str
    version: int | None
    layers: tuple[SavedLayer, ...]
    connections: tuple[tuple[str, str], ...]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    classes: dict[str, tuple[str, ...]]
    properties: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# reading with mat-io


def read(path: Path, version: int, names: list[str], subsystem_stream: bytes | None = None) -> dict[str, Any]:
    """The variables ``names`` of a scanned file as mat-io returns them, every object carrying
    its own class; mat-io's warnings (a part it could not decode) raise. A version 5 file's
    subsystem block is decoded from ``subsystem_stream`` (its inflated bytes, which the
    structural check has walked; None: the file has none), never read again from the file."""
    mio = matio(path)
    warning_types = (mio.utils.matclass.MatReadWarning,)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if version == 73:
            import h5py

            with h5py.File(path, "r") as file:
                subsystem = mio.v7.matreader7.read_subsystem(file, "<", False, False)
                _check_parsed(path, subsystem, caught, warning_types)
                values = mio.v7.matreader7.MatRead7(file, subsystem).get_variables(list(names))
        else:
            _, _, order = mio.utils.matheaders.read_mat_header(str(path))
            with open(path, "rb") as file:
                subsystem = _subsystem5(mio, subsystem_stream)
                _check_parsed(path, subsystem, caught, warning_types)
                reader = mio.v5.matreader5.MatFile5Reader(file, byte_order=order, subsystem=subsystem)
                values = reader.get_variables(list(names))
    _check_warnings(path, caught, warning_types)
    if subsystem is not None:
        set_own_classes(subsystem)
    values.pop("__globals__", None)
    missing = [name for name in names if name not in values]
    if missing:
        raise DLFormatError(f"cannot read {path}: mat-io found no variable {missing[0]!r}")
    return dict(values)


def _subsystem5(mio: Any, stream: bytes | None) -> Any:
    """mat-io's subsystem of a version 5 file from its inflated stream: the steps of mat-io's
    ``read_subsystem`` after it has read the stream from the file (mat-io 1.0.x)."""
    if stream is None:
        return None
    m5 = mio.v5.matreader5
    data = io.BytesIO(stream)
    order, _ = m5.check_mat_version(data.read(4))
    data.read(4)  # padding
    reader = m5.MatFile5Reader(data, byte_order=order)
    reader.initialize_read()
    header, _ = reader.read_var_header()
    subsystem = m5.MatSubsystem(order, raw_data=False, add_table_attrs=False)
    subsystem.load_subsystem(reader.read_var_array(header, False))
    return subsystem


def _check_warnings(path: Path, caught: list[warnings.WarningMessage], types: tuple[type, ...]) -> None:
    """mat-io's read warnings are failures (it returns an object's raw metadata, or skips the
    subsystem, and goes on), except its notes of metadata it does not know. Its conversion
    warnings are not: the object comes back in its general form (its class and properties)."""
    for warning in caught:
        text = str(warning.message)
        failed = issubclass(warning.category, types) and not text.startswith(
            ("Unknown", "Encountered unknown")
        )
        if failed or "nreadable" in text:
            raise DLFormatError(f"cannot read {path}: its MATLAB objects are malformed ({text})")


def _check_parsed(
    path: Path, subsystem: Any, caught: list[warnings.WarningMessage], types: tuple[type, ...]
) -> None:
    """The subsystem's metadata, as mat-io parsed it, checked before any object is decoded."""
    _check_warnings(path, caught, types)
    if subsystem is None:
        return
    if subsystem.version is None:
        raise DLFormatError(f"cannot read {path}: its subsystem block holds no MCOS data mat-io can read")
    problem = subsystem_problem(subsystem)
    if problem:
        raise DLFormatError(f"cannot read {path}: its subsystem block is malformed: {problem}")


def subsystem_problem(subsystem: Any) -> str | None:
    """What is wrong with the FileWrapper__ metadata mat-io parsed, or None.

    mat-io follows the metadata's numbers as they are: a record's property count steps its walk
    through a region (a negative one walks backwards, without end), and ids index the regions.
    Every record of every region is walked here once, forwards: counts non-negative, records
    inside their region, every name, class, object, record and saved-property index in range.
    """
    names = len(subsystem.mcos_names)
    saved = len(subsystem.mcos_props_saved)
    classes = np.asarray(subsystem.class_id_metadata, dtype=np.int64)
    objects = np.asarray(subsystem.object_id_metadata, dtype=np.int64)
    if classes.size % 4 or objects.size % 6:
        return "its class or object table is not whole records"
    if (classes < 0).any() or (objects < 0).any():
        return "its class or object table holds negative numbers"
    if classes.size and (classes.reshape(-1, 4)[:, :2] > names).any():
        return "a class names a name it does not hold"
    if (classes.reshape(-1, 4)[1:, 1] < 1).any():
        return "a class has no name"
    table = objects.reshape(-1, 6)
    if (table[:, 0] >= classes.size // 4).any():
        return "an object names a class it does not hold"
    try:
        saveobj = _records(subsystem.saveobj_metadata, 3, names, saved, None, "saveobj")
        normal = _records(subsystem.nobj_metadata, 3, names, saved, None, "object")
        dynamic = _records(subsystem.dynprop_metadata, 1, names, len(table), 0, "dynamic property")
    except _MalformedError as problem:
        region, reason = problem.args
        return f"its {region} region: {reason}"
    rows = table[1:]  # an object's properties are in its saveobj record, or else its plain one
    saved_in = rows[:, 3] != 0
    if (saved_in & (rows[:, 3] >= saveobj)).any() or (~saved_in & (rows[:, 4] >= normal)).any():
        return "an object names a property record the file does not hold"
    if dynamic and (rows[:, 5] >= dynamic).any():
        return "an object names a dynamic property record the file does not hold"
    aliases = np.asarray(getattr(subsystem, "mcos_class_alias_metadata", []), dtype=np.int64).ravel()
    if ((aliases < 0) | (aliases > names)).any():
        return "a class alias names a name it does not hold"
    return None


class _MalformedError(Exception):
    """(the region, what is wrong with it) in a subsystem's metadata."""


def _records(region: Any, fields: int, names: int, values: int, first: int | None, what: str) -> int:
    """The number of records in a region (each a count, then count × ``fields`` numbers, padded
    to an even length); ``_MalformedError`` says what is wrong with it. Properties (3 fields) are
    (name, kind, value): kind 0 names a name, 1 a saved property, 2 holds a number; dynamic
    properties (1 field) are object ids. The first record starts at ``first``, or (as mat-io
    reads property regions) at the offset the region's first number gives."""
    data = np.asarray(region, dtype=np.int64).ravel()
    if not data.size:
        return 0
    offset, count = int(data[0]) if first is None else first, 0
    if offset < 0:
        raise _MalformedError(what, "it starts at a negative offset")
    while offset < data.size:
        n = int(data[offset])
        end = offset + 1 + fields * n
        if n < 0 or end > data.size:
            raise _MalformedError(what, f"record {count} declares {n} entries, beyond the region")
        entries = data[offset + 1 : end].reshape(n, fields)
        if fields == 3 and n:
            name, kind, value = entries.T
            if ((name < 1) | (name > names)).any() or ((kind < 0) | (kind > 2)).any():
                raise _MalformedError(what, f"record {count} names a property it does not hold")
            if ((kind == 0) & ((value < 1) | (value > names))).any() or (
                (kind == 1) & ((value < 0) | (value >= values))
            ).any():
                raise _MalformedError(what, f"record {count} refers to a value it does not hold")
        elif fields == 1 and ((entries < 0) | (entries >= values)).any():
            raise _MalformedError(what, f"record {count} names an object it does not hold")
        offset = end + end % 2
        count += 1
    return count


def set_own_classes(subsystem: Any) -> None:
    """Give every object mat-io built its own class, read from the object's metadata.

    mat-io (1.0.2) names each element of an object array by the array's class: the elements of
    a heterogeneous ``Layers`` array all say ``nnet.cnn.layer.Layer``. An object's own class id
    is the first word of its record in the subsystem's object metadata, which mat-io keeps
    (``get_object_metadata``); mat-io's cache maps each object id to the object it built.
    tests/io/test_mcos.py checks that mat-io still reports the base class: when it stops, this
    function has nothing left to correct and can go.
    """
    mio = matio()
    for object_id, obj in subsystem.mcos_object_cache.items():
        if isinstance(obj, mio.utils.matclass.MatlabOpaque):
            class_id = subsystem.get_object_metadata(object_id)[0]
            obj.classname = subsystem.get_classname(class_id)


def _categorical(value: Any, path: str) -> Categorical:
    """A MATLAB categorical as dlformat's: mat-io's ``pandas.Categorical`` keeps MATLAB's shape,
    categories in order, codes and ``isOrdinal``; it drops ``isProtected``, so a nonordinal array
    saved with protected categories reads as unprotected (an ordinal one is protected, as MATLAB's
    always are)."""
    try:
        return Categorical.from_pandas(value)
    except DLFormatError as error:
        raise DLFormatError(
            f"variable {path!r} holds a categorical array dlformat cannot take: {error}"
        ) from None


def _is_pandas_categorical(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ == "Categorical" and kind.__module__.startswith("pandas")


# ---------------------------------------------------------------------------------------------
# mat-io's values in dlformat's forms


def plain(value: Any, path: str, seen: dict[int, Any] | None = None) -> Any:
    """A value mat-io returned, in dlformat's form (docs/matlab_io.md, "MATLAB objects").

    ``seen`` maps the objects converted so far (by ``id``) to their results."""
    if seen is None:
        seen = {}
    mio = matio()
    mc = mio.utils.matclass
    if isinstance(value, mc.MatlabOpaque):
        return _object(value, path, seen)
    if isinstance(value, mc.MatlabContainerMap):
        return {key: plain(item, f"{path}({key!r})", seen) for key, item in value.items()}
    if isinstance(value, mc.MatlabCanonicalEmpty):
        return np.empty((0, 0))
    if isinstance(value, mc.MatlabOpaqueProperty):
        return value.item() if value.size == 1 else np.asarray(value)
    if isinstance(value, mc.MatlabOpaqueArray):
        objects = np.empty(value.shape, dtype=object)
        for index in np.ndindex(value.shape):
            item = plain(value[index], f"{path}{_index(index)}", seen)
            # an array of layers (the array's class is the layers' base class)
            layer = value.classname == LAYER_ARRAY_CLASS and isinstance(item, MatlabObject)
            objects[index] = _layer(item, f"{path}{_index(index)}") if layer else item
        return objects
    if isinstance(value, mc.MatlabFunction):
        return _function(value, path, seen)
    if isinstance(value, mc.MatlabObject):  # an old-style (pre-classdef) object: a struct with a class
        fields = plain(np.asarray(value), path, seen)
        return MatlabObject(value.classname, fields if isinstance(fields, dict) else {"": fields})
    if isinstance(value, mc.EmptyMatStruct):
        return {}
    if scipy.sparse.issparse(value):  # its indices checked, as for a plain variable
        return _matv5.sparse(value, path)
    if _is_pandas_categorical(value):  # MATLAB's categorical, which mat-io gives as pandas'
        return _categorical(value, path)
    if not isinstance(value, np.ndarray) or isinstance(value, mc.MatlabEnumerationArray):
        return value  # mat-io's own forms: DataFrame, enumerations, scalars
    if value.dtype.names is not None:
        records = [
            {name: plain(value[index][name], f"{path}.{name}", seen) for name in value.dtype.names}
            for index in _column_major(value.shape)
        ]
        if not records:
            return np.empty(value.shape, dtype=object)
        return records[0] if value.shape == (1, 1) else records
    if value.dtype == object:
        if _function_cell(value):
            return _function(value, path, seen)
        cells = np.empty(value.shape, dtype=object)
        for index in np.ndindex(value.shape):
            cells[index] = plain(value[index], f"{path}{{{_index(index)[1:-1]}}}", seen)
        return cells
    if value.dtype.kind == "U":
        if value.size <= 1 and value.ndim <= 1:
            return str(value[0]) if value.size else ""
        return np.asarray(value)
    if not value.dtype.isnative:
        value = value.byteswap().view(value.dtype.newbyteorder("="))
    return np.asarray(value)


def _column_major(shape: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Indices in MATLAB's order (the first index fastest)."""
    for index in np.ndindex(shape[::-1]):
        yield index[::-1]


def _index(index: tuple[int, ...]) -> str:
    return "(" + ",".join(str(i + 1) for i in index) + ")"


def _object(value: Any, path: str, seen: dict[int, Any]) -> Any:
    """An object, converted once however many references reach it: handle objects may refer
    to each other in a cycle (an ImageDatastore does), which the result keeps."""
    if id(value) in seen:
        return seen[id(value)]
    properties = value.properties
    if isinstance(properties, tuple):  # an empty object array: only its size
        return np.empty(properties, dtype=object)
    if properties is None:  # object id 0: MATLAB saves a deleted (or weak) reference so
        return MatlabObject(value.classname, {})
    if not isinstance(properties, dict):
        raise DLFormatError(
            f"variable {cut(path)!r} holds a {value.classname} object that mat-io could not decode"
        )
    if value.classname in NETWORK_CLASSES:
        seen[id(value)] = described = network(value, path)
        return described
    converted: dict[str, Any] = {}
    seen[id(value)] = result = MatlabObject(value.classname, converted)
    for name, item in properties.items():
        converted[name] = plain(item, f"{path}.{name}", seen)
    return result


def _function_cell(value: np.ndarray) -> bool:
    """mat-io's form of a function handle saved inside an object: a 2×1 cell of the MCOS marker
    and the handle's struct (``matlabroot``, ``function_handle``, ...)."""
    if value.shape != (2, 1):
        return False
    marker, struct = value[0, 0], value[1, 0]
    return (
        isinstance(marker, np.ndarray)
        and marker.dtype == np.uint32
        and marker.size == 1
        and int(marker.ravel()[0]) == 0xDD000000
        and isinstance(struct, np.ndarray)
        and struct.dtype.names is not None
        and "function_handle" in struct.dtype.names
    )


def _function(value: np.ndarray, path: str, seen: dict[int, Any]) -> FunctionHandle:
    struct = value[1, 0] if value.dtype == object and value.dtype.names is None else value
    if struct.dtype.names is not None and "function_handle" in struct.dtype.names:
        struct = struct[0, 0]["function_handle"]
    fields = plain(struct, path, seen)
    if not isinstance(fields, dict):
        raise DLFormatError(f"variable {cut(path)!r} holds a function handle of an unknown layout")
    text = str(fields.get("function", ""))
    match = _FUNCTION_TEXT.match(text)  # anonymous functions are saved as "sf%<n>@(...)..."
    return FunctionHandle(
        text=match.group(1) if match else text,
        type=str(fields.get("type", "")),
        file=str(fields.get("file", "")),
        workspace=fields.get("workspace"),
    )


# ---------------------------------------------------------------------------------------------
# networks


def network(value: Any, variable: str) -> SavedNetwork:
    """A SeriesNetwork, DAGNetwork or dlnetwork object from mat-io as a :class:`SavedNetwork`."""
    saved = _saveobj(value, variable)
    kind = value.classname
    if kind == "dlnetwork":
        layer_graph = saved.get("LayerGraph")
        if not isinstance(layer_graph, MatlabObject):
            raise DLFormatError(f"variable {cut(variable)!r}: the dlnetwork saves no LayerGraph object")
        layers, connections = graph_parts(layer_graph, f"{variable}.LayerGraph")
    else:
        layers, connections = _graph_parts(saved, variable, kind)
    names = [layer.name for layer in layers]
    if kind == "dlnetwork":
        inputs = tuple(_names(saved.get("InputNames"))) or _graph_inputs(layers, connections)
        outputs = tuple(_names(saved.get("OutputNames")))
    else:
        inputs = _graph_inputs(layers, connections) if kind == "DAGNetwork" else tuple(names[:1])
        outputs = _graph_outputs(layers, connections) if kind == "DAGNetwork" else tuple(names[-1:])
    version = saved.get("Version")
    return SavedNetwork(
        variable=variable,
        kind=kind,
        version=_number(version),
        layers=layers,
        connections=connections,
        input_names=inputs,
        output_names=outputs,
        classes=_class_names(layers),
        properties={
            key: item for key, item in saved.items() if key not in ("Version", "Layers", "Connections")
        },
    )


def layer_graph(graph: MatlabObject, variable: str) -> SavedNetwork:
    """A ``nnet.cnn.LayerGraph`` saved on its own (an architecture, often untrained), described as a
    network of kind ``"LayerGraph"``: its inputs are the layers nothing feeds, its outputs those
    that feed nothing."""
    layers, connections = graph_parts(graph, variable)
    saved = _saveobj_properties(graph, variable)
    return SavedNetwork(
        variable=variable,
        kind=LAYER_GRAPH,
        version=_number(saved.get("Version")),
        layers=layers,
        connections=connections,
        input_names=_graph_inputs(layers, connections),
        output_names=_graph_outputs(layers, connections),
        classes=_class_names(layers),
        properties={},
    )


def layer_array(layers: tuple[SavedLayer, ...], variable: str) -> SavedNetwork:
    """A ``Layer`` array saved on its own, described as a network of kind ``"Layer"``: its layers
    in MATLAB's order, connected one to the next, as MATLAB's ``layerGraph(layers)`` would."""
    names = [layer.name for layer in layers]
    return SavedNetwork(
        variable=variable,
        kind=LAYER_ARRAY,
        version=None,
        layers=layers,
        connections=(),
        input_names=tuple(names[:1]),
        output_names=tuple(names[-1:]),
        classes=_class_names(layers),
        properties={},
    )


def _class_names(layers: tuple[SavedLayer, ...]) -> dict[str, tuple[str, ...]]:
    """Each classification output layer's class names."""
    return {
        layer.name: tuple(_names(layer.properties.get("Categories", layer.properties.get("ClassNames"))))
        for layer in layers
        if "Categories" in layer.properties or "ClassNames" in layer.properties
    }


def graph_parts(
    graph: MatlabObject, variable: str
) -> tuple[tuple[SavedLayer, ...], tuple[tuple[str, str], ...]]:
    """The layers and connections of a saved ``nnet.cnn.LayerGraph`` (its saveobj struct holds
    ``Version``, ``Layers``, ``Connections``): a dlnetwork's, or one saved on its own."""
    return _graph_parts(_saveobj_properties(graph, variable), variable, graph.classname)


def _graph_parts(
    graph: dict[str, Any], variable: str, kind: str
) -> tuple[tuple[SavedLayer, ...], tuple[tuple[str, str], ...]]:
    layers_value = graph.get("Layers")
    if isinstance(layers_value, (MatlabObject, SavedLayer)):  # one layer: saved as a scalar object
        layers_value = np.array([layers_value], dtype=object)
    if not isinstance(layers_value, np.ndarray) or layers_value.dtype != object:
        raise DLFormatError(f"variable {cut(variable)!r}: the {kind} saves no Layers array")
    layers = tuple(
        item if isinstance(item, SavedLayer) else _layer(item, f"{variable}.Layers({i})")
        for i, item in enumerate(layers_value.ravel(order="F"), 1)
    )
    return layers, _connections(graph.get("Connections"), variable)


def _saveobj(value: Any, path: str) -> dict[str, Any]:
    properties = {name: plain(item, f"{path}.{name}") for name, item in value.properties.items()}
    return _saveobj_properties(MatlabObject(value.classname, properties), path)


def _saveobj_properties(obj: MatlabObject, path: str) -> dict[str, Any]:
    saved = obj.properties.get("any")
    if not isinstance(saved, dict):
        raise DLFormatError(f"variable {cut(path)!r}: the {obj.classname} object holds no saveobj struct")
    return saved


def _layer(item: Any, path: str) -> SavedLayer:
    if not isinstance(item, MatlabObject):
        raise DLFormatError(f"variable {cut(path)!r} is not a layer object (it is a {type(item).__name__})")
    saved = item.properties.get("any")
    if isinstance(saved, dict):  # a built-in layer: its saveobj struct
        properties = dict(saved)
        version = _number(properties.pop("Version", None))
    else:  # FunctionLayer, user classdef layers: their properties as they are
        properties = dict(item.properties)
        version = None
    learnables = {}
    for key, entry in properties.items():
        learnable = _learnable(entry)
        if learnable is not None:
            learnables[key] = properties[key] = learnable
    state = {}
    for key in _STATE_FIELDS.get(item.classname.rsplit(".", 1)[-1], ()):
        entry = properties.get(key)
        state[key] = entry.get("Value") if isinstance(entry, dict) else entry
    expression = None
    handle = properties.get("PredictFcn")
    if isinstance(handle, FunctionHandle):
        expression = handle.text
    name = properties.get("Name")
    if not isinstance(name, str):
        raise DLFormatError(f"variable {cut(path)!r}: the {item.classname} layer saves no Name")
    return SavedLayer(name, item.classname, version, properties, learnables, state, expression)


def _learnable(entry: Any) -> SavedLearnable | None:
    """A learnable's saved struct (``Value`` with factors), or None for any other field."""
    if not isinstance(entry, dict) or "Value" not in entry or "LearnRateFactor" not in entry:
        return None
    value = entry["Value"]
    return SavedLearnable(
        value=value if isinstance(value, np.ndarray) and value.size else None,
        learn_rate_factor=entry.get("LearnRateFactor"),
        l2_factor=entry.get("L2Factor"),
        initializer=entry.get("Initializer"),
        version=_number(entry.get("Version")),
    )


def _number(value: Any) -> int | None:
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
        return int(value.ravel()[0])
    return None


def _names(value: Any) -> list[str]:
    """Names saved as a char row, a cell of char rows, a string array or a categorical."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if hasattr(value, "categories") and not isinstance(value, np.ndarray):  # a categorical
        return [str(category) for category in value.categories]
    if isinstance(value, np.ndarray):
        return [name for item in value.ravel(order="F") for name in _names(item)]
    return [str(value)]


def _connections(table: Any, variable: str) -> tuple[tuple[str, str], ...]:
    if table is None:
        return ()
    columns = getattr(table, "columns", None)
    if columns is None or "Source" not in columns or "Destination" not in columns:
        raise DLFormatError(f"variable {cut(variable)!r}: its Connections are not a Source/Destination table")
    pairs = []
    for source, destination in zip(table["Source"], table["Destination"], strict=True):
        pairs.append((_one_name(source, variable), _one_name(destination, variable)))
    return tuple(pairs)


def _one_name(value: Any, variable: str) -> str:
    names = _names(plain(value, variable) if not isinstance(value, str) else value)
    if len(names) != 1:
        raise DLFormatError(f"variable {cut(variable)!r}: a connection names {names!r}, not one layer")
    return names[0]


def _graph_inputs(
    layers: tuple[SavedLayer, ...], connections: tuple[tuple[str, str], ...]
) -> tuple[str, ...]:
    """Layers nothing connects into (a DAGNetwork saves no InputNames)."""
    fed = {destination.split("/")[0] for _, destination in connections}
    return tuple(layer.name for layer in layers if layer.name not in fed)


def _graph_outputs(
    layers: tuple[SavedLayer, ...], connections: tuple[tuple[str, str], ...]
) -> tuple[str, ...]:
    """Layers that connect into nothing."""
    feeding = {source.split("/")[0] for source, _ in connections}
    return tuple(layer.name for layer in layers if layer.name not in feeding)


def networks(values: dict[str, Any]) -> dict[str, SavedNetwork]:
    """The networks among variables already in dlformat's form."""
    return {name: value for name, value in values.items() if isinstance(value, SavedNetwork)}
