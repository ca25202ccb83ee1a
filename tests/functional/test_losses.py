"""MATLAB's loss functions against float64 NumPy transcriptions of MathWorks' formulas.

References, per element i of the predictions Y and targets T, with weights w and mask m (both 1
when not given), summed and divided by the normalization factor N:

- crossentropy, single-label (MathWorks, crossentropy): loss = −(1/N) Σ_n Σ_k w·m·T log Y, the
  inner sum over the classes along C; multilabel: −(1/N) Σ w·m·(T log Y + (1−T) log(1−Y)).
- l1loss: (1/N) Σ w·m·|Y − T|; l2loss: (1/N) Σ w·m·(Y − T)²; huber: (1/N) Σ w·m·h(Y − T) with
  h(d) = ½d² for |d| ≤ δ and δ|d| − ½δ² beyond.
- mse (MathWorks, mse): loss = 1/(2N) Σ_{i=1..M} (X_i − T_i)², N the number of observations.

N is the number of observations ("batch-size"), the number of predictions ("all-elements"),
1 ("none"), or per observation the included predictions ("mask-included").
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError


def rng(seed):
    return np.random.default_rng(seed)


def probabilities(shape, channel, seed):
    x = rng(seed).standard_normal(shape)
    e = np.exp(x - x.max(axis=channel, keepdims=True))
    return e / e.sum(axis=channel, keepdims=True)


def onehot(shape, channel, seed):
    classes = rng(seed).integers(
        0, shape[channel], size=tuple(s for i, s in enumerate(shape) if i != channel)
    )
    return np.moveaxis(np.eye(shape[channel])[classes], -1, channel), classes + 1


def normalize(total_per_obs_or_total, values, fmt, norm, included=None):
    """MATLAB's normalization of summed loss values (values already weighted and masked)."""
    if norm == "none":
        return values.sum()
    if norm == "batch-size":
        return values.sum() / (values.shape[fmt.index("B")] if "B" in fmt else 1)
    if norm == "all-elements":
        return values.sum() / values.size
    b = fmt.index("B")
    total = 0.0
    for n in range(values.shape[b]):
        count = np.take(included, n, axis=b).sum()
        total += np.take(values, n, axis=b).sum() / count if count else 0.0
    return total


def ref_crossentropy(Y, T, fmt, w=1.0, m=1.0, mode="exclusive", norm="batch-size"):
    c = fmt.index("C")
    if mode == "exclusive":
        values = (-w * m * T * np.log(Y)).sum(axis=c, keepdims=True)
        included = np.broadcast_to(np.asarray(m) != 0, Y.shape).any(axis=c, keepdims=True)
    else:
        values = -w * m * (T * np.log(Y) + (1 - T) * np.log(1 - Y))
        included = np.broadcast_to(np.asarray(m) != 0, Y.shape)
    return normalize(None, np.broadcast_to(values, values.shape), fmt, norm, included)


def value(loss):
    """The scalar a reduced loss holds; MATLAB returns an unformatted 1×1 dlarray."""
    assert isinstance(loss, dlf.DLArray) and dlf.dims(loss) == "" and tuple(loss.shape) == ()
    return dlf.extractdata(loss).item()


CE_CASES = [("CB", (5, 7)), ("CBT", (4, 3, 6)), ("SSCB", (3, 2, 4, 5))]


@pytest.mark.parametrize(("fmt", "shape"), CE_CASES, ids=[case[0] for case in CE_CASES])
@pytest.mark.parametrize("norm", ["batch-size", "all-elements", "none"])
def test_crossentropy_single_label(fmt, shape, norm):
    c = fmt.index("C")
    Y, (T, _) = probabilities(shape, c, 1), onehot(shape, c, 2)
    loss = dlf.crossentropy(dlf.dlarray(Y, fmt), dlf.dlarray(T, fmt), NormalizationFactor=norm)
    assert dlf.dims(loss) == "" and loss.dtype == torch.float64 and tuple(loss.shape) == ()
    assert value(loss) == pytest.approx(ref_crossentropy(Y, T, fmt, norm=norm), rel=1e-12)


