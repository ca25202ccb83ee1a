"""Learning-rate schedules: each sequence equals MathWorks' documented formula, in NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training._schedules import Scheduler


def rates(schedule, iterations, per_epoch, base=0.1):
    """The scheduler's rate of training iterations 1..iterations, asked in order as trainnet asks."""
    scheduler = Scheduler(base, schedule, 0.1, 10, per_epoch)
    return [scheduler.rate(i, (i - 1) // per_epoch + 1) for i in range(1, iterations + 1)]


class timeBasedDecayLearnRate(dlf.LearnRateSchedule):  # noqa: N801  # MathWorks' example's name
    """MathWorks' "Define Custom Learning Rate Schedule" example: α₀ / (1 + λ(k − 1))."""

    def __init__(self, decay):
        self.FrequencyUnit = "iteration"
        self.NumSteps = math.inf
        self.Decay = decay

    def update(self, initialLearnRate, iteration, epoch):
        return self, initialLearnRate / (1 + self.Decay * (iteration - 1))


class rampLearnRate(dlf.LearnRateSchedule):  # noqa: N801
    """A finite custom schedule: the rate rises by equal parts to α₀ over NumSteps steps."""

    def __init__(self, steps, unit):
        self.FrequencyUnit = unit
        self.NumSteps = steps

    def update(self, initialLearnRate, iteration, epoch):
        step = epoch if self.FrequencyUnit == "epoch" else iteration
        return self, initialLearnRate * step / self.NumSteps


class halvingLearnRate(dlf.LearnRateSchedule):  # noqa: N801
    """A schedule with state: each update halves the rate it returned last, and counts its calls."""

    def __init__(self):
        self.FrequencyUnit = "epoch"
        self.NumSteps = math.inf
        self.Calls = 0

    def update(self, initialLearnRate, iteration, epoch):
        self.Calls += 1
        return self, initialLearnRate * 0.5 ** (self.Calls - 1)


class recordingLearnRate(dlf.LearnRateSchedule):  # noqa: N801
    """Records the (iteration, epoch) each update receives."""

    def __init__(self, unit):
        self.FrequencyUnit = unit
        self.NumSteps = math.inf
        self.Seen = []

    def update(self, initialLearnRate, iteration, epoch):
        self.Seen.append((iteration, epoch))
        return self, initialLearnRate


@pytest.mark.parametrize(("factor", "period"), [(0.5, 2), (0.1, 3), (0.9, 1)])
def test_piecewise_learn_rate(factor, period):
    schedule = dlf.piecewiseLearnRate(DropFactor=factor, Period=period, FrequencyUnit="iteration")
    k = np.arange(12)
    expected = 0.02 * factor ** np.floor(k / period)  # α₀ · DropFactor^floor(k / Period)
    np.testing.assert_allclose(rates(schedule, 12, 5, base=0.02), expected, rtol=1e-12)


@pytest.mark.parametrize(("factor", "period"), [(0.5, 2), (0.25, 3)])
def test_exponential_learn_rate(factor, period):
    schedule = dlf.exponentialLearnRate(DropFactor=factor, Period=period, FrequencyUnit="epoch")
    epochs = np.repeat(np.arange(1, 10), 2)  # two iterations per epoch, both at the epoch's rate
    expected = 0.1 * factor ** ((epochs - 1) / period)  # α₀ · (DropFactor^(1/Period))^k, k from 0
    np.testing.assert_allclose(rates(schedule, 18, 2), expected, rtol=1e-12)


def test_legacy_piecewise_counts_epochs():
    options = dlf.trainingOptions(
        "sgdm", LearnRateSchedule="piecewise", LearnRateDropFactor=0.2, LearnRateDropPeriod=3
    )
    scheduler = Scheduler(options.InitialLearnRate, options.LearnRateSchedule, 0.2, 3, 100)
    epochs = np.arange(1, 11)
    np.testing.assert_allclose(
        [scheduler.rate(100 * int(e), int(e)) for e in epochs],
        0.01 * 0.2 ** np.floor((epochs - 1) / 3),
        rtol=1e-12,
    )


def test_legacy_piecewise_with_drop_factor_zero_drops_the_rate_to_zero():
    # LearnRateDropFactor may be 0 (MATLAB's range is [0, 1]): α₀ · 0^floor((epoch − 1) / period)
    options = dlf.trainingOptions("sgdm", LearnRateSchedule="piecewise", LearnRateDropFactor=0)
    scheduler = Scheduler(0.1, options.LearnRateSchedule, 0.0, 2, 1)
    assert [scheduler.rate(e, e) for e in range(1, 6)] == [0.1, 0.1, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("solver", ["sgdm", "adam", "rmsprop"])
def test_training_with_a_rate_dropped_to_zero_stops_moving_the_weights(solver):
    """trainnet takes a scheduled rate of 0: from the first drop the weights stay where they are
    (sgdm with Momentum 0: with momentum its velocity would still move them)."""
    torch.manual_seed(0)
    X = torch.randn(16, 2, dtype=torch.float64)
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)]
    options = dlf.trainingOptions(
        solver, MaxEpochs=3, MiniBatchSize=16, Verbose=False, LearnRateSchedule="piecewise",
        LearnRateDropPeriod=1, LearnRateDropFactor=0, **({"Momentum": 0} if solver == "sgdm" else {}),
    )  # fmt: skip
    net = dlf.dlnetwork(layers).to(torch.float64)
    trained, info = dlf.trainnet(X, X.sum(1, keepdim=True), net, "mse", options)
    assert list(info.TrainingHistory.LearnRate) == [options.InitialLearnRate, 0.0, 0.0]
    options.MaxEpochs = 1
    first, _ = dlf.trainnet(X, X.sum(1, keepdim=True), net, "mse", options)
    for (_, _, after_one), (_, _, after_three) in zip(first.Learnables, trained.Learnables, strict=True):
        assert torch.equal(after_one, after_three)


def test_a_function_schedule_takes_the_base_rate_and_epoch():
    scheduler = Scheduler(0.1, lambda base, epoch: base / epoch, 0.1, 10, 1)
    assert [scheduler.rate(1, e) for e in (1, 2, 4)] == [0.1, 0.05, 0.025]


@pytest.mark.parametrize("decay", [0.01, 0.5, 2.0])
def test_a_custom_schedule_is_updated_every_iteration(decay):
    k = np.arange(1, 13)  # MathWorks' example: k is the iteration number, from 1
    expected = 0.1 / (1 + decay * (k - 1))
    np.testing.assert_allclose(rates(timeBasedDecayLearnRate(decay), 12, 4), expected, rtol=1e-12)


def test_an_epoch_custom_schedule_is_updated_once_per_epoch_and_keeps_its_state():
    schedule = halvingLearnRate()
    epochs = np.repeat(np.arange(1, 5), 3)
    np.testing.assert_allclose(rates(schedule, 12, 3), 0.1 * 0.5 ** (epochs - 1), rtol=1e-12)
    assert schedule.Calls == 0  # training updated a copy: MATLAB's schedules are values


@pytest.mark.parametrize("unit", ["epoch", "iteration"])
def test_a_custom_schedule_in_a_list_counts_from_its_own_start(unit):
    recorder = recordingLearnRate(unit)
    scheduler = Scheduler(0.1, [rampLearnRate(2, "epoch"), recorder], 0.1, 10, 3)
    for i in range(1, 13):
        scheduler.rate(i, (i - 1) // 3 + 1)
    seen = scheduler.schedules[1].Seen
    if unit == "epoch":  # training epochs 3, 4 are its epochs 1, 2; each asked once
        assert seen == [(1, 1), (4, 2)]
    else:  # training iterations 7..12 (epochs 3, 4) are its iterations 1..6 (epochs 1, 2)
        assert seen == [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (6, 2)]


def test_a_list_runs_an_epoch_schedule_then_an_iteration_schedule():
    # {ramp over 2 epochs, piecewiseLearnRate(DropFactor=0.5, Period=2, FrequencyUnit="iteration")}
    schedule = [
        rampLearnRate(2, "epoch"),
        dlf.piecewiseLearnRate(DropFactor=0.5, Period=2, FrequencyUnit="iteration"),
    ]
    per_epoch, iterations = 3, np.arange(1, 16)
    epochs = (iterations - 1) // per_epoch + 1
    k = iterations - 2 * per_epoch - 1  # the piecewise schedule's step, 0 at iteration 7
    expected = np.where(epochs <= 2, 0.1 * epochs / 2, 0.1 * 0.5 ** np.floor(k / 2))
    np.testing.assert_allclose(rates(schedule, 15, per_epoch), expected, rtol=1e-12)


def test_a_list_of_iteration_schedules():
    schedule = [
        rampLearnRate(4, "iteration"),
        dlf.exponentialLearnRate(DropFactor=0.5, Period=3, FrequencyUnit="iteration"),
    ]
    i = np.arange(1, 13)
    expected = np.where(i <= 4, 0.1 * i / 4, 0.1 * 0.5 ** ((i - 5) / 3))
    np.testing.assert_allclose(rates(schedule, 12, 5), expected, rtol=1e-12)


def test_the_trainer_uses_the_schedule():
    torch.manual_seed(0)
    X, T = torch.randn(8, 2), torch.randn(8, 1)
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=5, MiniBatchSize=4, Verbose=False,
        LearnRateSchedule=dlf.piecewiseLearnRate(DropFactor=0.5, Period=2),
    )  # fmt: skip
    _, info = dlf.trainnet(X, T, [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)], "mse", options)
    epochs = np.array(info.TrainingHistory.Epoch)
    np.testing.assert_allclose(info.TrainingHistory.LearnRate, 0.01 * 0.5 ** np.floor((epochs - 1) / 2))


