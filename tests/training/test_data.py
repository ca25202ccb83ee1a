"""The trainer's mini-batch selection: the same values as index_select, in the data's memory order."""

from __future__ import annotations

import pytest
import torch

from dlformat.training._data import _selected


@pytest.mark.parametrize(
    ("shape", "permutation", "dimension"),
    [
        ((5, 1, 4, 3), (2, 3, 1, 0), 3),  # "BCSS" memory read as "SSCB": batch-first kept
        ((6, 5, 3), (1, 2, 0), 1),  # "TBC" memory read as "CBT"
        ((4, 3), (1, 0), 1),  # "BC" memory read as "CB"
        ((4, 3), (0, 1), 0),  # contiguous
    ],
)
def test_selection_equals_index_select_and_keeps_the_memory_order(shape, permutation, dimension):
    view = torch.arange(torch.Size(shape).numel(), dtype=torch.float32).reshape(shape).permute(permutation)
    indices = torch.tensor([2, 0, 1])
    picked = _selected(view, dimension, indices)
    assert torch.equal(picked, view.index_select(dimension, indices))
    physical = sorted(range(view.ndim), key=lambda d: -view.stride(d))
    assert picked.permute(physical).is_contiguous()


def test_a_view_that_is_no_permutation_of_contiguous_memory_is_selected_as_it_is():
    strided = torch.arange(24.0).reshape(4, 6)[:, ::2]
    picked = _selected(strided, 0, torch.tensor([3, 1]))
    assert torch.equal(picked, strided.index_select(0, torch.tensor([3, 1])))