def test_crossentropy_sums_time_steps_so_nanogpt_divides_by_the_sequence_length():
    Y, (T, _) = probabilities((4, 2, 5), 0, 3), onehot((4, 2, 5), 0, 4)
    per_step = -(T * np.log(Y)).sum(axis=0)  # 2 observations × 5 steps
    loss = value(dlf.crossentropy(dlf.dlarray(Y, "CBT"), dlf.dlarray(T, "CBT")))
    assert loss == pytest.approx(per_step.sum() / 2, rel=1e-12)
    assert loss / 5 == pytest.approx(per_step.mean(), rel=1e-12)


def test_crossentropy_multilabel_both_spellings():
    Y, T = rng(5).uniform(0.05, 0.95, (3, 4)), (rng(6).uniform(size=(3, 4)) > 0.5).astype(float)
    expected = ref_crossentropy(Y, T, "CB", mode="independent")
    X, Tt = dlf.dlarray(Y, "CB"), dlf.dlarray(T, "CB")
    assert value(dlf.crossentropy(X, Tt, ClassificationMode="multilabel")) == pytest.approx(
        expected, rel=1e-12
    )
    assert value(dlf.crossentropy(X, Tt, TargetCategories="independent")) == pytest.approx(
        expected, rel=1e-12
    )
    assert value(dlf.crossentropy(X, Tt, "TargetCategories", "independent")) == pytest.approx(
        expected, rel=1e-12
    )


def test_crossentropy_class_observation_and_element_weights():
    Y, (T, _) = probabilities((3, 4, 2), 0, 7), onehot((3, 4, 2), 0, 8)
    X, Tt = dlf.dlarray(Y, "CBT"), dlf.dlarray(T, "CBT")
    classes = np.array([0.2, 1.0, 3.0])
    expected = ref_crossentropy(Y, T, "CBT", w=classes[:, None, None])
    assert value(dlf.crossentropy(X, Tt, classes)) == pytest.approx(
        expected, rel=1e-12
    )  # a vector: class weights
    assert value(dlf.crossentropy(X, Tt, Weights=dlf.dlarray(classes, "C"))) == pytest.approx(
        expected, rel=1e-12
    )
    observations = np.array([1.0, 2.0, 0.5, 0.0])
    expected = ref_crossentropy(Y, T, "CBT", w=observations[None, :, None])
    assert value(dlf.crossentropy(X, Tt, observations, WeightsFormat="B")) == pytest.approx(
        expected, rel=1e-12
    )
    elements = rng(9).uniform(size=(3, 4, 2))
    expected = ref_crossentropy(Y, T, "CBT", w=elements)
    assert value(dlf.crossentropy(X, Tt, elements)) == pytest.approx(expected, rel=1e-12)


def test_crossentropy_mask_and_mask_included_count_the_included_predictions():
    Y, (T, _) = probabilities((3, 2, 5), 0, 10), onehot((3, 2, 5), 0, 11)
    mask = np.ones((1, 2, 5))
    mask[0, 0, 3:] = 0  # observation 1 has 3 steps, observation 2 all 5
    X, Tt, M = dlf.dlarray(Y, "CBT"), dlf.dlarray(T, "CBT"), dlf.dlarray(mask, "CBT")
    for norm in ("batch-size", "mask-included"):
        expected = ref_crossentropy(Y, T, "CBT", m=mask, norm=norm)
        assert value(dlf.crossentropy(X, Tt, Mask=M, NormalizationFactor=norm)) == pytest.approx(
            expected, rel=1e-12
        )
    per_step = -(T * np.log(Y)).sum(axis=0)
    by_hand = per_step[0, :3].mean() + per_step[1].mean()
    assert value(dlf.crossentropy(X, Tt, Mask=M, NormalizationFactor="mask-included")) == pytest.approx(
        by_hand
    )
    # a mask of the predictions' size, unformatted, counts the same predictions
    full = np.broadcast_to(mask, Y.shape).copy()
    assert value(dlf.crossentropy(X, Tt, Mask=full, NormalizationFactor="mask-included")) == pytest.approx(
        by_hand
    )


