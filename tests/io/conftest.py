from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real MATLAB-written files of ../shared/matlab-corpus (CI sets the variable)."""
    folder = os.environ.get("DLFORMAT_MATLAB_CORPUS")
    if not folder:
        pytest.skip("DLFORMAT_MATLAB_CORPUS is not set")
    return Path(folder)
