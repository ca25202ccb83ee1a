"""Learning-rate schedules: each sequence equals MathWorks' documented formula, in NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training._schedules import Scheduler


@pytest.mark.parametrize(("factor", "period"), [(0.5, 2), (0.1, 3), (0.9, 1)])
def test_piecewise_learn_rate(factor, period):
    schedule = dlf.piecewiseLearnRate(DropFactor=factor, Period=period, FrequencyUnit="iteration")
    k = np.arange(12)
    expected = 0.02 * factor ** np.floor(k / period)  # α₀ · DropFactor^floor(k / Period)
    got = [Scheduler(0.02, schedule, 0.1, 10).rate(iteration, 1) for iteration in k + 1]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(("factor", "period"), [(0.5, 2), (0.25, 3)])
def test_exponential_learn_rate(factor, period):
    schedule = dlf.exponentialLearnRate(DropFactor=factor, Period=period, FrequencyUnit="epoch")
    epochs = np.arange(1, 10)
    expected = 0.1 * factor ** ((epochs - 1) / period)  # α₀ · (DropFactor^(1/Period))^k, k from 0
    got = [Scheduler(0.1, schedule, 0.1, 10).rate(1, int(epoch)) for epoch in epochs]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_legacy_piecewise_counts_epochs():
    options = dlf.trainingOptions(
        "sgdm", LearnRateSchedule="piecewise", LearnRateDropFactor=0.2, LearnRateDropPeriod=3
    )
    scheduler = Scheduler(options.InitialLearnRate, options.LearnRateSchedule, 0.2, 3)
    epochs = np.arange(1, 11)
    np.testing.assert_allclose(
        [scheduler.rate(100, int(e)) for e in epochs], 0.01 * 0.2 ** np.floor((epochs - 1) / 3), rtol=1e-12
    )


def test_a_function_schedule_takes_the_base_rate_and_epoch():
    scheduler = Scheduler(0.1, lambda base, epoch: base / epoch, 0.1, 10)
    assert [scheduler.rate(1, e) for e in (1, 2, 4)] == [0.1, 0.05, 0.025]


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


def test_display():
    lines = repr(dlf.piecewiseLearnRate()).splitlines()
    assert lines[0] == "  piecewiseLearnRate with properties:"
    assert [line.split()[0] for line in lines[2:]] == [
        "DropFactor:",
        "Period:",
        "FrequencyUnit:",
        "NumSteps:",
    ]


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
            "mixing FrequencyUnit",
        ),
    ],
)
def test_errors(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()
