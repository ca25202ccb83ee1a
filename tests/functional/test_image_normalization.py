"""``batchnorm``, ``groupnorm`` and ``instancenorm`` against float64 NumPy references of MATLAB's
definitions (MathWorks, each function's page): subtract the mean, divide by
``sqrt(biased variance + Epsilon)``, then ``· scaleFactor + offset`` per channel, where one mean
spans

- batchnorm: every dimension but ``C`` (``S``, ``B``, ``T``, ``U``), per channel;
- groupnorm: a group of consecutive channels and ``S``, ``T``, ``U``, per observation;
- instancenorm: ``S``, ``T``, ``U``, per channel and observation;

and batchnorm's running statistics update as ``s_n = φ·s_x + (1 − φ)·s_(n−1)``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
import dlformat.functional as F
from dlformat import DLFormatError

RANK = {label: rank for rank, label in enumerate("SCBTU")}


def canonical(x, fmt):
    order = sorted(range(len(fmt)), key=lambda axis: RANK[fmt[axis]])
    return x.transpose(order), "".join(fmt[axis] for axis in order)


def normalize(x, axes, epsilon):
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)  # biased: divided by N
    return (x - mean) / np.sqrt(variance + epsilon)


def affine(y, fmt, offset, scale):
    shape = [1] * y.ndim
    shape[fmt.index("C")] = -1
    return y * np.reshape(scale, shape) + np.reshape(offset, shape)


def batch_statistics(x, fmt):
    axes = tuple(axis for axis, label in enumerate(fmt) if label != "C")
    mean = x.mean(axis=axes)
    return mean, ((x - np.expand_dims(mean, axes)) ** 2).mean(axis=axes)


def batchnorm_reference(x, fmt, offset, scale, epsilon=1e-5, mean=None, variance=None):
    if mean is None:
        mean, variance = batch_statistics(x, fmt)
    shape = [1] * x.ndim
    shape[fmt.index("C")] = -1
    y = (x - np.reshape(mean, shape)) / np.sqrt(np.reshape(variance, shape) + epsilon)
    return affine(y, fmt, offset, scale)


def groupnorm_reference(x, fmt, groups, offset, scale, epsilon=1e-5):
    c = fmt.index("C")
    grouped = x.reshape(*x.shape[:c], groups, x.shape[c] // groups, *x.shape[c + 1 :])
    split = fmt[:c] + "GC" + fmt[c + 1 :]  # G: the group, kept like B
    axes = tuple(axis for axis, label in enumerate(split) if label not in "GB")
    return affine(normalize(grouped, axes, epsilon).reshape(x.shape), fmt, offset, scale)


def instancenorm_reference(x, fmt, offset, scale, epsilon=1e-5):
    axes = tuple(axis for axis, label in enumerate(fmt) if label not in "CB")
    return affine(normalize(x, axes, epsilon), fmt, offset, scale)


def data(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) * rng.uniform(0.5, 3.0, shape) + rng.uniform(-2.0, 2.0, shape)


def learnables(channels, seed=100):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(channels), rng.uniform(0.5, 2.0, channels)


def formatted(x, fmt):
    return dlf.dlarray(torch.from_numpy(x), fmt)


def values(Y):
    return dlf.extractdata(Y).numpy()


FORMATS = [
    ("SSCB", (4, 5, 3, 2)),
    ("CB", (3, 6)),
    ("CBT", (3, 2, 5)),
    ("SCBT", (4, 3, 2, 5)),
    ("SSSCB", (3, 2, 2, 3, 2)),
    ("CBU", (3, 2, 4)),
    ("BCSS", (2, 3, 4, 5)),  # any order
]


# -- batchnorm ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "shape"), FORMATS)
def test_batchnorm_with_batch_statistics(fmt, shape):
    x = data(shape)
    offset, scale = learnables(3)
    Y, mu, sigma_sq = F.batchnorm(formatted(x, fmt), offset, scale, ReturnStatistics=True)
    held, held_fmt = canonical(x, fmt)
    expected_mean, expected_variance = batch_statistics(held, held_fmt)
    assert dlf.dims(Y) == held_fmt and Y.dtype == torch.float64
    np.testing.assert_allclose(
        values(Y), batchnorm_reference(held, held_fmt, offset, scale), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(values(mu), expected_mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(values(sigma_sq), expected_variance, rtol=1e-12, atol=1e-12)
    assert dlf.dims(mu) == "" and tuple(mu.shape) == (3,)
    single = F.batchnorm(formatted(x, fmt), offset, scale)  # MATLAB's one-output call
    assert isinstance(single, dlf.DLArray) and torch.equal(dlf.extractdata(single), dlf.extractdata(Y))


def test_batchnorm_inference_uses_the_trained_statistics():
    x = data((4, 5, 3, 2), 1)
    offset, scale = learnables(3)
    trained_mean, trained_variance = np.array([0.5, -1.0, 2.0]), np.array([0.25, 4.0, 1.5])
    Y = F.batchnorm(formatted(x, "SSCB"), offset, scale, trained_mean, trained_variance, Epsilon=1e-3)
    expected = batchnorm_reference(x, "SSCB", offset, scale, 1e-3, trained_mean, trained_variance)
    np.testing.assert_allclose(values(Y), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("mean_decay", "variance_decay"), [(0.1, 0.1), (0.3, 0.8), (0.0, 1.0)])
def test_batchnorm_updates_the_running_statistics(mean_decay, variance_decay):
    x = data((4, 3, 2, 5), 2)  # "SCBT"
    offset, scale = learnables(3)
    running_mean = np.array([[0.5], [-1.0], [2.0]])  # a column, as MATLAB keeps them
    running_variance = np.array([[0.25], [4.0], [1.5]])
    Y, mu, sigma_sq = F.batchnorm(
        formatted(x, "SCBT"),
        offset,
        scale,
        torch.from_numpy(running_mean),
        torch.from_numpy(running_variance),
        MeanDecay=mean_decay,
        VarianceDecay=variance_decay,
        ReturnStatistics=True,
    )
    batch_mean, batch_variance = batch_statistics(x, "SCBT")
    np.testing.assert_allclose(values(Y), batchnorm_reference(x, "SCBT", offset, scale), rtol=0, atol=1e-12)
    expected_mean = mean_decay * batch_mean + (1 - mean_decay) * running_mean.ravel()
    expected_variance = variance_decay * batch_variance + (1 - variance_decay) * running_variance.ravel()
    assert tuple(mu.shape) == (3, 1) and tuple(sigma_sq.shape) == (3, 1)  # shaped like the running values
    np.testing.assert_allclose(values(mu).ravel(), expected_mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(values(sigma_sq).ravel(), expected_variance, rtol=1e-12, atol=1e-12)


def test_batchnorm_default_decay_is_0_1_and_the_variance_is_the_biased_one():
    """Two observations of one channel, 0 and 2: mean 1, biased variance 1 (the unbiased one, which
    torch's BatchNorm folds into its running variance, would be 2)."""
    X = dlf.dlarray(torch.tensor([[0.0, 2.0]], dtype=torch.float64), "CB")
    _, mu, sigma_sq = F.batchnorm(X, 0.0, 1.0, 0.0, 1.0, ReturnStatistics=True)
    assert values(mu).item() == pytest.approx(0.1) and values(sigma_sq).item() == pytest.approx(1.0)
    _, mu, sigma_sq = F.batchnorm(X, 0.0, 1.0, 10.0, 10.0, ReturnStatistics=True)
    assert values(mu).item() == pytest.approx(9.1) and values(sigma_sq).item() == pytest.approx(9.1)


def test_batchnorm_statistics_take_the_shape_of_offset_and_are_detached():
    x = torch.from_numpy(data((4, 5, 3, 2), 3)).requires_grad_()
    offset = torch.zeros(1, 1, 3, dtype=torch.float64)  # MATLAB's 1×1×C learnables
    Y, mu, sigma_sq = F.batchnorm(dlf.dlarray(x, "SSCB"), offset, torch.ones(1, 1, 3), ReturnStatistics=True)
    assert tuple(mu.shape) == (1, 1, 3) and not mu.requires_grad and not sigma_sq.requires_grad
    assert Y.requires_grad and Y.dtype == torch.float32  # single wins over double


def test_batchnorm_name_value_pairs():
    x = data((3, 6), 4)
    offset, scale = learnables(3)
    X = formatted(x, "CB")
    Y = F.batchnorm(X, offset, scale, "Epsilon", 0.5)
    np.testing.assert_allclose(values(Y), batchnorm_reference(x, "CB", offset, scale, 0.5), atol=1e-12)
    _, mu, _ = F.batchnorm(X, offset, scale, np.zeros(3), np.ones(3), "meandecay", 0.5, ReturnStatistics=True)
    np.testing.assert_allclose(values(mu), 0.5 * x.mean(axis=1), atol=1e-12)


def test_batchnorm_unformatted_input():
    x = data((5, 2, 3), 5)  # "TBC"
    offset, scale = learnables(3)
    Y = F.batchnorm(torch.from_numpy(x), offset, scale, DataFormat="TBC")
    held, held_fmt = canonical(x, "TBC")
    assert dlf.dims(Y) == "" and tuple(Y.shape) == (3, 2, 5)
    np.testing.assert_allclose(values(Y), batchnorm_reference(held, held_fmt, offset, scale), atol=1e-12)


def test_batchnorm_gradients():
    x = torch.randn(3, 2, 3, 2, dtype=torch.float64, requires_grad=True)
    offset = torch.randn(3, dtype=torch.float64, requires_grad=True)
    scale = torch.randn(3, dtype=torch.float64, requires_grad=True)

    def training(x, offset, scale):
        return dlf.stripdims(F.batchnorm(dlf.dlarray(x, "SSCB"), offset, scale))

    def inference(x, offset, scale):
        mean, variance = torch.tensor([0.1, 0.2, 0.3]), torch.tensor([1.0, 2.0, 0.5])
        return dlf.stripdims(
            F.batchnorm(dlf.dlarray(x, "SSCB"), offset, scale, mean.double(), variance.double())
        )

    assert torch.autograd.gradcheck(training, (x, offset, scale))
    assert torch.autograd.gradcheck(inference, (x, offset, scale))


# -- groupnorm and instancenorm -------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "shape"), [*FORMATS[:5], ("SSCBT", (3, 2, 6, 2, 3))])
@pytest.mark.parametrize("groups", [1, 3, "all-channels", "channel-wise"])
def test_groupnorm(fmt, shape, groups):
    x = data(shape, 6)
    held, held_fmt = canonical(x, fmt)
    channels = held.shape[held_fmt.index("C")]
    count = {"all-channels": 1, "channel-wise": channels}.get(groups, groups)
    offset, scale = learnables(channels)
    Y = F.groupnorm(formatted(x, fmt), groups, offset, scale)
    assert dlf.dims(Y) == held_fmt
    expected = groupnorm_reference(held, held_fmt, count, offset, scale)
    np.testing.assert_allclose(values(Y), expected, rtol=0, atol=1e-12)


def test_groupnorm_two_groups_of_three():
    x = data((4, 5, 6, 2), 7)
    offset, scale = learnables(6)
    Y = F.groupnorm(formatted(x, "SSCB"), 2, offset, scale, "Epsilon", 0.1)
    np.testing.assert_allclose(values(Y), groupnorm_reference(x, "SSCB", 2, offset, scale, 0.1), atol=1e-12)


@pytest.mark.parametrize(("fmt", "shape"), [*FORMATS, ("SSCBT", (3, 2, 3, 2, 3))])
def test_instancenorm(fmt, shape):
    x = data(shape, 8)
    offset, scale = learnables(3)
    Y = F.instancenorm(formatted(x, fmt), offset, scale, Epsilon=1e-4)
    held, held_fmt = canonical(x, fmt)
    assert dlf.dims(Y) == held_fmt
    np.testing.assert_allclose(
        values(Y), instancenorm_reference(held, held_fmt, offset, scale, 1e-4), atol=1e-12
    )


def test_group_and_instance_normalization_agree_where_their_definitions_meet():
    """groupnorm with one channel per group is instancenorm; with one group of all channels it is
    layernorm over every dimension but B."""
    X = formatted(data((4, 5, 3, 2), 9), "SSCB")
    offset, scale = learnables(3)
    np.testing.assert_allclose(
        values(F.groupnorm(X, "channel-wise", offset, scale)),
        values(F.instancenorm(X, offset, scale)),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        values(F.groupnorm(X, "all-channels", offset, scale)),
        values(F.layernorm(X, offset, scale, OperationDimension="batch-excluded")),
        atol=1e-12,
    )


def test_unformatted_group_and_instance_normalization():
    x = data((2, 6, 5), 10)  # "BCT"
    offset, scale = learnables(6)
    held, held_fmt = canonical(x, "BCT")
    Y = F.groupnorm(x, 3, offset, scale, DataFormat="BCT")
    assert dlf.dims(Y) == "" and tuple(Y.shape) == (6, 2, 5)
    np.testing.assert_allclose(values(Y), groupnorm_reference(held, held_fmt, 3, offset, scale), atol=1e-12)
    Z = F.instancenorm(torch.from_numpy(x), offset, scale, "DataFormat", "BCT")
    np.testing.assert_allclose(values(Z), instancenorm_reference(held, held_fmt, offset, scale), atol=1e-12)


@pytest.mark.parametrize(
    ("x_dtype", "learnable_dtype", "expected", "tolerance"),
    [
        (torch.float64, torch.float32, torch.float32, 1e-5),
        (torch.float32, torch.float64, torch.float32, 1e-5),
        (torch.bfloat16, torch.bfloat16, torch.bfloat16, 3e-2),  # normalized in float32
    ],
)
@pytest.mark.parametrize("name", ["batchnorm", "groupnorm", "instancenorm"])
def test_precision_rule(name, x_dtype, learnable_dtype, expected, tolerance):
    x = data((4, 3, 2), 11)
    offset, scale = learnables(3)
    X = dlf.dlarray(torch.from_numpy(x).to(x_dtype), "SCB")
    learned = [torch.from_numpy(v).to(learnable_dtype) for v in (offset, scale)]
    held = dlf.extractdata(X).double().numpy()
    if name == "batchnorm":
        Y, reference = F.batchnorm(X, *learned), batchnorm_reference(held, "SCB", offset, scale)
    elif name == "groupnorm":
        Y, reference = F.groupnorm(X, 3, *learned), groupnorm_reference(held, "SCB", 3, offset, scale)
    else:
        Y, reference = F.instancenorm(X, *learned), instancenorm_reference(held, "SCB", offset, scale)
    assert Y.dtype == expected
    np.testing.assert_allclose(dlf.extractdata(Y).double().numpy(), reference, rtol=tolerance, atol=tolerance)


X_SSCB = dlf.dlarray(torch.ones(2, 2, 4, 2), "SSCB")
ZEROS, ONES = torch.zeros(4), torch.ones(4)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: F.batchnorm(X_SSCB, ZEROS, ONES, ZEROS),
            r"batchnorm takes a mean and a variance .* together, or neither; got only the mean",
        ),
        (
            lambda: F.batchnorm(X_SSCB, ZEROS, ONES, MeanDecay=1.5),
            r"batchnorm: MeanDecay must be a number in \[0, 1\]",
        ),
        (
            lambda: F.batchnorm(X_SSCB, ZEROS, ONES, VarianceDecay="a"),
            r"batchnorm: VarianceDecay must be a number in \[0, 1\]; got \"a\"",
        ),
        (lambda: F.batchnorm(X_SSCB, ZEROS, ONES, Epsilon=0), "Epsilon must be a positive number; got 0"),
        (
            lambda: F.batchnorm(X_SSCB, ZEROS, ONES, torch.zeros(3), ONES),
            r"batchnorm mean must have one value per channel \(4\); got 3",
        ),
        (
            lambda: F.batchnorm(X_SSCB, torch.zeros(3), ONES),
            r"batchnorm offset must have one value per channel \(4\)",
        ),
        (
            lambda: F.batchnorm(dlf.dlarray(torch.ones(2, 2), "SB"), 0, 1),
            'batchnorm needs data with a "C" dimension; got format "SB"',
        ),
        (
            lambda: F.batchnorm(X_SSCB, ZEROS, ONES, "Decay", 1),
            "batchnorm has no option 'Decay'; the options are: Eps",
        ),
        (
            lambda: F.groupnorm(X_SSCB, 3, ZEROS, ONES),
            r"groupnorm: numGroups \(3\) must divide the number of channels",
        ),
        (
            lambda: F.groupnorm(X_SSCB, 0, ZEROS, ONES),
            "groupnorm: numGroups must be a positive integer; got 0",
        ),
        (
            lambda: F.groupnorm(X_SSCB, "all", ZEROS, ONES),
            'groupnorm: numGroups must be one of "all-channels", "channel-wise", or a positive integer; got "all"',
        ),
        (
            lambda: F.groupnorm(X_SSCB, 2, ZEROS, ONES[:2]),
            r"groupnorm scaleFactor must have one value per channel",
        ),
        (lambda: F.instancenorm(X_SSCB, ZEROS, ONES, Epsilon=-1), "Epsilon must be a positive number"),
        (
            lambda: F.instancenorm(torch.ones(2, 4), ZEROS, ONES),
            "instancenorm needs a formatted dlarray, or DataFormat",
        ),
    ],
)
def test_errors_name_the_function_the_value_and_what_is_allowed(call, message):
    with pytest.raises(DLFormatError, match=message):
        call()


