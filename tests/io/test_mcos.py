"""MATLAB objects through mat-io: the real networks MATLAB saved, decoded into plain descriptions.

The expectations per file are those of ../shared/matlab-networks/PROVENANCE.md; the TensorFlow
export file holds the same weights as MATLAB's exporter wrote them. Hostile mutations of the
network files run under the limits of isolation.py.
"""

from __future__ import annotations

import random
import struct
import zlib
from collections import Counter

import numpy as np
import pytest
import scipy.sparse

from dlformat import DLFormatError
from dlformat.io import _mcos, _open, _scan, loadmat

from .isolation import findings, run_cases, summary
from .test_hostile import element, matrix, mutate, write
from .test_hostile_v73 import cell, classed, crafted

matio = pytest.importorskip("matio")

# file, variable, kind, saveobj Version, layers by class (PROVENANCE.md), in saved order's count
NETWORKS = [
    ("harkirat__convnet.mat", "convnet", "SeriesNetwork", 1,
     {"ImageInput": 1, "Convolution2D": 1, "ReLU": 1, "MaxPooling2D": 1, "FullyConnected": 1, "Softmax": 1,
      "ClassificationOutput": 1}),
    ("ccn__net.mat", "net", "SeriesNetwork", 1,
     {"ImageInput": 1, "Convolution2D": 3, "BatchNormalization": 3, "ReLU": 3, "MaxPooling2D": 3,
      "FullyConnected": 2, "Softmax": 1, "ClassificationOutput": 1}),
    ("objid__trainedNet.mat", "net", "SeriesNetwork", 1,
     {"ImageInput": 1, "Convolution2D": 3, "ReLU": 2, "MaxPooling2D": 1, "TransposedConvolution2D": 1,
      "Softmax": 1, "PixelClassification": 1}),
    ("gender__trainedNetwork_1.mat", "trainedNetwork_1", "DAGNetwork", 2,
     {"ImageInput": 1, "Convolution2D": 26, "ReLU": 26, "MaxPooling2D": 3, "DepthConcatenation": 8,
      "Dropout": 1, "GlobalAveragePooling2D": 1, "Softmax": 1, "ClassificationOutput": 1}),
    ("pac48_imagecontrolBC_dlnet.mat", "dlnet", "dlnetwork", 4,
     {"ImageInput": 1, "Convolution2D": 5, "LeakyReLU": 6, "Resize2D": 1, "Flatten": 1, "Function": 2,
      "FullyConnected": 1}),
    ("mdl_tf__transformer_demo.mat", "net", "DAGNetwork", 2,
     {"SequenceInput": 1, "PositionEmbedding": 1, "Addition": 1, "SelfAttention": 2, "Indexing1D": 1,
      "FullyConnected": 1, "RegressionOutput": 1}),
    ("fuma28_speech_trainedNet.mat", "trainedNet", "dlnetwork", 6,
     {"ImageInput": 1, "Convolution2D": 5, "BatchNormalization": 5, "ReLU": 5, "MaxPooling2D": 4,
      "Dropout": 1, "FullyConnected": 1, "Softmax": 1}),
    ("agoro_gru_ph_model.mat", "GRUPHNet", "SeriesNetwork", 1,
     {"SequenceInput": 1, "GRU": 4, "Dropout": 4, "FullyConnected": 1, "RegressionOutput": 1}),
    ("mdl_anom__Results_TrainedNetwork.mat", "net", "SeriesNetwork", 1,
     {"SequenceInput": 1, "BiLSTM": 3, "ReLU": 3, "FullyConnected": 1, "RegressionOutput": 1}),
    ("traffic__trainedNetwork.mat", "trainedNetwork", "dlnetwork", 6,
     {"SequenceInput": 2, "Convolution2D": 2, "BatchNormalization": 2, "ReLU": 2, "MaxPooling2D": 2,
      "Flatten": 1, "BiLSTM": 2, "Concatenation": 1, "FullyConnected": 2}),
    ("mimo__trainedNet.mat", "net", "SeriesNetwork", 1,
     {"ImageInput": 1, "FullyConnected": 7, "ReLU": 6, "BatchNormalization": 4, "sigmoid": 1,
      "sigmoidClassification": 1}),
    ("vikas_net.mat", "net", "SeriesNetwork", 1,
     {"ImageInput": 1, "Convolution2D": 3, "BatchNormalization": 3, "ReLU": 3, "MaxPooling2D": 2,
      "FullyConnected": 1, "Softmax": 1, "ClassificationOutput": 1}),
]  # fmt: skip


