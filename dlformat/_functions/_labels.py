"""MATLAB's label functions: ``onehotencode``, ``onehotdecode`` and ``scores2label``.

Labels are MATLAB's categorical arrays (:class:`dlformat.Categorical`, what ``classify`` returns),
or text (a list or NumPy array of class names, ``None`` marking MATLAB's ``<undefined>``). A
categorical, or an object with the same surface (``pandas.Categorical``: ``.categories`` and
``.codes``, code ``-1`` for undefined), is read with its categories in order, as MATLAB reads a
categorical's ``categories(A)``. Rules and sources: docs/dlarray_functions.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._categorical import Categorical, _category_name
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function

__all__ = ["onehotdecode", "onehotencode", "scores2label"]

# MATLAB's numeric type names, as onehotencode's typename takes them
_NUMERIC_TYPES = {
    "double": torch.float64,
    "single": torch.float32,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "logical": torch.bool,
}
_LABEL_TYPES = ("categorical", "string", "char", "cellstr")


def _classes(caller: str, classes: Any) -> np.ndarray:
    """Class names as a 1-D object array, in the given order (a categorical's: its categories)."""
    if hasattr(classes, "categories"):
        classes = list(classes.categories)
    if isinstance(classes, (str, bytes)) or not isinstance(classes, (Sequence, np.ndarray)):
        raise DLFormatError(
            f"{caller}: the class names must be a list of names (or a categorical); "
            f"got {_validate.describe(classes)}"
        )
    names = np.asarray(list(np.asarray(classes, dtype=object).reshape(-1)), dtype=object)
    if names.size == 0:
        raise DLFormatError(f"{caller}: the class names are empty; give at least one class")
    if len(set(names.tolist())) != names.size:
        raise DLFormatError(f"{caller}: the class names repeat a name: {names.tolist()}")
    return names


def _codes(labels: Any, classes: np.ndarray) -> np.ndarray:
    """Each label's 0-based class position, -1 where it is undefined or of no class."""
    if hasattr(labels, "codes") and hasattr(labels, "categories"):
        own = np.asarray(list(labels.categories), dtype=object)
        index = {name: position for position, name in enumerate(classes.tolist())}
        remap = np.array([index.get(name, -1) for name in own.tolist()] + [-1], dtype=np.int64)
        codes = np.asarray(labels.codes, dtype=np.int64)
        return remap[np.where(codes < 0, len(own), codes)]
    array = np.asarray(labels, dtype=object)
    index = {name: position for position, name in enumerate(classes.tolist())}
    flat = [index.get(label, -1) if label is not None else -1 for label in array.reshape(-1).tolist()]
    return np.asarray(flat, dtype=np.int64).reshape(array.shape)


@matlab_function
def onehotencode(
    A: Any, featureDim: int, typename: str = "double", *, ClassNames: Any = None
) -> torch.Tensor:
    """MATLAB's ``B = onehotencode(A, featureDim)``: labels to one-hot vectors along ``featureDim``.

    ``A`` is MATLAB's categorical array: a categorical-like object (its categories are the
    classes, in order), or an array or list of labels with ``ClassNames`` (MATLAB needs them for
    labels that are not categorical; so does dlformat: it never guesses an order). Each label
    becomes a vector with a 1 at its class and 0 elsewhere; an undefined label (``None``, or a
    categorical's missing value) or one of no class becomes NaN, as MATLAB documents.
    ``featureDim`` (MATLAB's, from 1) must be a singleton dimension of ``A`` or past its last,
    and becomes the class dimension; a 1-D ``A`` (Python's vector of N labels, which MATLAB would
    hold as a row or a column) gets the class dimension inserted at ``featureDim``:
    ``featureDim=1`` gives ``K×N``, ``2`` gives ``N×K``. ``typename`` is MATLAB's numeric type name
    (default ``"double"``). Returns a tensor.

    Examples:
        >>> labels = ["cat", "dog", "cat"]
        >>> dlf.onehotencode(labels, 1, ClassNames=["cat", "dog"]).tolist()
        [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
        >>> tuple(dlf.onehotencode(labels, 2, "single", ClassNames=["cat", "dog"]).shape)
        (3, 2)
    """
    caller = "onehotencode"
    if ClassNames is None:
        if not hasattr(A, "categories"):
            raise DLFormatError(
                "onehotencode: labels that are not a categorical need ClassNames (the classes in "
                'order), e.g. onehotencode(A, 1, ClassNames=["cat", "dog"]); dlformat does not '
                "guess the order"
            )
        ClassNames = A
    classes = _classes(caller, ClassNames)
    dtype = _NUMERIC_TYPES[_validate.choice(f"{caller}: typename", typename, tuple(_NUMERIC_TYPES))]
    dim = _validate.dimension_number(f"{caller}: featureDim", featureDim) - 1
    codes = _codes(A, classes)
    if codes.ndim <= 1:
        if dim > codes.ndim:
            raise DLFormatError(
                f"{caller}: featureDim {dim + 1} is past the dimensions of a vector of labels; use 1 "
                "(classes × labels) or 2 (labels × classes)"
            )
        codes = np.expand_dims(codes, dim)
    elif dim < codes.ndim and codes.shape[dim] != 1:
        raise DLFormatError(
            f"{caller}: featureDim {dim + 1} must be a singleton dimension of the labels or past their "
            f"last; the labels have size {_validate.matlab_size(codes.shape)}"
        )
    else:
        codes = codes.reshape(*codes.shape, *(1,) * (dim + 1 - codes.ndim))
    positions = torch.arange(len(classes)).reshape([-1 if axis == dim else 1 for axis in range(codes.ndim)])
    known = torch.from_numpy(codes)
    encoded = (known == positions).to(torch.float64)
    encoded = torch.where(known < 0, torch.nan, encoded)
    return encoded.to(dtype)


def _decoded(codes: np.ndarray, classes: np.ndarray, typename: str) -> Any:
    """Class names at ``codes`` (-1: undefined), as MATLAB's ``typename`` asks: a categorical whose
    categories are the classes in order, or names (None where undefined)."""
    if typename == "categorical":
        names = [_category_name(name) for name in classes.tolist()]
        return Categorical(np.asarray(codes, dtype=np.int64) + 1, names)
    labels = np.empty(codes.shape, dtype=object)
    labels[...] = None
    valid = codes >= 0
    labels[valid] = classes[codes[valid]]
    if typename in _LABEL_TYPES:
        return labels
    if not valid.all():
        raise DLFormatError(
            f'onehotdecode: typename "{typename}" cannot hold an undefined label (a vector of NaN); '
            'use "categorical"'
        )
    return labels.astype(torch.empty(0, dtype=_NUMERIC_TYPES[typename]).numpy().dtype)


@matlab_function
def onehotdecode(B: Any, classes: Any, featureDim: int, typename: str = "categorical") -> Any:
    """MATLAB's ``A = onehotdecode(B, classes, featureDim)``: each vector along ``featureDim`` to
    the class of its largest value (the first of ties, as MATLAB's ``max``).

    ``B`` is numeric (a tensor, NumPy array or dlarray); ``classes`` the class names in order (or
    a categorical). The labels come back as a categorical array (MATLAB's default ``typename``,
    ``"categorical"``) whose categories are the classes in order, with ``featureDim`` removed, so
    decoding undoes :func:`onehotencode`; a vector holding NaN decodes to ``<undefined>``.
    ``typename`` ``"string"``, ``"char"`` or ``"cellstr"`` gives a NumPy array of names (``None``
    for undefined), a numeric type the numeric class names.

    Examples:
        >>> B = torch.tensor([[0.9, 0.2, 0.4], [0.1, 0.8, 0.6]])
        >>> dlf.onehotdecode(B, ["cat", "dog"], 1).tolist()
        ['cat', 'dog', 'dog']
    """
    caller = "onehotdecode"
    names = _classes(caller, classes)
    kind = _validate.choice(f"{caller}: typename", typename, (*_LABEL_TYPES, *_NUMERIC_TYPES))
    data = (
        B._data if isinstance(B, DLArray) else torch.as_tensor(np.asarray(B) if not torch.is_tensor(B) else B)
    )
    dim = _validate.dimension_number(f"{caller}: featureDim", featureDim) - 1
    if dim >= data.ndim or data.shape[dim] != len(names):
        raise DLFormatError(
            f"{caller}: dimension {dim + 1} of B (size {_validate.matlab_size(tuple(data.shape))}) must "
            f"hold one value per class ({len(names)})"
        )
    return _decoded(_top(data.detach(), dim)[1], names, kind)


def _top(data: torch.Tensor, dim: int) -> tuple[torch.Tensor, np.ndarray]:
    """The largest value along ``dim`` and its 0-based position (-1 where the vector holds NaN)."""
    values = data.double()
    top, position = values.max(dim)
    position = torch.where(torch.isnan(values).any(dim), -1, position)
    return top, position.cpu().numpy()


@matlab_function
def scores2label(scores: Any, classNames: Any, dim: int | str = "auto") -> tuple[Categorical, torch.Tensor]:
    """MATLAB's ``[labels, topScores] = scores2label(scores, classNames)``: the class of the top
    score along the channel dimension.

    The channel dimension is ``C`` for a formatted dlarray; otherwise ``dim`` (MATLAB's, from 1),
    or ``"auto"`` (default): the one dimension of size ``numel(classNames)`` whose values sum to
    one, as MATLAB's page describes (an error when there is not exactly one). Returns the labels
    (a categorical array whose categories are ``classNames`` in order, the channel dimension
    removed, as ``classify`` returns them) and the top scores (a tensor of the labels' shape). Both
    outputs always come back.

    Examples:
        >>> scores = dlf.dlarray(torch.tensor([[0.7, 0.2], [0.3, 0.8]]), "CB")
        >>> labels, top = dlf.scores2label(scores, ["yes", "no"])
        >>> labels.tolist(), [round(x, 2) for x in top.tolist()]
        (['yes', 'no'], [0.7, 0.8])
    """
    caller = "scores2label"
    names = _classes(caller, classNames)
    if isinstance(scores, DLArray) and scores._fmt:
        if "C" not in scores._fmt:
            raise DLFormatError(
                f'{caller}: the scores have format "{scores._fmt}", with no channel dimension C'
            )
        axis = scores._fmt.index("C")
        data = scores._data
    else:
        data = scores._data if isinstance(scores, DLArray) else torch.as_tensor(np.asarray(scores))
        axis = _channel(caller, data, len(names), dim)
    if data.shape[axis] != len(names):
        raise DLFormatError(
            f"{caller}: the channel dimension has {data.shape[axis]} scores; there are {len(names)} classes"
        )
    top, position = _top(data.detach(), axis)
    return _decoded(position, names, "categorical"), top.to(data.dtype)


def _channel(caller: str, data: torch.Tensor, count: int, dim: object) -> int:
    if not (isinstance(dim, str) and dim.lower() == "auto"):
        axis = _validate.dimension_number(f"{caller}: dim", dim) - 1
        if axis >= data.ndim:
            raise DLFormatError(f"{caller}: dim {axis + 1} is past the {data.ndim} dimensions of the scores")
        return axis
    values = data.detach().double()
    candidates = [
        axis
        for axis in range(values.ndim)
        if values.shape[axis] == count and bool(((values.sum(axis) - 1).abs() <= 1e-4 * count).all())
    ]
    if len(candidates) != 1:
        raise DLFormatError(
            f"{caller}: cannot tell the channel dimension: {len(candidates)} dimensions of the scores (size "
            f"{_validate.matlab_size(tuple(values.shape))}) have {count} values summing to one; give dim"
        )
    return candidates[0]
