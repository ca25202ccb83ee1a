"""MATLAB's one-line display of a cell array of names (docs/networks.md#display): its contents when
they fit (the additionLayer page: ``InputNames: {'in1'  'in2'}``), else its size and class
(``{1×1000000 cell}``, MATLAB's compact display), reading no more names than fit."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import dlformat as dlf
from dlformat._display import CELL_WIDTH, cell

LONG = "x" * (CELL_WIDTH - 4)  # 'LONG' in braces: exactly CELL_WIDTH characters


@pytest.mark.parametrize(
    ("items", "shown"),
    [
        ((), "{}"),
        (("in",), "{'in'}"),
        (("in1", "in2"), "{'in1'  'in2'}"),  # MATLAB's two spaces
        ((LONG,), "{'" + LONG + "'}"),
        ((LONG + "x",), "{1×1 cell}"),  # one character too many
        (("in1", LONG), "{1×2 cell}"),
        (tuple(f"in{i}" for i in range(1, 1001)), "{1×1000 cell}"),
        ((object(), object()), "{1×2 cell}"),  # not text: MATLAB's {X, T} by size and class
        (("a", 3), "{1×2 cell}"),
    ],
)
def test_a_cell_shows_its_names_when_they_fit_and_its_size_otherwise(items, shown):
    assert cell(items) == shown
    assert len(cell(items)) <= CELL_WIDTH


class CountingNames(Sequence):
    """A million names that count how many are read."""

    def __init__(self):
        self.read = 0

    def __len__(self):
        return 10**6

    def __getitem__(self, index):
        if isinstance(index, slice) or index >= len(self):
            raise IndexError(index)
        self.read += 1
        return f"in{index + 1}"


def test_a_huge_cell_reads_only_the_names_that_fit():
    names = CountingNames()
    assert cell(names) == "{1×1000000 cell}"
    assert names.read <= CELL_WIDTH // 4


def net_with_a_million_inputs():
    return dlf.dlnetwork([dlf.featureInputLayer(3), dlf.additionLayer(10**6, Name="add")], Initialize=False)


def test_displays_of_a_million_inputs_are_one_line_each():
    layer = dlf.additionLayer(10**6)
    assert repr(layer).splitlines()[-2:] == ["     NumInputs: 1000000", "    InputNames: {1×1000000 cell}"]
    net = net_with_a_million_inputs()
    lines = repr(net).splitlines()
    assert "     InputNames: {1×1000000 cell}" in lines and "    OutputNames: {'add'}" in lines
    assert len(repr(net)) < 2000  # was 16 million characters
    graph = dlf.layerGraph([dlf.featureInputLayer(3), dlf.additionLayer(10**6, Name="add")])
    assert "     InputNames: {1×1000000 cell}" in repr(graph).splitlines()


def test_a_networks_input_names_list_a_million_ports():
    names = net_with_a_million_inputs().InputNames
    assert len(names) == 10**6 and names[:3] == ("featureinput", "add/in2", "add/in3")
    assert names[-1] == "add/in1000000"


@pytest.mark.parametrize(
    ("make", "rows"),
    [
        (
            lambda: dlf.additionLayer(2, Name="add_1"),
            ["          Name: 'add_1'", "     NumInputs: 2", "    InputNames: {'in1'  'in2'}"],
        ),
        (lambda: dlf.multiplicationLayer(3), ["     NumInputs: 3", "    InputNames: {'in1'  'in2'  'in3'}"]),
        (
            lambda: dlf.concatenationLayer(3, 2),
            ["           Dim: 3", "     NumInputs: 2", "    InputNames: {'in1'  'in2'}"],
        ),
        (lambda: dlf.depthConcatenationLayer(2), ["     NumInputs: 2", "    InputNames: {'in1'  'in2'}"]),
        (
            lambda: dlf.functionLayer(lambda X, Y: X + Y),
            ["       InputNames: {'in1'  'in2'}", "      OutputNames: {'out'}"],
        ),
    ],
)
def test_layer_displays_show_names_as_matlabs_cells(make, rows):
    """The additionLayer page's display: Name, NumInputs, then InputNames as a cell."""
    lines = repr(make()).splitlines()
    start = lines.index(rows[0])
    assert lines[start : start + len(rows)] == rows


def test_network_displays_separate_names_as_matlab_does():
    net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.additionLayer(2, Name="add")], Initialize=False)
    assert "     InputNames: {'featureinput'  'add/in2'}" in repr(net).splitlines()
    options = dlf.trainingOptions("adam", Metrics=["accuracy", "fscore"])
    assert "Metrics: {'accuracy'  'fscore'}" in repr(options)