def test_crossentropy_unreduced_keeps_the_format_with_one_value_per_prediction():
    Y, (T, _) = probabilities((3, 2, 4), 0, 12), onehot((3, 2, 4), 0, 13)
    loss = dlf.crossentropy(dlf.dlarray(Y, "CBT"), dlf.dlarray(T, "CBT"), Reduction="none")
    assert dlf.dims(loss) == "CBT" and tuple(loss.shape) == (1, 2, 4)
    np.testing.assert_allclose(
        dlf.extractdata(loss).numpy(), -(T * np.log(Y)).sum(0, keepdims=True), rtol=1e-12
    )


def test_crossentropy_unformatted_data_with_dataformat_and_single_wins():
    Y, (T, _) = probabilities((4, 3), 1, 14), onehot((4, 3), 1, 15)  # "BC": observations first
    loss = dlf.crossentropy(torch.tensor(Y, dtype=torch.float32), torch.tensor(T.T), DataFormat="BC")
    assert loss.dtype == torch.float32 and dlf.dims(loss) == ""
    assert value(loss) == pytest.approx(ref_crossentropy(Y.T, T.T, "CB"), rel=1e-6)
    unreduced = dlf.crossentropy(torch.tensor(Y), torch.tensor(T.T), DataFormat="BC", Reduction="none")
    assert dlf.dims(unreduced) == "" and tuple(unreduced.shape) == (1, 4)


def test_crossentropy_zero_probabilities_give_finite_values():
    Y = dlf.dlarray(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), "CB")
    assert value(dlf.crossentropy(Y, Y)) == 0.0
    assert np.isfinite(value(dlf.crossentropy(Y, dlf.dlarray(torch.tensor([[0.0, 1.0], [1.0, 0.0]]), "CB"))))


@pytest.mark.parametrize(("fmt", "shape"), CE_CASES, ids=[case[0] for case in CE_CASES])
@pytest.mark.parametrize("norm", ["batch-size", "all-elements", "mask-included", "none"])
def test_indexcrossentropy_equals_crossentropy_of_the_one_hot_targets(fmt, shape, norm):
    c = fmt.index("C")
    Y, (T, indices) = probabilities(shape, c, 16), onehot(shape, c, 17)
    w = rng(18).uniform(0.5, 2, shape[c])
    mask = (rng(19).uniform(size=tuple(1 if i == c else s for i, s in enumerate(shape))) > 0.3).astype(float)
    X = dlf.dlarray(Y, fmt)
    expected = ref_crossentropy(
        Y, T, fmt, w=w.reshape([-1 if i == c else 1 for i in range(len(shape))]), m=mask, norm=norm
    )
    loss = dlf.indexcrossentropy(X, torch.tensor(indices), w, Mask=mask, NormalizationFactor=norm)
    assert value(loss) == pytest.approx(expected, rel=1e-12)
    assert value(dlf.crossentropy(X, T, w, Mask=mask, NormalizationFactor=norm)) == pytest.approx(
        expected, rel=1e-12
    )


def test_indexcrossentropy_takes_matlab_1_based_float_indices_and_formatted_targets():
    Y = probabilities((3, 4), 0, 20)
    indices = np.array([3.0, 1.0, 2.0, 3.0])
    expected = -np.log(Y[indices.astype(int) - 1, range(4)]).sum() / 4
    X = dlf.dlarray(Y, "CB")
    assert value(dlf.indexcrossentropy(X, indices)) == pytest.approx(expected, rel=1e-12)
    assert value(dlf.indexcrossentropy(X, dlf.dlarray(indices, "B"))) == pytest.approx(expected, rel=1e-12)
    assert value(dlf.indexcrossentropy(X, dlf.dlarray(indices[None], "CB"))) == pytest.approx(
        expected, rel=1e-12
    )
    unreduced = dlf.indexcrossentropy(X, indices, Reduction="none")
    assert dlf.dims(unreduced) == "CB" and tuple(unreduced.shape) == (1, 4)


