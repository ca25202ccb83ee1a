"""Ctrl+C during trainnet / trainNetwork (MATLAB's Stop button): the iteration under way finishes,
training stops with "Stopped manually" and the network is the one after that iteration; a second
Ctrl+C interrupts at once; the SIGINT handler is put back either way."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import torch

import dlformat as dlf
from tests.training import _toy


def pressing_ctrl_c(at: int, times: int = 1):
    def output(info):
        if info["State"] == "iteration" and info["Iteration"] == at:
            for _ in range(times):
                os.kill(os.getpid(), signal.SIGINT)
        return False

    return output


def weights(net):
    return [value.detach().clone() for _, _, value in net.Learnables]


def options(solver, output):
    if solver == "lbfgs":
        return dlf.trainingOptions("lbfgs", MaxIterations=6, Verbose=False, OutputFcn=output)
    return _toy.options(solver=solver, OutputFcn=output)


@pytest.mark.parametrize("solver", ["adam", "lbfgs"])
def test_ctrl_c_stops_after_the_iteration_under_way(solver):
    stopped, info = dlf.trainnet(
        _toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options(solver, pressing_ctrl_c(3))
    )
    assert info.StopReason == "Stopped manually" and len(info.TrainingHistory) == 3
    # the same network as a run an output function stops after iteration 3
    stop_at_3 = lambda info: info["State"] == "iteration" and info["Iteration"] == 3  # noqa: E731
    reference, _ = dlf.trainnet(
        _toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options(solver, stop_at_3)
    )
    for got, expected in zip(weights(stopped), weights(reference), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_trainnetwork_stops_too():
    net, info = dlf.trainNetwork(
        _toy.X,
        _toy.LABELS,
        _toy.layers(classification_layer=True),
        _toy.options(OutputFcn=pressing_ctrl_c(2)),
    )
    assert len(info.TrainingLoss) == 2
    labels, _ = dlf.classify(net, dlf.dlarray(_toy.X, "BC"))
    assert set(np.asarray(labels)) <= set(_toy.CLASSES)


def test_a_second_ctrl_c_interrupts_at_once():
    with pytest.raises(KeyboardInterrupt):
        dlf.trainnet(
            _toy.X,
            _toy.LABELS,
            _toy.layers(),
            "crossentropy",
            _toy.options(OutputFcn=pressing_ctrl_c(2, times=2)),
        )
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_error_inside_training_propagates_and_puts_the_handler_back():
    def failing(info):
        if info["State"] == "iteration":
            raise ValueError("the user's output function failed")
        return False

    with pytest.raises(ValueError, match="the user's output function failed"):
        dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", _toy.options(OutputFcn=failing))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