def test_the_trainer_runs_a_list_with_a_custom_schedule():
    torch.manual_seed(0)
    X, T = torch.randn(12, 2), torch.randn(12, 1)
    schedule = [rampLearnRate(2, "epoch"), timeBasedDecayLearnRate(0.5)]
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=4, MiniBatchSize=4, Verbose=False, InitialLearnRate=0.02, LearnRateSchedule=schedule
    )
    _, info = dlf.trainnet(X, T, [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)], "mse", options)
    iterations = np.array(info.TrainingHistory.Iteration)
    epochs = np.array(info.TrainingHistory.Epoch)
    k = np.maximum(iterations - 6, 1)  # the time-based schedule's iteration number, 1 at iteration 7
    expected = np.where(epochs <= 2, 0.02 * epochs / 2, 0.02 / (1 + 0.5 * (k - 1)))
    np.testing.assert_allclose(info.TrainingHistory.LearnRate, expected, rtol=1e-6)


def test_display():
    lines = repr(dlf.piecewiseLearnRate()).splitlines()
    assert lines[0] == "  piecewiseLearnRate with properties:"
    assert [line.split()[0] for line in lines[2:]] == [
        "DropFactor:",
        "Period:",
        "FrequencyUnit:",
        "NumSteps:",
    ]


def test_a_custom_schedule_shows_its_properties():
    assert repr(timeBasedDecayLearnRate(0.25)).splitlines() == [
        "  timeBasedDecayLearnRate with properties:",
        "",
        "            Decay: 0.25",
        '    FrequencyUnit: "iteration"',
        "         NumSteps: Inf",
    ]
    options = dlf.trainingOptions("adam", LearnRateSchedule=timeBasedDecayLearnRate(0.25))
    assert "LearnRateSchedule: [1×1 timeBasedDecayLearnRate]" in repr(options)


