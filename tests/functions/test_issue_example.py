"""Issue 12's example, the part of it this package ports (indexing, reductions, elementwise math)."""

from __future__ import annotations

import torch

import dlformat as dlf


def test_the_issue_example_runs_as_written():
    X = dlf.dlarray(torch.randn(8, 4, 10), "CBT")
    assert dlf.dims(X[:, 0:2, :]) == "CBT" and tuple(X[:, 0:2, :].shape) == (8, 2, 10)
    S = dlf.sum(X, "T")  # MATLAB: sum(X, finddim(X, "T"))
    assert dlf.dims(S) == "CBT" and tuple(S.shape) == (8, 4, 1)
    Y = dlf.exp(X) * (X > 0) + X**2  # elementwise math keeps the format
    assert dlf.dims(Y) == "CBT"
    x = dlf.stripdims(X)
    torch.testing.assert_close(dlf.stripdims(Y), torch.exp(x) * (x > 0) + x**2)
    torch.testing.assert_close(dlf.stripdims(S), x.sum(2, keepdim=True))


def test_matlab_dimension_numbers_are_finddim_positions_plus_one():
    X = dlf.dlarray(torch.randn(8, 4, 10), "CBT")
    (position,) = dlf.finddim(X, "T")
    torch.testing.assert_close(dlf.stripdims(dlf.sum(X, position + 1)), dlf.stripdims(dlf.sum(X, "T")))
