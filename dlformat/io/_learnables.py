"""MATLAB's ``net.Learnables`` table in a .mat file, to and from dlformat layers.

The file holds three N×1 cell arrays, ``Layer``, ``Parameter`` and ``Value`` (layer names
need not be valid MATLAB field names, so a struct would not do). Rows match dlformat
layers by ``Name`` and learnables by MATLAB parameter name. MATLAB's ``net.State``
(batch normalization's ``TrainedMean``, ...) travels as a struct ``State`` holding the same
three cells, as ``matlab/exportLearnables.m`` writes it; its rows load into the layers' state.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from .._errors import DLFormatError, cut, reason
from .._validate import matlab_size
from ..layers import Layer
from ..layers._base import _is_vector
from ._values import CLASS_OF_DTYPE, Entry

COLUMNS = ("Layer", "Parameter", "Value")


class LearnablesResult(NamedTuple):
    """What :func:`load_learnables` could not match, as ``"layer/parameter"`` strings."""

    missing: list[str]
    unexpected: list[str]


def _uninitialized(layers: dict[str, Layer], doing: str) -> None:
    waiting = [name for name, layer in layers.items() if not layer.Initialized]
    if waiting:
        raise DLFormatError(
            f"cannot {doing}: layer(s) {', '.join(repr(name) for name in waiting)} have no learnables yet "
            "(their sizes follow their input); initialize first, e.g. dlf.initialize(net)"
        )


def _named_layers(module: Any) -> dict[str, Layer]:
    from ..networks._legacy import LegacyNetwork

    if isinstance(module, LegacyNetwork):  # a SeriesNetwork or DAGNetwork: its output layers learn nothing
        module = module.body
    if not isinstance(module, nn.Module):
        raise DLFormatError(
            f"expected a network, layer or torch module holding dlformat layers; got {type(module).__name__}"
        )
    layers: dict[str, Layer] = {}
    for layer in _outermost_layers(module):
        if not (layer.learnables or layer.State):
            continue
        if not layer.Name:
            raise DLFormatError(
                f"a {type(layer).__name__} with {'learnables' if layer.learnables else 'state'} has no Name; "
                "MATLAB's Learnables table finds layers by name, so give every such layer a unique Name"
            )
        if layer.Name in layers:
            raise DLFormatError(f"two layers are named {cut(layer.Name)!r}; layer names must be unique")
        layers[layer.Name] = layer
    return layers


def _outermost_layers(module: nn.Module) -> Any:
    """The dlformat layers of ``module``, not looking inside a layer: a layer holding a network
    (``networkLayer``) reports the nested learnables as its own (``"fc/Weights"``)."""
    if isinstance(module, Layer):
        yield module
        return
    for child in module.children():
        yield from _outermost_layers(child)


def save_learnables(module: Any, path: str | os.PathLike[str], version: str = "7") -> None:
    """Write every learnable of every named dlformat layer in ``module`` as a Learnables table.

    ``module``: a torch module holding dlformat layers (a ``DLNetwork``, a layer), or a
    ``SeriesNetwork``/``DAGNetwork``. Their ``State`` goes with them (the ``State`` struct).

    MATLAB reads it back with ``importLearnables.m`` (in the repository's ``matlab/``).
    """
    from . import savemat

    layers = _named_layers(module)
    _uninitialized(layers, "save learnables")
    rows = [(name, parameter) for name, layer in layers.items() for parameter in layer.learnables]
    if not rows:
        raise DLFormatError("the module holds no named dlformat layer with learnable parameters")
    variables: dict[str, Any] = _cells(layers, rows, "learnable")
    state_rows = [(name, parameter) for name, layer in layers.items() for parameter in layer.State]
    if state_rows:
        variables["State"] = _cells(layers, state_rows, "state parameter")
    savemat(path, variables, version=version)


def _cells(layers: dict[str, Layer], rows: list[tuple[str, str]], kind: str) -> dict[str, np.ndarray]:
    """A table's Layer, Parameter and Value columns as N×1 cell arrays. A value with no data to
    save is refused here, where its layer and parameter are known (savemat would name only the
    table cell, ``Value{1}``)."""
    columns = {column: np.empty((len(rows), 1), dtype=object) for column in COLUMNS}
    for index, (name, parameter) in enumerate(rows):
        value = getattr(layers[name], parameter).detach()
        if value.is_meta:
            raise DLFormatError(
                f"save_learnables: {kind} {parameter!r} of layer {name!r} is on the meta device, which "
                "holds no values to save (a network built under torch.device('meta')); give it values on "
                'a real device first, e.g. net.to_empty(device="cpu") then dlformat.io.load_learnables(net, '
                "path), and save again"
            )
        columns["Layer"][index, 0] = name
        columns["Parameter"][index, 0] = parameter
        columns["Value"][index, 0] = value
    return columns


def load_learnables(module: Any, path: str | os.PathLike[str], strict: bool = True) -> LearnablesResult:
    """Assign a Learnables table from a .mat file to the named dlformat layers of ``module``
    (what :func:`save_learnables` takes), and its ``State`` rows to their state.

    Values are converted to each parameter's dtype and device and copied in place, so
    optimizers holding the parameters stay valid. Every row is checked before any is
    assigned: on any error, nothing changes.

    Args:
        strict: raise when rows are missing (learnables of the module the file lacks) or
            unexpected (rows naming no layer or parameter of the module), as
            ``load_state_dict`` does. A shape mismatch is always an error.

    Returns:
        ``LearnablesResult(missing, unexpected)``.
    """
    from . import loadmat

    table = loadmat(path)
    lacking = [column for column in COLUMNS if column not in table]
    if lacking:
        raise DLFormatError(
            f"{path} is not a Learnables file: it lacks {', '.join(lacking)} (it holds "
            f"{', '.join(table) or 'nothing'}); export one with exportLearnables.m"
        )
    rows = _rows(path, table)
    layers = _named_layers(module)
    _uninitialized(layers, "load learnables")
    state = table.get("State")
    state_rows = []
    if state is not None:
        if not isinstance(state, dict):
            raise DLFormatError(f"{path}: State must be a struct with Layer, Parameter and Value cells")
        state_rows = _rows(f"{path} (State)", state)
    assignments: list[tuple[str, torch.Tensor, np.ndarray]] = []
    unexpected: list[str] = []
    missing: list[str] = []
    for kind, table_rows, label in (("learnables", rows, ""), ("State", state_rows, " (state)")):
        seen: set[tuple[str, str]] = set()
        for number, (name, parameter, value) in enumerate(table_rows, start=1):
            layer = layers.get(name)
            if layer is None or parameter not in getattr(layer, kind):
                unexpected.append(f"{name}/{parameter}{label}")
                continue
            where = f"{path}{' State' if label else ''} row {number}"
            if (name, parameter) in seen:
                raise DLFormatError(f"{where}: {name}/{parameter} appears twice")
            seen.add((name, parameter))
            target = getattr(layer, parameter)
            value = _fitted(where, name, parameter, value, target)
            assignments.append(
                (f"layer {cut(name)!r} {'state' if label else 'parameter'} {cut(parameter)!r}", target, value)
            )
        if kind == "learnables" or state is not None:
            # a file without State (MATLAB's network had none) leaves the state as it is
            missing += [
                f"{name}/{parameter}{label}"
                for name, layer in layers.items()
                for parameter in getattr(layer, kind)
                if (name, parameter) not in seen
            ]
    if strict and (missing or unexpected):
        problems = []
        if missing:
            problems.append(f"missing rows: {', '.join(missing)}")
        if unexpected:
            problems.append(f"unexpected rows: {', '.join(unexpected)}")
        raise DLFormatError(
            f"error(s) loading learnables from {path}: {'; '.join(problems)} (strict=False skips them)"
        )
    _assign(path, assignments)
    return LearnablesResult(missing, unexpected)


def _fitted(where: str, name: str, parameter: str, value: np.ndarray, target: torch.Tensor) -> np.ndarray:
    """``value`` in ``target``'s shape, or a clear error. MATLAB has no 1-D arrays and stores
    per-channel values in its own vector shapes (a length-N vector 1×N or N×1; a batch
    normalization statistic of image data 1×1×N): a vector fits any vector of the same length."""
    shape = tuple(target.shape)
    if (
        value.shape != shape
        and _is_vector(value.shape)
        and _is_vector(shape)
        and value.size == target.numel()
    ):
        value = value.reshape(shape)  # a vector's values are in the same order in every vector shape
    if value.shape != shape:
        raise DLFormatError(
            f"{where}: layer {cut(name)!r} parameter {cut(parameter)!r} is "
            f"{matlab_size(value.shape)} in the file but {matlab_size(target.shape)} in the network"
        )
    return value


def _assign(path: Any, assignments: list[tuple[str, torch.Tensor, np.ndarray]]) -> None:
    """Copy every value into its parameter, or none: everything that can be checked is checked
    first, and a copy that still fails puts back the values already replaced."""
    converted: list[torch.Tensor | None] = []
    for what, target, value in assignments:
        if target.is_inference() and not torch.is_inference_mode_enabled():
            raise DLFormatError(
                f"cannot load learnables from {path}: {what} was created under torch.inference_mode(), "
                "and PyTorch allows no change to such a tensor outside it; build the network outside "
                "inference_mode (nothing was assigned)"
            )
        try:
            tensor = torch.from_numpy(np.ascontiguousarray(value))
            converted.append(tensor.to(dtype=target.dtype, device=target.device))
        except (RuntimeError, TypeError) as error:
            raise DLFormatError(
                f"cannot load learnables from {path}: {what} cannot take the file's value ({reason(error)}); "
                "nothing was assigned"
            ) from None
    replaced: list[tuple[torch.Tensor, torch.Tensor]] = []
    failing = ""
    with torch.no_grad():
        try:
            for index, (what, target, _) in enumerate(assignments):
                failing = what
                previous = target.detach().clone()
                target.copy_(converted[index])  # type: ignore[arg-type]
                converted[index] = None  # its memory goes to `previous`
                replaced.append((target, previous))
        except RuntimeError as error:
            for target, previous in reversed(replaced):
                target.copy_(previous)
            raise DLFormatError(
                f"cannot load learnables from {path}: copying into {failing} failed ({reason(error)}); "
                "nothing was changed"
            ) from None


def _rows(path: Any, table: dict[str, Any]) -> list[tuple[str, str, np.ndarray]]:
    columns = []
    for column in COLUMNS:
        if column not in table:
            raise DLFormatError(
                f"{path}: {column} is missing; a learnables table has Layer, Parameter and Value"
            )
        columns.append(_column(path, column, table[column]))
    if len({len(column) for column in columns}) != 1:
        raise DLFormatError(f"{path}: Layer, Parameter and Value must have the same number of rows")
    rows = []
    for number, (name, parameter, value) in enumerate(zip(*columns, strict=True), start=1):
        if not isinstance(name, str) or not isinstance(parameter, str):
            raise DLFormatError(f"{path} row {number}: Layer and Parameter must be character vectors")
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
            raise DLFormatError(f"{path} row {number}: Value of {name}/{parameter} must be a numeric array")
        rows.append((name, parameter, value))
    return rows


def _column(path: Any, column: str, cells: Any) -> np.ndarray:
    """One column of a learnables table: an N×1 (or 1×N) cell array, as a flat object array."""
    if not isinstance(cells, np.ndarray) or cells.dtype != object or cells.ndim != 2 or 1 not in cells.shape:
        raise DLFormatError(f"{path}: {column} must be an N×1 cell array; got {type(cells).__name__}")
    return cells.ravel(order="F")


class ListedRow(NamedTuple):
    """A learnables row as ``dlformat inspect`` shows it."""

    layer: str
    parameter: str
    value: Entry  # the Value cell's size and type
    nonfinite: str  # "" when every value is finite, else how many are NaN and Inf: "2 NaN, 1 Inf"


def listing(path: Any) -> list[ListedRow]:
    """The rows of a learnables file, for ``dlformat inspect``, with NaN and Inf values counted.

    MATLAB (and :func:`load_learnables`) accept non-finite learnables without notice, so inspect
    flags them: this reads the Layer, Parameter and Value cells (learnables are small next to
    the data files ``whos`` lists from headers alone), and no other variable.
    """
    from . import loadmat

    rows = []
    for number, (name, parameter, value) in enumerate(_rows(path, loadmat(path, list(COLUMNS))), start=1):
        matlab_class = CLASS_OF_DTYPE[value.dtype]
        entry = Entry(f"Value{{{number}}}", matlab_class, tuple(value.shape), str(value.dtype), value.nbytes)
        counts = []
        if value.dtype.kind == "f":
            for label, count in (("NaN", np.isnan(value).sum()), ("Inf", np.isinf(value).sum())):
                if count:
                    counts.append(f"{count} {label}")
        rows.append(ListedRow(name, parameter, entry, ", ".join(counts)))
    return rows
