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