REGRESSION = {
    "l1loss": lambda d, delta: np.abs(d),
    "l2loss": lambda d, delta: d**2,
    "huber": lambda d, delta: np.where(np.abs(d) <= delta, 0.5 * d**2, delta * np.abs(d) - 0.5 * delta**2),
}


@pytest.mark.parametrize("name", sorted(REGRESSION))
@pytest.mark.parametrize("norm", ["batch-size", "all-elements", "mask-included", "none"])
def test_regression_losses(name, norm):
    Y, T = 2 * rng(21).standard_normal((3, 4, 5)), rng(22).standard_normal((3, 4, 5))
    w = rng(23).uniform(size=(1, 4, 1))
    mask = (rng(24).uniform(size=(3, 4, 5)) > 0.25).astype(float)
    options = {"TransitionPoint": 0.7} if name == "huber" else {}
    delta = 0.7
    values = w * mask * REGRESSION[name](Y - T, delta)
    expected = normalize(None, values, "CBT", norm, mask != 0)
    function = getattr(dlf, name)
    loss = function(
        dlf.dlarray(Y, "CBT"),
        dlf.dlarray(T, "CBT"),
        dlf.dlarray(w, "CBT"),
        Mask=mask,
        NormalizationFactor=norm,
        **options,
    )
    assert value(loss) == pytest.approx(expected, rel=1e-12)
    unreduced = function(dlf.dlarray(Y, "CBT"), T, Reduction="none", **options)
    assert dlf.dims(unreduced) == "CBT"
    np.testing.assert_allclose(
        dlf.extractdata(unreduced).numpy(), REGRESSION[name](Y - T, delta if options else 1.0), rtol=1e-12
    )


def test_huber_transition_point_default_is_one():
    d = np.array([[-3.0, -1.0, 0.5, 2.0]])
    expected = REGRESSION["huber"](d, 1.0).sum() / 4
    assert value(dlf.huber(dlf.dlarray(d, "CB"), np.zeros((1, 4)))) == pytest.approx(expected)


def test_mse_is_halved_and_divides_by_the_observations_only():
    Y, T = rng(25).uniform(size=(6, 6, 1, 1)), np.ones((6, 6, 1, 1))  # MathWorks' example: one 6×6 image
    expected = ((Y - T) ** 2).sum() / 2
    assert value(dlf.mse(dlf.dlarray(Y, "SSCB"), T)) == pytest.approx(expected, rel=1e-12)
    Y, T = rng(26).standard_normal((3, 4, 5)), rng(27).standard_normal((3, 4, 5))
    assert value(dlf.mse(dlf.dlarray(Y, "CBT"), T)) == pytest.approx(
        ((Y - T) ** 2).sum() / (2 * 4), rel=1e-12
    )
    assert value(dlf.mse(Y, T, DataFormat="CBT")) == pytest.approx(((Y - T) ** 2).sum() / 8, rel=1e-12)
    assert value(dlf.l2loss(dlf.dlarray(Y, "CBT"), T)) == pytest.approx(
        2 * value(dlf.mse(dlf.dlarray(Y, "CBT"), T))
    )


def test_losses_differentiate():
    Y = dlf.dlarray(torch.randn(3, 4, dtype=torch.float64, requires_grad=True), "CB")
    T = torch.randn(3, 4, dtype=torch.float64)
    (gradient,) = torch.autograd.grad(dlf.stripdims(dlf.l2loss(Y, T)), [dlf.stripdims(Y)])
    torch.testing.assert_close(gradient, 2 * (dlf.stripdims(Y) - T).detach() / 4)


