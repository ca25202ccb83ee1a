from __future__ import annotations

import pytest
import torch

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=[CUDA, pytest.mark.cuda])]
FLOAT_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
