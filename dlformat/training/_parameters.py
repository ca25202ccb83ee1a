"""The containers MATLAB's training functions take parameters in, taken apart and put back together.

MATLAB passes learnable parameters to ``dlgradient``, ``dlupdate`` and the solver functions as a
``dlnetwork`` (its ``Learnables`` table), a table of ``Layer``/``Parameter``/``Value`` rows, a
struct or a cell array of dlarrays, or a single dlarray; the results come back in the same
container. Here those are a :class:`DLNetwork`, a :class:`Table`, a ``dict``, a ``list`` or
``tuple``, or a dlarray or tensor. :func:`flatten` lists the values (the leaves) with a
description of where each sits; :func:`rebuild` puts new values into the same container.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .. import _validate
from .._display import Table
from .._dlarray import DLArray
from .._errors import DLFormatError
from ..networks import DLNetwork

__all__ = [
    "Structure",
    "as_tensor",
    "flatten",
    "is_empty",
    "like",
    "matched",
    "network_rows",
    "network_table",
    "rebuild",
    "same_structure",
    "scaled_rows",
]

LEARNABLES_COLUMNS = ("Layer", "Parameter", "Value")


@dataclass(frozen=True)
class Structure:
    """How leaves are arranged: ``kind`` is ``"leaf"``, ``"list"``, ``"tuple"``, ``"dict"`` or
    ``"table"``; ``keys`` are dict keys or table rows without their values; ``children`` the
    structures inside (for containers)."""

    kind: str
    keys: tuple[Any, ...] = ()
    children: tuple[Structure, ...] = ()
    columns: tuple[str, ...] = ()

    def where(self, index: int) -> str:
        """The path of leaf ``index``, for error messages (``['fc'].Weights``, ``[2]``)."""
        return _path(self, index) or "the value"


def _path(structure: Structure, index: int) -> str:
    if structure.kind == "leaf":
        return ""
    if structure.kind == "table":
        layer, parameter = (structure.keys[index] + ("", ""))[:2]
        return f"row {index + 1} ({layer}/{parameter})"
    offset = 0
    for position, child in enumerate(structure.children):
        count = _count(child)
        if index < offset + count:
            key = structure.keys[position] if structure.kind == "dict" else position
            return f"[{key!r}]" + _path(child, index - offset)
        offset += count
    return ""


def _count(structure: Structure) -> int:
    if structure.kind == "leaf":
        return 1
    if structure.kind == "table":
        return len(structure.keys)
    return sum(_count(child) for child in structure.children)


def flatten(caller: str, name: str, value: Any) -> tuple[list[Any], Structure]:
    """The leaves of ``value`` in order, and its structure.

    A leaf is a dlarray or a tensor; a ``Table`` with a ``Value`` column contributes its values.
    Anything else is a :class:`DLFormatError` naming ``caller`` and ``name``.
    """
    leaves: list[Any] = []

    def walk(item: Any, where: str) -> Structure:
        if isinstance(item, (DLArray, torch.Tensor)):
            leaves.append(item)
            return Structure("leaf")
        if isinstance(item, Table):
            if "Value" not in item.columns:
                raise DLFormatError(
                    f"{caller}: {name}{where} is a table without a Value column; its columns are "
                    f"{', '.join(item.columns)}"
                )
            position = item.columns.index("Value")
            keys = []
            for row in item.rows:
                if not isinstance(row[position], (DLArray, torch.Tensor)):
                    raise DLFormatError(
                        f"{caller}: {name}{where} has a Value that is not a dlarray or tensor: "
                        f"{_validate.describe(row[position])}"
                    )
                leaves.append(row[position])
                keys.append(tuple(cell for column, cell in enumerate(row) if column != position))
            return Structure("table", tuple(keys), columns=item.columns)
        if isinstance(item, (list, tuple)):
            children = tuple(walk(child, f"{where}[{index}]") for index, child in enumerate(item))
            return Structure("list" if isinstance(item, list) else "tuple", children=children)
        if isinstance(item, dict):
            children = tuple(walk(child, f"{where}[{key!r}]") for key, child in item.items())
            return Structure("dict", tuple(item), children)
        raise DLFormatError(
            f"{caller}: {name}{where} must be a dlarray or tensor, or a tuple, list, dict or Learnables "
            f"table of them; got {_validate.describe(item)}"
        )

    structure = walk(value, "")
    return leaves, structure


def rebuild(structure: Structure, leaves: list[Any]) -> Any:
    """The container ``structure`` describes, holding ``leaves``."""
    iterator = iter(leaves)

    def build(node: Structure) -> Any:
        if node.kind == "leaf":
            return next(iterator)
        if node.kind == "table":
            position = node.columns.index("Value")
            rows = []
            for key in node.keys:
                row = list(key)
                row.insert(position, next(iterator))
                rows.append(tuple(row))
            return Table(node.columns, rows)
        children = [build(child) for child in node.children]
        if node.kind == "dict":
            return dict(zip(node.keys, children, strict=True))
        return children if node.kind == "list" else tuple(children)

    return build(structure)


def network_rows(
    net: DLNetwork, kind: str = "LearnRateFactor"
) -> tuple[list[tuple[str, str]], list[torch.nn.Parameter], list[float | torch.Tensor]]:
    """The network's learnables: their (layer, parameter) keys, the parameters, and each
    parameter's ``kind`` factor (MATLAB's ``getLearnRateFactor``) as an update applies it: a
    scalar, or one value per row for a recurrent layer's per-gate vector."""
    keys, parameters, factors = [], [], []
    for layer, parameter, value in net.Learnables:
        keys.append((layer, parameter))
        parameters.append(value)
        factors.append(net._by_name[layer].factor_scale(parameter, kind, value))
    return keys, parameters, factors


