"""MATLAB's ``categorical`` arrays and the functions on them.

A :class:`Categorical` holds what MATLAB saves of one (its ``saveobj`` fields, as a real
MATLAB-written file shows them): the category names in order, a code per element (1-based, 0 for
``<undefined>``), and the ``isOrdinal`` and ``isProtected`` flags. It indexes and broadcasts as a
NumPy array does (0-based, any shape; a 1-D array is MATLAB's column, ``N×1``, as a 1-D tensor is
everywhere in dlformat) and compares, concatenates, counts and displays as MATLAB's categorical
arrays do. ``classify``, ``scores2label``, ``onehotdecode`` and the classification output layers'
``Classes`` give them, ``trainNetwork``/``trainnet`` take them as targets and ``loadmat`` reads
MATLAB's into them. pandas is never needed: :meth:`Categorical.to_pandas` and
:meth:`Categorical.from_pandas` convert when it is installed. Rules and their MathWorks sources:
docs/data.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import _validate
from ._errors import DLFormatError
from ._options import matlab_function

__all__ = [
    "Categorical",
    "addcats",
    "categorical",
    "categories",
    "cellstr",
    "countcats",
    "iscategorical",
    "iscategory",
    "ismember",
    "isordinal",
    "isprotected",
    "isundefined",
    "mergecats",
    "removecats",
    "renamecats",
    "reordercats",
    "setcats",
    "string",
    "summary",
    "unique",
]

UNDEFINED = "<undefined>"  # MATLAB's display of an element of no category
_GAP = " " * 6  # between the columns of MATLAB's categorical and summary displays
_INDENT = " " * 5


class Categorical:
    """MATLAB's categorical array: made by :func:`categorical`; see the module docstring.

    Attributes (read-only) for interplay with pandas-like code: ``shape``, ``ndim``,
    ``categories`` (the names, in order: MATLAB's ``categories(C)`` as a tuple) and ``codes``
    (pandas' convention: 0-based, -1 for ``<undefined>``; MATLAB's own 1-based numbers are
    ``dlf.double(C)``). ``C[i]`` indexes as NumPy does: one element is its name (``None`` where
    undefined), as NumPy and pandas give an element; a slice or mask is a categorical with every
    category; iterating a 1-D array gives the names. ``C[i] = "x"`` assigns a category (adding
    it, unless the categories are protected); ``==``, ``!=`` compare with another categorical or
    text, ``<``, ``<=``, ``>``, ``>=`` order ordinal arrays; each gives a NumPy ``bool`` array.
    ``tolist()`` and ``np.asarray(C)`` give the names (``None`` where undefined).

    Examples:
        >>> C = dlf.categorical(["plane", "car", "train", "car", "plane"])
        >>> C.categories, C.tolist()[:2], (C == "car").tolist()
        (('car', 'plane', 'train'), ['plane', 'car'], [False, True, False, True, False])
    """

    __slots__ = ("_codes", "_names", "_ordinal", "_protected")
    __hash__ = None  # type: ignore[assignment]  # mutable, and == is elementwise
    __array_ufunc__ = None  # NumPy arrays defer to these operators (ndarray == C calls C.__eq__)

    def __init__(
        self, codes: Any, names: Sequence[str], *, ordinal: bool = False, protected: bool = False
    ) -> None:
        """A categorical of MATLAB's 1-based ``codes`` (0: undefined) over the category ``names``;
        :func:`categorical` is MATLAB's constructor."""
        names = tuple(names)
        array = np.array(codes, dtype=np.int64)
        if array.size and (array.min() < 0 or array.max() > len(names)):
            raise DLFormatError(
                f"categorical codes must be 0 (undefined) to {len(names)} (the number of categories)"
            )
        _check_names("categorical", names)
        if ordinal and not protected:
            raise DLFormatError("categorical: an ordinal categorical array always has protected categories")
        self._codes, self._names = array, names
        self._ordinal, self._protected = bool(ordinal), bool(protected)

    # -- what it holds ------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._codes.shape)

    @property
    def ndim(self) -> int:
        return int(self._codes.ndim)

    @property
    def categories(self) -> tuple[str, ...]:
        return self._names

    @property
    def codes(self) -> np.ndarray:
        return self._codes - 1

    def _like(self, codes: np.ndarray, names: Sequence[str] | None = None) -> Categorical:
        """A categorical of ``codes`` with this one's categories (or ``names``) and flags."""
        return Categorical(
            codes, self._names if names is None else names, ordinal=self._ordinal, protected=self._protected
        )

    def tolist(self) -> Any:
        """The names, nested as NumPy's ``tolist`` nests them; ``None`` where undefined."""
        return self.__array__().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        names = np.array([None, *self._names], dtype=object)
        return names[self._codes] if dtype is None else names[self._codes].astype(dtype)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d categorical (one element; MATLAB's 1×1)")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            yield self[index]

    def __bool__(self) -> bool:
        raise DLFormatError(
            'a categorical array has no truth value; compare it (C == "name") and use the logical '
            "array, with .all() or .any() where one answer is meant"
        )

    # -- indexing -----------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        codes = self._codes[_index(key)]
        if not isinstance(codes, np.ndarray):  # one element, as NumPy (and pandas) give it: its name
            return self._names[codes - 1] if codes else None
        return self._like(codes)

    def __setitem__(self, key: Any, value: Any) -> None:
        """MATLAB's ``C(i) = value``: a name (or names, or a categorical) new to a categorical
        whose categories are not protected adds a category; ``""``/``None`` make elements undefined."""
        codes, names = self._assigned_codes(value)
        self._codes[_index(key)] = codes
        self._names = names

    def _assigned_codes(self, value: Any) -> tuple[np.ndarray, tuple[str, ...]]:
        if isinstance(value, Categorical):
            if self._ordinal or value._ordinal:
                _same_order("assignment", self, value)
            labels = np.asarray(value.__array__(), dtype=object)
        else:
            labels = _text_array("assignment to a categorical", value, missing_ok=True)
        names = list(self._names)
        position = {name: number for number, name in enumerate(names, start=1)}
        new = [label for label in dict.fromkeys(labels.ravel().tolist()) if label and label not in position]
        if new and self._protected:
            raise DLFormatError(
                f"cannot assign {_quoted(new)} to a categorical whose categories are protected "
                f"({_quoted(names)}); add them first with addcats"
            )
        for name in new:
            names.append(name)
            position[name] = len(names)
        codes = np.array([position.get(label, 0) if label else 0 for label in labels.ravel()], dtype=np.int64)
        return codes.reshape(labels.shape), tuple(names)

    # -- shape ----------------------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Categorical:
        """NumPy's ``reshape`` (row-major; MATLAB's ``reshape`` is column-major: ``order="F"``
        is not offered here, to keep one meaning)."""
        return self._like(self._codes.reshape(*shape))

    def ravel(self) -> Categorical:
        """The elements as a 1-D categorical (row-major, as NumPy's ``ravel``)."""
        return self._like(self._codes.ravel())

    @property
    def T(self) -> Categorical:
        """The transpose (MATLAB's ``C.'``); a 1-D array (MATLAB's column) becomes a ``1×N`` row."""
        codes = self._codes.reshape(-1, 1) if self.ndim == 1 else self._codes
        return self._like(codes.T)

    def copy(self) -> Categorical:
        return self._like(self._codes.copy())

    def __copy__(self) -> Categorical:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> Categorical:
        return self.copy()

    # -- comparisons --------------------------------------------------------------------------
    def __eq__(self, other: object) -> Any:
        mine, theirs = self._comparable("==", other, ordering=False)
        return _expanded(mine, theirs, lambda a, b: (a == b) & (a > 0))

    def __ne__(self, other: object) -> Any:
        mine, theirs = self._comparable("~=", other, ordering=False)
        return _expanded(mine, theirs, lambda a, b: (a != b) | (a <= 0) | (b <= 0))

    def __lt__(self, other: object) -> Any:
        return self._ordered("<", other, lambda a, b: a < b)

    def __le__(self, other: object) -> Any:
        return self._ordered("<=", other, lambda a, b: a <= b)

    def __gt__(self, other: object) -> Any:
        return self._ordered(">", other, lambda a, b: a > b)

    def __ge__(self, other: object) -> Any:
        return self._ordered(">=", other, lambda a, b: a >= b)

    def _ordered(self, op: str, other: object, compare: Any) -> Any:
        mine, theirs = self._comparable(op, other, ordering=True)
        return _expanded(mine, theirs, lambda a, b: compare(a, b) & (a > 0) & (b > 0))

    def _comparable(self, op: str, other: object, ordering: bool) -> tuple[np.ndarray, np.ndarray]:
        """This array's codes and ``other``'s on the same categories: a name of no category gets
        -1 (equal to nothing), an undefined element 0 (MATLAB's eq/ne pages: false for ``==``,
        true for ``~=``)."""
        if ordering and not self._ordinal:
            raise DLFormatError(
                f"{op} needs ordinal categorical arrays (categorical(..., Ordinal=true)); this one is not "
                "ordinal, so only == and ~= compare it"
            )
        if isinstance(other, Categorical):
            if self._ordinal or other._ordinal:
                _same_order(f"comparison with {op}", self, other)
            elif (self._protected or other._protected) and set(self._names) != set(other._names):
                raise DLFormatError(
                    f"comparison with {op}: categorical arrays with protected categories must have the same "
                    f"categories; got {_quoted(self._names)} and {_quoted(other._names)}"
                )
            labels = np.asarray(other.__array__(), dtype=object)
        else:
            labels = _text_array(f"comparison of a categorical with {op}", other, missing_ok=True)
        position = {name: number for number, name in enumerate(self._names, start=1)}
        unknown = sorted({label for label in labels.ravel().tolist() if label and label not in position})
        if unknown and (ordering or self._protected):
            raise DLFormatError(
                f"comparison with {op}: {_quoted(unknown)} {'is' if len(unknown) == 1 else 'are'} not a "
                f"category of this categorical array ({_quoted(self._names)}), whose categories are protected"
            )
        codes = np.array(
            [position.get(label, -1) if label else 0 for label in labels.ravel().tolist()], dtype=np.int64
        )
        return self._codes, codes.reshape(labels.shape)

    # -- display ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return "\n".join(_display(self))

    __str__ = __repr__

    # -- pandas -------------------------------------------------------------------------------
    def to_pandas(self) -> Any:
        """A ``pandas.Categorical`` of the same categories, codes and ordering (pandas has no
        protected flag; an ordinal array's ``ordered`` is true). Needs pandas."""
        try:
            pandas = importlib.import_module("pandas")  # optional: never a dependency of dlformat
        except ImportError:
            raise DLFormatError(
                "to_pandas needs the pandas package, which dlformat does not depend on; install it "
                "(pip install pandas) to convert categorical arrays"
            ) from None
        return pandas.Categorical.from_codes(self.codes, categories=list(self._names), ordered=self._ordinal)

    @classmethod
    def from_pandas(cls, value: Any) -> Categorical:
        """A categorical of a ``pandas.Categorical`` (or anything with its ``categories``,
        ``codes`` -1 for missing, and ``ordered``): its categories in order; an ordered one is
        ordinal (and so protected, as MATLAB's ordinal arrays always are). Category values that
        are not text are named as :func:`categorical` names numbers."""
        names = [_category_name(item) for item in list(value.categories)]
        codes = np.asarray(value.codes, dtype=np.int64) + 1
        ordered = bool(getattr(value, "ordered", False))
        return cls(codes, names, ordinal=ordered, protected=ordered)


# -- helpers --------------------------------------------------------------------------------------
def _index(key: Any) -> Any:
    """A NumPy index; a categorical or other non-index is refused by NumPy itself."""
    if isinstance(key, Categorical):
        raise DLFormatError('a categorical array cannot index another; compare it first (C == "name")')
    return key


def _quoted(names: Sequence[str]) -> str:
    shown = ", ".join(f'"{name}"' for name in list(names)[:8])
    return "{" + shown + (", ..." if len(names) > 8 else "") + "}"


def _check_names(caller: str, names: Sequence[str]) -> None:
    """Category names: non-blank text, unique, and not MATLAB's ``<undefined>``."""
    bad = [name for name in names if not isinstance(name, str) or not name.strip() or name == UNDEFINED]
    if bad:
        raise DLFormatError(
            f'{caller}: category names must be non-blank text other than "{UNDEFINED}" (MATLAB: '
            f'"CATEGORYNAMES must be ... non-blank category names"); got {bad[0]!r}'
        )
    if len(set(names)) != len(names):
        repeated = sorted({name for index, name in enumerate(names) if name in names[:index]})
        raise DLFormatError(f"{caller}: the category names repeat {_quoted(repeated)}; each must be unique")


def _same_order(what: str, A: Categorical, B: Categorical) -> None:
    """MATLAB's rule for ordinal arrays meeting: both ordinal, the same categories in the same order."""
    if not (A._ordinal and B._ordinal):
        raise DLFormatError(
            f"{what}: an ordinal categorical array meets one that is not ordinal; make both ordinal (or "
            "neither) with categorical(C, Ordinal=...)"
        )
    if A._names != B._names:
        raise DLFormatError(
            f"{what}: ordinal categorical arrays must have the same categories in the same order; got "
            f"{_quoted(A._names)} and {_quoted(B._names)}"
        )


def _matlab_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """MATLAB's size: at least two entries; a 1-D array is a column (``N×1``), 0-d ``1×1``."""
    return tuple(shape) + (1,) * (2 - len(shape))


def _expanded(A: np.ndarray, B: np.ndarray, op: Any) -> np.ndarray:
    """``op(A, B)`` with MATLAB's implicit expansion: sizes are compared from the first dimension
    on, a 1-D array counting as a column. NumPy's broadcasting would align a 1-D ``N`` with an
    ``N×1`` column into an ``N×N`` matrix; MATLAB compares them element by element."""
    if A.ndim <= 1 and B.ndim <= 1 and (A.size == 1 or B.size == 1 or A.shape == B.shape):
        return np.asarray(op(A, B))
    ndim = max(len(_matlab_shape(A.shape)), len(_matlab_shape(B.shape)))
    a_shape = _matlab_shape(A.shape) + (1,) * (ndim - len(_matlab_shape(A.shape)))
    b_shape = _matlab_shape(B.shape) + (1,) * (ndim - len(_matlab_shape(B.shape)))
    if any(x != y and 1 not in (x, y) for x, y in zip(a_shape, b_shape, strict=True)):
        raise DLFormatError(
            f"the arrays compared have incompatible sizes {_validate.matlab_size(_matlab_shape(A.shape))} "
            f"and {_validate.matlab_size(_matlab_shape(B.shape))}"
        )
    result = np.asarray(op(A.reshape(a_shape), B.reshape(b_shape)))
    if A.ndim <= 1 and B.ndim <= 1:  # two columns: one 1-D column back
        return result.reshape(-1)
    return result


def _text_array(caller: str, value: Any, *, missing_ok: bool) -> np.ndarray:
    """Text as an object array of ``str`` (stripped of leading and trailing spaces, as MATLAB's
    categorical strips them) with ``None`` for a missing value (``None``, ``""``)."""
    array: np.ndarray | None
    if isinstance(value, (str, np.str_)) or value is None:
        array = np.empty((), dtype=object)
        array[()] = value
    elif hasattr(value, "detach"):  # a tensor holds no text
        array = None
    else:
        try:
            array = np.asarray(value, dtype=object)
        except (TypeError, ValueError):
            array = None
    if array is None or not all(isinstance(item, (str, np.str_)) or item is None for item in array.ravel()):
        raise DLFormatError(
            f"{caller} takes text (a string or a list of strings) or a categorical; got "
            f"{_validate.describe(value)}"
        )
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        text = None if item is None else str(item).strip()
        out[index] = text or None
    if not missing_ok and any(item is None for item in out.ravel()):
        raise DLFormatError(f"{caller}: the names must be non-blank text")
    return out


def _names_argument(caller: str, what: str, value: Any) -> list[str]:
    """A list of names given as a string, a list of strings or a categorical (its elements)."""
    if isinstance(value, Categorical):
        labels: list[str] = value.__array__().ravel().tolist()
        if any(label is None for label in labels):
            raise DLFormatError(f"{caller}: {what} holds undefined elements; give names")
        return labels
    texts: list[str] = _text_array(f"{caller}: {what}", value, missing_ok=True).ravel().tolist()
    if any(text is None for text in texts):
        raise DLFormatError(f"{caller}: {what} must be non-blank names; got {_validate.describe(value)}")
    return texts


def _require(caller: str, value: Any) -> Categorical:
    return _validate.first_argument(caller, value, Categorical, "a categorical array")


def _positions(caller: str, A: Categorical, names: list[str]) -> list[int]:
    """The 1-based category numbers of ``names``, which must be categories of ``A``."""
    position = {name: number for number, name in enumerate(A._names, start=1)}
    missing = [name for name in names if name not in position]
    if missing:
        raise DLFormatError(f"{caller}: {_quoted(missing)} not a category of the array ({_quoted(A._names)})")
    return [position[name] for name in names]


def _recoded(A: Categorical, mapping: np.ndarray, names: Sequence[str]) -> Categorical:
    """``A`` with each code ``k`` replaced by ``mapping[k]`` (``mapping[0]`` is 0) over ``names``."""
    return Categorical(mapping[A._codes], names, ordinal=A._ordinal, protected=A._protected)


# -- numbers as category names ------------------------------------------------------------------
def _category_name(value: Any) -> str:
    """A category name for a value: text as it is, an integer-valued number in decimal digits (as
    MATLAB's ``categorical([1 2 3])`` names them ``'1' '2' '3'``). Other numbers are refused: how
    MATLAB writes them (and merges values that write alike) is not settled by its documentation."""
    if isinstance(value, (str, np.str_)):
        return str(value)
    number = float(value)
    if np.isfinite(number) and number == int(number):
        return str(int(number))
    raise DLFormatError(
        f"categorical: dlformat cannot tell MATLAB's category name for the value {number!r} (MATLAB names "
        "non-integer numbers with a limited number of digits and refuses values that name alike); give "
        "the names: categorical(A, valueset, catnames)"
    )


# -- categorical(...) -----------------------------------------------------------------------------
def _input_values(A: Any) -> tuple[str, np.ndarray]:
    """``("text" | "numeric" | "logical", values)``: the input array's kind and its elements
    (text stripped, ``None`` missing; numbers as float64, NaN missing)."""
    if hasattr(A, "detach") and hasattr(A, "cpu"):  # a torch tensor
        A = A.detach().cpu().numpy()
    if isinstance(A, (str, np.str_)) or A is None:
        return "text", _text_array("categorical", A, missing_ok=True)
    if isinstance(A, (bool, np.bool_)):
        return "logical", np.asarray(A, dtype=bool)
    if isinstance(A, np.ndarray) and A.dtype.kind in "biuf":
        return ("logical" if A.dtype.kind == "b" else "numeric"), np.asarray(
            A, dtype=np.float64 if A.dtype.kind != "b" else bool
        )
    try:
        array = np.asarray(A, dtype=object)
    except (TypeError, ValueError):
        array = None
    items = [] if array is None else array.ravel().tolist()
    if array is not None and all(isinstance(item, (str, np.str_)) or item is None for item in items):
        return "text", _text_array("categorical", array, missing_ok=True)
    if array is not None and items and all(isinstance(item, (bool, np.bool_)) for item in items):
        return "logical", array.astype(bool)
    if array is not None and all(
        isinstance(item, (int, float, np.integer, np.floating)) and not isinstance(item, (bool, np.bool_))
        for item in items
    ):
        return "numeric", array.astype(np.float64)
    raise DLFormatError(
        'categorical takes text (a string, a list or array of strings; "" or None missing), numbers, '
        f"logical values, a categorical or a pandas.Categorical; got {_validate.describe(A)}"
    )


def _missing(kind: str, values: np.ndarray) -> np.ndarray:
    if kind == "text":
        return (
            np.vectorize(lambda item: item is None, otypes=[bool])(values)
            if values.size
            else np.zeros(values.shape, bool)
        )
    if kind == "numeric":
        missing: np.ndarray = np.isnan(values)
        return missing
    return np.zeros(values.shape, dtype=bool)


@matlab_function
def categorical(
    A: Any, valueset: Any = None, catnames: Any = None, *, Ordinal: Any = None, Protected: Any = None
) -> Categorical:
    """MATLAB's ``B = categorical(A)``, ``categorical(A, valueset)``, ``categorical(A, valueset,
    catnames)`` with ``Ordinal=...`` and ``Protected=...`` (or ``'Ordinal', true`` pairs).

    ``A``: text (a string, a list or NumPy array of strings; leading and trailing spaces removed,
    ``""``/``None`` missing), numbers (NaN missing), logical values (with ``valueset`` and
    ``catnames``), a categorical or a ``pandas.Categorical``. The categories are the sorted unique
    values (text in character-code order, numbers by value, named by their digits), or
    ``valueset``'s values in its order, named by ``catnames``; a value of no category, and a
    missing one, is ``<undefined>``. ``Ordinal`` gives the categories a mathematical order
    (``<``, ``>``; the categories are then protected); ``Protected`` refuses new categories on
    assignment. The result has ``A``'s shape (a list of names is 1-D: MATLAB's column).

    Examples:
        >>> A = dlf.categorical([4, 1, 2], [1, 2, 3], ["red", "green", "blue"])
        >>> A.tolist(), dlf.categories(A)
        ([None, 'red', 'green'], ['red', 'green', 'blue'])
        >>> names = ["small", "medium", "large"]
        >>> sizes = dlf.categorical(["M", "L", "S"], ["S", "M", "L"], names, Ordinal=True)
        >>> (sizes > "small").tolist()
        [True, True, False]
    """
    if Ordinal is not None:
        Ordinal = _validate.flag("categorical: Ordinal", Ordinal)
    if Protected is not None:
        Protected = _validate.flag("categorical: Protected", Protected)
    if catnames is not None and valueset is None:
        raise DLFormatError(
            "categorical: catnames names the values of valueset; give categorical(A, valueset, catnames)"
        )
    if hasattr(A, "categories") and hasattr(A, "codes") and not isinstance(A, Categorical):
        A = Categorical.from_pandas(A)
    if isinstance(A, Categorical):
        result = _from_categorical(A, valueset, catnames)
        ordinal = A._ordinal if Ordinal is None else Ordinal
        protected = (A._protected if Ordinal is None else Ordinal) if Protected is None else Protected
    else:
        result = _from_values(A, valueset, catnames)
        ordinal = bool(Ordinal)
        protected = ordinal if Protected is None else Protected
    if ordinal and not protected:
        raise DLFormatError(
            "categorical: Protected=false is not allowed with Ordinal=true: ordinal categorical arrays "
            'always have protected categories (MathWorks\' "Work with Protected Categorical Arrays")'
        )
    return Categorical(result._codes, result._names, ordinal=ordinal, protected=protected)


def _from_categorical(A: Categorical, valueset: Any, catnames: Any) -> Categorical:
    if valueset is None:
        return A.copy()
    values = _valueset("text", valueset)
    names = _catnames(catnames, values)
    position = {value: number for number, value in enumerate(values, start=1)}
    undefined_to = position.get(None, 0)  # an explicit category for undefined elements
    mapping = np.array([undefined_to, *(position.get(name, 0) for name in A._names)], dtype=np.int64)
    return Categorical(mapping[A._codes], names)


def _from_values(A: Any, valueset: Any, catnames: Any) -> Categorical:
    kind, values = _input_values(A)
    missing = _missing(kind, values)
    if valueset is None:
        if kind == "logical":
            raise DLFormatError(
                "categorical: logical values need their categories named: categorical(A, [false, true], "
                '["no", "yes"]); dlformat does not guess the names'
            )
        present = values[~missing].ravel().tolist()
        keys = sorted(set(present))
        names = [_category_name(key) for key in keys]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:  # MATLAB's message for values that name alike
            raise DLFormatError(
                "categorical: Unable to create default category names. Specify category names using the "
                f"CATEGORYNAMES input argument (values name alike: {_quoted(repeated)})"
            )
        position: dict[Any, int] = {key: number for number, key in enumerate(keys, start=1)}
        missing_to = 0
    else:
        keys = _valueset(kind, valueset)
        names = _catnames(catnames, keys)
        position = {key: number for number, key in enumerate(keys, start=1) if not _is_missing_key(key)}
        missing_to = next((number for number, key in enumerate(keys, start=1) if _is_missing_key(key)), 0)
    codes = np.zeros(values.shape, dtype=np.int64)
    for index, value in np.ndenumerate(values):
        codes[index] = missing_to if missing[index] else position.get(_key(kind, value), 0)
    return Categorical(codes, names)


def _is_missing_key(key: Any) -> bool:
    return key is None or (isinstance(key, float) and np.isnan(key))


def _key(kind: str, value: Any) -> Any:
    return bool(value) if kind == "logical" else float(value) if kind == "numeric" else value


def _valueset(kind: str, valueset: Any) -> list[Any]:
    """``valueset``'s values (of ``A``'s kind; text stripped), which must be unique."""
    if kind == "text":
        if isinstance(valueset, Categorical):
            values: list[Any] = valueset.__array__().ravel().tolist()
        else:
            values = _text_array("categorical: valueset", valueset, missing_ok=True).ravel().tolist()
    else:
        given_kind, array = _input_values(valueset)
        if given_kind != kind and not (given_kind == "numeric" and kind == "logical"):
            raise DLFormatError(
                f"categorical: valueset must be of the input's kind ({kind} values, as MATLAB requires); got "
                f"{_validate.describe(valueset)}"
            )
        values = [_key(kind, value) for value in array.ravel().tolist()]
    keys = ["<missing>" if _is_missing_key(value) else value for value in values]
    if len(set(keys)) != len(keys):
        raise DLFormatError(f"categorical: valueset must hold unique values; got {values}")
    return [None if _is_missing_key(value) else value for value in values]


def _catnames(catnames: Any, values: list[Any]) -> list[str]:
    if catnames is None:
        if any(value is None for value in values):
            raise DLFormatError(
                "categorical: a missing value in valueset needs its category named in catnames "
                "(MathWorks' categorical page)"
            )
        return [_category_name(value) for value in values]
    names: list[str] = _text_array("categorical: catnames", catnames, missing_ok=True).ravel().tolist()
    if any(name is None for name in names):
        raise DLFormatError(
            "categorical: CATEGORYNAMES must be a string array or cell array of character vectors containing "
            "non-blank category names (MATLAB's message)"
        )
    if len(names) != len(values):
        raise DLFormatError(
            f"categorical: catnames must name each value of valueset: {len(values)} values, "
            f"{len(names)} names"
        )
    return names


# -- queries ---------------------------------------------------------------------------------------
def iscategorical(A: Any) -> bool:
    """MATLAB's ``iscategorical(A)``: whether ``A`` is a categorical array."""
    return isinstance(A, Categorical)


def isordinal(A: Any) -> bool:
    """MATLAB's ``isordinal(A)``: whether ``A`` is an ordinal categorical array (false for anything
    else, as MATLAB answers for any input)."""
    return isinstance(A, Categorical) and A._ordinal


def isprotected(A: Categorical) -> bool:
    """MATLAB's ``isprotected(A)``: whether the categories of ``A`` are protected."""
    return _require("isprotected", A)._protected


def iscategory(A: Categorical, catnames: Any) -> Any:
    """MATLAB's ``iscategory(A, catnames)``: whether each name is a category of ``A`` (one
    ``bool`` for a string, else a NumPy ``bool`` array of the names' shape)."""
    A = _require("iscategory", A)
    names = _text_array("iscategory: catnames", catnames, missing_ok=True)
    found = (
        np.vectorize(lambda name: name in A._names, otypes=[bool])(names)
        if names.size
        else np.zeros(names.shape, bool)
    )
    return bool(found) if names.ndim == 0 else found


def isundefined(A: Categorical) -> np.ndarray:
    """MATLAB's ``TF = isundefined(A)``: true where an element has no category; ``A``'s shape."""
    return np.asarray(_require("isundefined", A)._codes == 0)


@matlab_function
def categories(A: Categorical, *, OutputType: str = "cell") -> Any:
    """MATLAB's ``C = categories(A)``: every category of ``A`` (used or not) in order, as a list
    (MATLAB's cell array); ``OutputType="string"`` gives a NumPy array of strings,
    ``"categorical"`` a categorical of them (with ``A``'s categories). Since R2024a."""
    A = _require("categories", A)
    kind = _validate.choice("categories: OutputType", OutputType, ("cell", "string", "categorical"))
    if kind == "cell":
        return list(A._names)
    if kind == "string":
        return np.array(A._names, dtype=object)
    return A._like(np.arange(1, len(A._names) + 1, dtype=np.int64))


def countcats(A: Categorical, dim: Any = None) -> np.ndarray:
    """MATLAB's ``B = countcats(A)`` and ``countcats(A, dim)``: the number of elements of each
    category, in category order, along the first dimension of size other than 1 (or ``dim``,
    from 1); that dimension of the result holds one count per category. A 1-D ``A`` gives a 1-D
    count. Counts are MATLAB's doubles (float64)."""
    A = _require("countcats", A)
    shape = _matlab_shape(A.shape)
    if dim is None:
        axis = next((number for number, size in enumerate(shape) if size != 1), 0)
    else:
        axis = _validate.dimension_number("countcats: dim", dim) - 1
    codes = A._codes.reshape(shape + (1,) * (axis + 1 - len(shape)))
    counts = (
        np.stack([(codes == number).sum(axis=axis) for number in range(1, len(A._names) + 1)], axis=axis)
        if A._names
        else np.zeros((*codes.shape[:axis], 0, *codes.shape[axis + 1 :]))
    )
    if A.ndim <= 1 and axis == 0:
        return counts.reshape(-1).astype(np.float64)
    return counts.astype(np.float64)


# -- changing the categories -------------------------------------------------------------------------
@matlab_function
def addcats(A: Categorical, newcats: Any, *, Before: Any = None, After: Any = None) -> Categorical:
    """MATLAB's ``B = addcats(A, newcats)``: new categories at the end (or ``Before=`` /
    ``After=`` a category, which an ordinal ``A`` requires); no element changes."""
    A = _require("addcats", A)
    new = _names_argument("addcats", "newcats", newcats)
    existing = [name for name in new if name in A._names]
    if existing:
        raise DLFormatError(f"addcats: {_quoted(existing)} already a category of the array")
    _check_names("addcats", new)
    if Before is not None and After is not None:
        raise DLFormatError("addcats takes Before or After, not both")
    if A._ordinal and Before is None and After is None:
        raise DLFormatError(
            "addcats: an ordinal categorical array needs Before=... or After=... (where the new categories "
            "go in its order)"
        )
    names = list(A._names)
    at = len(names)
    if Before is not None or After is not None:
        where = _validate.text("addcats: Before/After", Before if Before is not None else After)
        (number,) = _positions("addcats", A, [where])
        at = number - 1 if Before is not None else number
    names[at:at] = new
    mapping = np.array(
        [0, *(number + len(new) if number > at else number for number in range(1, len(A._names) + 1))]
    )
    return _recoded(A, mapping, names)


def removecats(A: Categorical, oldcats: Any = None) -> Categorical:
    """MATLAB's ``B = removecats(A)``: the categories no element uses removed;
    ``removecats(A, oldcats)``: those categories removed, their elements undefined."""
    A = _require("removecats", A)
    if oldcats is None:
        used = set(np.unique(A._codes).tolist())
        removed = [number for number in range(1, len(A._names) + 1) if number not in used]
    else:
        removed = _positions("removecats", A, _names_argument("removecats", "oldcats", oldcats))
    kept = [number for number in range(1, len(A._names) + 1) if number not in set(removed)]
    mapping = np.zeros(len(A._names) + 1, dtype=np.int64)
    mapping[kept] = np.arange(1, len(kept) + 1)
    return _recoded(A, mapping, [A._names[number - 1] for number in kept])


def mergecats(A: Categorical, oldcats: Any, newcat: Any = None) -> Categorical:
    """MATLAB's ``B = mergecats(A, oldcats)``: the categories ``oldcats`` become one, named
    ``oldcats[0]`` (or ``newcat``), in the place of the first of them in category order
    (MathWorks' page: "other" takes the place of "belt"). An ordinal ``A`` must merge consecutive
    categories (dlformat's rule, as MATLAB's ordinal predecessor ``mergelevels`` documents it)."""
    A = _require("mergecats", A)
    old = _names_argument("mergecats", "oldcats", oldcats)
    numbers = _positions("mergecats", A, old)
    name = old[0] if newcat is None else _validate.text("mergecats: newcat", newcat)
    if A._ordinal and sorted(numbers) != list(range(min(numbers), max(numbers) + 1)):
        raise DLFormatError(
            f"mergecats: the categories merged in an ordinal array must be consecutive; {_quoted(old)} are "
            f"not in {_quoted(A._names)}"
        )
    merged = set(numbers)
    first = min(numbers)
    kept = [number for number in range(1, len(A._names) + 1) if number not in merged or number == first]
    names = [name if number == first else A._names[number - 1] for number in kept]
    _check_names("mergecats", names)
    mapping = np.zeros(len(A._names) + 1, dtype=np.int64)
    for new, number in enumerate(kept, start=1):
        mapping[number] = new
    mapping[list(merged)] = kept.index(first) + 1
    return _recoded(A, mapping, names)


def renamecats(A: Categorical, oldnames: Any, newnames: Any = None) -> Categorical:
    """MATLAB's ``B = renamecats(A, newnames)`` (every category, in order) and
    ``renamecats(A, oldnames, newnames)``; elements keep their categories."""
    A = _require("renamecats", A)
    if newnames is None:
        old, new = list(A._names), _names_argument("renamecats", "newnames", oldnames)
    else:
        old = _names_argument("renamecats", "oldnames", oldnames)
        new = _names_argument("renamecats", "newnames", newnames)
    if len(old) != len(new):
        raise DLFormatError(f"renamecats: {len(old)} categories to rename, {len(new)} new names")
    numbers = _positions("renamecats", A, old)
    names = list(A._names)
    for number, name in zip(numbers, new, strict=True):
        names[number - 1] = name
    _check_names("renamecats", names)
    return A._like(A._codes, names)


def reordercats(A: Categorical, neworder: Any = None) -> Categorical:
    """MATLAB's ``B = reordercats(A)`` (alphanumeric order) and ``reordercats(A, neworder)``: the
    same elements with the categories in ``neworder`` (all of them: names, or their 1-based
    numbers); for an ordinal ``A`` the new order is its mathematical order."""
    A = _require("reordercats", A)
    if neworder is None:
        order = sorted(A._names)
    elif (
        isinstance(neworder, (list, tuple, np.ndarray))
        and len(neworder)
        and all(isinstance(item, (int, np.integer)) and not isinstance(item, bool) for item in neworder)
    ):
        numbers = [int(item) for item in neworder]
        if sorted(numbers) != list(range(1, len(A._names) + 1)):
            raise DLFormatError(
                f"reordercats: neworder must number each of the {len(A._names)} categories once; got "
                f"{numbers}"
            )
        order = [A._names[number - 1] for number in numbers]
    else:
        order = _names_argument("reordercats", "neworder", neworder)
    if sorted(order) != sorted(A._names):
        raise DLFormatError(
            f"reordercats: neworder must list each category once: {_quoted(A._names)}; got {_quoted(order)}"
        )
    numbers = _positions("reordercats", A, order)
    mapping = np.zeros(len(A._names) + 1, dtype=np.int64)
    mapping[numbers] = np.arange(1, len(numbers) + 1)
    return _recoded(A, mapping, order)


def setcats(A: Categorical, newcats: Any) -> Categorical:
    """MATLAB's ``B = setcats(A, newcats)``: the categories become ``newcats``; elements of a
    category not among them are undefined, a new category has no elements."""
    A = _require("setcats", A)
    names = _names_argument("setcats", "newcats", newcats)
    _check_names("setcats", names)
    position = {name: number for number, name in enumerate(names, start=1)}
    mapping = np.array([0, *(position.get(name, 0) for name in A._names)], dtype=np.int64)
    return _recoded(A, mapping, names)


# -- values ------------------------------------------------------------------------------------------
def ismember(A: Any, S: Any) -> np.ndarray:
    """MATLAB's ``TF = ismember(A, S)``: whether each element of ``A`` is in ``S``, ``A``'s shape.

    Categorical arrays and text compare by category name; an undefined element is a member of
    nothing. Numbers compare by value. (MATLAB's second output, the locations, is not returned.)"""
    if isinstance(A, Categorical) or isinstance(S, Categorical):
        members = set(_names_of("ismember", S).ravel().tolist()) - {None}
        labels = _names_of("ismember", A)
        found = (
            np.vectorize(lambda label: label in members, otypes=[bool])(labels)
            if labels.size
            else np.zeros(labels.shape, bool)
        )
        return np.asarray(found)
    kind_a, values_a = _input_values(A)
    kind_s, values_s = _input_values(S)
    if (kind_a == "text") != (kind_s == "text"):
        raise DLFormatError("ismember: compare text with text (or a categorical) and numbers with numbers")
    if kind_a == "text":
        members = set(values_s.ravel().tolist()) - {None}
        return (
            np.vectorize(lambda v: v in members, otypes=[bool])(values_a)
            if values_a.size
            else np.zeros(values_a.shape, bool)
        )
    return np.isin(values_a, values_s)


def _names_of(caller: str, value: Any) -> np.ndarray:
    if isinstance(value, Categorical):
        return np.asarray(value.__array__(), dtype=object)
    return _text_array(caller, value, missing_ok=True)


def unique(A: Any) -> Any:
    """MATLAB's ``C = unique(A)`` of a categorical: the distinct categories of its elements, in
    category order, then each undefined element (undefined values are missing values, and MATLAB's
    unique keeps each missing value apart, as it keeps each NaN). A ``1×N`` row gives a row, a 1-D
    array a 1-D result, anything else a column.

    Text and numbers give their sorted distinct values as a NumPy array (numbers: NaNs last, each
    kept)."""
    if isinstance(A, Categorical):
        codes = A._codes.ravel()
        found = np.concatenate(
            [np.unique(codes[codes > 0]), np.zeros(int((codes == 0).sum()), dtype=np.int64)]
        )
        return A._like(_unique_shape(A.shape, found))
    kind, values = _input_values(A)
    flat = values.ravel()
    if kind == "text":
        present = sorted({value for value in flat.tolist() if value is not None})
        holes = [None] * sum(value is None for value in flat.tolist())
        return _unique_shape(values.shape, np.array([*present, *holes], dtype=object))
    numbers = flat[~np.isnan(flat)] if kind == "numeric" else flat
    result = (
        np.concatenate([np.unique(numbers), flat[np.isnan(flat)]])
        if kind == "numeric"
        else np.unique(numbers)
    )
    return _unique_shape(values.shape, result)


def _unique_shape(shape: tuple[int, ...], values: np.ndarray) -> np.ndarray:
    if len(shape) <= 1:
        return values
    if len(shape) == 2 and shape[0] == 1:
        return values.reshape(1, -1)
    return values.reshape(-1, 1)


def string(A: Any) -> np.ndarray:
    """MATLAB's ``str = string(A)`` of a categorical: the category names as a NumPy object array
    of ``A``'s shape, ``None`` where undefined (MATLAB's ``<missing>`` string)."""
    return np.asarray(_require("string", A).__array__(), dtype=object)


def cellstr(A: Any) -> np.ndarray:
    """MATLAB's ``C = cellstr(A)`` of a categorical: the names as a NumPy object array (MATLAB's
    cell array, as ``loadmat`` gives cells) of ``A``'s shape; an undefined element is
    ``'<undefined>'``, as MATLAB displays it."""
    names = np.array([UNDEFINED, *_require("cellstr", A)._names], dtype=object)
    cells: np.ndarray = names[A._codes]
    return cells


def summary(A: Categorical) -> None:
    """MATLAB's ``summary(A)`` of a categorical: prints the size and the number of elements of each
    category (and of ``<undefined>``) as MATLAB's display lays them out: across for a row vector,
    down for anything else (counted along the first dimension). Prints; returns nothing."""
    print("\n".join(summary_lines(_require("summary", A))))


def summary_lines(A: Categorical) -> list[str]:
    """The lines :func:`summary` prints."""
    names = [*A._names, UNDEFINED]
    shape = _matlab_shape(A.shape)
    header = [f"{_validate.matlab_size(shape)} categorical", ""]
    if len(shape) == 2 and shape[0] == 1 and shape[1] != 1:  # a row: names across, counts under them
        counts = [str(int((A._codes == number).sum())) for number in range(1, len(A._names) + 1)]
        counts.append(str(int((A._codes == 0).sum())))
        widths = [max(len(name), len(count)) for name, count in zip(names, counts, strict=True)]
        return header + [
            _INDENT + _GAP.join(f"{cell:<{width}}" for cell, width in zip(row, widths, strict=True)) + " "
            for row in (names, counts)
        ]
    codes = A._codes.reshape(shape[0], -1)  # counted down the first dimension, one column each
    columns = [
        [str(int((codes[:, column] == number).sum())) for number in [*range(1, len(A._names) + 1), 0]]
        for column in range(codes.shape[1])
    ]
    name_width = max(len(name) for name in names)
    widths = [max(len(count) for count in column) for column in columns]
    return header + [
        _INDENT
        + f"{name:<{name_width}}"
        + "".join(_GAP + f"{column[row]:>{width}}" for column, width in zip(columns, widths, strict=True))
        + " "
        for row, name in enumerate(names)
    ]


# -- display ------------------------------------------------------------------------------------------
def _display(A: Categorical) -> list[str]:
    """MATLAB's display of a categorical array, less the ``name =`` MATLAB puts first: its size and
    class, then its elements in columns 6 spaces apart, each as wide as the column's longest
    (MathWorks' pages show ``A = 5×2 categorical`` so); a page per index past the second dimension."""
    shape = _matlab_shape(A.shape)
    size = _validate.matlab_size(shape)
    if A._codes.size == 0:
        return [f"{size} empty categorical array"]
    lines = ["categorical" if A._codes.size == 1 else f"{size} categorical"]
    names = np.array([UNDEFINED, *A._names], dtype=object)[A._codes.reshape(shape)]
    pages = list(np.ndindex(*shape[2:])) if len(shape) > 2 else [()]
    for page in pages:
        where: tuple[Any, ...] = (slice(None), slice(None), *page)
        cells = names[where]
        if page:
            lines += ["", "(:,:," + ",".join(str(i + 1) for i in page) + ") =", ""]
        widths = [max(len(cell) for cell in cells[:, column]) for column in range(cells.shape[1])]
        lines += [
            _INDENT + _GAP.join(f"{cell:<{width}}" for cell, width in zip(row, widths, strict=True)) + " "
            for row in cells
        ]
    return lines


# -- used by MATLAB's other functions on categoricals (dlformat._functions) ------------------------------
def matlab_size(A: Categorical) -> tuple[int, ...]:
    """MATLAB's ``size`` of a categorical."""
    return _matlab_shape(A.shape)


def double(A: Categorical) -> np.ndarray:
    """MATLAB's ``double(A)``: each element's category number from 1, NaN where undefined (a MathWorks
    Support answer: ``double(categorical(["5","3","2","1","8"]))`` is ``4 3 2 1 5``)."""
    numbers = A._codes.astype(np.float64)
    numbers[A._codes == 0] = np.nan
    return numbers


def equal(values: Sequence[Any], nan_equal: bool) -> bool:
    """MATLAB's ``isequal`` (``isequaln``) of arrays one of which is categorical: the same size
    and the same category names element by element; undefined elements are unequal (equal under
    ``isequaln``). Ordinal arrays must have the same categories in the same order."""
    try:
        first, *others = (_names_of("isequal", value) for value in values)
    except DLFormatError:
        return False
    ordinal = [value for value in values if isinstance(value, Categorical) and value._ordinal]
    if ordinal and (
        len(ordinal) != len(values) or any(value._names != ordinal[0]._names for value in ordinal)
    ):
        return False
    shape = _matlab_shape(first.shape)
    for other in others:
        if _matlab_shape(other.shape) != shape:
            return False
        a, b = first.reshape(shape), other.reshape(shape)
        defined = np.array([item is not None for item in a.ravel().tolist()], dtype=bool).reshape(a.shape)
        same = (a == b) if nan_equal else (a == b) & defined
        if not bool(np.all(same)):
            return False
    return True


def concatenate(dim: Any, arrays: Sequence[Any]) -> Categorical:
    """MATLAB's ``cat(dim, A, B, ...)`` where one is categorical (text joins as categorical):
    nonordinal arrays' categories are joined in order (the first's, then each new one after, as
    MathWorks' reordercats page shows); protected arrays must have the same categories (the first's
    order is kept), ordinal arrays the same categories in the same order (MathWorks' "Work with
    Protected Categorical Arrays"). Sizes join as MATLAB's, a 1-D array counting as a column."""
    number = _validate.dimension_number("cat", dim)
    parts = [value if isinstance(value, Categorical) else None for value in arrays]
    model = next(part for part in parts if part is not None)
    ordinal = [part for part in parts if part is not None and part._ordinal]
    protected = [part for part in parts if part is not None and part._protected]
    names = list(model._names)
    for part in parts:
        if part is None:
            continue
        if ordinal:
            _same_order("cat", ordinal[0], part)
        elif protected and set(part._names) != set(model._names):
            raise DLFormatError(
                "cat: categorical arrays with protected categories join only with the same categories; got "
                f"{_quoted(model._names)} and {_quoted(part._names)}"
            )
        names += [name for name in part._names if name not in names]
    joined = Categorical(np.zeros(0, dtype=np.int64), names, ordinal=bool(ordinal), protected=bool(protected))
    codes = []
    for value, part in zip(arrays, parts, strict=True):
        if part is not None:
            position = {name: index for index, name in enumerate(names, start=1)}
            mapping = np.array([0, *(position[name] for name in part._names)], dtype=np.int64)
            codes.append(mapping[part._codes])
        else:
            assigned, names_after = joined._assigned_codes(value)
            if names_after != joined._names:
                joined._names = names_after
                names = list(names_after)
            codes.append(assigned)
    ndim = max(number, *(len(_matlab_shape(code.shape)) for code in codes))
    shaped = [
        code.reshape(_matlab_shape(code.shape) + (1,) * (ndim - len(_matlab_shape(code.shape))))
        for code in codes
    ]
    for index, code in enumerate(shaped[1:], start=2):
        for axis in range(ndim):
            if axis != number - 1 and code.shape[axis] != shaped[0].shape[axis]:
                raise DLFormatError(
                    f"cat: array {index} has size {code.shape[axis]} in dimension {axis + 1} and array 1 has "
                    f"{shaped[0].shape[axis]}; all dimensions but the one joined must match"
                )
    result = np.concatenate(shaped, axis=number - 1)
    if number == 1 and all(code.ndim <= 1 for code in codes):
        result = result.reshape(-1)  # columns joined down: one 1-D column
    return Categorical(result, names, ordinal=bool(ordinal), protected=bool(protected))
