"""Property-based checks of the format rules of indexing, reductions and concatenation, against
NumPy on random formats, shapes and arguments."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dlformat as dlf


@st.composite
def arrays(draw):
    """A formatted dlarray of random format and sizes (1 to 4), holding 0, 1, 2, ... in stored order."""
    labels = draw(st.lists(st.sampled_from("SU"), max_size=2)) + [
        label for label in "CBT" if draw(st.booleans())
    ]
    labels = draw(st.permutations(labels)) or [draw(st.sampled_from("SCBTU"))]
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=len(labels), max_size=len(labels))))
    X = dlf.dlarray(torch.arange(float(np.prod(shape))).reshape(shape), "".join(labels))
    return X, dlf.stripdims(X).numpy()


def settle(values, fmt):
    """dlarray's rule 4: trailing singleton U dimensions after the second are dropped."""
    while len(fmt) > 2 and fmt[-1] == "U" and values.shape[-1] == 1:
        values, fmt = values[..., 0], fmt[:-1]
    return values, fmt


@st.composite
def subscript(draw, size):
    """One subscript for a dimension of ``size``, and what it selects as a list of positions."""
    kind = draw(st.sampled_from(["all", "int", "slice", "list", "mask"]))
    if kind == "all":
        return slice(None), list(range(size))
    if kind == "int":
        index = draw(st.integers(-size, size - 1))
        return index, [index % size]
    if kind == "slice":
        start, stop = draw(st.integers(-size - 1, size + 1)), draw(st.integers(-size - 1, size + 1))
        step = draw(st.sampled_from([1, 2, -1]))
        item = slice(start, stop, step)
        return item, list(range(size))[item]
    if kind == "list":
        positions = draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=3))
        return positions, [position % size for position in positions]
    mask = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return mask, [position for position, keep in enumerate(mask) if keep]


@settings(max_examples=80, deadline=None)
@given(arrays(), st.data())
def test_indexing_keeps_the_format_and_selects_as_matlab_subscripts(case, data):
    X, values = case
    drawn = [data.draw(subscript(size)) for size in values.shape]
    count = data.draw(st.integers(0, len(drawn)))  # trailing subscripts may be left out
    Y = X[tuple(item for item, _ in drawn[:count])]
    expected = values
    for axis, (_, positions) in enumerate(drawn[:count]):
        expected = np.take(expected, positions, axis=axis)
    expected, fmt = settle(expected, dlf.dims(X))
    assert dlf.dims(Y) == fmt
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), expected)


@settings(max_examples=80, deadline=None)
@given(arrays(), st.data(), st.sampled_from(["sum", "mean", "prod", "max", "min", "any"]))
def test_reductions_keep_the_format_with_singletons_by_number_or_label(case, data, name):
    X, values = case
    if name == "prod":  # -1, 0 and 1: products that neither overflow nor depend on the order
        X, values = dlf.sign(X - 10), np.sign(values - 10)
    fmt = dlf.dims(X)
    axes = sorted(data.draw(st.sets(st.integers(0, len(fmt) - 1), min_size=1)))
    by_label = data.draw(st.booleans()) and all(fmt.count(fmt[axis]) == 1 for axis in axes)
    dim = "".join(fmt[axis] for axis in axes) if by_label else [axis + 1 for axis in axes]
    function = getattr(dlf, name)
    Y = function(X, [], dim) if name in ("max", "min") else function(X, dim)
    reference = {
        "sum": np.sum,
        "mean": np.mean,
        "prod": np.prod,
        "max": np.max,
        "min": np.min,
        "any": np.any,
    }[name]
    expected, expected_fmt = settle(reference(values, axis=tuple(axes), keepdims=True), fmt)
    assert dlf.dims(Y) == expected_fmt
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), expected, rtol=1e-6)


@settings(max_examples=80, deadline=None)
@given(arrays(), st.data())
def test_concatenation_keeps_the_one_format_along_a_number_or_a_label(case, data):
    X, values = case
    fmt = dlf.dims(X)
    axis = data.draw(st.integers(0, len(fmt) - 1))
    others = []
    for size in data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)):
        shape = tuple(size if i == axis else n for i, n in enumerate(values.shape))
        others.append(np.full(shape, float(len(others) + 1)))
    dim = fmt[axis] if fmt.count(fmt[axis]) == 1 and data.draw(st.booleans()) else axis + 1
    parts = [dlf.dlarray(torch.tensor(other, dtype=torch.float32), fmt) for other in others]
    assume(all(dlf.dims(part) == fmt for part in parts))  # a trailing U of size 1 is no dimension at all
    Y = dlf.cat(dim, X, *parts)
    assert dlf.dims(Y) == fmt
    np.testing.assert_array_equal(dlf.stripdims(Y).numpy(), np.concatenate([values, *others], axis))


@settings(max_examples=60, deadline=None)
@given(arrays(), st.data(), st.sampled_from(["center", "norm", "zscore", "rescale"]))
def test_normalize_and_rescale_keep_the_format_and_the_size(case, data, method):
    X, values = case
    X, values = X + 1, values + 1.0  # no zero vector to normalize by its norm
    fmt = dlf.dims(X)
    axis = data.draw(st.integers(0, len(fmt) - 1))
    dim = fmt[axis] if fmt.count(fmt[axis]) == 1 and data.draw(st.booleans()) else axis + 1
    if method == "rescale":
        assume(values.size > 1)
        Y = dlf.rescale(X, -1, 1)
        expected = -1 + 2 * (values - values.min()) / (values.max() - values.min())
    elif method == "zscore":
        assume(values.shape[axis] > 1)
        Y = dlf.normalize(X, dim)
        spread = values.std(axis, ddof=1, keepdims=True)
        expected = (values - values.mean(axis, keepdims=True)) / spread
    else:
        Y = dlf.normalize(X, dim, method)
        expected = (
            values - values.mean(axis, keepdims=True)
            if method == "center"
            else values / np.sqrt((values**2).sum(axis, keepdims=True))
        )
    assert dlf.dims(Y) == fmt and tuple(Y.shape) == values.shape
    np.testing.assert_allclose(dlf.stripdims(Y).numpy(), expected, rtol=1e-5, atol=1e-5)