def short(matlab_class: str) -> str:
    return matlab_class.removeprefix("nnet.cnn.layer.").removesuffix("Layer")


@pytest.fixture(scope="module")
def loaded(networks):
    """Each network file's networks, decoded once."""
    return {name: loadmat(networks / name, [variable])[variable] for name, variable, *_ in NETWORKS}


@pytest.mark.parametrize(("name", "variable", "kind", "version", "classes"), NETWORKS)
def test_every_network_decodes_with_the_layers_provenance_lists(
    loaded, name, variable, kind, version, classes
):
    net = loaded[name]
    assert isinstance(net, _mcos.SavedNetwork)
    assert (net.variable, net.kind, net.version) == (variable, kind, version)
    assert Counter(short(layer.matlab_class) for layer in net.layers) == classes
    assert len(net.layers) == sum(classes.values())
    assert len({layer.name for layer in net.layers}) == len(net.layers)  # names unique, none empty


def layer(net: _mcos.SavedNetwork, name: str) -> _mcos.SavedLayer:
    return next(item for item in net.layers if item.name == name)


@pytest.mark.parametrize(
    ("name", "layer_name", "shape"),
    [
        ("vikas_net.mat", "fc", (80, 80, 32, 3)),
        ("harkirat__convnet.mat", "fc", (12, 10, 3, 40)),
        ("fuma28_speech_trainedNet.mat", "fc", (1, 4, 48, 8)),
        ("vikas_net.mat", "conv_1", (3, 3, 3, 8)),
        ("agoro_gru_ph_model.mat", "GRU1", (150, 1)),
        ("traffic__trainedNetwork.mat", "bilstm1", (512, 256)),
        ("mdl_tf__transformer_demo.mat", "selfattention_1", (96, 3)),
    ],
)
def test_learnables_keep_the_saved_layout(loaded, name, layer_name, shape):
    learnables = layer(loaded[name], layer_name).learnables
    first = next(iter(learnables.values()))
    assert first.value is not None and first.value.shape == shape and first.value.dtype == np.float32
    assert float(np.asarray(first.learn_rate_factor).ravel()[0]) == 1.0


def test_learnables_keep_factors_and_initializer(loaded):
    bias = layer(loaded["vikas_net.mat"], "conv_1").learnables["Bias"]
    assert bias.value.shape == (1, 1, 8)
    assert float(bias.l2_factor.ravel()[0]) == 0.0  # MATLAB's default BiasL2Factor
    assert bias.initializer["Class"] == "nnet.internal.cnn.layer.learnable.initializer.Zeros"


def test_weights_equal_matlabs_tensorflow_export(loaded, networks):
    """vikas_tf_export_weights.h5 holds the same network as MATLAB's TensorFlow exporter wrote it.

    A convolution kernel is H×W×Cin×Cout in both; the dense kernel is Keras's (inputs × outputs)
    with the inputs flattened channels-last, row-major: the saved H×W×C×Out array reshaped in C
    order. MATLAB's own FullyConnected Weights (OutputSize × H·W·C) flatten the same array
    column-major (docs/loading_networks.md)."""
    h5py = pytest.importorskip("h5py")
    net = loaded["vikas_net.mat"]
    with h5py.File(networks / "vikas_tf_export_weights.h5", "r") as keras:
        for name in ("conv_1", "conv_2", "conv_3"):
            saved = layer(net, name).learnables
            kernel = saved["Weights"].value
            np.testing.assert_array_equal(kernel.reshape(-1), keras[f"{name}_/kernel"][()])
            np.testing.assert_array_equal(saved["Bias"].value.reshape(-1), keras[f"{name}_/bias"][()])
        weights = layer(net, "fc").learnables["Weights"].value
        dense = keras["fc_/kernel"][()].reshape(-1, 3)
        np.testing.assert_array_equal(weights.reshape(-1, 3), dense)
        np.testing.assert_array_equal(
            layer(net, "fc").learnables["Bias"].value.reshape(-1), keras["fc_/bias"][()]
        )
        for index in (1, 2, 3):
            norm = layer(net, f"batchnorm_{index}")
            group = keras[f"batchnorm_{index}_"]
            np.testing.assert_array_equal(norm.learnables["Scale"].value.reshape(-1), group["gamma"][()])
            np.testing.assert_array_equal(norm.learnables["Offset"].value.reshape(-1), group["beta"][()])
            np.testing.assert_array_equal(norm.state["TrainedMean"].reshape(-1), group["moving_mean"][()])
            np.testing.assert_array_equal(
                norm.state["TrainedVariance"].reshape(-1), group["moving_variance"][()]
            )


