"""Dimension numbers count from 1 (issue 23, item 3; docs/porting.md#dimension-numbers-count-from-1).

``finddim`` returns MATLAB's numbers (MathWorks' finddim page: ``finddim(dlX,'T')`` of a ``"TSSU"``
array is 3, ``finddim(dlX,'S')`` is ``[1 2]``, ``finddim(dlX,'B')`` empty), and every function that
takes a dimension takes them: each row below passes ``finddim``'s result, as a literal port of
MATLAB code does, and compares with a float64 NumPy reference in which MATLAB's dimension ``d`` is
NumPy's axis ``d - 1`` of the stored (canonical) order, the axes read from the format string.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

FMT = "SSCBT"  # canonical order: MATLAB's dimension d is axis d - 1 of the stored data
DATA = np.random.default_rng(23).standard_normal((2, 3, 4, 5, 6))
CLASSES = ["a", "b", "c", "d"]  # one per channel of DATA


def X():
    return dlf.dlarray(torch.tensor(DATA), FMT)


def axes(label):
    """The 0-based NumPy axes of ``label`` in FMT, read from the string (not from dlformat)."""
    return tuple(axis for axis, have in enumerate(FMT) if have == label)


def data(Y):
    return dlf.extractdata(Y).numpy() if isinstance(Y, dlf.DLArray) else np.asarray(Y)


def zscore(x, axis):
    return (x - x.mean(axis, keepdims=True)) / x.std(axis, ddof=1, keepdims=True)


def test_finddim_gives_the_numbers_on_mathworks_page():
    dlX = dlf.dlarray(torch.randn(5, 4, 3, 2), "TSSU")  # MATLAB reorders it to "SSTU"
    assert dlf.finddim(dlX, "T") == (3,)
    assert dlf.finddim(dlX, "S") == (1, 2)
    assert dlf.finddim(dlX, "B") == ()
    assert dlf.size(dlX, dlf.finddim(dlX, "S")) == (4, 3)  # the page's SSize = [4 3]
    assert dlf.finddim(dlf.dlarray(torch.randn(3, 4)), "C") == ()  # unformatted: empty
    X6 = dlf.dlarray(torch.randn(6, 5, 4, 3, 2), "SSCBT")
    assert [dlf.finddim(X6, label) for label in "SCBTU"] == [(1, 2), (3,), (4,), (5,), ()]


# (function, labels it is run with, dlformat call given finddim's result, NumPy reference given axes)
ONE = "CBT"  # the labels found once (finddim gives one number)
EVERY = "SCBT"  # S found twice: the functions that take several dimensions (MATLAB's vecdim)
CASES = [
    ("sum", EVERY, lambda d: dlf.sum(X(), d), lambda a: DATA.sum(a, keepdims=True)),
    ("mean", EVERY, lambda d: dlf.mean(X(), d), lambda a: DATA.mean(a, keepdims=True)),
    ("prod", EVERY, lambda d: dlf.prod(X(), d), lambda a: DATA.prod(a, keepdims=True)),
    ("max", EVERY, lambda d: dlf.max(X(), [], d), lambda a: DATA.max(a, keepdims=True)),
    ("min", EVERY, lambda d: dlf.min(X(), [], d), lambda a: DATA.min(a, keepdims=True)),
    (
        "max index",
        ONE,
        lambda d: dlf.max(X(), [], d, nargout=2)[1],
        lambda a: np.expand_dims(DATA.argmax(a[0]), a[0]) + 1,  # MATLAB's 1-based index
    ),
    (
        "min index",
        ONE,
        lambda d: dlf.min(X(), [], d, nargout=2)[1],
        lambda a: np.expand_dims(DATA.argmin(a[0]), a[0]) + 1,
    ),
    ("any", EVERY, lambda d: dlf.any(X() > 1, d), lambda a: (DATA > 1).any(a, keepdims=True)),
    ("all", EVERY, lambda d: dlf.all(X() > -1, d), lambda a: (DATA > -1).all(a, keepdims=True)),
    ("vecnorm", EVERY, lambda d: dlf.vecnorm(X(), 2, d), lambda a: np.sqrt((DATA**2).sum(a, keepdims=True))),
    ("cumsum", ONE, lambda d: dlf.cumsum(X(), d), lambda a: DATA.cumsum(a[0])),
    (
        "cumsum reverse",
        ONE,
        lambda d: dlf.cumsum(X(), d, "reverse"),
        lambda a: np.flip(np.flip(DATA, a).cumsum(a[0]), a),
    ),
    ("normalize", ONE, lambda d: dlf.normalize(X(), d), lambda a: zscore(DATA, a[0])),
    ("cat", ONE, lambda d: dlf.cat(d, X(), 2 * X()), lambda a: np.concatenate([DATA, 2 * DATA], a[0])),
    (
        "cat unformatted",
        ONE,
        lambda d: dlf.cat(d, dlf.stripdims(X()), dlf.stripdims(X())),
        lambda a: np.concatenate([DATA, DATA], a[0]),
    ),
    ("flip", EVERY, lambda d: dlf.flip(X(), d), lambda a: np.flip(DATA, a)),
    ("circshift", ONE, lambda d: dlf.circshift(X(), 2, d), lambda a: np.roll(DATA, 2, a[0])),
    (
        "size",
        EVERY,
        lambda d: dlf.size(X(), d),
        lambda a: DATA.shape[a[0]] if len(a) == 1 else tuple(DATA.shape[i] for i in a),
    ),
    (
        "concatenationLayer",
        ONE,
        lambda d: dlf.concatenationLayer(d, 2)(X(), X()),
        lambda a: np.concatenate([DATA, DATA], a[0]),
    ),
]


@pytest.mark.parametrize(
    ("label", "call", "reference"),
    [
        pytest.param(label, call, reference, id=f"{name}-{label}")
        for name, labels, call, reference in CASES
        for label in labels
    ],
)
def test_every_function_taking_a_dimension_takes_finddims_result(label, call, reference):
    result = call(dlf.finddim(X(), label))
    expected = reference(axes(label))
    if isinstance(expected, (int, tuple)):
        assert result == expected and type(result) is type(expected)
        return
    if isinstance(result, dlf.DLArray):
        assert dlf.dims(result) in (FMT, "")
    np.testing.assert_allclose(data(result), expected, rtol=1e-12, atol=1e-12)


def test_permute_takes_orders_built_from_finddim():
    S1, S2 = dlf.finddim(X(), "S")
    order = [S2, S1, *dlf.finddim(X(), "C"), *dlf.finddim(X(), "B"), *dlf.finddim(X(), "T")]
    assert order == [2, 1, 3, 4, 5]
    np.testing.assert_array_equal(data(dlf.permute(X(), order)), DATA.transpose(1, 0, 2, 3, 4))
    np.testing.assert_array_equal(data(dlf.ipermute(dlf.permute(X(), order), order)), DATA)


SCORES = DATA[0, 0, :, :, 0]  # 4 (C) x 5 (B)


def layout():
    """A formatted array whose finddim numbers the unformatted data's dimensions ("CB")."""
    return dlf.dlarray(torch.tensor(SCORES), "CB")


