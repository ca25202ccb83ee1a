"""MATLAB's categorical arrays (dlformat/_categorical.py) against the examples of MathWorks' pages.

Each expected value is what the page (or the MATLAB Answers thread) shows MATLAB computing; the
page is named beside it. The real MATLAB-written categoricals are read in
tests/io/test_mcos_categorical.py.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

MW = "https://www.mathworks.com/help/matlab/ref/"


def names(C):
    return list(dlf.categories(C))


# -- creation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "categories", "values"),
    [
        # categories page: the sorted unique values
        (
            lambda: dlf.categorical(["plane", "car", "train", "car", "plane"]),
            ["car", "plane", "train"],
            ["plane", "car", "train", "car", "plane"],
        ),
        # Create Categorical Arrays: leading and trailing spaces removed
        (
            lambda: dlf.categorical(["MA", "ME", " CT", "VT", " ME ", "NH", "VT", "MA", "NH", "CT", "RI "]),
            ["CT", "MA", "ME", "NH", "RI", "VT"],
            ["MA", "ME", "CT", "VT", "ME", "NH", "VT", "MA", "NH", "CT", "RI"],
        ),
        # the categorical page: valueset orders the categories, values outside it are undefined
        (
            lambda: dlf.categorical(["cold", "hot", "warm", "icy"], ["cold", "warm", "hot"]),
            ["cold", "warm", "hot"],
            ["cold", "hot", "warm", None],
        ),
        # isundefined page: numbers named by catnames, 4 of no category
        (
            lambda: dlf.categorical([4, 1, 2, 3], [1, 2, 3], ["red", "green", "blue"]),
            ["red", "green", "blue"],
            [None, "red", "green", "blue"],
        ),
        # missing values are undefined: "" (and None) for text, NaN for numbers (categorical page)
        (lambda: dlf.categorical(["cat", "", "dog", None]), ["cat", "dog"], ["cat", None, "dog", None]),
        (lambda: dlf.categorical([2.0, float("nan"), 1.0]), ["1", "2"], ["2", None, "1"]),
        # integer numbers are named by their digits and sorted by value (categorical([1 2 3]))
        (lambda: dlf.categorical(np.array([10, 9, 100])), ["9", "10", "100"], ["10", "9", "100"]),
        (lambda: dlf.categorical(torch.tensor([3, 1, 3])), ["1", "3"], ["3", "1", "3"]),
        # text sorts by character code: capitals first (mat-io's MATLAB-written cat_mixed_case)
        (
            lambda: dlf.categorical(["On", "off", "OFF", "ON", "on"]),
            ["OFF", "ON", "On", "off", "on"],
            ["On", "off", "OFF", "ON", "on"],
        ),
        # an explicit category for missing values: the missing value in valueset, named in catnames
        (
            lambda: dlf.categorical(["a", "", "b"], ["a", "b", ""], ["A", "B", "none"]),
            ["A", "B", "none"],
            ["A", "none", "B"],
        ),
        # logical values with names
        (
            lambda: dlf.categorical([True, False, True], [False, True], ["no", "yes"]),
            ["no", "yes"],
            ["yes", "no", "yes"],
        ),
    ],
)
def test_categorical_makes_matlab_categories_and_values(make, categories, values):
    C = make()
    assert names(C) == categories and C.tolist() == values
    assert not dlf.isordinal(C) and not dlf.isprotected(C)


def test_shapes_follow_the_input_and_a_1d_array_is_a_column():
    matrix = dlf.categorical([["medium", "large"], ["small", "xlarge"], ["large", "medium"]])
    assert matrix.shape == (3, 2) and dlf.size(matrix) == (3, 2)
    column = dlf.categorical(np.array([["a"], ["b"]], dtype=object))  # a cell column
    assert column.shape == (2, 1) and dlf.iscolumn(column)
    listed = dlf.categorical(["a", "b", "c"])
    assert listed.shape == (3,) and dlf.size(listed) == (3, 1) and dlf.iscolumn(listed)
    assert dlf.numel(listed) == 3 and dlf.length(listed) == 3 and dlf.ndims(listed) == 2
    scalar = dlf.categorical("x")
    assert scalar.shape == () and dlf.size(scalar) == (1, 1) and dlf.isscalar(scalar)
    empty = dlf.categorical(np.empty((0, 0), dtype=object))  # categorical({})
    assert dlf.size(empty) == (0, 0) and dlf.isempty(empty) and names(empty) == []
    assert dlf.isrow(listed.T) and listed.T.shape == (1, 3)


def test_ordinal_arrays_order_and_are_protected():
    # isprotected page: an ordinal array's categories are protected
    A = dlf.categorical(
        ["M", "L", "S", "S", "M"], ["S", "M", "L"], ["small", "medium", "large"], Ordinal=True
    )
    assert A.tolist() == ["medium", "large", "small", "small", "medium"]
    assert dlf.isordinal(A) and dlf.isprotected(A)
    # isordinal page's tips: categorical(A, Ordinal=true/false) converts, keeping the categories
    plain = dlf.categorical(A, Ordinal=False)
    assert not dlf.isordinal(plain) and names(plain) == ["small", "medium", "large"]
    assert dlf.isordinal(dlf.categorical(plain, "Ordinal", True))  # MATLAB's 'Ordinal', true pair
    protected = dlf.categorical(["a", "b"], Protected=True)
    assert dlf.isprotected(protected) and not dlf.isordinal(protected)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: dlf.categorical(["a"], Ordinal=True, Protected=False),
            "ordinal categorical arrays always have protected",
        ),
        (lambda: dlf.categorical(["a"], catnames=["x"]), r"give categorical\(A, valueset, catnames\)"),
        (lambda: dlf.categorical(["a"], ["a", "a"]), "valueset must hold unique values"),
        (
            lambda: dlf.categorical(["a"], ["a", "b"], ["x"]),
            "catnames must name each value of valueset: 2 values, 1 names",
        ),
        (
            lambda: dlf.categorical(["a"], ["a", "b"], ["x", ""]),
            "CATEGORYNAMES must be .*non-blank category names",
        ),
        (lambda: dlf.categorical(["a"], ["a", "b"], ["x", "x"]), r'the category names repeat \{"x"\}'),
        (lambda: dlf.categorical(["<undefined>"]), 'other than "<undefined>"'),
        (lambda: dlf.categorical([0.5, 1.5]), r"cannot tell MATLAB's category name for the value 0.5"),
        (lambda: dlf.categorical([True, False]), "logical values need their categories named"),
        (lambda: dlf.categorical([1, "a"]), "categorical takes text"),
        (lambda: dlf.categorical([1, 2], ["1", "2"]), "valueset must be of the input's kind"),
        (lambda: dlf.categorical(["a"], "Ordinal", 2), "Ordinal must be true or false"),
        (lambda: dlf.categorical(["a"], "Colour", True), "categorical has no option 'Colour'"),
    ],
)
def test_categorical_refuses_bad_input(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


# -- comparison --------------------------------------------------------------------------------------
def test_eq_and_ne_as_the_eq_and_ne_pages_show():
    A = dlf.categorical([["heads", "heads", "tails"], ["tails", "heads", "tails"]])
    assert (A == "heads").astype(int).tolist() == [[1, 1, 0], [0, 1, 0]]  # eq page
    assert (A[0] == A[1]).astype(int).tolist() == [0, 1, 1]
    assert (A != "heads").astype(int).tolist() == [[0, 0, 1], [1, 0, 1]]  # ne page
    assert (A[0] != A[1]).astype(int).tolist() == [1, 0, 0]
    assert dlf.eq(A, "tails").tolist() == (A == "tails").tolist() and dlf.ne(A, "x").all()


def test_undefined_elements_are_unequal_to_everything_and_unequal_under_ne():
    # eq page: false where A or B is undefined; ne page: true there
    A = dlf.categorical(["a", None, "b"])
    B = dlf.categorical(["a", None, "c"])
    assert (A == B).tolist() == [True, False, False]
    assert (A != B).tolist() == [False, True, True]
    assert (A == None).tolist() == [False, False, False]  # noqa: E711  # None is MATLAB's missing text


def test_comparing_orders_only_ordinal_arrays():
    # Compare Categorical Array Elements: red < green < blue
    colors = dlf.categorical(
        [["blue", "red", "green", "blue"], ["blue", "green", "green", "blue"]],
        ["red", "green", "blue"],
        Ordinal=True,
    )
    assert (colors[:, 0] > colors[:, 1]).tolist() == [True, True]
    assert (colors < "blue").astype(int).tolist() == [[0, 1, 1, 0], [0, 1, 1, 0]]
    assert (colors >= "green").astype(int).tolist() == [[1, 0, 1, 1], [1, 1, 1, 1]]
    assert dlf.lt(colors, "blue").tolist() == (colors < "blue").tolist()
    with pytest.raises(DLFormatError, match="< needs ordinal categorical arrays"):
        dlf.categorical(["a", "b"]) < "b"  # noqa: B015
    with pytest.raises(DLFormatError, match=r'\{"purple"\} is not a category .* protected'):
        colors > "purple"  # noqa: B015
    other = dlf.categorical(["red"], ["blue", "green", "red"], Ordinal=True)
    with pytest.raises(DLFormatError, match="same categories in the same order"):
        colors[0, :1] == other  # noqa: B015


def test_arrays_of_different_categories_compare_by_name():
    A = dlf.categorical(["x", "y", "z"])
    B = dlf.categorical(["y", "y", "z"], ["z", "y", "w"])
    assert (A == B).tolist() == [False, True, True]
    assert (A == ["x", "q", "z"]).tolist() == [True, False, True]  # text compares element by element
    assert (np.array(["x", "y", "q"], dtype=object) == A).tolist() == [True, True, False]  # NumPy defers
    with pytest.raises(DLFormatError, match="takes text"):
        A == 1  # noqa: B015


def test_a_1d_array_and_a_column_compare_element_by_element_not_as_a_matrix():
    # MATLAB's implicit expansion: an N×1 column and another N×1 column give N×1 (NumPy would give N×N)
    predicted = dlf.categorical(["a", "b", "a", "b"])  # classify's labels: 1-D
    loaded = dlf.categorical(np.array([["a"], ["b"], ["b"], ["b"]], dtype=object))  # loadmat's N×1
    same = predicted == loaded
    assert same.shape == (4, 1) and same.ravel().tolist() == [True, True, False, True]
    assert np.mean(predicted == loaded) == 0.75  # the real scripts' mean(YPred == YValidation)
    assert (predicted == predicted).shape == (4,)
    with pytest.raises(DLFormatError, match="incompatible sizes 4×1 and 3×1"):
        predicted == dlf.categorical(["a", "b", "c"])  # noqa: B015


def test_isequal_compares_names_and_sizes():
    A = dlf.categorical(["a", "b"])
    assert dlf.isequal(A, dlf.categorical(["a", "b"], ["b", "a"]))  # category order aside
    assert not dlf.isequal(A, dlf.categorical(["a", "c"]))
    assert not dlf.isequal(A, A.T)  # 2×1 and 1×2
    assert dlf.isequal(A, ["a", "b"])  # text of the same values
    U = dlf.categorical(["a", None])
    assert not dlf.isequal(U, U) and dlf.isequaln(U, U)  # undefined: MATLAB's missing value
    assert not dlf.isequal(A, torch.tensor([1.0, 2.0]))


# -- indexing and assignment ---------------------------------------------------------------------------
def test_indexing_is_numpys_and_keeps_every_category():
    C = dlf.categorical(["red", "blue", "green", None], ["red", "green", "blue", "pink"])
    assert C[0] == "red" and C[3] is None  # one element: its name, as NumPy and pandas give it
    part = C[1:3]
    assert isinstance(part, dlf.Categorical) and part.tolist() == ["blue", "green"]
    assert names(part) == ["red", "green", "blue", "pink"]
    assert C[C == "red"].tolist() == ["red"] and C[[2, 0]].tolist() == ["green", "red"]
    assert list(C) == ["red", "blue", "green", None] and len(C) == 4
    M = dlf.categorical([["a", "b"], ["c", "d"]])
    assert M[1].tolist() == ["c", "d"] and M[:, 0].tolist() == ["a", "c"] and M[1, 1] == "d"
    with pytest.raises(DLFormatError, match="has no truth value"):
        bool(C)


def test_assignment_adds_categories_unless_protected():
    # Create Categorical Arrays: assigning a new name adds a category
    C = dlf.categorical(["MA", "ME", "CT"])
    C[1] = "RI"
    assert C.tolist() == ["MA", "RI", "CT"] and names(C) == ["CT", "MA", "ME", "RI"]
    C[0:2] = dlf.categorical(["VT", "MA"])
    assert C.tolist() == ["VT", "MA", "CT"] and names(C)[-1] == "VT"
    C[2] = ""  # missing text: undefined
    assert dlf.isundefined(C).tolist() == [False, False, True]
    A = dlf.categorical(["small"], ["small", "large"], Ordinal=True)
    with pytest.raises(DLFormatError, match="categories are protected"):
        A[0] = "medium"
    A[0] = "large"
    assert A.tolist() == ["large"]
    copied = copy.deepcopy(A)
    copied[0] = "small"
    assert A.tolist() == ["large"]  # a copy is a value, as MATLAB's arrays are


# -- the functions on categorical arrays ----------------------------------------------------------------
def test_countcats_counts_along_the_first_non_singleton_dimension():
    # countcats page
    A = dlf.categorical(["red", "blue", "green", "blue", "red"], ["red", "green", "blue"]).T  # 1×5
    assert dlf.countcats(A).tolist() == [[2.0, 1.0, 2.0]]
    B = dlf.categorical([[1, 3], [2, 1], [3, 1]], [1, 2, 3], ["red", "green", "blue"])
    assert dlf.countcats(B).tolist() == [[1, 2], [1, 0], [1, 1]]
    assert dlf.countcats(B, 2).tolist() == [[1, 0, 1], [1, 1, 0], [1, 0, 1]]  # per row
    assert dlf.countcats(dlf.categorical(["a", "b", "a", None])).tolist() == [2.0, 1.0]  # 1-D: a column


def test_summary_prints_matlabs_layout(capsys):
    # countcats page: a row vector's summary across
    dlf.summary(dlf.categorical(["red", "blue", "green", "blue", "red"], ["red", "green", "blue"]).T)
    assert capsys.readouterr().out.splitlines() == [
        "1×5 categorical",
        "",
        "     red      green      blue      <undefined> ",
        "     2        1          2         0           ",
    ]
    # Combine Categorical Arrays: a column's summary down (6 milk, 5 water, 14 juice of 25)
    A = dlf.categorical([1] * 6 + [2] * 5 + [3] * 14, [1, 2, 3], ["milk", "water", "juice"])
    dlf.summary(A)
    assert capsys.readouterr().out.splitlines() == [
        "25×1 categorical",
        "",
        "     milk              6 ",
        "     water             5 ",
        "     juice            14 ",
        "     <undefined>       0 ",
    ]


def test_the_category_editing_functions_as_their_pages_show():
    # addcats page: at the end; an ordinal array's new category before "small"
    A = dlf.categorical(["red", "blue", "red", "blue", "red", "blue"])
    assert names(dlf.addcats(A, ["green", "black"])) == ["blue", "red", "green", "black"]
    sizes = dlf.categorical(["medium", "large"], ["small", "medium", "large", "xlarge"], Ordinal=True)
    added = dlf.addcats(sizes, "xsmall", Before="small")
    assert (
        names(added) == ["xsmall", "small", "medium", "large", "xlarge"] and added.tolist() == sizes.tolist()
    )
    assert names(dlf.addcats(sizes, "huge", After="xlarge"))[-1] == "huge"
    # removecats page: the unused categories black and green go
    R = dlf.categorical(["red", "blue", "blue", "blue", "red", "blue"], ["black", "blue", "red", "green"])
    assert names(dlf.removecats(R)) == ["blue", "red"] and dlf.removecats(R).tolist() == R.tolist()
    assert dlf.removecats(R, "red").tolist() == [None, "blue", "blue", "blue", None, "blue"]
    # mergecats page: red and pink become red; belt and shoes become "other" in belt's place
    P = dlf.categorical(["pink", "blue", "pink", "red", "blue", "red"])
    merged = dlf.mergecats(P, ["red", "pink"])
    assert merged.tolist() == ["red", "blue", "red", "red", "blue", "red"] and names(merged) == [
        "blue",
        "red",
    ]
    clothes = dlf.categorical(["shirt", "pants", "shoes", "shirt", "dress", "belt"])
    other = dlf.mergecats(clothes, ["belt", "shoes"], "other")
    assert other.tolist() == ["shirt", "pants", "other", "shirt", "dress", "other"]
    assert names(other) == ["other", "dress", "pants", "shirt"]
    # renamecats page: every category, in order
    states = dlf.categorical(["MA", "ME", "CT", "VT", "ME", "NH", "VT", "MA", "NH", "CT", "RI"])
    full = ["Connecticut", "Massachusetts", "Maine", "New Hampshire", "Rhode Island", "Vermont"]
    renamed = dlf.renamecats(states, full)
    assert names(renamed) == full and renamed.tolist()[:3] == ["Massachusetts", "Maine", "Connecticut"]
    assert names(dlf.renamecats(P, "pink", "rose")) == ["blue", "rose", "red"]
    # reordercats page: concatenation appends Y's categories; reordercats sorts them
    X = dlf.categorical(["Frog", "Cat", "Cat", "Ant", "Frog"]).T
    Y = dlf.categorical(["Deer", "Bear", "Eagle", "Deer"]).T
    joined = dlf.horzcat(X, Y)
    assert joined.shape == (1, 9) and names(joined) == ["Ant", "Cat", "Frog", "Bear", "Deer", "Eagle"]
    assert names(dlf.reordercats(joined)) == ["Ant", "Bear", "Cat", "Deer", "Eagle", "Frog"]
    assert dlf.reordercats(joined).tolist() == joined.tolist()
    assert names(dlf.reordercats(P, ["red", "pink", "blue"])) == ["red", "pink", "blue"]
    assert names(dlf.reordercats(P, [3, 1, 2])) == ["red", "blue", "pink"]
    # setcats page: blue elements become undefined; a new category has no elements
    colors = dlf.categorical(["blue", "black", "red", "red", "blue"])
    assert dlf.setcats(colors, ["red", "black"]).tolist() == [None, "black", "red", "red", None]
    assert names(dlf.setcats(colors, ["red", "pink", "blue"])) == ["red", "pink", "blue"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda C, Ord: dlf.addcats(C, "a"), r'\{"a"\} already a category'),
        (lambda C, Ord: dlf.addcats(Ord, "x"), "ordinal categorical array needs Before=... or After="),
        (lambda C, Ord: dlf.addcats(C, "x", Before="a", After="b"), "Before or After, not both"),
        (lambda C, Ord: dlf.addcats(C, "x", Before="zz"), r'\{"zz"\} not a category'),
        (lambda C, Ord: dlf.removecats(C, "zz"), r'\{"zz"\} not a category'),
        (lambda C, Ord: dlf.mergecats(Ord, ["lo", "hi"]), "must be consecutive"),
        (lambda C, Ord: dlf.mergecats(C, ["a", "b"], "c"), r'repeat \{"c"\}'),
        (lambda C, Ord: dlf.renamecats(C, ["x"]), "3 categories to rename, 1 new names"),
        (lambda C, Ord: dlf.reordercats(C, ["a", "b"]), "must list each category once"),
        (lambda C, Ord: dlf.reordercats(C, [1, 1, 2]), "must number each of the 3 categories once"),
        (lambda C, Ord: dlf.countcats(["a"]), "countcats needs a categorical array"),
        (lambda C, Ord: dlf.categories(C, OutputType="table"), "OutputType must be one of"),
    ],
)
def test_the_editing_functions_refuse_bad_input(call, message):
    C = dlf.categorical(["a", "b", "c"])
    ordinal = dlf.categorical(["lo", "mid", "hi"], ["lo", "mid", "hi"], Ordinal=True)
    with pytest.raises(DLFormatError, match=message):
        call(C, ordinal)


def test_categories_output_types_and_the_script_idiom():
    labels = dlf.categorical(["b", "a", "b"], ["b", "a", "c"])
    assert dlf.categories(labels) == ["b", "a", "c"]
    assert dlf.numel(dlf.categories(labels)) == 3  # bilstm_seq_classify.m: numel(categories(labelsTrain))
    assert dlf.size(dlf.categories(labels)) == (3, 1)  # MATLAB's 3×1 cell
    assert dlf.categories(labels, OutputType="string").tolist() == ["b", "a", "c"]
    as_categorical = dlf.categories(labels, "OutputType", "categorical")
    assert as_categorical.tolist() == ["b", "a", "c"] and names(as_categorical) == ["b", "a", "c"]


def test_queries_unique_ismember_and_conversions():
    C = dlf.categorical(["b", None, "a", "b", None], ["b", "a", "c"])
    assert dlf.iscategorical(C) and not dlf.iscategorical(["a"])
    assert dlf.iscategory(C, "c") is True and dlf.iscategory(C, ["a", "x"]).tolist() == [True, False]
    assert dlf.isundefined(C).tolist() == [False, True, False, False, True]
    # unique: category order, each undefined element kept apart (as each NaN)
    assert dlf.unique(C).tolist() == ["b", "a", None, None]
    assert dlf.unique(C.T).shape == (1, 4)
    assert dlf.ismember(C, ["a", "c"]).tolist() == [False, False, True, False, False]
    assert dlf.ismember(["a", "z"], C).tolist() == [True, False]
    assert dlf.ismember([1, 5], [5, 6]).tolist() == [False, True]
    assert dlf.string(C).tolist() == ["b", None, "a", "b", None]  # <missing>
    assert dlf.cellstr(C).tolist() == ["b", "<undefined>", "a", "b", "<undefined>"]
    # double: category numbers from 1, NaN for undefined
    numbers = dlf.double(C)
    assert numbers.dtype == torch.float64 and numbers[[0, 2, 3]].tolist() == [1.0, 2.0, 1.0]
    assert torch.isnan(numbers[[1, 4]]).all() and dlf.single(C).dtype == torch.float32
    # a MathWorks Support answer: double(categorical(["5","3","2","1","8","8","2","1"])) is 4 3 2 1 5 5 2 1
    digits = dlf.categorical(["5", "3", "2", "1", "8", "8", "2", "1"])
    assert dlf.double(digits).tolist() == [4.0, 3.0, 2.0, 1.0, 5.0, 5.0, 2.0, 1.0]
    assert not dlf.isnumeric(C) and not dlf.isfloat(C) and not dlf.islogical(C)
    assert dlf.unique(["b", "a", "b"]).tolist() == ["a", "b"]


def test_concatenation_joins_categories_as_matlab_does():
    A, B = dlf.categorical(["x", "y"]), dlf.categorical(["z", "x"])
    down = dlf.vertcat(A, B)
    assert down.shape == (4,) and down.tolist() == ["x", "y", "z", "x"] and names(down) == ["x", "y", "z"]
    across = dlf.cat(2, A, B)
    assert across.shape == (2, 2) and across.tolist() == [["x", "z"], ["y", "x"]]
    assert dlf.vertcat(A, "w").tolist() == ["x", "y", "w"]  # text joins as a categorical
    # Work with Protected Categorical Arrays: protected arrays need the same categories (any order)
    P = dlf.categorical(["a"], ["a", "b"], Protected=True)
    assert names(dlf.vertcat(P, dlf.categorical(["b"], ["b", "a"], Protected=True))) == ["a", "b"]
    with pytest.raises(DLFormatError, match="protected categories join only with the same categories"):
        dlf.vertcat(P, dlf.categorical(["c"], Protected=True))
    with pytest.raises(DLFormatError, match="protected"):
        dlf.vertcat(P, "c")
    ordinal = dlf.categorical(["lo"], ["lo", "hi"], Ordinal=True)
    assert dlf.isordinal(dlf.vertcat(ordinal, ordinal))
    with pytest.raises(DLFormatError, match="meets one that is not ordinal"):
        dlf.vertcat(A, ordinal)
    with pytest.raises(DLFormatError, match="same categories in the same order"):
        dlf.vertcat(ordinal, dlf.categorical(["lo"], ["hi", "lo"], Ordinal=True))
    with pytest.raises(DLFormatError, match="array 2 has size 3 in dimension 1"):
        dlf.cat(2, A, dlf.categorical(["a", "b", "c"]))


# -- display -------------------------------------------------------------------------------------------
def test_display_is_matlabs():
    # isundefined page
    A = dlf.categorical([[4, 1], [2, 3], [2, 1], [3, 4], [1, 1]], [1, 2, 3], ["red", "green", "blue"])
    assert repr(A).splitlines() == [
        "5×2 categorical",
        "     <undefined>      red         ",
        "     green            blue        ",
        "     green            red         ",
        "     blue             <undefined> ",
        "     red              red         ",
    ]
    # categories page
    assert repr(dlf.categorical(["plane", "car", "train", "car", "plane"]).T).splitlines() == [
        "1×5 categorical",
        "     plane      car      train      car      plane ",
    ]
    assert str(dlf.categorical("x")).splitlines() == ["categorical", "     x "]
    assert repr(dlf.categorical(np.empty((0, 0), dtype=object))) == "0×0 empty categorical array"
    pages = repr(dlf.categorical(np.array([[["a", "b"]]], dtype=object))).splitlines()
    assert pages[0] == "1×1×2 categorical" and "(:,:,2) =" in pages


# -- pandas ---------------------------------------------------------------------------------------------
def test_pandas_categoricals_convert_both_ways():
    pandas = pytest.importorskip("pandas")
    P = pandas.Categorical(["s", None, "l"], categories=["s", "m", "l"], ordered=True)
    C = dlf.categorical(P)
    assert C.tolist() == ["s", None, "l"] and names(C) == ["s", "m", "l"]
    assert dlf.isordinal(C) and dlf.isprotected(C)
    back = C.to_pandas()
    assert list(back.categories) == ["s", "m", "l"] and back.ordered and back.codes.tolist() == [0, -1, 2]
    numbers = dlf.Categorical.from_pandas(pandas.Categorical([3, 1]))
    assert names(numbers) == ["1", "3"] and numbers.tolist() == ["3", "1"]