class noUnitLearnRate(dlf.LearnRateSchedule):  # noqa: N801
    def update(self, initialLearnRate, iteration, epoch):
        return self, initialLearnRate


class noUpdateLearnRate(dlf.LearnRateSchedule):  # noqa: N801
    FrequencyUnit = "epoch"


class badUpdateLearnRate(dlf.LearnRateSchedule):  # noqa: N801
    FrequencyUnit = "iteration"

    def __init__(self, returned):
        self.Returned = returned

    def update(self, initialLearnRate, iteration, epoch):
        return self.Returned(self)


def custom(unit="iteration", steps=math.inf):
    schedule = rampLearnRate(1, "iteration")
    schedule.FrequencyUnit, schedule.NumSteps = unit, steps
    return schedule


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: dlf.piecewiseLearnRate(DropFactor=1), r"DropFactor must be a number in \(0, 1\)"),
        (lambda: dlf.piecewiseLearnRate(Period=0), "Period must be a positive integer"),
        (lambda: dlf.piecewiseLearnRate(FrequencyUnit="step"), "FrequencyUnit must be one of"),
        (lambda: dlf.exponentialLearnRate(DropFactor=0.5), "give DropFactor, Period and FrequencyUnit"),
        (
            lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=lambda epoch: 0.1),
            r"takes \(baseLearnRate, epoch\)",
        ),
        (
            lambda: dlf.trainingOptions(
                "sgdm",
                LearnRateSchedule=[
                    dlf.piecewiseLearnRate(FrequencyUnit="iteration"),
                    dlf.piecewiseLearnRate(FrequencyUnit="epoch"),
                ],
            ),
            r'FrequencyUnit "epoch" after one with "iteration" is not supported',
        ),
        (
            lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=["piecewise", dlf.piecewiseLearnRate()]),
            "a list of schedules holds schedule objects",
        ),
        (lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=noUnitLearnRate()), "sets no FrequencyUnit"),
        (
            lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=custom(unit="batch")),
            'rampLearnRate: FrequencyUnit must be one of "epoch", "iteration"; got "batch"',
        ),
        (
            lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=custom(steps=0)),
            r"rampLearnRate's NumSteps \(or Inf\) must be a positive integer; got 0",
        ),
        (
            lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=custom(steps=2.5)),
            r"NumSteps \(or Inf\) must be a positive integer; got 2.5",
        ),
        (
            lambda: dlf.trainingOptions("sgdm", LearnRateSchedule=noUpdateLearnRate()),
            "defines no update method",
        ),
        (
            lambda: rates(badUpdateLearnRate(lambda self: 0.1), 1, 1),
            r"update must return \(schedule, learnRate\).*got 0.1 \(float\)",
        ),
        (
            lambda: rates(badUpdateLearnRate(lambda self: (self, -1.0)), 1, 1),
            "the learning rate from badUpdateLearnRate.update must be a finite scalar >= 0; got -1.0",
        ),
    ],
)
def test_errors(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()


@pytest.mark.parametrize("name", ["warmup", "polynomial", "cosine", "cyclical", "Cosine"])
def test_the_unsourced_schedules_are_refused_by_name(name):
    with pytest.raises(DLFormatError, match=f'"{name}" is not yet ported .its formula could not be sourced'):
        dlf.trainingOptions("sgdm", LearnRateSchedule=name)
    with pytest.raises(DLFormatError, match="is not yet ported"):  # inside a list too
        dlf.trainingOptions("sgdm", LearnRateSchedule=[name, dlf.piecewiseLearnRate()])


def test_exponential_by_name_is_refused_until_its_defaults_are_known():
    with pytest.raises(DLFormatError, match="exponentialLearnRate's default DropFactor and Period could not"):
        dlf.trainingOptions("sgdm", LearnRateSchedule="exponential")
