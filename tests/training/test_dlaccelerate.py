"""dlaccelerate: same results and gradients as the plain function, MATLAB's cache bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def model_loss(W, X):
    # loss = sum((W*X).^2, "all"); dloss/dW = 2*(W*X)*X'
    Y = W @ X
    loss = dlf.dlarray((dlf.stripdims(Y) ** 2).sum())
    return loss, dlf.dlgradient(loss, W)


def values():
    W = dlf.dlarray(torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64))
    X = dlf.dlarray(torch.tensor([[2.0, 1.0, 0.0], [-1.0, 4.0, 2.0]], dtype=torch.float64))
    return W, X


def test_outputs_and_gradients_equal_the_plain_function_inside_dlfeval():
    W, X = values()
    accfun = dlf.dlaccelerate(model_loss)
    plain = dlf.dlfeval(model_loss, W, X)
    for _ in range(3):  # first call and cached calls alike
        loss, grad = dlf.dlfeval(accfun, W, X)
        assert torch.equal(dlf.extractdata(loss), dlf.extractdata(plain[0]))
        assert torch.equal(dlf.extractdata(grad), dlf.extractdata(plain[1]))
    w, x = (dlf.extractdata(a).numpy() for a in (W, X))
    assert dlf.extractdata(loss).item() == pytest.approx(((w @ x) ** 2).sum(), abs=0, rel=1e-15)
    np.testing.assert_allclose(dlf.extractdata(grad).numpy(), 2 * (w @ x) @ x.T, rtol=1e-15)


def test_formats_pass_through():
    accfun = dlf.dlaccelerate(lambda x: dlf.sum(x * 2, "T"))
    y = accfun(dlf.dlarray(torch.ones(3, 2, 4), "CBT"))
    assert dlf.dims(y) == "CBT" and tuple(y.shape) == (3, 2, 1)
    assert torch.equal(dlf.extractdata(y), torch.full((3, 2, 1), 8.0))


def test_defaults_and_repr():
    accfun = dlf.dlaccelerate(model_loss)
    assert accfun.Function is model_loss and accfun.Enabled is True
    assert (accfun.CacheSize, accfun.HitRate, accfun.Occupancy) == (50, 0.0, 0.0)
    assert (accfun.CheckMode, accfun.CheckTolerance) == ("none", 1e-4)
    assert "Function: @model_loss" in repr(accfun) and "CacheSize: 50" in repr(accfun)


def test_hit_rate_and_occupancy_count_input_patterns():
    accfun = dlf.dlaccelerate(lambda x, k: x * k)
    a = dlf.dlarray(torch.ones(2, 3), "CB")
    accfun(a, 2)  # new pattern
    accfun(dlf.dlarray(torch.zeros(2, 3), "CB"), 2)  # same sizes, format, type and value: a hit
    accfun(dlf.dlarray(torch.ones(2, 4), "CB"), 2)  # new size
    accfun(dlf.dlarray(torch.ones(2, 3), "BC"), 2)  # new format
    accfun(a, 3)  # a non-dlarray input counts by value
    accfun(a, 3)  # hit
    assert accfun.HitRate == pytest.approx(100 * 2 / 6)
    assert accfun.Occupancy == pytest.approx(100 * 4 / 50)
    dlf.clearCache(accfun)
    assert (accfun.HitRate, accfun.Occupancy) == (0.0, 0.0)


def test_a_full_cache_keeps_its_patterns_and_disabled_calls_are_not_counted():
    accfun = dlf.dlaccelerate(lambda x: x + 1)
    accfun.CacheSize = 2
    for n in (1, 2, 3, 3):
        assert torch.equal(dlf.extractdata(accfun(dlf.dlarray(torch.zeros(n)))), torch.ones(n))
    assert accfun.Occupancy == 100.0 and accfun.HitRate == 0.0  # the third size was never cached
    accfun.Enabled = False
    accfun(dlf.dlarray(torch.zeros(1)))
    assert accfun.HitRate == 0.0
    accfun.clearCache()
    assert accfun.Occupancy == 0.0


@pytest.mark.parametrize(
    ("prop", "value", "match"),
    [
        ("CacheSize", 0, "CacheSize must be a positive integer; got 0"),
        ("CacheSize", 2.5, "CacheSize must be a positive integer"),
        ("Enabled", "yes", "Enabled must be true or false"),
        ("CheckMode", "strict", 'CheckMode must be one of "none", "tolerance"; got "strict"'),
        ("CheckTolerance", -1, "CheckTolerance must be a positive number"),
    ],
)
def test_bad_properties_are_refused(prop, value, match):
    accfun = dlf.dlaccelerate(model_loss)
    with pytest.raises(DLFormatError, match=match):
        setattr(accfun, prop, value)


def test_read_only_properties_and_bad_arguments():
    accfun = dlf.dlaccelerate(model_loss)
    for prop in ("Function", "HitRate", "Occupancy"):
        with pytest.raises(AttributeError):
            setattr(accfun, prop, 1)
    with pytest.raises(DLFormatError, match="dlaccelerate needs a function to accelerate"):
        dlf.dlaccelerate(3)
    with pytest.raises(DLFormatError, match="clearCache needs an AcceleratedFunction"):
        dlf.clearCache(model_loss)
    accfun = dlf.dlaccelerate(lambda a, b: a + b)
    accfun(dlf.dlarray(torch.ones(1)), dlf.dlarray(torch.ones(1)))
    accfun(dlf.dlarray(torch.ones(2)), dlf.dlarray(torch.ones(2)))
    with pytest.raises(DLFormatError, match="CacheSize 1 is smaller than the 2 input patterns cached"):
        accfun.CacheSize = 1
