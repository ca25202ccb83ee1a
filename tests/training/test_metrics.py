"""The Metrics of trainnet: each metric against a float64 NumPy reference written from its
definition (counted row by row, pairs of rows for the AUC), the rows layout of formatted outputs,
the columns of TrainingHistory / ValidationHistory and the verbose table, ObjectiveMetricName."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.training._metrics import BUILT_IN, _averaged

from . import _toy

RNG = np.random.default_rng(3)
SCORES = RNG.random((40, 4))
TARGETS = np.eye(4)[RNG.integers(0, 4, 40)]
RESPONSES = RNG.standard_normal((40, 3)) + 3.0
PREDICTED = RESPONSES + 0.3 * RNG.standard_normal((40, 3))


def counts(y, t):
    """Per-class true/false positives and false negatives, one row at a time."""
    classes = y.shape[1]
    tp, fp, fn = np.zeros(classes), np.zeros(classes), np.zeros(classes)
    for scores, target in zip(y, t, strict=True):
        guess, truth = int(np.argmax(scores)), int(np.argmax(target))
        if guess == truth:
            tp[guess] += 1
        else:
            fp[guess] += 1
            fn[truth] += 1
    return tp, fp, fn


def safe(a, b):
    return a / b if b else 0.0


def reference(kind, average, y, t):
    tp, fp, fn = counts(y, t)
    if average == "micro":
        tp, fp, fn = [tp.sum()], [fp.sum()], [fn.sum()]
    values = []
    for a, b, c in zip(tp, fp, fn, strict=True):
        precision, recall = safe(a, a + b), safe(a, a + c)
        values.append({"precision": precision, "recall": recall,
                       "fscore": safe(2 * precision * recall, precision + recall)}[kind])  # fmt: skip
    return float(np.mean(values))


def auc_reference(y, t):
    """Per class, the share of (positive, negative) pairs the score orders right (ties count half),
    averaged over the classes."""
    truth, areas = t.argmax(1), []
    for k in range(y.shape[1]):
        pos, neg = y[truth == k, k], y[truth != k, k]
        if len(pos) and len(neg):
            pairs = [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)]
            areas.append(np.mean(pairs))
    return float(np.mean(areas))


@pytest.mark.parametrize("kind", ["precision", "recall", "fscore"])
@pytest.mark.parametrize("average", ["micro", "macro"])
def test_precision_recall_fscore_match_counted_definitions(kind, average):
    assert _averaged(kind, average)(SCORES, TARGETS) == pytest.approx(
        reference(kind, average, SCORES, TARGETS)
    )


def test_micro_averages_of_single_label_predictions_equal_the_accuracy_fraction():
    accuracy = BUILT_IN["accuracy"].compute(SCORES, TARGETS)
    for kind in ("precision", "recall", "fscore"):
        assert BUILT_IN[kind].compute(SCORES, TARGETS) == pytest.approx(accuracy / 100)


@pytest.mark.parametrize(
    ("name", "y", "t", "expected"),
    [
        ("accuracy", SCORES, TARGETS, 100 * np.mean([np.argmax(a) == np.argmax(b) for a, b in zip(SCORES, TARGETS, strict=True)])),
        ("rmse", PREDICTED, RESPONSES, np.sqrt(np.mean((PREDICTED - RESPONSES) ** 2))),
        ("mape", PREDICTED, RESPONSES, 100 * np.mean(np.abs((RESPONSES - PREDICTED) / RESPONSES))),
        ("auc", SCORES, TARGETS, auc_reference(SCORES, TARGETS)),
        ("auc", np.round(SCORES, 1), TARGETS, auc_reference(np.round(SCORES, 1), TARGETS)),  # ties
        ("auc", SCORES[:, :2], np.eye(2)[np.arange(40) % 2], auc_reference(SCORES[:, :2], np.eye(2)[np.arange(40) % 2])),
    ],
)  # fmt: skip
def test_metric_values_match_their_definitions(name, y, t, expected):
    assert BUILT_IN[name].compute(y, t) == pytest.approx(expected, rel=1e-12)


def test_a_sequence_output_counts_each_time_step_as_a_row():
    y = torch.tensor(SCORES[:30].reshape(3, 10, 4).transpose(2, 0, 1).copy())  # C×B×T = 4×3×10
    t = torch.tensor(TARGETS[:30].reshape(3, 10, 4).transpose(2, 0, 1).copy())
    value = BUILT_IN["fscore"](dlf.dlarray(y, "CBT"), dlf.dlarray(t, "CBT"))
    assert value == pytest.approx(reference("fscore", "micro", SCORES[:30], TARGETS[:30]))


METRICS = ["accuracy", "fscore", "precision", "recall", "auc"]


@pytest.fixture(scope="module")
def trained():
    options = _toy.options(Metrics=METRICS, ValidationData=(_toy.XV, _toy.LABELSV), ValidationFrequency=2,
                           OutputNetwork="last-iteration")  # fmt: skip
    return dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)


def test_histories_have_a_column_per_metric_in_matlab_names(trained):
    _, info = trained
    columns = ["Accuracy", "FScore", "Precision", "Recall", "AUC"]
    assert list(info.TrainingHistory.columns) == ["Iteration", "Loss", *columns, "Epoch", "LearnRate"]
    assert list(info.ValidationHistory.columns) == ["Iteration", "Loss", *columns]


def test_the_last_validation_values_are_those_of_the_returned_network(trained):
    net, info = trained
    scores = dlf.extractdata(dlf.predict(net, dlf.dlarray(_toy.XV, "BC"))).double().numpy().T
    targets = _toy.one_hot(_toy.LABELSV)
    expected = {"Accuracy": BUILT_IN["accuracy"].compute(scores, targets),
                "FScore": reference("fscore", "micro", scores, targets),
                "Precision": reference("precision", "micro", scores, targets),
                "Recall": reference("recall", "micro", scores, targets),
                "AUC": auc_reference(scores, targets)}  # fmt: skip
    last = dict(zip(info.ValidationHistory.columns, info.ValidationHistory[-1], strict=True))
    assert last["Iteration"] == 8
    for column, value in expected.items():
        assert last[column] == pytest.approx(value, rel=1e-5), column


def test_the_verbose_table_shows_each_metric(capsys):
    options = _toy.options(Metrics=["fscore", "auc"], Verbose=True, MaxEpochs=1)
    dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header[-2:] == ["TrainingFScore", "TrainingAUC"]


def test_a_metric_function_gets_a_column_named_after_it():
    def meanTargetScore(Y, T):
        return (dlf.extractdata(Y) * dlf.extractdata(T)).sum(0).mean()

    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy",
                           _toy.options(Metrics=meanTargetScore, MaxEpochs=1))  # fmt: skip
    assert "meanTargetScore" in info.TrainingHistory.columns
    assert all(0 < value < 1 for value in info.TrainingHistory.meanTargetScore)


def perClassScore(Y, T):  # one value per class: not a metric value
    return (dlf.extractdata(Y) * dlf.extractdata(T)).sum(1)


def labelOfFirst(Y, T):
    return "a"


@pytest.mark.parametrize("function", [perClassScore, labelOfFirst])
def test_a_metric_function_must_return_one_number(function):
    options = _toy.options(Metrics=function, MaxEpochs=1)
    with pytest.raises(
        DLFormatError, match=f"the metric function {function.__name__} must return one number"
    ):
        dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)


@pytest.mark.parametrize(("objective", "larger"), [("loss", False), ("accuracy", True), ("AUC", True)])
def test_best_validation_follows_the_objective_metric(objective, larger):
    options = _toy.options(Metrics=["accuracy", "auc"], ValidationData=(_toy.XV, _toy.LABELSV),
                           ValidationFrequency=1, MaxEpochs=3, InitialLearnRate=0.2,
                           OutputNetwork="best-validation", ObjectiveMetricName=objective)  # fmt: skip
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    column = {"loss": "Loss", "accuracy": "Accuracy", "AUC": "AUC"}[objective]
    values = np.array(getattr(info.ValidationHistory, column))
    best = int(np.argmax(values) if larger else np.argmin(values))  # the first best, as MATLAB keeps it
    assert info.OutputNetworkIteration == info.ValidationHistory.Iteration[best]


def test_an_objective_that_is_not_a_metric_is_an_error():
    options = _toy.options(Metrics="accuracy", ObjectiveMetricName="fscore")
    with pytest.raises(DLFormatError, match='ObjectiveMetricName "fscore" is neither "loss" nor one of'):
        dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)


@pytest.mark.parametrize(("name", "y", "t"), [("accuracy", SCORES, TARGETS), ("rmse", PREDICTED, RESPONSES)])
def test_the_per_iteration_values_computed_on_the_device_equal_the_rows_ones(name, y, t):
    Y, T = dlf.dlarray(torch.tensor(y.T.copy()), "CB"), dlf.dlarray(torch.tensor(t.T.copy()), "CB")
    assert BUILT_IN[name](Y, T) == pytest.approx(BUILT_IN[name].compute(y, t), rel=1e-12)
