"""The ``dlformat`` command line: ``check [LAYER | FIXTURE.json]``, ``inspect``, ``predict``,
``convert``, ``plot``, ``--version``."""

from __future__ import annotations

import argparse
import inspect
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import _layer_fixtures
from ._display import text_table
from ._errors import MESSAGE_LIMIT, DLFormatError, cut
from ._validate import matlab_size
from ._version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlformat",
        description="MATLAB Deep Learning Toolbox formats and layers on PyTorch.",
    )
    parser.add_argument("--version", action="version", version=f"dlformat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = _subcommand(commands, "check", _check)
    check.add_argument(
        "layer",
        nargs="?",
        help="a MATLAB layer name (convolution2dLayer) or a fixture JSON file (default: every layer)",
    )
    listing = _subcommand(commands, "inspect", _inspect)
    listing.add_argument("file", help="a .mat file")
    _custom_layers_option(listing)
    predict = _subcommand(commands, "predict", _predict)
    predict.add_argument("network_file", metavar="NET.mat", help="a .mat file saving a network")
    predict.add_argument("data_file", metavar="DATA.mat", help="a .mat file holding the input array")
    predict.add_argument("--variable", required=True, help="the input array's variable in DATA.mat")
    predict.add_argument(
        "--format", help='the array\'s dlarray format, e.g. "SSCB" (default: from an image input layer)'
    )
    predict.add_argument("--network", help="the network's variable, needed when NET.mat saves several")
    _custom_layers_option(predict)
    convert = _subcommand(commands, "convert", _convert)
    convert.add_argument("network_file", metavar="NET.mat", help="a .mat file saving a network")
    convert.add_argument("output", metavar="OUT.pt", help="the network file to write")
    convert.add_argument("--network", help="the network's variable, needed when NET.mat saves several")
    _custom_layers_option(convert)
    plot = _subcommand(commands, "plot", _plot)
    plot.add_argument("source", help='"sinusoid", "timing-signal" (tensor2tensor), or a .mat file')
    plot.add_argument("-o", "--output", required=True, help="the PNG file to write")
    plot.add_argument("--dim", type=int, help="channels (default 128)")
    plot.add_argument("--positions", type=int, help="positions (default 100)")
    plot.add_argument("--layout", help='sinusoid: "interleaved" (default) or "halves"')
    plot.add_argument("--base", type=float, help="sinusoid: wavelength base (default 10000)")
    plot.add_argument("--var", help="the variable of a .mat file, e.g. posemb.Weights or Value{1}")
    plot.add_argument("--title", help="the plot's title")
    return parser


CUSTOM_LAYERS_NAME = "custom_layers"


def _custom_layers_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--custom-layers",
        metavar="MODULE[:NAME] | FILE.py[:NAME]",
        help="replacements for layers load_network cannot map (FunctionLayers, your classdef layers): "
        f"the mapping NAME (default {CUSTOM_LAYERS_NAME}) of a Python module or file, as "
        "load_network(..., custom_layers=...) takes it. This IMPORTS AND RUNS that Python code: "
        "pass only code you trust (nothing from the .mat file is ever run)",
    )


def _custom_layers(spec: str | None) -> dict[str, Any] | None:
    """The ``custom_layers`` mapping that ``--custom-layers`` names: ``MODULE[:NAME]`` (an importable
    module) or ``FILE.py[:NAME]``; the module is imported, so its code runs (the user asked)."""
    if spec is None:
        return None
    target, name = spec, CUSTOM_LAYERS_NAME
    head, colon, tail = spec.rpartition(":")
    if colon and tail.isidentifier():
        target, name = head, tail
    try:
        if target.endswith(".py"):
            import importlib.util

            path = Path(target)
            if not path.is_file():
                raise DLFormatError(f"--custom-layers: no file {target}")
            module_spec = importlib.util.spec_from_file_location(f"_dlformat_custom_layers_{path.stem}", path)
            if module_spec is None or module_spec.loader is None:
                raise DLFormatError(f"--custom-layers: cannot import {target} as Python")
            module = importlib.util.module_from_spec(module_spec)
            # registered first, as an import does: a dataclass or pickle looks its module up there
            sys.modules[module_spec.name] = module
            try:
                module_spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[module_spec.name]
                raise
        else:
            import importlib

            module = importlib.import_module(target)
    except DLFormatError:
        raise
    except Exception as error:  # whatever the user's module raises as it runs
        raise DLFormatError(
            f"--custom-layers: importing {target} failed ({type(error).__name__}: {error})"
        ) from None
    mapping = getattr(module, name, None)
    if mapping is None:
        raise DLFormatError(f"--custom-layers: {target} has no {name!r} (a dict of layer factories)")
    if not isinstance(mapping, dict) or not all(
        isinstance(key, str) and callable(factory) for key, factory in mapping.items()
    ):
        raise DLFormatError(
            f"--custom-layers: {target}:{name} must be a dict {{class or layer name: factory(properties)}}; "
            f"got {type(mapping).__name__}"
        )
    return mapping


