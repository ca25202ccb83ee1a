from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=[CUDA, pytest.mark.cuda])]
FLOAT_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def _shared_folder(variable: str) -> Path:
    """A folder of ../shared named by ``variable`` (CI sets it); the test is skipped without it."""
    folder = os.environ.get(variable)
    if not folder:
        pytest.skip(f"{variable} is not set")
    return Path(folder)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real MATLAB-written files of ../shared/matlab-corpus."""
    return _shared_folder("DLFORMAT_MATLAB_CORPUS")


@pytest.fixture(scope="session")
def networks() -> Path:
    """The real networks MATLAB saved, of ../shared/matlab-networks."""
    return _shared_folder("DLFORMAT_MATLAB_NETWORKS")


@pytest.fixture
def without_matio(monkeypatch: pytest.MonkeyPatch) -> None:
    """mat-io not installed: importing it fails, as it does where the extra is absent."""
    import sys

    for name in [name for name in sys.modules if name == "matio" or name.startswith("matio.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matio", None)
