"""gpuArray, gather, canUseGPU, gpuDevice, gpuDeviceCount and rng (dlformat/_functions/_device.py).

Without CUDA every GPU function answers as MATLAB does on a computer without a GPU (torch is made
to find none, so these run the same on a GPU machine); the CUDA paths run under the ``cuda`` marker.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

from ..conftest import CUDA

NO_GPU = r"No supported GPU device was found on this computer"  # MATLAB's words (MATLAB Answers 282830)


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_without_a_gpu_canUseGPU_is_false_and_the_gpu_functions_say_so(no_cuda):
    assert dlf.canUseGPU() is False and dlf.gpuDeviceCount() == 0
    X = dlf.dlarray(torch.ones(2, 3), "CB")
    with pytest.raises(DLFormatError, match=rf"gpuArray: {NO_GPU}.*Check canUseGPU\(\) first"):
        dlf.gpuArray(X)
    with pytest.raises(DLFormatError, match=rf"gpuDevice: {NO_GPU}"):
        dlf.gpuDevice()
    assert X.device.type == "cpu"  # nothing changed


@pytest.mark.parametrize("value", ["text", dlf.categorical(["a"]), {"a": 1}, ["a", "b"], None])
def test_gpuArray_refuses_what_is_not_numeric_with_matlabs_message(value):
    # MATLAB: "Only full arrays of fundamental numeric types or logical types are supported for GPU arrays"
    with pytest.raises(DLFormatError, match="gpuArray: Only full arrays of fundamental numeric types"):
        dlf.gpuArray(value)


def test_the_refusal_describes_a_categorical_briefly():
    with pytest.raises(
        DLFormatError, match=r"supported for GPU arrays; got a categorical array of shape \(2,\)$"
    ):
        dlf.gpuArray(dlf.categorical(["a", "b"]))


def test_gpuDevice_refuses_what_torch_cannot_do():
    with pytest.raises(DLFormatError, match=r"gpuDevice\(\[\]\) deselects the GPU"):
        dlf.gpuDevice([])
    with pytest.raises(DLFormatError, match="must be one of"):
        dlf.gpuDeviceCount("some")


def test_gather_brings_data_to_the_cpu_and_leaves_anything_else_alone():
    X = dlf.dlarray(torch.ones(2, 3), "CB")
    gathered = dlf.gather(X)
    assert isinstance(gathered, dlf.DLArray) and dlf.dims(gathered) == "CB" and gathered.device.type == "cpu"
    assert dlf.gather(torch.zeros(2)).device.type == "cpu"
    labels = dlf.categorical(["a"])
    assert dlf.gather(labels) is labels and dlf.gather("text") == "text"  # "gather has no effect"
    a, b = dlf.gather(torch.ones(1), 5)  # [X1, X2] = gather(A1, A2)
    assert a.tolist() == [1.0] and b == 5
    # gan_signal_custom_loop.m: double(gather(extractdata(mean(probReal))))
    assert dlf.double(dlf.gather(dlf.extractdata(dlf.mean(X, "all")))).dtype == torch.float64
    with pytest.raises(DLFormatError, match="gather needs an array"):
        dlf.gather()


def _draws():
    return torch.rand(3).tolist(), np.random.rand(3).tolist(), [random.random() for _ in range(3)]


@pytest.fixture
def restored():
    before = dlf.rng()
    yield
    dlf.rng(before)


def test_rng_seeds_torch_numpy_and_python_alike(restored):
    dlf.rng(7)
    first = _draws()
    dlf.rng(7)
    assert _draws() == first
    dlf.rng(8)
    assert _draws() != first
    dlf.rng(7, "twister")
    assert _draws() == first
    assert dlf.rng().Seed == 7 and dlf.rng().Type == "twister"


def test_rng_default_and_twister_are_seed_0(restored):
    # the rng page: the factory default is the Mersenne Twister with seed 0; rng(generator) seeds 0
    dlf.rng(0)
    zero = _draws()
    dlf.rng("default")
    assert _draws() == zero and dlf.rng().Seed == 0
    dlf.rng(3)
    dlf.rng("twister")
    assert _draws() == zero


def test_rng_settings_restore_every_generator(restored):
    dlf.rng(11)
    torch.rand(5)
    settings = dlf.rng()  # s = rng
    after = _draws()
    _draws()
    previous = dlf.rng(settings)  # rng(s): returns the settings it replaced
    assert _draws() == after and dlf.rng().Seed == 11 and isinstance(previous, dlf.RngSettings)
    assert dlf.rng(4).Seed == 11  # t = rng(...): the settings before the call
    assert "Type: 'twister'" in repr(settings) and "Seed: 11" in repr(settings)


def test_rng_shuffle_seeds_from_the_clock(restored):
    dlf.rng("shuffle")
    seed = dlf.rng().Seed
    assert 0 <= seed < 2**32
    dlf.rng(seed)
    first = _draws()
    dlf.rng(seed)
    assert _draws() == first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("philox",), 'the generator must be "twister"'),
        ((1, "threefry"), 'the generator must be "twister"'),
        ((-1,), "seed must be an integer >= 0"),
        ((2**32,), "seed must be below 2\\^32"),
        ((1.5,), "seed must be an integer >= 0"),
        (({"Type": "twister", "Seed": 0, "State": np.zeros(625)},), "not made by dlformat's rng"),
        ((1, 2, 3), "rng takes rng"),
        (("twister", "twister"), "takes the generator alone"),
    ],
)
def test_rng_refuses_what_it_cannot_do_and_changes_nothing(args, message, restored):
    dlf.rng(5)
    before = dlf.rng()
    with pytest.raises(DLFormatError, match=message):
        dlf.rng(*args)
    assert dlf.rng().Seed == 5 and torch.equal(dlf.rng().State[0], before.State[0])


@CUDA
@pytest.mark.cuda
def test_gpuArray_and_gather_on_a_cuda_device(restored):
    assert dlf.canUseGPU() and dlf.gpuDeviceCount() >= 1
    X = dlf.dlarray(torch.randn(3, 4, dtype=torch.float64), "CB")
    G = dlf.gpuArray(X)
    assert isinstance(G, dlf.DLArray) and dlf.dims(G) == "CB" and G.device.type == "cuda"
    assert G.dtype == torch.float64
    assert dlf.gpuArray(np.ones((2, 2), dtype=np.float32)).device.type == "cuda"
    back = dlf.gather(G)
    assert back.device.type == "cpu" and torch.equal(dlf.extractdata(back), dlf.extractdata(X))
    device = dlf.gpuDevice(1)
    assert device.Index == 1 and device.DeviceSelected and device.TotalMemory > 0
    assert "CUDADevice with properties" in repr(device)
    device.wait()
    with pytest.raises(DLFormatError, match="ind must be a device index from 1 to"):
        dlf.gpuDevice(dlf.gpuDeviceCount() + 1)
    dlf.rng(3)
    first = torch.rand(4, device="cuda")
    dlf.rng(3)
    assert torch.equal(torch.rand(4, device="cuda"), first)  # rng seeds the CUDA generators too
