"""Every ```python block of every docs/*.md page runs as written.

A page's blocks run in order in one namespace (a later block may use what an earlier one
defined), in a fresh temporary working directory (blocks write files). A block that must not
run is marked, visibly, by the line right before its fence::

    <!-- no-run: why it cannot run here -->

A block that reads real MATLAB files through an environment variable (``DLFORMAT_MATLAB_NETWORKS``,
``DLFORMAT_MATLAB_CORPUS``) is marked ``<!-- needs: VARIABLE -->``: it runs when the variable is
set and is skipped otherwise, as the tests reading those files are.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

DOCS = Path(__file__).parents[1] / "docs"
PAGES = sorted(DOCS.glob("*.md"))
_FENCE = re.compile(r"^( *)```python\n(.*?)^\1```", re.S | re.M)
_NO_RUN = re.compile(r"<!-- no-run: (.*?) -->")
_NEEDS = re.compile(r"<!-- needs: (DLFORMAT_MATLAB_NETWORKS|DLFORMAT_MATLAB_CORPUS) -->")


@dataclass(frozen=True)
class Block:
    line: int  # of the fence, 1-based
    code: str
    no_run: str | None  # the reason given, or None for a block that runs
    needs: str | None = None  # the environment variable naming the real files it reads


def python_blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    blocks = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = lines[line - 2].strip() if line >= 2 else ""
        mark, needs = _NO_RUN.fullmatch(before), _NEEDS.fullmatch(before)
        indent = len(match.group(1))
        code = "".join(row[indent:] for row in match.group(2).splitlines(keepends=True))
        blocks.append(
            Block(line, code, mark.group(1).strip() if mark else None, needs.group(1) if needs else None)
        )
    return blocks


def run_page(path: Path) -> None:
    namespace: dict[str, object] = {"__name__": f"docs.{path.stem}"}
    torch.manual_seed(0)
    for block in python_blocks(path.read_text(encoding="utf-8")):
        if block.no_run is not None or (block.needs is not None and not os.environ.get(block.needs)):
            continue
        # blank lines in front keep the page's line numbers in tracebacks
        code = compile("\n" * block.line + block.code, str(path), "exec")
        try:
            exec(code, namespace)
        except Exception as error:
            raise AssertionError(
                f"{path.name}: the python block at line {block.line} raised {type(error).__name__}: {error}"
            ) from error


@pytest.mark.parametrize(
    "page", [page for page in PAGES if python_blocks(page.read_text(encoding="utf-8"))], ids=lambda p: p.name
)
def test_the_python_blocks_of_the_page_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_page(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_no_run_mark_gives_a_reason_and_sits_right_before_a_python_block(page):
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    marked = {block.line - 1 for block in python_blocks(text) if block.no_run is not None}
    for number, line in enumerate(lines, start=1):
        if "no-run" in line:
            assert number in marked, (
                f"{page.name}:{number}: a no-run mark must be the line before a python fence"
            )
            assert _NO_RUN.fullmatch(line.strip()).group(1).strip(), f"{page.name}:{number}: give the reason"


def test_the_harness_runs_blocks_in_order_skips_marked_ones_and_names_a_failing_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```python\nx = 2\n```\n\n<!-- no-run: needs a GPU -->\n```python\nraise SystemExit\n```\n\n"
        "- a list item:\n\n  ```python\n  y = x * 3\n  assert y == 6\n  ```\n\n```python\n1 / 0\n```\n",
        encoding="utf-8",
    )
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert [(block.line, block.no_run) for block in blocks] == [
        (3, None),
        (8, "needs a GPU"),
        (14, None),
        (19, None),
    ]
    with pytest.raises(
        AssertionError, match=r"^page.md: the python block at line 19 raised ZeroDivisionError"
    ):
        run_page(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_needs_mark_names_a_variable_and_sits_right_before_a_python_block(page):
    text = page.read_text(encoding="utf-8")
    marked = {block.line - 1 for block in python_blocks(text) if block.needs is not None}
    for number, line in enumerate(text.splitlines(), start=1):
        if "<!-- needs" in line:
            assert _NEEDS.fullmatch(line.strip()), f"{page.name}:{number}: needs: DLFORMAT_MATLAB_..."
            assert number in marked, (
                f"{page.name}:{number}: a needs mark must be the line before a python fence"
            )


@pytest.mark.parametrize("value", ["", "/somewhere"])
def test_a_block_that_needs_real_files_runs_only_when_their_variable_is_set(tmp_path, monkeypatch, value):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- needs: DLFORMAT_MATLAB_NETWORKS -->\n```python\nimport os\nfound = os.environ['DLFORMAT_MATLAB_NETWORKS']\n"
        "assert found == '/somewhere'\n```\n",
        encoding="utf-8",
    )
    (block,) = python_blocks(page.read_text(encoding="utf-8"))
    assert block.needs == "DLFORMAT_MATLAB_NETWORKS" and block.no_run is None
    monkeypatch.setenv("DLFORMAT_MATLAB_NETWORKS", value)
    run_page(page)  # skipped when empty; runs (and its assertion holds) when set


def test_the_loading_networks_page_runs_its_real_network_examples():
    """Issue 23, item 10: the first example of docs/loading_networks.md reads vikas_net.mat through
    DLFORMAT_MATLAB_NETWORKS and runs (it was never run: a no-run block reading a relative path)."""
    blocks = python_blocks((DOCS / "loading_networks.md").read_text(encoding="utf-8"))
    first = blocks[0]
    assert first.needs == "DLFORMAT_MATLAB_NETWORKS" and first.no_run is None
    assert 'load_network(folder / "vikas_net.mat")' in first.code