def scaled_rows(keys: list[tuple[str, str]], factors: list[float | torch.Tensor]) -> list[str]:
    """The ``layer/parameter`` names whose factor (from :func:`network_rows`) is not 1 everywhere:
    what the solvers that do not apply learn-rate factors refuse."""
    return [
        f"{layer}/{name}"
        for (layer, name), factor in zip(keys, factors, strict=True)
        if bool(torch.as_tensor(factor).ne(1).any())
    ]


def network_table(keys: list[tuple[str, str]], values: list[Any]) -> Table:
    """A Learnables-style table of ``values``, one row per (layer, parameter) key."""
    return Table(LEARNABLES_COLUMNS, [(*key, value) for key, value in zip(keys, values, strict=True)])


def matched(caller: str, name: str, value: Any, keys: list[tuple[str, str]]) -> list[Any]:
    """The values of ``value`` (a Learnables-style table) in the order of the network's ``keys``."""
    if not isinstance(value, Table) or tuple(value.columns[:2]) != LEARNABLES_COLUMNS[:2]:
        raise DLFormatError(
            f"{caller}: for a network, {name} must be a table like net.Learnables (columns Layer, "
            f"Parameter, Value), as dlgradient(loss, net.Learnables) returns; got {_validate.describe(value)}"
        )
    leaves, structure = flatten(caller, name, value)
    found = {tuple(key[:2]): leaf for key, leaf in zip(structure.keys, leaves, strict=True)}
    missing = [f"{layer}/{parameter}" for layer, parameter in keys if (layer, parameter) not in found]
    extra = [f"{layer}/{parameter}" for layer, parameter in found if (layer, parameter) not in set(keys)]
    if missing or extra:
        detail = "; ".join(
            part
            for part in (
                f"it lacks {', '.join(missing)}" if missing else "",
                f"the network has no {', '.join(extra)}" if extra else "",
            )
            if part
        )
        raise DLFormatError(f"{caller}: {name} does not match the network's learnables: {detail}")
    return [found[key] for key in keys]


def as_tensor(value: Any) -> torch.Tensor:
    """The tensor of a leaf (a dlarray's data, or the tensor itself)."""
    return value._data if isinstance(value, DLArray) else value


def like(template: Any, data: torch.Tensor) -> Any:
    """``data`` as the kind of leaf ``template`` is: a dlarray of its format, or a plain tensor."""
    if isinstance(template, DLArray):
        return DLArray._wrap(data, template._fmt)
    return data


def is_empty(value: Any) -> bool:
    """MATLAB's ``[]`` for a solver state on the first call: ``None``, an empty list, tuple or table."""
    return value is None or (isinstance(value, (list, tuple, Table)) and len(value) == 0)


def same_structure(caller: str, name: str, structure: Structure, other: Structure, reference: str) -> None:
    """A :class:`DLFormatError` unless ``other`` is arranged as ``structure`` is."""
    if _shape_of(structure) != _shape_of(other):
        raise DLFormatError(
            f"{caller}: {name} is not arranged as {reference} are (same containers, keys and number of "
            "values needed)"
        )


def _shape_of(structure: Structure) -> Any:
    if structure.kind == "table":
        return ("table", structure.keys)
    if structure.kind == "leaf":
        return "leaf"
    keys = structure.keys if structure.kind == "dict" else ()
    kind = "sequence" if structure.kind in ("list", "tuple") else structure.kind
    return (kind, keys, tuple(_shape_of(child) for child in structure.children))
