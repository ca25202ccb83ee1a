"""Docstring examples run as doctests (pytest --doctest-modules) with these names at hand."""

from __future__ import annotations

import pytest
import torch

import dlformat
from dlformat import functional


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict[str, object]) -> None:
    doctest_namespace.update(torch=torch, dlf=dlformat, F=functional)