BAD = [
    (
        lambda Y, T: dlf.crossentropy(Y, dlf.dlarray(torch.rand(3, 4), "CT")),
        r'crossentropy: the targets have format "CT"; they must have the format of the predictions, "CB"',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, torch.rand(3, 5)),
        r"crossentropy: the targets have size 3×5; they must have the size of the predictions, 3×4",
    ),
    (
        lambda Y, T: dlf.crossentropy(dlf.dlarray(torch.rand(3, 4), "SB"), T),
        r'crossentropy needs data with a "C" dimension; got format "SB"',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, NormalizationFactor="mean"),
        r'crossentropy NormalizationFactor must be one of "batch-size", "all-elements", "mask-included", "none"; got "mean"',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, Reduction="mean"),
        r'crossentropy Reduction must be one of "sum", "none"; got "mean"',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, ClassificationMode="multilabel", TargetCategories="exclusive"),
        r'ClassificationMode "multilabel" and TargetCategories "exclusive" disagree',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, NormalizationFactor="mask-included"),
        r'crossentropy: NormalizationFactor "mask-included" needs a Mask',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, torch.ones(5)),
        r"crossentropy: unformatted vector weights are class weights, one per class along \"C\" \(3\); got 5 values",
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, dlf.dlarray(torch.ones(4), "T")),
        r'crossentropy: the weights have format "T", with "T" dimensions the predictions \("CB"\) lack',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, dlf.dlarray(torch.ones(2), "B")),
        r'crossentropy: dimension 1 \("B"\) of the weights has size 2; the predictions have 4 there',
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, dlf.dlarray(torch.ones(4), "B"), WeightsFormat="B"),
        r"crossentropy: WeightsFormat is only for unformatted weights",
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, Mask=torch.ones(2, 2)),
        r"crossentropy: the mask has size 2×2; an unformatted mask must have the size of the predictions, 3×4",
    ),
    (
        lambda Y, T: dlf.crossentropy(Y, T, DataFormat="CB"),
        r'crossentropy: DataFormat is only for unformatted data; the input already has format "CB"',
    ),
    (
        lambda Y, T: dlf.crossentropy(torch.rand(3, 4), T),
        r"crossentropy needs a formatted dlarray, or DataFormat",
    ),
    (
        lambda Y, T: dlf.indexcrossentropy(Y, torch.tensor([1, 2, 4, 1])),
        r"indexcrossentropy: targets must be MATLAB's 1-based class indices, integers in 1..3 \(the size of C\); got 4",
    ),
    (
        lambda Y, T: dlf.indexcrossentropy(Y, torch.tensor([0, 2, 3, 1])),
        r"integers in 1..3 \(the size of C\); got 0",
    ),
    (lambda Y, T: dlf.indexcrossentropy(Y, torch.tensor([1.5, 2, 3, 1])), r"got 1.5"),
    (
        lambda Y, T: dlf.huber(Y, T, TransitionPoint=0),
        r"huber TransitionPoint must be a positive number; got 0",
    ),
    (
        lambda Y, T: dlf.l1loss(Y, T, Bogus=1),
        r"l1loss has no option 'Bogus'; the options are: WeightsFormat, Mask, NormalizationFactor, Reduction, DataFormat",
    ),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=range(len(BAD)))
def test_bad_input_names_the_function_the_value_and_what_is_allowed(call, message):
    Y = dlf.dlarray(torch.rand(3, 4), "CB")
    T = dlf.dlarray(torch.eye(3)[:, [0, 1, 2, 0]], "CB")
    with pytest.raises(DLFormatError, match=message):
        call(Y, T)


# -- trainnet's fused softmax + crossentropy ---------------------------------------------------
def log_softmax_reference(z, channel):
    """log of MATLAB's softmax (exp(z)/Σ exp(z) along C) in float64, shifted by the maximum."""
    shifted = z - z.max(axis=channel, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=channel, keepdims=True))


def softmax_gradient_reference(z, T, channel, count):
    """d/dz of −Σ T·log softmax(z) / N: (softmax(z)·Σ_C T − T) / N."""
    p = np.exp(log_softmax_reference(z, channel))
    return (p * T.sum(axis=channel, keepdims=True) - T) / count


FUSED = [
    pytest.param("CB", (5, 6), id="CB"),
    pytest.param("CBT", (4, 3, 5), id="CBT"),
    pytest.param("SSCB", (2, 3, 4, 2), id="SSCB"),
    pytest.param("BC", (6, 5), id="BC-batch-first"),
]


