"""minibatchqueue over tensors, NumPy arrays, lists, Datasets and several of them, as MATLAB's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import TensorDataset

import dlformat as dlf
from dlformat import DLFormatError


def test_observations_along_the_last_dimension_by_default_and_matlabs_defaults():
    X = torch.arange(30.0, dtype=torch.float64).reshape(3, 10)
    mbq = dlf.minibatchqueue(X, MiniBatchSize=4)
    assert (mbq.MiniBatchSize, mbq.PartialMiniBatch, mbq.MiniBatchFcn, mbq.NumOutputs) == (
        4,
        "return",
        "collate",
        1,
    )
    assert (mbq.OutputCast, mbq.OutputAsDlarray, mbq.MiniBatchFormat, mbq.OutputEnvironment) == (
        ("single",),
        (True,),
        ("",),
        ("auto",),
    )
    assert dlf.minibatchqueue(X).MiniBatchSize == 128
    first = mbq.next()
    assert isinstance(first, dlf.DLArray) and dlf.dims(first) == "" and first.dtype == torch.float32
    torch.testing.assert_close(dlf.extractdata(first), X[:, :4].float())
    sizes = []
    while mbq.hasdata():
        sizes.append(next(mbq).shape[-1])
    assert sizes == [4, 2]
    with pytest.raises(
        DLFormatError, match=r"minibatchqueue next: the queue has no more data; check hasdata\(\) first"
    ):
        mbq.next()
    assert [tuple(batch.shape) for batch in mbq] == [(3, 4), (3, 4), (3, 2)]  # a for loop is one pass
    assert mbq.reset().hasdata()


def test_the_format_puts_observations_where_it_has_b():
    words = np.arange(24).reshape(6, 4)  # 6 sequences of 4 steps, one per row (MATLAB's table rows)
    targets = np.arange(72).reshape(3, 6, 4)  # C × B × T
    mbq = dlf.minibatchqueue(
        words, targets, MiniBatchSize=4, MiniBatchFormat=("BTC", "CBT"), OutputCast=("double", "single")
    )
    X, T = mbq.next()
    assert dlf.dims(X) == "CBT" and tuple(X.shape) == (1, 4, 4) and X.dtype == torch.float64
    assert dlf.dims(T) == "CBT" and tuple(T.shape) == (3, 4, 4)
    np.testing.assert_array_equal(dlf.stripdims(X, "BTC")[..., 0].numpy(), words[:4])
    labels = dlf.minibatchqueue(np.array([1, 2, 3, 4, 5]), MiniBatchSize=2, MiniBatchFormat="CB").next()
    assert dlf.dims(labels) == "CB" and tuple(labels.shape) == (1, 2)  # a vector of observations lies along B


def test_shuffle_reorders_and_resets_with_torchs_generator():
    X = torch.arange(8.0).reshape(1, 8)
    mbq = dlf.minibatchqueue(X, MiniBatchSize=8, MiniBatchFormat="CB")
    mbq.next()
    torch.manual_seed(3)
    mbq.shuffle()
    assert mbq.hasdata()
    torch.manual_seed(3)
    order = torch.randperm(8)
    torch.testing.assert_close(dlf.extractdata(mbq.next())[0], order.float())


def test_partial_mini_batch_discard():
    mbq = dlf.minibatchqueue(torch.randn(2, 10), MiniBatchSize=4, PartialMiniBatch="discard")
    assert len(list(mbq)) == 2


def test_lists_are_cell_arrays_of_observations_and_minibatchfcn_pads_them():
    sequences = [torch.randn(3, length) for length in (5, 2, 4, 3)]  # C × T each, different T
    labels = [1, 3, 2, 2]

    def preprocess(X, T):
        padded = torch.nn.utils.rnn.pad_sequence([x.T for x in X], batch_first=True)  # B × T × C
        return padded, torch.tensor(T)

    mbq = dlf.minibatchqueue(
        sequences, labels, MiniBatchSize=3, MiniBatchFcn=preprocess, MiniBatchFormat=("BTC", "B")
    )
    X, T = mbq.next()
    assert dlf.dims(X) == "CBT" and tuple(X.shape) == (3, 3, 5)
    assert dlf.dims(T) == "B" and dlf.extractdata(T).tolist() == [1.0, 3.0, 2.0]
    with pytest.raises(
        DLFormatError,
        match=r"minibatchqueue: the observations of variable 1 have different sizes \(3×2, 3×4, 3×5\); give MiniBatchFcn",
    ):
        dlf.minibatchqueue(sequences, MiniBatchSize=3).next()
    same = dlf.minibatchqueue(
        [torch.randn(3, 2) for _ in range(5)], MiniBatchSize=2, MiniBatchFormat="CTB"
    ).next()
    assert dlf.dims(same) == "CBT" and tuple(same.shape) == (3, 2, 2)  # stacked along B
    stacked = dlf.minibatchqueue([torch.randn(3) for _ in range(5)], MiniBatchSize=2).next()
    assert tuple(stacked.shape) == (3, 2)  # a new last dimension without a format


def test_a_dataset_and_numoutputs():
    dataset = TensorDataset(torch.randn(7, 3), torch.arange(7))
    X, T = dlf.minibatchqueue(
        dataset, MiniBatchSize=5, MiniBatchFormat=("BC", "B"), OutputCast=("single", "int64")
    ).next()
    assert dlf.dims(X) == "CB" and tuple(X.shape) == (3, 5) and T.dtype == torch.int64
    mbq = dlf.minibatchqueue(
        dataset, 1, MiniBatchSize=5, MiniBatchFcn=lambda x, t: torch.stack(x, 1), MiniBatchFormat="CB"
    )
    assert mbq.NumOutputs == 1 and tuple(mbq.next().shape) == (3, 5)
    raw = dlf.minibatchqueue(dataset, MiniBatchSize=2, OutputAsDlarray=False).next()
    assert all(type(value) is torch.Tensor for value in raw)
    assert "minibatchqueue with 2 outputs and properties:" in repr(dlf.minibatchqueue(dataset))


BAD = [
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), torch.randn(2, 4)),
        r"minibatchqueue: the data arguments hold different numbers of observations \(argument 1: 5, argument 2: 4\)",
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), MiniBatchSize=0),
        r"minibatchqueue MiniBatchSize must be a positive integer; got 0",
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), PartialMiniBatch="keep"),
        r'minibatchqueue PartialMiniBatch must be one of "return", "discard"; got "keep"',
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), OutputCast="half"),
        r'minibatchqueue OutputCast must be one of "single", "double", .*; got "half"',
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), OutputEnvironment="tpu"),
        r'minibatchqueue OutputEnvironment must be one of "auto", "gpu", "cpu"; got "tpu"',
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), MiniBatchFormat=("CB", "CB")),
        r"minibatchqueue MiniBatchFormat has 2 entries; the queue has 1 output",
    ),
    (lambda: dlf.minibatchqueue(torch.randn(2, 5), MiniBatchFormat="CXB"), r'invalid dimension label "X"'),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 3, 5), MiniBatchFormat="CB").next(),
        r'minibatchqueue: MiniBatchFormat "CB" of output 1 labels 2 dimensions; the mini-batch has 3',
    ),
    (
        lambda: dlf.minibatchqueue(dlf.dlarray(torch.randn(2, 5), "CB")),
        r"minibatchqueue: data argument 1 is a dlarray; pass its data",
    ),
    (
        lambda: dlf.minibatchqueue({"x": 1}),
        r"minibatchqueue: data argument 1 must be a tensor, a NumPy array, a list of observations",
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), 2),
        r"minibatchqueue: the data has 1 variable\(s\) and numOutputs is 2; without MiniBatchFcn",
    ),
    (
        lambda: dlf.minibatchqueue(torch.randn(2, 5), MiniBatchFcn=lambda x: (x, x)).next(),
        r"minibatchqueue: MiniBatchFcn returned 2 output\(s\); the queue has 1",
    ),
    (
        lambda: dlf.minibatchqueue(["a", "b"]).next(),
        r'minibatchqueue: an observation of variable 1 is not numeric: "a" \(a string\)',
    ),
    (lambda: dlf.minibatchqueue(), r"minibatchqueue needs data"),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=range(len(BAD)))
def test_bad_input_is_refused_naming_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
