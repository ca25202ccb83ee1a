"""maxPooling2dLayer(..., HasUnpoolingOutputs=true) and maxUnpooling2dLayer against a float64 NumPy
reference: the indices output is each region's maximum's 1-based column-major linear index into the
input (MATLAB's maxpool), size the input's size, and unpooling puts each value back at its index in
zeros (MathWorks' maxUnpooling2dLayer, maxpool and maxunpool pages)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

from ..functional.test_maxunpool import index_reference


@pytest.mark.parametrize(
    ("shape", "pool", "options", "padding"),
    [
        ((6, 4, 2, 3), [2, 2], {"Stride": 2}, [(0, 0), (0, 0)]),
        ((5, 7, 3, 2), [3, 2], {"Stride": [2, 3]}, [(0, 0), (0, 0)]),
        ((5, 5, 2, 2), [2, 2], {"Stride": 2, "Padding": "same"}, "same"),
        ((6, 6, 1, 2), [3, 3], {"Stride": 1}, [(0, 0), (0, 0)]),  # overlapping regions
    ],
)
def test_indices_size_and_unpooling_match_the_reference(shape, pool, options, padding):
    x = np.random.default_rng(7).standard_normal(shape)
    layer = dlf.maxPooling2dLayer(pool, HasUnpoolingOutputs=True, **options)
    Y, indices, size = layer(dlf.dlarray(torch.from_numpy(x), "SSCB"))
    stride = options["Stride"] if isinstance(options["Stride"], list) else [options["Stride"]] * 2
    y, expected = index_reference(x, pool, stride, padding)
    assert dlf.dims(Y) == dlf.dims(indices) == "SSCB" and dlf.dims(size) == ""
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), y)
    np.testing.assert_array_equal(dlf.extractdata(indices).numpy(), expected)
    assert dlf.extractdata(size).tolist() == [list(shape)]
    Z = dlf.maxUnpooling2dLayer()(Y, indices, size)
    unpooled = np.zeros(x.size)
    unpooled[expected.ravel(order="F").astype(int) - 1] = y.ravel(order="F")
    assert dlf.dims(Z) == "SSCB"
    np.testing.assert_array_equal(dlf.extractdata(Z).numpy(), unpooled.reshape(shape, order="F"))


def test_ports_defaults_and_display():
    pool = dlf.maxPooling2dLayer(2, HasUnpoolingOutputs=True)
    assert (pool.NumOutputs, pool.OutputNames, pool.HasUnpoolingOutputs) == (
        3,
        ("out", "indices", "size"),
        True,
    )
    assert dlf.maxPooling2dLayer(2).OutputNames == ("out",)
    unpool = dlf.maxUnpooling2dLayer(Name="unpool")
    assert (unpool.NumInputs, unpool.InputNames, unpool.NumOutputs) == (3, ("in", "indices", "size"), 1)
    assert (unpool.default_name, unpool.matlab_type) == ("maxunpool", "2-D Max Unpooling")
    assert repr(unpool).splitlines() == ["MaxUnpooling2DLayer with properties:", "", "    Name: 'unpool'"]
    with pytest.raises(DLFormatError, match="HasUnpoolingOutputs must be"):
        dlf.maxPooling2dLayer(2, HasUnpoolingOutputs="yes")


def test_a_segnet_style_network_connects_indices_and_size_by_name():
    net = dlf.dlnetwork()
    net.addLayers(
        [
            dlf.imageInputLayer([4, 6, 2], Normalization="none"),
            dlf.maxPooling2dLayer(2, Stride=2, HasUnpoolingOutputs=True, Name="pool"),
            dlf.reluLayer(Name="relu"),
            dlf.maxUnpooling2dLayer(Name="unpool"),
        ]
    )
    net.connectLayers("pool/indices", "unpool/indices")
    net.connectLayers("pool/size", "unpool/size")
    assert net.OutputNames == ("unpool",)
    x = np.random.default_rng(2).standard_normal((4, 6, 2, 3))
    Z = net.predict(dlf.dlarray(torch.from_numpy(x), "SSCB"))
    y, expected = index_reference(x, [2, 2], [2, 2], [(0, 0), (0, 0)])
    unpooled = np.zeros(x.size)
    unpooled[expected.ravel(order="F").astype(int) - 1] = np.maximum(y, 0).ravel(order="F")
    np.testing.assert_array_equal(dlf.extractdata(Z).numpy(), unpooled.reshape(x.shape, order="F"))


def test_unpooling_inputs_that_do_not_fit_are_clear_errors():
    pool = dlf.maxPooling2dLayer(2, Stride=2, HasUnpoolingOutputs=True)
    _, indices, size = pool(dlf.dlarray(torch.randn(4, 4, 2, 1), "SSCB"))
    unpool = dlf.maxUnpooling2dLayer(Name="unpool")
    with pytest.raises(
        DLFormatError, match=r"MaxUnpooling2DLayer 'unpool': maxunpool: indx must have the size of X"
    ):
        unpool(dlf.dlarray(torch.randn(2, 2, 3, 1), "SSCB"), indices, size)
