from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=[CUDA, pytest.mark.cuda])]
FLOAT_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real MATLAB-written files of ../shared/matlab-corpus (CI sets the variable)."""
    folder = os.environ.get("DLFORMAT_MATLAB_CORPUS")
    if not folder:
        pytest.skip("DLFORMAT_MATLAB_CORPUS is not set")
    return Path(folder)


@pytest.fixture(scope="session")
def networks() -> Path:
    """The real networks MATLAB saved, of ../shared/matlab-networks (CI sets the variable)."""
    folder = os.environ.get("DLFORMAT_MATLAB_NETWORKS")
    if not folder:
        pytest.skip("DLFORMAT_MATLAB_NETWORKS is not set")
    return Path(folder)


@pytest.fixture
def without_matio(monkeypatch: pytest.MonkeyPatch) -> None:
    """mat-io not installed: importing it fails, as it does where the extra is absent."""
    import sys

    for name in [name for name in sys.modules if name == "matio" or name.startswith("matio.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matio", None)