def test_dag_connections_with_ports(loaded):
    net = loaded["mdl_tf__transformer_demo.mat"]
    assert net.connections == (
        ("input", "pos-emb"), ("input", "add/in2"), ("pos-emb", "add/in1"), ("add", "selfattention_1"),
        ("selfattention_1", "selfattention_2"), ("selfattention_2", "layer"), ("layer", "fc"),
        ("fc", "regressionoutput"),
    )  # fmt: skip
    assert (net.input_names, net.output_names) == (("input",), ("regressionoutput",))
    gender = loaded["gender__trainedNetwork_1.mat"]
    assert len(gender.connections) == 75
    assert ("fire2-relu_expand3x3", "fire2-concat/in2") in gender.connections


def test_dlnetwork_connections_and_names_in_saved_order(loaded):
    """A dlnetwork's saved layer order need not be topological: seq2 and bilstm2 come last."""
    net = loaded["traffic__trainedNetwork.mat"]
    assert [item.name for item in net.layers][-2:] == ["seq2", "bilstm2"]
    assert ("bilstm1", "cat/in1") in net.connections and ("bilstm2", "cat/in2") in net.connections
    assert len(net.connections) == 15
    assert (net.input_names, net.output_names) == (("seq1", "seq2"), ("fc_2",))
    assert loaded["pac48_imagecontrolBC_dlnet.mat"].output_names == ("fc",)
    assert bool(loaded["pac48_imagecontrolBC_dlnet.mat"].properties["Initialized"].ravel()[0])


def test_classification_outputs_keep_their_class_names(loaded):
    assert loaded["vikas_net.mat"].classes == {
        "classoutput": ("apple_red_delicios_1", "apple_red_yellow_1", "apple_rotten_1")
    }
    assert loaded["gender__trainedNetwork_1.mat"].classes == {"classoutput": ("f", "m")}
    assert len(loaded["harkirat__convnet.mat"].classes["classoutput"]) == 40  # version 1: ClassNames
    assert loaded["objid__trainedNet.mat"].classes["classoutput"] == (
        "normalbanana",
        "badbanana",
        "background",
    )


def test_function_layers_keep_their_matlab_text(loaded):
    net = loaded["pac48_imagecontrolBC_dlnet.mat"]
    functions = [(item.name, item.version, item.expression) for item in net.layers if item.expression]
    assert functions == [
        ("layer_2", None, "@(W)W.^2./(sum(W.^2,1)+.01)"),
        ("layer_3", None, "@(W)[XFlat*W;YFlat*W]"),
    ]
    handle = layer(net, "layer_3").properties["PredictFcn"]
    assert isinstance(handle, _mcos.FunctionHandle) and handle.type == "anonymous"


def test_user_classdef_layers_keep_their_class_and_properties(loaded):
    net = loaded["mimo__trainedNet.mat"]
    last = [(item.name, item.matlab_class, item.version) for item in net.layers[-2:]]
    assert last == [("layer", "sigmoidLayer", None), ("regressionoutput", "sigmoidClassificationLayer", None)]


def test_recurrent_state_is_kept(loaded):
    lstm = layer(loaded["mdl_anom__Results_TrainedNetwork.mat"], "bilstm1")
    assert {key: value.shape for key, value in lstm.state.items()} == {
        "HiddenState": (32, 1),
        "CellState": (32, 1),
    }


def test_layer_classes_come_from_each_objects_metadata(networks):
    """mat-io 1.0.2 names every element of a Layers array by the array's base class; dlformat
    reads each element's own class from the object metadata (_mcos.set_own_classes). When this
    test fails, mat-io reports the concrete class itself: set_own_classes can go."""
    raw = matio.load_from_mat(str(networks / "vikas_net.mat"), variable_names=["layers"])["layers"]
    assert {element.classname for element in raw.ravel()} == {"nnet.cnn.layer.Layer"}
    path, scanned, size = _open(networks / "vikas_net.mat")
    with open(path, "rb") as file:
        stream = _scan.check_objects(
            file, size, scanned, [v for v in scanned.variables if v.name == "layers"]
        )
    ours = _mcos.read(path, 5, ["layers"], stream)["layers"]
    assert [short(element.classname) for element in ours.ravel()][:4] == [
        "ImageInput", "Convolution2D", "BatchNormalization", "ReLU",
    ]  # fmt: skip


