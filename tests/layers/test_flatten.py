"""flattenLayer: S and C folded into C in MATLAB's column-major order (NumPy's order="F"), B and T kept,
and the same order fullyConnectedLayer flattens in."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("fmt", "shape", "output"),
    [
        ("SSCB", (4, 5, 3, 2), "CB"),
        ("SCB", (4, 3, 2), "CB"),
        ("SSSCB", (4, 5, 6, 3, 2), "CB"),
        ("CB", (3, 2), "CB"),
        ("SSCBT", (4, 5, 3, 2, 6), "CBT"),
        ("SCBT", (4, 3, 2, 6), "CBT"),
        ("CBT", (3, 2, 6), "CBT"),
        ("CU", (3, 6), "CU"),  # U kept
        ("SCBU", (4, 3, 2, 6), "CBU"),
        ("SCT", (4, 3, 6), "CT"),
    ],
)
def test_flattens_spatial_and_channel_column_major(fmt, shape, output):
    x = RNG.standard_normal(shape)
    kept = shape[fmt.index("C") + 1 :]  # the S dimensions and C come first in MATLAB's order
    # each observation (and time step) reshaped to a column in MATLAB's column-major order
    columns = [x[(..., *index)].reshape(-1, order="F") for index in np.ndindex(*kept)]
    expected = np.stack(columns, axis=-1).reshape((-1, *kept))
    Y = dlf.flattenLayer()(dlf.dlarray(torch.from_numpy(x), fmt))
    assert dlf.dims(Y) == output and Y.dtype == torch.float64
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy(), expected)


@pytest.mark.parametrize(("fmt", "shape"), [("SSCB", (4, 5, 3, 2)), ("SSCBT", (4, 5, 3, 2, 3))])
def test_flatten_then_fully_connected_equals_fully_connected(fmt, shape):
    X = dlf.dlarray(torch.from_numpy(RNG.standard_normal(shape)), fmt)
    fc = dlf.fullyConnectedLayer(7, InputSize=60, dtype=torch.float64)
    torch.testing.assert_close(
        dlf.extractdata(fc(dlf.flattenLayer()(X))), dlf.extractdata(fc(X)), rtol=1e-12, atol=1e-12
    )


def test_plain_properties_and_errors():
    layer = dlf.flattenLayer(Name="flatten1")
    assert (layer.Name, layer.default_name, layer.NumInputs, layer.OutputNames) == (
        "flatten1",
        "flatten",
        1,
        ("out",),
    )
    with pytest.raises(
        DLFormatError, match=r'FlattenLayer \'flatten1\' needs data with a "C" dimension; got format "SSB"'
    ):
        layer(dlf.dlarray(torch.ones(2, 2, 3), "SSB"))


@pytest.mark.parametrize(("fmt", "shape"), [("SC", (4, 3)), ("SSC", (4, 5, 3)), ("SSSC", (4, 5, 2, 3))])
def test_unbatched_images_flatten_to_cu_as_matlabs_table_says(fmt, shape):
    x = RNG.standard_normal(shape)
    Y = dlf.flattenLayer()(dlf.dlarray(torch.from_numpy(x), fmt))
    assert dlf.dims(Y) == "CU" and tuple(Y.shape) == (x.size, 1)
    np.testing.assert_array_equal(dlf.extractdata(Y).numpy()[:, 0], x.reshape(-1, order="F"))
