"""The ``dlformat`` command line: ``dlformat check [FIXTURE.json]`` and ``dlformat --version``."""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence

import numpy as np

from ._errors import DLFormatError
from ._format_table import check_row, load_format_table
from ._version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlformat",
        description="MATLAB Deep Learning Toolbox formats and layers on PyTorch.",
    )
    parser.add_argument("--version", action="version", version=f"dlformat {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="run every row of a supported-format table through positionEmbeddingLayer",
        description=(
            "Run every row of a supported-format table through positionEmbeddingLayer with random "
            "sizes, and check the output format, shape and values against Weights. Exits 1 on any "
            "mismatch or an unreadable table."
        ),
    )
    check.add_argument(
        "fixture", nargs="?", help="a format table JSON file (default: the one shipped with dlformat)"
    )
    check.add_argument("--seed", type=int, help="seed for the random sizes (default: a fresh one, printed)")
    check.set_defaults(run=_check)
    return parser


def _check(args: argparse.Namespace) -> int:
    try:
        rows = load_format_table(args.fixture)
    except DLFormatError as error:
        print(f"dlformat check: {error}", file=sys.stderr)
        return 1
    seed = secrets.randbits(32) if args.seed is None else args.seed
    rng = np.random.default_rng(seed)
    results = [check_row(row, rng) for row in rows]
    header = ("input", "position", "expected", "got", "result")
    lines = [(r.row.input, r.row.position, r.row.output, r.got, r.problem or "ok") for r in results]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(4)]
    for line in [header, *lines]:
        cells = [cell.ljust(width) for cell, width in zip(line[:4], widths, strict=True)]
        print("  ".join([*cells, line[4]]))
    failed = sum(not result.ok for result in results)
    verdict = f"all {len(results)} rows ok" if not failed else f"{failed} of {len(results)} rows failed"
    print(f"{verdict} (seed {seed})")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
