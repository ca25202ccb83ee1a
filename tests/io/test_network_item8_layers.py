"""``load_network``'s mappers of the layers of issue 23 item 8. No MATLAB-written file here saves
one of these layers, so each mapper is run on a saved form built as ``_mcos`` decodes a file's
(a saveobj struct where MATLAB's source shows one, the public properties otherwise): the layer
comes back with the saved values, and a missing field is an error naming it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import _mcos
from dlformat.io._network import mapped


def saved(matlab_class: str, fields: dict, saveobj: bool = False):
    """A SavedLayer as _mcos makes it of a decoded object: ``fields`` as the saveobj struct
    (``saveobj=True``) or as the object's own properties."""
    properties = {"any": fields} if saveobj else fields
    return _mcos._layer(_mcos.MatlabObject(f"nnet.cnn.layer.{matlab_class}", properties), "constructed")


def test_input_layer_reads_its_public_properties():
    fields = {"InputSize": np.array([[3.0, np.nan, 5.0]]), "InputFormat": "CBT", "Name": "seq"}
    layer = mapped(saved("InputLayer", fields))
    assert isinstance(layer, dlf.InputLayer) and layer.Name == "seq" and layer.InputFormat == "CBT"
    assert layer.InputSize[0] == 3 and math.isnan(layer.InputSize[1]) and layer.InputSize[2] == 5
    del fields["InputFormat"]
    with pytest.raises(DLFormatError, match="field 'InputFormat': the file does not save it"):
        mapped(saved("InputLayer", fields))


@pytest.mark.parametrize(
    ("matlab_class", "kind"), [("IdentityLayer", "IdentityLayer"), ("MishLayer", "MishLayer")]
)
def test_layers_with_only_a_name(matlab_class, kind):
    layer = mapped(saved(matlab_class, {"Name": "block1"}))
    assert type(layer).__name__ == kind and layer.Name == "block1"


def test_dice_pixel_classification_reads_its_saveobj_struct():
    """MathWorks' DicePixelClassificationLayer.saveobj: Version 1.0, Name, OutputSize, Categories,
    ChannelDim (Categories decoded as a pandas Categorical, as mat-io gives categorical arrays)."""
    pandas = pytest.importorskip("pandas")
    struct = {
        "Version": np.array([[1.0]]),
        "Name": "dice",
        "OutputSize": np.array([[64.0, 64.0, 2.0]]),
        "Categories": pandas.Categorical(["tumor", "background"], categories=["tumor", "background"]),
        "ChannelDim": np.array([[3.0]]),
    }
    layer = mapped(saved("DicePixelClassificationLayer", struct, saveobj=True))
    assert isinstance(layer, dlf.DicePixelClassificationLayer) and layer.Name == "dice"
    assert dlf.categories(layer.Classes) == ["tumor", "background"] and layer.OutputSize == 2
    struct["Categories"] = pandas.Categorical([])
    assert mapped(saved("DicePixelClassificationLayer", struct, saveobj=True)).Classes == "auto"


def test_max_unpooling_reads_its_saveobj_struct_and_max_pooling_its_unpooling_outputs():
    """MathWorks' MaxUnpooling2DLayer.saveobj: Version 1.0 and Name; a MaxPooling2DLayer saved
    (version 2, as ccn__net saves it) with HasUnpoolingOutputs true gets its three outputs."""
    unpool = mapped(
        saved("MaxUnpooling2DLayer", {"Version": np.array([[1.0]]), "Name": "unpool"}, saveobj=True)
    )
    assert isinstance(unpool, dlf.MaxUnpooling2DLayer) and unpool.Name == "unpool"
    struct = {
        "Version": np.array([[2.0]]),
        "Name": "pool",
        "PoolSize": np.array([[2.0, 2.0]]),
        "Stride": np.array([[2.0, 2.0]]),
        "PaddingMode": "manual",
        "PaddingSize": np.array([[0.0, 0.0, 0.0, 0.0]]),
        "HasUnpoolingOutputs": np.array([[True]]),
    }
    pool = mapped(saved("MaxPooling2DLayer", struct, saveobj=True))
    assert pool.HasUnpoolingOutputs and pool.OutputNames == ("out", "indices", "size")


@pytest.mark.parametrize(
    ("matlab_class", "message"),
    [
        ("NetworkLayer", r"'block'.*not mapped by load_network .*expandLayers\(net\)"),
        ("NeuralODELayer", r"'block'.*a neuralODELayer is not mapped .*load_learnables"),
    ],
)
def test_layers_holding_a_network_are_refused_with_the_way_around(matlab_class, message):
    with pytest.raises(DLFormatError, match=message):
        mapped(saved(matlab_class, {"Version": np.array([[1.0]]), "Name": "block"}, saveobj=True))