def test_the_whole_vikas_workspace_loads(networks):
    ws = loadmat(networks / "vikas_net.mat")
    assert ws["I"].shape == (320, 320, 3) and ws["I"].dtype == np.uint8
    assert ws["test_probs"].shape == (1, 3) and ws["test_probs"].dtype == np.float32
    assert list(np.asarray(ws["test_Pred"]).ravel()) == ["apple_red_yellow_1"]
    assert isinstance(ws["net"], _mcos.SavedNetwork)
    assert [short(item.matlab_class) for item in ws["layers"].ravel()][-1] == "ClassificationOutput"
    assert ws["options"].classname == "nnet.cnn.TrainingOptionsSGDM"
    assert list(ws)[:3] == ["I", "YPred", "YValidation"]  # the file's order


def test_without_mat_io_a_network_names_the_install_command(networks, without_matio):
    with pytest.raises(
        DLFormatError,
        match=r"variable 'net' is a MATLAB object of class 'SeriesNetwork'.*"
        r'the dlformat\[matlab\] extra; install it with pip install -e "\.\[matlab\]"',
    ):
        loadmat(networks / "vikas_net.mat", ["net"])
    assert loadmat(networks / "vikas_net.mat", ["I"])["I"].shape == (320, 320, 3)  # plain data still loads


def test_mat_io_forms_of_containers_map_and_datetime(tmp_path):
    """Written by mat-io's own writer (no MATLAB here): containers.Map comes back as a dict,
    datetime as NumPy datetime64, string as a StringDType array in MATLAB's shape."""
    values = {
        "m": matio.utils.matclass.MatlabContainerMap({"a": np.array([[1.0]]), "b": np.array([[2.0]])}),
        "d": np.array([["2024-01-02T03:04:05"]], dtype="datetime64[ms]"),
    }
    matio.save_to_mat(str(tmp_path / "objects.mat"), values, version="v7")
    loaded = loadmat(tmp_path / "objects.mat")
    assert isinstance(loaded["m"], dict) and list(loaded["m"]) == ["a", "b"]
    np.testing.assert_array_equal(loaded["m"]["b"], np.array([[2.0]]))
    assert loaded["d"].shape == (1, 1)
    assert loaded["d"].ravel()[0] == np.datetime64("2024-01-02T03:04:05", "ms")


# -- hostile: mutated network files ------------------------------------------------------------
def uncompressed_network(data: bytes) -> tuple[bytes, int, int] | None:
    """A version 7 network file with every variable stored plainly (so that mutations reach the
    objects' structure rather than break a zlib stream), its header's subsystem offset moved with
    the subsystem block, and where that block lies in it."""
    if data[126:128] != b"IM" or data[124:126] != b"\x00\x01":
        return None
    subsystem = struct.unpack("<Q", data[116:124])[0]
    out, position, size, block = [data[:128]], 128, 128, (0, 0)
    while position + 8 <= len(data):
        kind, nbytes = struct.unpack("<II", data[position : position + 8])
        if kind == 15:
            inner = zlib.decompress(data[position + 8 : position + 8 + nbytes])
            piece, position = inner + b"\0" * (-len(inner) % 8), position + 8 + nbytes
        else:
            end = position + 8 + nbytes + (-nbytes % 8)
            piece, position = data[position:end], end
        if position - (8 + nbytes if kind == 15 else len(piece)) == subsystem:
            block = (size, size + len(piece))
        out.append(piece)
        size += len(piece)
    header = bytearray(out[0])
    header[116:124] = struct.pack("<Q", block[0])
    return header + b"".join(out[1:]), *block