@pytest.mark.parametrize(("fmt", "shape"), FUSED)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_softmax_crossentropy_matches_a_numpy_reference_and_the_unfused_loss(fmt, shape, dtype):
    """The fused loss −Σ T·log_softmax(Z)/N (N: the predictions, Z's elements over its classes):
    values and gradients against float64 NumPy, and against crossentropy(softmax(Z)) with
    NormalizationFactor "all-elements" (trainnet's "crossentropy")."""
    from dlformat.functional._losses import softmax_crossentropy

    channel = fmt.index("C")
    z = 3.0 * rng(40).standard_normal(shape)
    T, _ = onehot(shape, channel, 41)
    count = z.size // shape[channel]
    expected = -(T * log_softmax_reference(z, channel)).sum() / count
    expected_grad = softmax_gradient_reference(z, T, channel, count)
    tolerance = 1e-12 if dtype == torch.float64 else 2e-6
    fused_leaf = torch.tensor(z, dtype=dtype, requires_grad=True)
    loss = softmax_crossentropy(dlf.dlarray(fused_leaf, fmt), dlf.dlarray(torch.tensor(T, dtype=dtype), fmt))
    (fused_grad,) = torch.autograd.grad(loss._data, fused_leaf)
    assert dlf.dims(loss) == "" and loss.dtype == dtype
    np.testing.assert_allclose(loss._data.item(), expected, rtol=tolerance)
    np.testing.assert_allclose(fused_grad.numpy(), expected_grad, rtol=tolerance, atol=tolerance)
    unfused_leaf = torch.tensor(z, dtype=dtype, requires_grad=True)
    Y = dlf.softmaxLayer()(dlf.dlarray(unfused_leaf, fmt))
    unfused = dlf.crossentropy(
        Y, dlf.dlarray(torch.tensor(T, dtype=dtype), fmt), NormalizationFactor="all-elements"
    )
    (unfused_grad,) = torch.autograd.grad(unfused._data, unfused_leaf)
    torch.testing.assert_close(loss._data, unfused._data, rtol=tolerance, atol=0)
    torch.testing.assert_close(fused_grad, unfused_grad, rtol=tolerance, atol=tolerance)


def test_softmax_crossentropy_aligns_targets_by_format_and_checks_them():
    from dlformat.functional._losses import softmax_crossentropy

    z = rng(42).standard_normal((3, 4))  # C × B
    T, _ = onehot((3, 4), 0, 43)
    expected = -(T * log_softmax_reference(z, 0)).sum() / 4
    loss = softmax_crossentropy(dlf.dlarray(torch.tensor(z), "CB"), dlf.dlarray(torch.tensor(T.T), "BC"))
    np.testing.assert_allclose(loss._data.item(), expected, rtol=1e-12)
    with pytest.raises(DLFormatError, match="the targets have size 4×3; they must have the size"):
        softmax_crossentropy(dlf.dlarray(torch.tensor(z), "CB"), torch.tensor(T.T))


def test_softmax_crossentropy_stays_exact_where_the_softmax_underflows():
    """The one documented difference: a probability that underflows to 0 is clamped to the
    smallest normal number by crossentropy; log_softmax keeps the exact (finite) value."""
    from dlformat.functional._losses import softmax_crossentropy

    z = torch.tensor([[0.0, 0.0], [-200.0, 0.0]], dtype=torch.float32)  # C × B: class 2 of obs. 1 is e^-200
    T = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    fused = softmax_crossentropy(dlf.dlarray(z, "CB"), dlf.dlarray(T, "CB"))
    unfused = dlf.crossentropy(
        dlf.softmaxLayer()(dlf.dlarray(z, "CB")), dlf.dlarray(T, "CB"), NormalizationFactor="all-elements"
    )
    np.testing.assert_allclose(fused._data.item(), (200.0 + np.log(2.0)) / 2, rtol=1e-6)
    tiny = np.finfo(np.float32).tiny
    np.testing.assert_allclose(unfused._data.item(), (-np.log(tiny) + np.log(2.0)) / 2, rtol=1e-6)