def _subcommand(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """A subcommand that runs ``run``: its docstring's first line is the help, the whole its description."""
    text = inspect.cleandoc(run.__doc__ or "")
    command = commands.add_parser(name, help=text.splitlines()[0].rstrip("."), description=text)
    command.set_defaults(run=run)
    return command


def _check(args: argparse.Namespace) -> int:
    """Run every row of the per-layer format fixtures through dlformat's layers.

    Every row of every layer's format fixture (compat_fixtures/layers/<layer>.json: the "Layer
    Input and Output Formats" tables of MATLAB's documentation) runs through dlformat's layer and
    the output formats are compared. One line per row, a summary per layer; exits 1 on any
    mismatch, a layer dlformat lacks, or an unreadable file.
    """
    paths = _fixture_paths(args.layer)
    failed_layers, rows, failed_rows = [], 0, 0
    for index, path in enumerate(paths):
        try:
            fixture = _layer_fixtures.load_fixture(path)
        except DLFormatError as error:  # reported, and the other layers still run
            print(f"dlformat check: {error}", file=sys.stderr)
            failed_layers.append(path.stem)
            continue
        if index:
            print()
        results = _layer_fixtures.check_layer(fixture)
        print(f"{fixture.layer} ({len(results)} rows, {path.name})")
        lines = [
            (
                _layer_fixtures.FormatRow.shown(r.row.input),
                _layer_fixtures.FormatRow.shown(r.row.output),
                r.got,
                r.row.table,
                r.problem or "ok",
            )
            for r in results
        ]
        _table(("input", "expected", "got", "table", "result"), lines)
        failed = sum(not result.ok for result in results)
        rows, failed_rows = rows + len(results), failed_rows + failed
        if failed:
            failed_layers.append(fixture.layer)
        print(
            f"{fixture.layer}: "
            + (f"{failed} of {len(results)} rows failed" if failed else f"all {len(results)} rows ok")
        )
    if args.layer is None:  # every layer: one verdict for all
        print()
        if failed_layers:
            print(f"{failed_rows} of {rows} rows failed; layers failing: {', '.join(failed_layers)}")
        else:
            print(f"all {rows} rows of {len(paths)} layers ok")
    return 1 if failed_layers else 0


def _fixture_paths(spec: str | None) -> list[Path]:
    """Every layer's file, one layer's (by MATLAB name), or a file given by its path."""
    if spec is not None and (spec.endswith(".json") or Path(spec).exists()):
        return [Path(spec)]
    files = _layer_fixtures.fixture_files()
    if spec is None:
        return list(files.values())
    if spec not in files:
        raise DLFormatError(
            f"no format fixture for layer {spec!r}; the layers with fixtures are: {', '.join(files)}"
        )
    return [files[spec]]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("\n".join(text_table(header, rows, rule="")))


def _inspect(args: argparse.Namespace) -> int:
    """List every variable of a .mat file, struct and cell paths spelled out.

    Every variable of a MAT-file (versions 4 to 7.3): path, MATLAB class, size, dtype and bytes,
    with struct fields and cell indices spelled out (s.layers.posemb.Weights, c{2}). For a
    learnables file, also its layer/parameter rows. For each network MATLAB saved
    (SeriesNetwork, DAGNetwork, dlnetwork; needs mat-io), its layers as analyzeNetwork shows them
    (name, MATLAB class, output sizes, learnables) and the class names of its classification
    outputs; layers load_network cannot map are listed with their class, unless --custom-layers
    names your replacements for them (this imports and runs that Python code). Exits 1 on an
    unreadable file.
    """
    from .io import _learnables, _network, whos

    custom = _custom_layers(args.custom_layers)
    try:
        entries = whos(args.file)
        names = {entry.path for entry in entries}
        is_learnables = all(
            any(name.startswith(column + "{") for name in names) for column in _learnables.COLUMNS
        )
        learnables = _learnables.listing(args.file) if is_learnables else []
    except DLFormatError as error:
        print(f"dlformat inspect: {error}", file=sys.stderr)
        return 1
    rows = [
        (
            e.path,
            e.matlab_class,
            _size(e.shape),
            e.dtype or "-",
            "-" if e.matlab_class.endswith("(object)") else str(e.nbytes),
        )
        for e in entries
    ]
    _table(("variable", "class", "size", "dtype", "bytes"), rows)
    print(f"{len(entries)} entries, {sum(e.nbytes for e in entries)} bytes of data")
    if learnables:
        print()
        _table(
            ("layer", "parameter", "size", "dtype", "non-finite"),
            [
                (row.layer, row.parameter, _size(row.value.shape), row.value.dtype, row.nonfinite or "-")
                for row in learnables
            ],
        )
        flagged = sum(bool(row.nonfinite) for row in learnables)
        print(
            f"learnables: {len(learnables)} rows" + (f", {flagged} with NaN or Inf values" if flagged else "")
        )
    for entry in entries:
        if _network.readable_kind(_network.entry_class(entry)) is not None:
            print()
            try:
                _show_network(args.file, entry.path, custom)
            except DLFormatError as error:  # mat-io missing, or a variable that does not decode
                print(f"{entry.path}: {error}")
    return 0


def _show_network(path: str, variable: str, custom: dict[str, Any] | None = None) -> None:
    """One saved network (or layer graph, or layer array): its layers (analyzeNetwork's columns,
    MATLAB's class for the type), the classes of its classification outputs, and what
    load_network cannot map (``custom``: the replacements of ``--custom-layers``)."""
    from ._display import learnables_summary
    from .io import _network
    from .io._mcos import LAYER_ARRAY

    saved = _network.read_saved(path, variable)
    version = "" if saved.version is None else f" (saveobj version {saved.version})"
    kind = "Layer array" if saved.kind == LAYER_ARRAY else saved.kind
    print(f"{variable}: {kind}{version}, {len(saved.layers)} layers")
    try:
        net = _network.build(saved, custom)
    except DLFormatError as error:  # shown under the layers; the file's other networks still show
        net, problem = None, str(error)
    # each saved layer's dlformat layer, in saved order (a layer array's names may all be empty);
    # without the network (layers it cannot map), the layers it maps still show their learnables
    if isinstance(net, list):
        made: list[Any] = net
    elif net is not None:
        by_name = {layer.Name: layer for layer in net.Layers}
        made = [by_name.get(layer.name) for layer in saved.layers]
    else:
        made = [_mapped(layer) for layer in saved.layers]
    activations = _activations(net)
    rows, total = [], 0
    for index, (layer, mapped) in enumerate(zip(saved.layers, made, strict=True), 1):
        if mapped is not None:
            shown, count = learnables_summary(mapped)
            total += count
        else:
            shown = "(cannot be mapped)"
        rows.append(
            (
                str(index),
                cut(layer.name, 80),
                cut(_network.short_class(layer.matlab_class), 80),
                activations.get(layer.name, "-"),
                shown or "-",
            )
        )
    _table(("#", "Name", "Class", "Activations", "Learnables"), rows)
    if net is not None:
        print(f"Total learnables: {total:,}")
    for name, classes in saved.classes.items():
        if not classes:  # an untrained output layer's "auto"
            continue
        listed = cut(", ".join(map(str, classes)), MESSAGE_LIMIT)
        print(f"classes of '{cut(name, 80)}' ({len(classes)}): {listed}")
    if net is None:
        print(f"load_network cannot load {variable!r}: {problem}")


def _mapped(layer: Any) -> Any:
    """The dlformat layer of one saved layer, or ``None`` (not mapped, or a value it cannot map)."""
    from .io import _network

    try:
        return _network.mapped(layer)
    except DLFormatError:
        return None


def _activations(net: Any) -> dict[str, str]:
    """Each layer's output sizes from one run of analyzeNetwork's example inputs; none where the
    network cannot run on them (the table then shows the layers without)."""
    from .networks import DLNetwork, analyzeNetwork

    body = getattr(net, "body", net)
    if not isinstance(body, DLNetwork):
        return {}
    try:
        analysis = analyzeNetwork(body, show=False)
    except DLFormatError:
        return {}
    return {row.Name: row.Activations for row in analysis.rows if row.Activations}


def _size(shape: tuple[int, ...] | None) -> str:
    """MATLAB's ``3×4``, or ``?`` where the file's headers cannot tell (some MATLAB objects)."""
    return "?" if shape is None else matlab_size(shape)


def _predict(args: argparse.Namespace) -> int:
    """Run a network MATLAB saved on an array of a .mat file and print the result.

    Loads the network of NET.mat (dlformat.io.load_network), reads --variable of DATA.mat as a
    dlarray of --format (default "SSCB"/"SSSCB" for a network with an image input layer), and
    prints, for a network with one classification output, each observation's label and score
    (MATLAB's classify); otherwise predict's output as a table. Exits 1 with a one-line reason
    on an unreadable file, a missing variable, or layers load_network cannot map (listed):
    --custom-layers names your replacements for them (this imports and runs that Python code).
    """
    import numpy as np
    import torch

    from ._dlarray import dlarray
    from .io import load_network, loadmat
    from .io._network_file import require_network
    from .networks._legacy import LegacyNetwork

    net = load_network(
        args.network_file, variable=args.network, custom_layers=_custom_layers(args.custom_layers)
    )
    require_network(net, "predict")
    value = loadmat(args.data_file, [args.variable])[args.variable]
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        kind = f"{type(value).__name__} {getattr(value, 'dtype', '')}".strip()
        raise DLFormatError(
            f"variable {args.variable!r} of {args.data_file} is not a numeric array (it is {kind})"
        )
    X = dlarray(torch.as_tensor(np.asarray(value, dtype=np.float32)), args.format or _input_format(net))
    if isinstance(net, LegacyNetwork) and _classifies(net):
        labels, scores = net.classify(X)
        values = scores._data.detach().cpu().numpy()
        channel = scores._fmt.index("C")
        best = values.max(axis=channel).ravel()
        _table(
            ("observation", "label", "score"),
            [
                (str(i), str(label), f"{score:.4g}")
                for i, (label, score) in enumerate(zip(np.ravel(labels), best, strict=True), 1)
            ],
        )
        return 0
    outputs = net.predict(X)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    for name, output in zip(net.OutputNames, outputs, strict=True):
        _print_output(name, output)
    return 0


def _convert(args: argparse.Namespace) -> int:
    """Write a network MATLAB saved as a .pt file that loads without mat-io.

    OUT.pt holds plain data only (torch.load(..., weights_only=True) reads it): the network's
    kind, each layer's dlformat class and constructor arguments, the connections, and the
    state_dict. dlformat.io.load_network("OUT.pt") rebuilds the same network, same outputs.
    Exits 1 with the reason on an unreadable file or layers load_network cannot map
    (--custom-layers names replacements; a layer holding Python code cannot be written).
    """
    from .io import load_network
    from .io._network_file import write_network_file

    net = load_network(
        args.network_file, variable=args.network, custom_layers=_custom_layers(args.custom_layers)
    )
    write_network_file(net, args.output)
    print(f"wrote {args.output} ({len(net.Layers)} layers; dlformat.io.load_network reads it)")
    return 0


def _classifies(net: Any) -> bool:
    """A legacy network with exactly one classification output layer (what classify needs)."""
    from .layers import ClassificationOutputLayer, PixelClassificationLayer

    layers = {layer.Name: layer for layer in net.Layers}
    kinds = (ClassificationOutputLayer, PixelClassificationLayer)
    return sum(isinstance(layers[name], kinds) for name in net.OutputNames) == 1


def _input_format(net: Any) -> str:
    """The format of an image input layer's data, or an error asking for --format."""
    from .layers import ImageInputLayer

    first = next((layer for layer in net.Layers if layer.Name == net.InputNames[0]), None)
    if len(net.InputNames) == 1 and isinstance(first, ImageInputLayer):
        return "S" * (len(first.InputSize) - 1) + "CB"
    raise DLFormatError(
        "give the input's format with --format (e.g. CBT); the network's input layers: "
        + ", ".join(net.InputNames)
    )


def _print_output(name: str, output: Any) -> None:
    """One output: its format and sizes, then its values as a matrix: the first dimension down, the
    others across, in MATLAB's column-major order, each column headed by its indices ("2,3")."""
    import numpy as np

    from ._dlarray import DLArray

    data = output._data if isinstance(output, DLArray) else output
    values = np.asarray(data.detach().cpu().numpy())
    described = output._sizes() if isinstance(output, DLArray) else _size(tuple(values.shape))
    print(f"{name}: {described}")
    shape: tuple[int, ...] = values.shape or (1,)
    trailing = shape[1:] or (1,)
    matrix = values.reshape((shape[0], -1), order="F")
    # the first of the trailing dimensions varies fastest, as MATLAB stores them
    columns = [",".join(str(i + 1) for i in reversed(index)) for index in np.ndindex(*trailing[::-1])]
    _table(
        ("", *columns),
        [(str(i), *(f"{v:.4g}" for v in row)) for i, row in enumerate(matrix, 1)],
    )


# what each option of `plot` applies to; an option given where it means nothing is refused
_PLOT_OPTIONS = {
    "dim": ("sinusoid", "timing-signal"),
    "positions": ("sinusoid", "timing-signal"),
    "layout": ("sinusoid",),
    "base": ("sinusoid",),
    "var": ("a .mat file",),
}


def _plot_options(args: argparse.Namespace) -> None:
    """Refuse options that do not apply to the source, and sizes that make no table."""
    from ._plot import SOURCES

    source = args.source if args.source in SOURCES else "a .mat file"
    for option, sources in _PLOT_OPTIONS.items():
        if getattr(args, option) is not None and source not in sources:
            raise DLFormatError(f"--{option} applies to {' and '.join(sources)} only, not to {args.source!r}")
    for option in ("dim", "positions"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise DLFormatError(f"--{option} must be a positive integer; got {value}")
    if args.base is not None and not (math.isfinite(args.base) and args.base > 1):
        raise DLFormatError(f"--base must be a finite number > 1; got {args.base}")


def _plot(args: argparse.Namespace) -> int:
    """Draw a position table as a heat map (needs matplotlib).

    A PNG heat map, channels up, positions across: one of dlformat's encodings (sinusoid,
    timing-signal) or a 2-D variable of a .mat file (--var).
    """
    from . import _plot as plotting

    try:
        _plot_options(args)
        if args.source in plotting.SOURCES:
            layout = args.layout or "interleaved"
            table = plotting.generated_table(
                args.source,
                128 if args.dim is None else args.dim,
                100 if args.positions is None else args.positions,
                layout,
                10000.0 if args.base is None else args.base,
            )
            kind = layout if args.source == "sinusoid" else "tensor2tensor"
            title = args.title or f"{args.source} ({kind})"
        else:
            if not Path(args.source).exists():
                raise DLFormatError(
                    f'{args.source!r} is neither "sinusoid", "timing-signal" nor an existing .mat file'
                )
            if not args.var:
                raise DLFormatError("plotting a .mat file needs --var NAME (see dlformat inspect FILE)")
            table = plotting.variable_table(args.source, args.var)
            title = args.title or args.var
        plotting.heat_map(table, args.output, title)
    except DLFormatError as error:
        print(f"dlformat plot: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({table.shape[0]} channels × {table.shape[1]} positions)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a DLFormatError becomes a one-line message and exit status 1."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except DLFormatError as error:
        print(f"dlformat {args.command}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
