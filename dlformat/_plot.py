"""Heat maps of position tables for ``dlformat plot`` (matplotlib is an optional extra)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import DLFormatError
from ._validate import matlab_size

# dlformat is installed from its repository, not from a package registry: name the extra and
# the README's command, never `pip install dlformat[...]`
INSTALL = 'the dlformat[plot] extra; install it with pip install -e ".[plot]" from the dlformat repository'
_STEP = re.compile(r"\.([A-Za-z]\w*)|\{(-?\d+)\}|\((-?\d+)\)")
SOURCES = ("sinusoid", "timing-signal")


def generated_table(kind: str, dim: int, positions: int, layout: str, base: float) -> np.ndarray:
    """A (channels, positions) table from one of dlformat's position encodings."""
    from .functional import sinusoid, timing_signal_1d

    if kind not in SOURCES:
        raise DLFormatError(f'the table to draw must be "sinusoid" or "timing-signal"; got {kind!r}')
    if kind == "sinusoid":
        return sinusoid(positions, dim, base=base, layout=layout).T.numpy()
    return timing_signal_1d(positions, dim)[0].T.numpy()


def variable_table(path: str | Path, variable: str) -> np.ndarray:
    """A 2-D numeric variable of a .mat file, addressed as ``dlformat inspect`` spells it.

    ``.field`` follows a struct field, ``{k}`` a cell element and ``(k)`` a struct-array
    element, each with MATLAB's 1-based linear index.
    """
    from .io import loadmat
    from .io._values import position_of

    name = re.match(r"[A-Za-z]\w*", variable)
    if name is None:
        raise DLFormatError(
            f"--var {variable!r} must start with a variable name, e.g. posemb.Weights or c{{2}}"
        )
    value: Any = loadmat(path, [name.group()])[name.group()]
    rest = variable[name.end() :]
    position = 0
    for step in _STEP.finditer(rest):
        if step.start() != position:
            break
        here, reached = variable[: name.end() + step.start()], variable[: name.end() + step.end()]
        field, cell, element = step.groups()
        if field is not None:
            if not isinstance(value, dict):
                raise DLFormatError(
                    f"{here} is {_describe(value)}, not a 1×1 struct, so {reached} is not there"
                )
            if field not in value:
                raise DLFormatError(
                    f"{path} has nothing at {reached!r}: the struct {here} has the fields "
                    f"{', '.join(value) or '(none)'}"
                )
            value = value[field]
            position = step.end()
            continue
        index = position_of(cell if cell is not None else element, reached)
        if cell is not None:
            if not (isinstance(value, np.ndarray) and value.dtype == object):
                raise DLFormatError(f"{here} is {_describe(value)}, not a cell, so {{}} cannot index it")
            items: Any = value.ravel(order="F")
        else:
            if not isinstance(value, (list, dict)):
                raise DLFormatError(
                    f"{here} is {_describe(value)}; (k) indexes struct arrays here, {{k}} cells"
                )
            items = value if isinstance(value, list) else [value]
        if index >= len(items):
            raise DLFormatError(
                f"{path} has nothing at {reached!r}: {here} has {len(items)} element(s), so the "
                f"index must lie in 1 .. {len(items)}"
            )
        value = items[index]
        position = step.end()
    if position != len(rest):
        raise DLFormatError(
            f"cannot follow {rest[position:]!r} in --var {variable!r}; use .field, {{cell}} or (element)"
        )
    if not isinstance(value, np.ndarray) or value.ndim != 2 or value.dtype.kind not in "biuf":
        raise DLFormatError(f"{variable} must be a 2-D real numeric array to plot; got {_describe(value)}")
    if not value.size:
        raise DLFormatError(f"{variable} is empty ({matlab_size(value.shape)}); there is nothing to plot")
    return value.astype(np.float64)


def _describe(value: Any) -> str:
    """What a loaded value is, in MATLAB's words, for an error message."""
    from .io._values import CLASS_OF_DTYPE

    if isinstance(value, dict):
        return "a 1×1 struct"
    if isinstance(value, list):
        return f"a struct array of {len(value)} element(s)"
    if isinstance(value, str):
        return "a char row"
    if isinstance(value, np.ndarray):
        size = matlab_size(value.shape)
        if value.dtype == object:
            return f"a {size} cell"
        if value.dtype.kind == "U":
            return f"a char array of {value.size} row(s)"
        complex_ = " complex" if value.dtype.kind == "c" else ""
        return f"a {size}{complex_} {CLASS_OF_DTYPE.get(value.dtype, str(value.dtype))} array"
    return f"a {type(value).__name__}"  # a scipy.sparse matrix


def heat_map(table: np.ndarray, output: str | Path, title: str) -> None:
    """Draw ``table`` (rows: channels, columns: positions) as a PNG heat map."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise DLFormatError(f"drawing needs the optional package matplotlib, {INSTALL}") from None
    if table.ndim != 2 or not table.size:
        raise DLFormatError(f"a heat map needs a non-empty 2-D table; got size {matlab_size(table.shape)}")
    finite = np.abs(table[np.isfinite(table)])
    # NaN and ±Inf are drawn blank: a colour scale must come from the finite values only
    limit = float(finite.max()) if finite.size else 1.0
    limit = limit or 1.0
    figure, axes = plt.subplots(figsize=(6, 4), dpi=100)
    image = axes.imshow(
        table, aspect="auto", origin="lower", cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest"
    )
    axes.set_xlabel("position")
    axes.set_ylabel("channel")
    axes.set_title(title)
    figure.colorbar(image, ax=axes)
    figure.tight_layout()
    try:
        figure.savefig(output, format="png")  # whatever the file's extension says
    except OSError as error:
        raise DLFormatError(f"cannot write {output}: {error.strerror or error}") from None
    finally:
        plt.close(figure)
