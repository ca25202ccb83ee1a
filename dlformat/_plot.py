"""Heat maps of position tables for ``dlformat plot`` (matplotlib is an optional extra)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import DLFormatError

INSTALL = 'pip install "dlformat[plot]"'
_STEP = re.compile(r"\.([A-Za-z]\w*)|\{(\d+)\}|\((\d+)\)")


def generated_table(kind: str, dim: int, positions: int, layout: str, base: float) -> np.ndarray:
    """A (channels, positions) table from one of dlformat's position encodings."""
    from .functional import sinusoid, timing_signal_1d

    if kind == "sinusoid":
        return sinusoid(positions, dim, base=base, layout=layout).T.numpy()
    return timing_signal_1d(positions, dim)[0].T.numpy()


def variable_table(path: str | Path, variable: str) -> np.ndarray:
    """A 2-D numeric variable of a .mat file, addressed as ``dlformat inspect`` spells it."""
    from .io import loadmat

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
        field, cell, element = step.groups()
        try:
            if field is not None:
                value = value[field]
            elif cell is not None:
                value = value.ravel(order="F")[int(cell) - 1]
            else:
                value = value[int(element) - 1]
        except (KeyError, IndexError, TypeError, AttributeError):
            raise DLFormatError(
                f"{path} has nothing at {variable[: len(name.group()) + step.end()]!r}"
            ) from None
        position = step.end()
    if position != len(rest):
        raise DLFormatError(
            f"cannot follow {rest[position:]!r} in --var {variable!r}; use .field, {{cell}} or (element)"
        )
    if not isinstance(value, np.ndarray) or value.ndim != 2 or value.dtype.kind not in "biuf":
        raise DLFormatError(
            f"{variable} must be a 2-D real numeric array to plot; got {type(value).__name__}"
        )
    return value.astype(np.float64)


def heat_map(table: np.ndarray, output: str | Path, title: str) -> None:
    """Draw ``table`` (rows: channels, columns: positions) as a PNG heat map."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise DLFormatError(f"dlformat plot needs matplotlib; install it with {INSTALL}") from None
    limit = float(np.abs(table).max()) or 1.0
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
        figure.savefig(output)
    except OSError as error:
        raise DLFormatError(f"cannot write {output}: {error.strerror or error}") from None
    finally:
        plt.close(figure)
