"""generalizedDice (Computer Vision Toolbox) against a float64 NumPy reference of MathWorks' own
implementation (``iCalcGeneralizedDice``): sums over the spatial dimensions, weights
1/max(eps, R_k²), then over the classes; formatted, unformatted (DataFormat) and numeric inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

from ..layers.test_dice_pixel_classification import dice_reference


def test_formatted_input_gives_one_value_per_observation_in_its_format():
    rng = np.random.default_rng(0)
    x, t = rng.random((5, 4, 3, 2)), (rng.random((5, 4, 3, 2)) > 0.5).astype(np.float64)
    S = dlf.generalizedDice(
        dlf.dlarray(torch.from_numpy(x), "SSCB"), dlf.dlarray(torch.from_numpy(t), "SSCB")
    )
    assert dlf.dims(S) == "SSCB" and tuple(S.shape) == (1, 1, 1, 2) and S.dtype == torch.float64
    np.testing.assert_allclose(dlf.extractdata(S).numpy().reshape(-1), dice_reference(x, t, 2), rtol=1e-13)


def test_unformatted_input_comes_back_in_the_given_order():
    rng = np.random.default_rng(1)
    x, t = rng.random((2, 6, 3)), rng.random((2, 6, 3))  # B × S × C, as DataFormat says
    S = dlf.generalizedDice(torch.from_numpy(x), torch.from_numpy(t), DataFormat="BSC")
    assert dlf.dims(S) == "" and tuple(S.shape) == (2, 1, 1)
    expected = dice_reference(np.transpose(x, (1, 2, 0)), np.transpose(t, (1, 2, 0)), 1)
    np.testing.assert_allclose(dlf.extractdata(S).numpy().reshape(-1), expected, rtol=1e-13)


def test_numeric_input_takes_its_last_dimension_as_the_classes():
    rng = np.random.default_rng(2)
    x, t = rng.random((4, 5, 3)), rng.random((4, 5, 3))
    S = dlf.generalizedDice(torch.from_numpy(x), torch.from_numpy(t))
    assert S.ndim == 0
    np.testing.assert_allclose(float(S), dice_reference(x[..., None], t[..., None], 2)[0], rtol=1e-13)


@pytest.mark.parametrize(
    ("X", "T", "options", "message"),
    [
        (dlf.dlarray(torch.rand(3, 2), "CB"), torch.rand(3, 2), {}, r'at least one "S" .*got format "CB"'),
        (dlf.dlarray(torch.rand(3, 2, 4), "CBT"), torch.rand(3, 2, 4), {}, r'got format "CBT"'),
        (
            dlf.dlarray(torch.rand(4, 3, 2), "SCB"),
            dlf.dlarray(torch.rand(4, 3), "SC"),
            {},
            r'same format; got "SCB" and "SC"',
        ),
        (dlf.dlarray(torch.rand(4, 3, 2), "SCB"), torch.rand(4, 3, 3), {}, r"same size; got 4×3×2 and 4×3×3"),
    ],
)
def test_bad_inputs(X, T, options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.generalizedDice(X, T, **options)