def in_place(data: bytes, start: int, end: int, rng: random.Random) -> bytes:
    """Bits flipped, bytes zeroed or words set to huge numbers between ``start`` and ``end``."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(start, end)
        kind = rng.choice(["flip", "zero", "huge"])
        if kind == "flip":
            out[at] ^= 1 << rng.randrange(8)
        elif kind == "zero":
            out[at : at + rng.randint(1, 16)] = bytes(len(out[at : at + 16]))[
                : len(out[at : at + rng.randint(1, 16)])
            ]
        else:
            at -= at % 4
            word = rng.choice([0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 2**20, 0xDD000000, 0])
            out[at : at + 4] = struct.pack("<I", word)[: len(out) - at]
    return bytes(out)


def network_cases(networks, count: int, base_seed: int, largest: int = 2**20) -> list[tuple[str, bytes]]:
    """Mutated copies of the network files up to ``largest`` bytes (bytes flipped, cut,
    duplicated, zeroed, or set to huge numbers), from seeds: mostly uncompressed copies, half of
    those mutated inside the subsystem block only (where the objects' state lies; elsewhere,
    mutations mostly land in weight values)."""
    originals = {}
    for path in sorted(networks.glob("*.mat")):
        if path.stat().st_size <= largest:
            data = path.read_bytes()
            originals[path.name] = (data, 0, 0)
            plain = uncompressed_network(data)
            if plain is not None:
                originals[f"{path.name} (uncompressed)"] = plain
    names = sorted(originals)
    cases = []
    for seed in range(base_seed, base_seed + count):
        rng = random.Random(seed)
        name = rng.choice(names)
        data, start, end = originals[name]
        if end and rng.random() < 0.6:
            # in place (sizes kept, so the walk gets past the outer elements), mostly in the
            # subsystem's first KiB: the metadata mat-io parses and the first objects' structure
            name += ", subsystem block"
            data = in_place(data, start, min(end, start + 1024) if rng.random() < 0.7 else end, rng)
        else:
            data = mutate(data, rng)
        cases.append((f"seed {seed}: {name}", data))
    return cases


def test_mutated_network_files_end_in_a_result_or_a_clear_error(networks, tmp_path):
    results = run_cases(network_cases(networks, 24, base_seed=0), tmp_path)
    print(summary(results))
    assert findings(results) == []


@pytest.mark.slow
def test_mutated_network_files_long_run(networks, tmp_path):
    results = run_cases(network_cases(networks, 2000, base_seed=50_000, largest=4 * 2**20), tmp_path)
    print(summary(results))
    assert findings(results) == []


# -- hostile: crafted objects ------------------------------------------------------------------
def opaque(name: bytes, data: bytes) -> bytes:
    """A top-level MCOS object: flags (class 17), its name, the type system, its class, its data."""
    body = (
        element(6, struct.pack("<II", 17, 0)) + element(1, name) + element(1, b"MCOS") + element(1, b"Thing")
    )
    return element(14, body + data)


def reference(*words: int) -> bytes:
    return matrix(13, (len(words), 1), b"", element(6, struct.pack(f"<{len(words)}I", *words)))


CRAFTED = {
    # mat-io makes an object array of the declared size before filling it: 2^32 entries
    "a reference declaring 65536×65536 objects and listing one": (
        opaque(b"x", reference(0xDD000000, 2, 65536, 65536, 1, 1)),
        r"variable 1 \(object data\) is an object reference declaring 4294967296 objects \(65536×65536\) but listing 1",
    ),
    "a reference of 40 dimensions": (
        opaque(b"x", reference(0xDD000000, 40, 1, 1, 1)),
        r"object reference with 40 dimensions \(2 to 32\)",
    ),
    # mat-io makes an empty cell of the declared size for a function handle without contents
    "an empty function handle of 65536×65536": (
        matrix(16, (65536, 65536), b"f"),
        r"'f' declares 4294967296 elements of a function handle without contents",
    ),
    "object data declaring more bytes than it holds": (
        opaque(b"x", element(14, b"", declared=1 << 31)),
        r"declares 2147483648 bytes but only 0 remain",
    ),
}


@pytest.mark.parametrize(("variable", "reason"), list(CRAFTED.values()), ids=list(CRAFTED))
def test_crafted_object_data_is_refused_before_mat_io_reads_it(tmp_path, variable, reason):
    with pytest.raises(DLFormatError, match=reason):
        loadmat(write(tmp_path, variable))


def test_subsystem_metadata_is_checked_before_objects_decode(tmp_path):
    """A negative property count would walk mat-io's record offsets backwards without end."""
    values = {"m": matio.utils.matclass.MatlabContainerMap({"a": np.array([[1.0]])})}
    matio.save_to_mat(str(tmp_path / "map.mat"), values, version="v7")
    offset, _, order = matio.utils.matheaders.read_mat_header(str(tmp_path / "map.mat"))
    with open(tmp_path / "map.mat", "rb") as file:
        subsystem = matio.v5.matreader5.read_subsystem(file, offset, order, False, False)
    assert _mcos.subsystem_problem(subsystem) is None
    records = subsystem.nobj_metadata.copy()
    records[2] = -1  # the count of the first object's properties
    subsystem.nobj_metadata = records
    assert (
        _mcos.subsystem_problem(subsystem)
        == "its object region: record 1 declares -1 entries, beyond the region"
    )
    subsystem.nobj_metadata = np.concatenate([records[:2], [1, 99, 1, 0]])  # a name the file lacks
    assert (
        _mcos.subsystem_problem(subsystem) == "its object region: record 1 names a property it does not hold"
    )


