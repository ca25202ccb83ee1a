"""The pure format parser: validation, canonical order and routing plans (no tensors)."""

from __future__ import annotations

import pytest

from dlformat import DLFormatError, _format


@pytest.mark.parametrize("fmt", ["", "S", "SSCB", "CBT", "TCB", "SSSCBT", "UUSU", "SCBTU", "BT"])
def test_valid_formats_parse_unchanged(fmt):
    assert _format.check_format(fmt) == fmt


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("CX", r'invalid dimension label "X" at position 1 of format "CX"; each label must be one of S'),
        ("cbt", r'invalid dimension label "c" at position 0'),
        ("S B", r'invalid dimension label " " at position 1'),
        ("CC", r'format "CC" has 2 "C" dimensions; "C", "B" and "T" may appear at most once'),
        ("SBCB", r'format "SBCB" has 2 "B" dimensions'),
        ("TT", r'format "TT" has 2 "T" dimensions'),
    ],
)
def test_invalid_formats_name_the_bad_label(fmt, message):
    with pytest.raises(DLFormatError, match=message):
        _format.check_format(fmt)


@pytest.mark.parametrize("fmt", [None, 3, ["C", "B"], b"CB"])
def test_non_string_formats_are_refused(fmt):
    with pytest.raises(DLFormatError, match=r"a format must be a string of the labels"):
        _format.check_format(fmt)


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [("TCB", "CBT"), ("TSSU", "SSTU"), ("TS", "ST"), ("UBSCT", "SCBTU"), ("USUS", "SSUU"), ("CBT", "CBT")],
)
def test_canonical_order_is_a_stable_sort(fmt, expected):
    assert _format.canonical(fmt) == expected


def test_repeated_labels_keep_their_relative_order():
    # the first S of "TSSU" (data dim 1) must come before the second (data dim 2)
    pattern, target = _format.labelling_plan("TSSU", 4)
    assert target == "SSTU"
    assert pattern == "t0 s0 s1 u0 -> s0 s1 t0 u0"


def test_labelling_plan_needs_a_label_per_dimension():
    with pytest.raises(DLFormatError, match=r'format "CB" has 2 label\(s\) but the data has 3 dimensions'):
        _format.labelling_plan("CB", 3)


def test_extra_labels_become_trailing_singletons_before_sorting():
    pattern, target = _format.labelling_plan("TCB", 2)
    assert (pattern, target) == ("t0 c0 -> c0 1 t0", "CBT")


@pytest.mark.parametrize(
    ("fmt", "singleton", "drop"),
    [
        ("CBU", (False, False, True), 1),
        ("CBUU", (False, False, True, True), 2),
        ("CUU", (False, True, True), 1),  # the U at index 1 is not after the second dimension
        ("UU", (False, True), 0),
        ("SUU", (False, True, False), 0),  # only trailing singletons go
        ("CBT", (False, False, True), 0),  # only U is dropped
    ],
)
def test_trailing_singleton_u_after_the_second_dimension(fmt, singleton, drop):
    assert _format.droppable_trailing_u(fmt, singleton) == drop


def test_reorder_plan_may_add_labels_but_not_lose_any():
    assert _format.reorder_plan("CBT", "BTC") == "c0 b0 t0 -> b0 t0 c0"
    assert _format.reorder_plan("CBT", "SCBT") == "c0 b0 t0 -> 1 c0 b0 t0"
    assert _format.reorder_plan("CBT", "CBT") is None
    with pytest.raises(DLFormatError, match=r'format "SC" does not hold every dimension of a "SSC" array'):
        _format.reorder_plan("SSC", "SC")


@pytest.mark.parametrize(
    ("left", "right", "out"),
    [
        ("CBT", "CT", "CBT"),
        ("CT", "CBT", "CBT"),
        ("SSC", "CB", "SSCB"),
        ("B", "T", "BT"),
        ("SSCB", "SSCB", "SSCB"),
    ],
)
def test_broadcast_plan_takes_the_union_of_labels(left, right, out):
    assert _format.broadcast_plan(left, right)[0] == out


def test_broadcast_plan_refuses_different_counts_of_a_repeated_label():
    with pytest.raises(DLFormatError, match=r'formats "SSCB" and "SCB": they have 2 and 1 "S" dimensions'):
        _format.broadcast_plan("SSCB", "SCB")
