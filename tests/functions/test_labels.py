"""onehotencode, onehotdecode and scores2label against NumPy transcriptions of MathWorks' pages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

CLASSES = ["red", "green", "blue"]


class Categorical:
    """A stand-in with pandas.Categorical's surface (categories, codes; -1 undefined)."""

    def __init__(self, categories, codes):
        self.categories, self.codes = list(categories), np.asarray(codes)


def encode_reference(labels, classes, axis):
    """One-hot along ``axis`` (0-based) with NumPy: 1 at the label's class, NaN for no class."""
    labels = np.asarray(labels, dtype=object)
    out = np.stack([(labels == name).astype(float) for name in classes], axis=axis)
    unknown = np.expand_dims(~np.isin(labels, classes), axis)
    return np.where(np.broadcast_to(unknown, out.shape), np.nan, out)


@pytest.mark.parametrize("feature_dim", [1, 2])
def test_onehotencode_of_a_vector_puts_the_classes_at_feature_dim(feature_dim):
    labels = ["blue", "red", "purple", "blue", None]
    got = dlf.onehotencode(labels, feature_dim, ClassNames=CLASSES)
    expected = encode_reference(labels, CLASSES, feature_dim - 1)
    assert got.dtype == torch.float64
    np.testing.assert_array_equal(got.numpy(), expected)


def test_onehotencode_of_a_matlab_row_and_past_the_last_dimension():
    labels = np.array([["red", "blue", "green"]], dtype=object)  # 1×3, MATLAB's row
    np.testing.assert_array_equal(
        dlf.onehotencode(labels, 1, ClassNames=CLASSES).numpy(), encode_reference(labels[0], CLASSES, 0)
    )
    got = dlf.onehotencode(labels, 3, "single", ClassNames=CLASSES)
    assert tuple(got.shape) == (1, 3, 3) and got.dtype == torch.float32
    np.testing.assert_array_equal(got[0].numpy(), encode_reference(labels[0], CLASSES, 1))


def test_a_categorical_brings_its_own_class_order_and_undefined():
    labels = Categorical(["b", "a"], [1, 0, -1, 1])  # a, b, <undefined>, a
    got = dlf.onehotencode(labels, 1)
    np.testing.assert_array_equal(got.numpy(), [[0, 1, np.nan, 0], [1, 0, np.nan, 1]])
    # ClassNames reorders (and may drop) the categorical's classes
    np.testing.assert_array_equal(
        dlf.onehotencode(labels, 1, ClassNames=["a"]).numpy(), [[1, np.nan, np.nan, 1]]
    )


def test_dlformats_categorical_encodes_and_decodes_as_matlabs():
    # onehotencode takes a categorical's categories as the classes (ClassNames not needed);
    # onehotdecode's default typename, "categorical", gives one whose categories are the classes
    labels = dlf.categorical(["blue", None, "red"], CLASSES)
    encoded = dlf.onehotencode(labels, 1)
    np.testing.assert_array_equal(encoded.numpy(), encode_reference(["blue", None, "red"], CLASSES, 0))
    decoded = dlf.onehotdecode(encoded, CLASSES, 1)
    assert isinstance(decoded, dlf.Categorical) and dlf.categories(decoded) == CLASSES
    assert dlf.isequaln(decoded, labels)
    assert dlf.onehotdecode(encoded, CLASSES, 1, "string").tolist() == ["blue", None, "red"]
    scores = torch.tensor([[0.1, 0.8], [0.9, 0.1], [0.0, 0.1]])  # K×N
    top, _ = dlf.scores2label(scores, labels, 1)  # classNames a categorical: its categories
    assert (
        isinstance(top, dlf.Categorical)
        and top.tolist() == ["green", "red"]
        and dlf.categories(top) == CLASSES
    )


def test_onehotdecode_takes_the_first_maximum_and_undoes_onehotencode():
    B = torch.tensor([[0.2, 0.5, 0.5], [0.7, 0.5, 0.1], [0.1, 0.0, 0.4]])
    got = dlf.onehotdecode(B, CLASSES, 1)
    expected = np.array(CLASSES, dtype=object)[np.argmax(B.numpy(), axis=0)]  # NumPy's argmax: first of ties
    assert got.tolist() == expected.tolist() == ["green", "red", "red"]
    labels = ["blue", "red", "green", "red"]
    assert dlf.onehotdecode(dlf.onehotencode(labels, 2, ClassNames=CLASSES), CLASSES, 2).tolist() == labels


def test_onehotdecode_of_nan_is_undefined_and_numeric_classes():
    assert dlf.onehotdecode(torch.tensor([[np.nan, 1.0], [np.nan, 0.0]]), ["a", "b"], 1).tolist() == [
        None,
        "a",
    ]
    got = dlf.onehotdecode(np.array([[0.1, 0.9], [0.9, 0.1]]), [10, 20], 1, "double")
    assert got.dtype == np.float64 and got.tolist() == [20.0, 10.0]


def test_scores2label_reads_c_of_a_dlarray_and_finds_the_channel_of_plain_scores():
    probabilities = torch.softmax(torch.randn(5, 3, dtype=torch.float64), 1)  # N×K, as MATLAB's predict
    labels, top = dlf.scores2label(probabilities, CLASSES)
    expected = np.array(CLASSES, dtype=object)[probabilities.numpy().argmax(1)]
    assert labels.tolist() == expected.tolist()
    np.testing.assert_allclose(top.numpy(), probabilities.numpy().max(1))
    formatted = dlf.dlarray(probabilities.T, "CB")
    assert dlf.scores2label(formatted, CLASSES)[0].tolist() == expected.tolist()
    assert dlf.scores2label(probabilities.T, CLASSES, 1)[0].tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dlf.onehotencode(["a"], 1), "need ClassNames"),
        (lambda: dlf.onehotencode(["a"], 3, ClassNames=["a"]), "featureDim 3 is past"),
        (
            lambda: dlf.onehotencode(np.array([["a", "b"]], dtype=object), 2, ClassNames=["a", "b"]),
            "singleton",
        ),
        (lambda: dlf.onehotencode(["a"], 1, "float", ClassNames=["a"]), "typename"),
        (lambda: dlf.onehotencode(["a"], 1, ClassNames=["a", "a"]), "repeat"),
        (lambda: dlf.onehotencode(["a"], 1, ClassNames="a"), "list of names"),
        (lambda: dlf.onehotdecode(torch.ones(2, 3), CLASSES, 1), r"dimension 1 of B \(size 2×3\)"),
        (lambda: dlf.onehotdecode(torch.tensor([[np.nan], [1.0]]), [1, 2], 1, "double"), "undefined"),
        (lambda: dlf.scores2label(torch.full((3, 3), 1 / 3), CLASSES), "cannot tell the channel"),
        (lambda: dlf.scores2label(dlf.dlarray(torch.ones(3, 2), "SB"), CLASSES), "no channel"),
    ],
)
def test_errors_name_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()