# -- hostile: version 7.3 files holding objects ------------------------------------------------
def with_object(build):
    """A version 7.3 file whose variable ``s`` is an MCOS object (so mat-io would read the whole
    file), the rest made by ``build``."""

    def both(file):
        reference = file.create_dataset("s", data=np.array([[0xDD000000, 2, 1, 1, 1, 1]], dtype=np.uint32))
        reference.attrs["MATLAB_class"] = np.bytes_("string")
        reference.attrs["MATLAB_object_decode"] = np.int32(3)
        build(file)

    return both


def fan_out(file, depth: int) -> None:
    """A chain of cells in #refs#, each holding two references to the next."""
    refs = file.create_group("#refs#")
    target = classed(refs.create_dataset("leaf", data=np.ones((1, 1))), "double").ref
    for level in range(depth):
        target = cell(refs, f"n{level}", [target, target]).ref
    cell(file, "c", [target])


V73_CRAFTED = {
    # mat-io follows every reference afresh: 2^40 reads for a chain of 40 cells
    "a chain of cells holding two references each": (
        lambda file: fan_out(file, 40),
        r"is a second reference to '/#refs#/n\d+' \(first reached as .*\), which holds references",
    ),
    "a dataset declaring 2^40 bytes in one chunk": (
        lambda file: classed(
            file.create_dataset("x", shape=(2**20, 2**20), chunks=(1, 2**20), dtype="u1", compression="gzip"),
            "uint8",
        ),
        r"declares 1099511627776 bytes, more than the file can hold",
    ),
    "an object reference declaring 2^32 objects": (
        lambda file: classed(
            file.create_dataset(
                "#refs#/r", data=np.array([[0xDD000000, 2, 65536, 65536, 1, 1]], dtype=np.uint32)
            ),
            "uint32",
        ),
        r"variable '/#refs#/r' is an object reference declaring 4294967296 objects",
    ),
}


@pytest.mark.parametrize(("build", "reason"), list(V73_CRAFTED.values()), ids=list(V73_CRAFTED))
def test_crafted_version_73_files_with_objects_are_refused_before_mat_io_reads_them(tmp_path, build, reason):
    path = crafted(tmp_path / "objects.mat", with_object(build))
    with pytest.raises(DLFormatError, match=reason):
        loadmat(path)


def test_a_plain_uint32_column_opening_with_the_mcos_mark_is_plain_data(tmp_path):
    """mat-io takes such columns for object references only inside objects' data; a plain
    variable beside an object keeps its values."""
    column = matrix(13, (3, 1), b"u", element(6, struct.pack("<3I", 0xDD000000, 5, 7)))
    loaded = loadmat(write(tmp_path, column, opaque(b"x", reference(0xDD000000, 2, 0, 0, 0))))
    np.testing.assert_array_equal(loaded["u"], np.array([[0xDD000000], [5], [7]], dtype=np.uint32))


def test_sparse_values_inside_objects_are_checked_and_csc(tmp_path):
    values = {"m": matio.utils.matclass.MatlabContainerMap({"a": scipy.sparse.csc_matrix(np.eye(3))})}
    matio.save_to_mat(str(tmp_path / "sparse.mat"), values, version="v7")
    inside = loadmat(tmp_path / "sparse.mat")["m"]["a"]
    assert isinstance(inside, scipy.sparse.csc_matrix)
    np.testing.assert_array_equal(inside.toarray(), np.eye(3))