def test_the_label_functions_take_finddims_result():
    labels = np.array(CLASSES)[SCORES.argmax(0)]  # the top class of each observation
    channel = dlf.finddim(layout(), "C")
    assert channel == (1,)
    encoded = dlf.onehotencode(list(labels), channel, ClassNames=CLASSES)
    np.testing.assert_array_equal(
        encoded.numpy(), (np.array(CLASSES)[:, None] == labels[None, :]).astype(float)
    )
    assert dlf.onehotdecode(torch.tensor(SCORES), CLASSES, channel).tolist() == labels.tolist()
    probabilities = np.exp(SCORES) / np.exp(SCORES).sum(0)
    names, top = dlf.scores2label(torch.tensor(probabilities), CLASSES, channel)
    assert names.tolist() == labels.tolist()
    np.testing.assert_allclose(top.numpy(), probabilities.max(0), rtol=1e-12)
    # the batch's number reads the other dimension: the class of each channel's top observation
    by_batch = dlf.onehotdecode(torch.tensor(SCORES.T), CLASSES, dlf.finddim(layout(), "B"))
    assert by_batch.tolist() == labels.tolist()


def test_padsequences_takes_finddims_result():
    sequences = [dlf.dlarray(torch.tensor(DATA[0, 0, :, 0, :length]), "CT") for length in (6, 3)]
    time = dlf.finddim(sequences[0], "T")
    assert time == (2,)
    padded = dlf.padsequences([dlf.stripdims(sequence) for sequence in sequences], time)
    expected = np.stack([DATA[0, 0, :, 0, :], np.pad(DATA[0, 0, :, 0, :3], ((0, 0), (0, 3)))], axis=2)
    np.testing.assert_array_equal(padded.numpy(), expected)