# -- batchnorm on torch's fused kernel: the cases it needs help with ----------------------------------
def test_batchnorm_one_value_per_channel():
    """One observation of "CB" data: each value is its channel's mean, the variance is 0 (torch's
    kernel refuses this case; MATLAB's definition gives ``offset``)."""
    x = np.array([[1.5], [-2.0], [0.25]])
    offset, scale = learnables(3)
    Y, mu, sigma_sq = F.batchnorm(formatted(x, "CB"), offset, scale, ReturnStatistics=True)
    np.testing.assert_allclose(values(Y).ravel(), offset, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(values(mu), x.ravel())
    np.testing.assert_array_equal(values(sigma_sq), np.zeros(3))
    _, mu, sigma_sq = F.batchnorm(
        formatted(x, "CB"), offset, scale, np.zeros(3), np.ones(3), ReturnStatistics=True
    )
    np.testing.assert_allclose(values(mu), 0.1 * x.ravel(), rtol=1e-12)
    np.testing.assert_allclose(values(sigma_sq), np.full(3, 0.9), rtol=1e-12)


@pytest.mark.parametrize("stored", ["BCSS", "SSCB", "CSSB", "BSSC"])
@pytest.mark.parametrize("mode", ["batch", "trained"])
def test_batchnorm_keeps_the_memory_order_of_its_input(stored, mode):
    """Any memory order gives the reference values, and the result is laid out as the input is."""
    sizes = {"S": 4, "C": 3, "B": 2}
    shape = tuple(sizes[label] if label != "S" else 4 + index for index, label in enumerate(stored))
    x = data(shape, 7)
    offset, scale = learnables(3)
    statistics = () if mode == "batch" else (np.array([0.5, -1.0, 2.0]), np.array([0.25, 4.0, 1.5]))
    X = formatted(x, stored)
    Y = F.batchnorm(X, offset, scale, *statistics)
    held, held_fmt = canonical(x, stored)
    expected = batchnorm_reference(held, held_fmt, offset, scale, 1e-5, *statistics)
    np.testing.assert_allclose(values(Y), expected, rtol=0, atol=1e-12)
    assert dlf.extractdata(Y).stride() == dlf.extractdata(X).stride()


def test_batchnorm_gradient_through_given_statistics():
    """Statistics that take part in autograd get their gradient (torch's kernel gives none)."""
    x = torch.randn(3, 2, 3, 2, dtype=torch.float64)
    mean = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    variance = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)

    def inference(mean, variance):
        return dlf.stripdims(
            F.batchnorm(
                dlf.dlarray(x, "SSCB"), torch.zeros(3).double(), torch.ones(3).double(), mean, variance
            )
        )

    assert torch.autograd.gradcheck(inference, (mean, variance))
