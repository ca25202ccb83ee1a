"""Property-based checks of the format rules over random formats and shapes."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import dlformat as dlf

RANK = {label: rank for rank, label in enumerate("SCBTU")}


@st.composite
def formats(draw, min_size=1, max_size=5):
    """A valid format: S and U any number of times, C, B, T at most once each."""
    labels = draw(st.lists(st.sampled_from("SU"), max_size=3))
    labels += [label for label in "CBT" if draw(st.booleans())]
    labels = draw(st.permutations(labels))
    if not labels:
        labels = [draw(st.sampled_from("SCBTU"))]
    return "".join(labels[:max_size])


@st.composite
def labelled_arrays(draw):
    fmt = draw(formats())
    ndim = draw(st.integers(min_value=0, max_value=len(fmt)))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape), fmt


@settings(max_examples=200, deadline=None)
@given(labelled_arrays())
def test_dlarray_matches_the_rules_on_any_format(case):
    data, fmt = case
    X = dlf.dlarray(data, fmt)
    padded = data.reshape(data.shape + (1,) * (len(fmt) - data.ndim))
    order = np.argsort([RANK[label] for label in fmt], kind="stable")
    expected = np.transpose(padded, order)
    expected_fmt = "".join(fmt[i] for i in order)
    # rule 4: trailing singleton U dimensions after the second are dropped
    while len(expected_fmt) > 2 and expected_fmt[-1] == "U" and expected.shape[-1] == 1:
        expected, expected_fmt = expected[..., 0], expected_fmt[:-1]
    assert dlf.dims(X) == expected_fmt
    np.testing.assert_array_equal(dlf.stripdims(X).numpy(), expected)
    for label in "SCBTU":
        # MATLAB's dimension numbers, from 1
        assert dlf.finddim(X, label) == tuple(i + 1 for i, have in enumerate(expected_fmt) if have == label)


@settings(max_examples=100, deadline=None)
@given(labelled_arrays(), st.data())
def test_stripdims_then_dlarray_round_trips_through_any_order(case, data):
    array, fmt = case
    X = dlf.dlarray(array, fmt)
    target = "".join(data.draw(st.permutations(list(dlf.dims(X)))))
    assert target  # formats() never draws an empty format
    back = dlf.dlarray(dlf.stripdims(X, target), target)
    assert dlf.dims(back) == dlf.dims(X)
    assert torch.equal(dlf.stripdims(back), dlf.stripdims(X))


@settings(max_examples=100, deadline=None)
@given(labelled_arrays())
def test_addition_with_self_in_another_layout_doubles(case):
    array, fmt = case
    X = dlf.dlarray(array, fmt)
    reordered = dlf.dims(X)[::-1]
    Y = dlf.dlarray(dlf.stripdims(X, reordered), reordered)
    total = X + Y
    assert dlf.dims(total) == dlf.dims(X)
    np.testing.assert_array_equal(dlf.stripdims(total).numpy(), 2 * dlf.stripdims(X).numpy())