POINTS = DATA[0, 0, :3, :, 0]  # 3 components (C) x 5 points (B)


def calculus(name, d):
    """``name(u, x, d)`` of u = x.^2 (componentwise) on unformatted x, inside dlfeval."""

    def model(x):
        u = dlf.dlarray(dlf.stripdims(x) ** 2)
        return getattr(dlf, name)(u, x, d)

    return dlf.dlfeval(model, dlf.dlarray(torch.tensor(POINTS)))


@pytest.mark.parametrize(
    ("name", "reference"),
    [
        # jac(i, p, j) = du_i/dx_j at point p: 2 x_i when i == j; the x component appended last
        ("dljacobian", lambda: np.stack([np.diag(2 * POINTS[:, p]) for p in range(POINTS.shape[1])], axis=1)),
        ("dldivergence", lambda: (2 * POINTS).sum(0, keepdims=True)),
        ("dllaplacian", lambda: np.full_like(POINTS, 2.0)),
    ],
)
def test_the_derivative_functions_take_finddims_result(name, reference):
    """MATLAB's physics-informed code reads the component dimension of the formatted data, then
    strips the labels: finddim's number is dljacobian's dim."""
    channel = dlf.finddim(dlf.dlarray(torch.tensor(POINTS), "CB"), "C")
    assert channel == (1,)
    result = dlf.extractdata(calculus(name, channel)).numpy()
    np.testing.assert_allclose(result, reference(), rtol=1e-12, atol=1e-12)


ONE_DIMENSION = {
    "cat": lambda d: dlf.cat(d, X(), X()),
    "cat unformatted": lambda d: dlf.cat(d, dlf.stripdims(X()), dlf.stripdims(X())),
    "cumsum": lambda d: dlf.cumsum(X(), d),
    "flip": lambda d: dlf.flip(X(), d),
    "circshift": lambda d: dlf.circshift(X(), 1, d),
    "normalize": lambda d: dlf.normalize(X(), d),
    "sum": lambda d: dlf.sum(X(), d),
    "mean": lambda d: dlf.mean(X(), d),
    "max": lambda d: dlf.max(X(), [], d),
    "vecnorm": lambda d: dlf.vecnorm(X(), 2, d),
    "size": lambda d: dlf.size(X(), d),
    "onehotencode": lambda d: dlf.onehotencode(["a"], d, ClassNames=CLASSES),
    "onehotdecode": lambda d: dlf.onehotdecode(torch.tensor(SCORES), CLASSES, d),
    "scores2label": lambda d: dlf.scores2label(torch.tensor(SCORES), CLASSES, d),
    "padsequences": lambda d: dlf.padsequences([torch.ones(2, 3)], d),
    "concatenationLayer": lambda d: dlf.concatenationLayer(d, 2),
    "dljacobian": lambda d: calculus("dljacobian", d),
}


@pytest.mark.parametrize("name", list(ONE_DIMENSION))
def test_finddims_empty_result_is_an_error_that_says_so(name):
    """A label the array lacks gives finddim's (); the function says it names no dimension rather
    than reading something else (what MATLAB does with an empty dimension vector is not settled)."""
    absent = dlf.finddim(X(), "U")
    assert absent == ()
    with pytest.raises(DLFormatError, match=r"finddim returns \(\) for a label the array lacks"):
        ONE_DIMENSION[name](absent)


@pytest.mark.parametrize(
    "name",
    [
        "cat",
        "cumsum",
        "circshift",
        "normalize",
        "onehotencode",
        "scores2label",
        "padsequences",
        "concatenationLayer",
    ],
)
def test_two_dimensions_where_one_is_taken_is_an_error(name):
    with pytest.raises(DLFormatError, match="one dimension"):
        ONE_DIMENSION[name](dlf.finddim(X(), "S"))
