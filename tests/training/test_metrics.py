"""The Metrics of trainnet: MATLAB's metric objects (each AverageType and ClassificationMode)
against float64 NumPy references written from their definitions (confusion counted row by row,
every (positive, negative) pair for the AUC), values accumulated over unequal mini-batches and
aggregated over copies, custom metric objects driven by trainnet (the calls recorded), metrics of
a network with several outputs (NetworkOutput), the history columns, ObjectiveMetricName, errors."""

from __future__ import annotations

import copy
import itertools
from typing import ClassVar

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

from . import _toy

RNG = np.random.default_rng(3)
SCORES = RNG.random((40, 4))
TARGETS = np.eye(4)[RNG.integers(0, 4, 40)]
LABELS = (RNG.random((40, 4)) < 0.4).astype(float)  # multilabel targets
RESPONSES = RNG.standard_normal((40, 3)) + 3.0
PREDICTED = RESPONSES + 0.3 * RNG.standard_normal((40, 3))
SIZES = (7, 13, 20)  # unequal mini-batches


def counts(y, t, multilabel=False):
    """Per-class true/false positives and false negatives, one row (one label) at a time."""
    classes = y.shape[1]
    tp, fp, fn = np.zeros(classes), np.zeros(classes), np.zeros(classes)
    for scores, target in zip(y, t, strict=True):
        if multilabel:
            for k in range(classes):
                guess, truth = scores[k] >= 0.5, target[k] == 1
                tp[k] += guess and truth
                fp[k] += guess and not truth
                fn[k] += truth and not guess
            continue
        guess, truth = int(np.argmax(scores)), int(np.argmax(target))
        if guess == truth:
            tp[guess] += 1
        else:
            fp[guess] += 1
            fn[truth] += 1
    return tp, fp, fn


def safe(a, b):
    return a / b if b else 0.0


def reference(kind, average, y, t, multilabel=False):
    tp, fp, fn = counts(y, t, multilabel)
    support = tp + fn
    if average == "micro":
        tp, fp, fn = [tp.sum()], [fp.sum()], [fn.sum()]
    values = []
    for a, b, c in zip(tp, fp, fn, strict=True):
        precision, recall = safe(a, a + b), safe(a, a + c)
        values.append({"precision": precision, "recall": recall,
                       "fscore": safe(2 * precision * recall, precision + recall)}[kind])  # fmt: skip
    if average == "weighted":
        return float(np.dot(values, support) / support.sum())
    return float(np.mean(values))


def pair_area(pos, neg):
    """The share of (positive, negative) pairs the score orders right, ties counting half."""
    return np.mean([1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)])


def auc_reference(y, t, average="macro"):
    truth = t == 1
    if average == "micro":
        return pair_area(y[truth], y[~truth])
    areas, supports = [], []
    for k in range(y.shape[1]):
        pos, neg = y[truth[:, k], k], y[~truth[:, k], k]
        if len(pos) and len(neg):
            areas.append(pair_area(pos, neg))
            supports.append(len(pos))
    return float(np.average(areas, weights=supports if average == "weighted" else None))


def rows_as_dlarrays(y, t):
    return dlf.dlarray(torch.tensor(y.T.copy()), "CB"), dlf.dlarray(torch.tensor(t.T.copy()), "CB")


def accumulated(metric, y, t, sizes=SIZES):
    """The metric's value over the rows fed as mini-batches of ``sizes``: reset, update, evaluate."""
    metric.reset()
    begin = 0
    for size in sizes:
        metric.update(*rows_as_dlarrays(y[begin : begin + size], t[begin : begin + size]))
        begin += size
    return metric.evaluate()


CASES = [
    *[(f, {"AverageType": a}, SCORES, TARGETS, reference(k, a, SCORES, TARGETS))
      for f, k in ((dlf.fScoreMetric, "fscore"), (dlf.precisionMetric, "precision"), (dlf.recallMetric, "recall"))
      for a in ("micro", "macro", "weighted")],
    *[(f, {"AverageType": a, "ClassificationMode": "multilabel"}, SCORES, LABELS, reference(k, a, SCORES, LABELS, True))
      for f, k in ((dlf.fScoreMetric, "fscore"), (dlf.precisionMetric, "precision"), (dlf.recallMetric, "recall"))
      for a in ("micro", "macro", "weighted")],
    (dlf.accuracyMetric, {}, SCORES, TARGETS,
     100 * np.mean([np.argmax(a) == np.argmax(b) for a, b in zip(SCORES, TARGETS, strict=True)])),
    *[(dlf.aucMetric, {"AverageType": a}, s, TARGETS, auc_reference(s, TARGETS, a))
      for a in ("micro", "macro", "weighted") for s in (SCORES, np.round(SCORES, 1))],  # rounded: tied scores
    (dlf.aucMetric, {}, SCORES[:, :2], np.eye(2)[np.arange(40) % 2],
     auc_reference(SCORES[:, :2], np.eye(2)[np.arange(40) % 2])),
    (dlf.rmseMetric, {}, PREDICTED, RESPONSES, np.sqrt(np.mean((PREDICTED - RESPONSES) ** 2))),
    (dlf.mapeMetric, {}, PREDICTED, RESPONSES, 100 * np.mean(np.abs((RESPONSES - PREDICTED) / RESPONSES))),
    (dlf.rSquaredMetric, {}, PREDICTED[:, :1], RESPONSES[:, :1],
     1 - np.sum((RESPONSES[:, 0] - PREDICTED[:, 0]) ** 2) / np.sum((RESPONSES[:, 0] - RESPONSES[:, 0].mean()) ** 2)),
]  # fmt: skip


@pytest.mark.parametrize(("constructor", "options", "y", "t", "expected"), CASES)
def test_each_metric_object_over_unequal_mini_batches_matches_its_definition(
    constructor, options, y, t, expected
):
    assert accumulated(constructor(**options), y, t) == pytest.approx(expected, rel=1e-12)


def test_r_squared_of_responses_far_from_zero_keeps_its_precision():
    """Targets 1e8 + N(0, 1): R² from the targets' sums of squares (Σt² − (Σt)²/n) loses every digit
    at that offset; the pairwise mean and spread join of the mini-batches keeps them."""
    rng = np.random.default_rng(12)
    t = 1e8 + rng.normal(size=(40, 1))
    y = t + 0.3 * rng.normal(size=(40, 1))
    expected = 1 - np.sum((t - y) ** 2) / np.sum((t - t.mean()) ** 2)
    assert accumulated(dlf.rSquaredMetric(), y, t) == pytest.approx(expected, rel=1e-9)
    first, second = dlf.rSquaredMetric(), dlf.rSquaredMetric()
    accumulated(first, y[:15], t[:15], (15,))
    accumulated(second, y[15:], t[15:], (25,))
    first.aggregate(second)
    assert first.evaluate() == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("constructor", "options", "y", "t", "expected"), CASES[::4])
def test_copies_updated_with_parts_and_aggregated_give_the_whole_value(constructor, options, y, t, expected):
    first, second = constructor(**options), constructor(**options)
    accumulated(first, y[:15], t[:15], (15,))
    accumulated(second, y[15:], t[15:], (25,))
    first.aggregate(second)
    assert first.evaluate() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("name", "constructor"),
    [("accuracy", dlf.accuracyMetric), ("fscore", dlf.fScoreMetric), ("precision", dlf.precisionMetric),
     ("recall", dlf.recallMetric), ("auc", dlf.aucMetric), ("rmse", dlf.rmseMetric), ("mape", dlf.mapeMetric),
     ("rSquared", dlf.rSquaredMetric)],
)  # fmt: skip
def test_a_metric_name_stands_for_its_object_with_the_defaults(name, constructor):
    from dlformat.training._metrics import metric_of

    assert repr(metric_of("Metrics", name)) == repr(constructor())


def test_micro_averages_of_single_label_predictions_equal_the_accuracy_fraction():
    accuracy = accumulated(dlf.accuracyMetric(), SCORES, TARGETS)
    for constructor in (dlf.fScoreMetric, dlf.precisionMetric, dlf.recallMetric):
        assert accumulated(constructor(), SCORES, TARGETS) == pytest.approx(accuracy / 100)


def test_a_sequence_output_counts_each_time_step_as_a_row():
    y = torch.tensor(SCORES[:30].reshape(3, 10, 4).transpose(2, 0, 1).copy())  # C×B×T = 4×3×10
    t = torch.tensor(TARGETS[:30].reshape(3, 10, 4).transpose(2, 0, 1).copy())
    metric = dlf.fScoreMetric(AverageType="macro")
    metric.reset()
    metric.update(dlf.dlarray(y, "CBT"), dlf.dlarray(t, "CBT"))
    assert metric.evaluate() == pytest.approx(reference("fscore", "macro", SCORES[:30], TARGETS[:30]))


def test_the_display_lists_the_properties_as_matlab_does():
    assert repr(dlf.fScoreMetric(AverageType="weighted", NetworkOutput="softmax")).splitlines() == [
        "  FScoreMetric with properties:",
        "",
        '                  Name: "FScore"',
        '         NetworkOutput: "softmax"',
        '           AverageType: "weighted"',
        '    ClassificationMode: "single-label"',
        "             Threshold: 0.5",
        "              Maximize: 1",
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: dlf.fScoreMetric(AverageType="mean"), 'AverageType must be one of "micro", "macro", "weighted"; got "mean"'),
        (lambda: dlf.recallMetric(ClassificationMode="multiclass"), 'ClassificationMode must be one of "single-label", "multilabel"'),
        (lambda: dlf.precisionMetric(Threshold=2), "Threshold"),
        (lambda: dlf.fScoreMetric(Beta=2), "fScoreMetric: Beta is not supported: MATLAB's fScoreMetric is F1"),
        (lambda: dlf.rmseMetric(NormalizationFactor="batch-size"), "rmseMetric: NormalizationFactor is not supported"),
        (lambda: dlf.accuracyMetric(AverageType="macro"), 'accuracyMetric: only AverageType "micro"'),
        (lambda: dlf.aucMetric(Colour=1), "aucMetric has no option 'Colour'; the options are: Name, NetworkOutput, AverageType"),
        (lambda: dlf.fScoreMetric("macro"), r"fScoreMetric takes Name=Value options \(Name, NetworkOutput, AverageType"),
        (lambda: dlf.accuracyMetric(Name=""), "Name must be a nonempty name"),
        (lambda: accumulated(dlf.rSquaredMetric(), PREDICTED, RESPONSES), "the output has 3 channels"),
    ],
)  # fmt: skip
def test_metric_object_errors(make, message):
    with pytest.raises(DLFormatError, match=message):
        make()


@pytest.mark.parametrize(("name", "value"), [("AverageType", "macro"), ("ClassificationMode", "multilabel")])
def test_a_property_set_after_construction_is_checked_as_the_constructor_checks_it(name, value):
    # accuracy's value ignores AverageType: setting "macro" afterwards must not pass silently
    metric = dlf.accuracyMetric()
    with pytest.raises(DLFormatError, match='accuracyMetric: only AverageType "micro"'):
        setattr(metric, name, value)
    assert (metric.AverageType, metric.ClassificationMode) == ("micro", "single-label")
    recall = dlf.recallMetric()
    setattr(recall, name, value)  # allowed where the metric uses it
    assert getattr(recall, name) == value


def test_options_are_matched_case_insensitively_and_as_name_value_pairs():
    metric = dlf.precisionMetric("averagetype", "weighted", "Name", "P")
    assert (metric.AverageType, metric.Name) == ("weighted", "P")


# -- trainnet -----------------------------------------------------------------------------------


def validation_reference(net):
    scores = dlf.extractdata(dlf.predict(net, dlf.dlarray(_toy.XV, "BC"))).double().numpy().T
    return scores, _toy.one_hot(_toy.LABELSV)


@pytest.fixture(scope="module")
def trained():
    metrics = ["accuracy", dlf.fScoreMetric(Name="F1macro", AverageType="macro"), "precision",
               dlf.recallMetric(AverageType="weighted"), dlf.aucMetric(AverageType="micro")]  # fmt: skip
    options = _toy.options(Metrics=metrics, ValidationData=(_toy.XV, _toy.LABELSV), ValidationFrequency=2,
                           OutputNetwork="last-iteration", MiniBatchSize=6)  # fmt: skip
    return dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)


def test_histories_have_a_column_per_metric_named_after_it(trained):
    _, info = trained
    columns = ["Accuracy", "F1macro", "Precision", "Recall", "AUC"]
    assert list(info.TrainingHistory.columns) == ["Iteration", "Loss", *columns, "Epoch", "LearnRate"]
    assert list(info.ValidationHistory.columns) == ["Iteration", "Loss", *columns]


def test_the_last_validation_values_are_those_of_the_whole_validation_set(trained):
    # 16 validation observations in mini-batches of 6, 6 and 4: each value is that of all 16 rows
    net, info = trained
    scores, targets = validation_reference(net)
    expected = {"Accuracy": 100 * np.mean(scores.argmax(1) == targets.argmax(1)),
                "F1macro": reference("fscore", "macro", scores, targets),
                "Precision": reference("precision", "micro", scores, targets),
                "Recall": reference("recall", "weighted", scores, targets),
                "AUC": auc_reference(scores, targets, "micro")}  # fmt: skip
    last = dict(zip(info.ValidationHistory.columns, info.ValidationHistory[-1], strict=True))
    assert last["Iteration"] == 10
    for column, value in expected.items():
        assert last[column] == pytest.approx(value, rel=1e-5), column


def test_the_verbose_table_shows_each_metric_by_its_name(capsys):
    options = _toy.options(Metrics=["fscore", dlf.aucMetric(Name="ROC")], Verbose=True, MaxEpochs=1)
    dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header[-2:] == ["TrainingFScore", "TrainingROC"]


class FBeta(dlf.Metric):
    """MathWorks' custom F-beta example in Python: counts in update, the score in evaluate; its
    methods return the updated metric as MATLAB's do."""

    def __init__(self, Name="FBeta", NetworkOutput=None, Beta=2.0):
        self.Name, self.NetworkOutput, self.Maximize, self.Beta = Name, NetworkOutput, True, Beta

    def reset(self):
        self.tp = self.fp = self.fn = 0.0
        return self

    def update(self, Y, T):
        guess = dlf.extractdata(Y).argmax(0)
        truth = dlf.extractdata(T).argmax(0)
        self.tp += float(((guess == 1) & (truth == 1)).sum())
        self.fp += float(((guess == 1) & (truth != 1)).sum())
        self.fn += float(((guess != 1) & (truth == 1)).sum())
        return self

    def aggregate(self, other):
        self.tp, self.fp, self.fn = self.tp + other.tp, self.fp + other.fp, self.fn + other.fn
        return self

    def evaluate(self):
        b2 = self.Beta**2
        return (1 + b2) * self.tp / ((1 + b2) * self.tp + b2 * self.fn + self.fp)


class Recorder(dlf.Metric):
    """Records the calls trainnet makes (in a list its copies share), changing itself in place."""

    calls: ClassVar[list] = []

    def __init__(self):
        self.Name = "Calls"

    def initialize(self, Y, T):
        self.calls.append("initialize")

    def reset(self):
        self.calls.append("reset")
        self.rows = 0

    def update(self, Y, T):
        self.calls.append("update")
        self.rows += dlf.extractdata(Y).shape[1]

    def evaluate(self):
        self.calls.append("evaluate")
        return self.rows


def test_trainnet_drives_a_custom_metric_as_matlab_describes():
    Recorder.calls.clear()
    given = Recorder()
    options = _toy.options(Metrics=given, ValidationData=(_toy.XV, _toy.LABELSV), ValidationFrequency=2,
                           MaxEpochs=1, MiniBatchSize=8)  # fmt: skip
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    iteration = ["reset", "update", "evaluate"]
    validation = ["reset", "update", "update", "evaluate"]  # 16 validation observations, batches of 8
    assert Recorder.calls == [
        "initialize", *iteration, "initialize", *validation,  # iteration 1 and its validation
        *iteration, *validation,  # iteration 2
        *iteration,
        *iteration, *validation,  # iteration 4, the last
    ]  # fmt: skip
    assert list(info.TrainingHistory.Calls) == [8, 8, 8, 8]  # each iteration's rows: reset in between
    assert list(info.ValidationHistory.Calls) == [16, 16, 16]
    assert not hasattr(given, "rows")  # trainnet works on copies: the given object is left as it was


def test_a_custom_metric_value_is_its_evaluate_over_the_validation_set_and_can_be_the_objective():
    options = _toy.options(Metrics=FBeta(Name="F2"), ValidationData=(_toy.XV, _toy.LABELSV),
                           ValidationFrequency=1, MiniBatchSize=5, ObjectiveMetricName="f2",
                           OutputNetwork="last-iteration")  # fmt: skip
    net, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    scores, targets = validation_reference(net)
    tp, fp, fn = counts(scores, targets)
    assert info.ValidationHistory.F2[-1] == pytest.approx(
        5 * tp[1] / (5 * tp[1] + 4 * fn[1] + fp[1]), rel=1e-6
    )


@pytest.mark.parametrize(("objective", "larger"), [("loss", False), ("accuracy", True), ("F1macro", True)])
def test_best_validation_follows_the_objective_metric(objective, larger):
    metrics = ["accuracy", dlf.fScoreMetric(Name="F1macro", AverageType="macro")]
    options = _toy.options(Metrics=metrics, ValidationData=(_toy.XV, _toy.LABELSV),
                           ValidationFrequency=1, MaxEpochs=3, InitialLearnRate=0.2,
                           OutputNetwork="best-validation", ObjectiveMetricName=objective)  # fmt: skip
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    column = {"loss": "Loss", "accuracy": "Accuracy", "F1macro": "F1macro"}[objective]
    values = np.array(getattr(info.ValidationHistory, column))
    best = int(np.argmax(values) if larger else np.argmin(values))  # the first best, as MATLAB keeps it
    assert info.OutputNetworkIteration == info.ValidationHistory.Iteration[best]


def meanTargetScore(Y, T):
    return (dlf.extractdata(Y) * dlf.extractdata(T)).sum(0).mean()


def test_names_objects_and_functions_mix_and_a_function_gets_a_column_named_after_it():
    options = _toy.options(Metrics=["rmse", dlf.accuracyMetric(), meanTargetScore], MaxEpochs=1)
    _, info = dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)
    assert list(info.TrainingHistory.columns)[2:5] == ["RMSE", "Accuracy", "meanTargetScore"]
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


class NoDirection(Recorder):
    def __init__(self):
        self.Name = "Undirected"


@pytest.mark.parametrize(
    ("metrics", "objective", "message"),
    [
        ("accuracy", "fscore", 'ObjectiveMetricName "fscore" is neither "loss" nor one of the Metrics'),
        (meanTargetScore, "meanTargetScore", "is a metric function; as in MATLAB, early stopping"),
        (NoDirection(), "Undirected", "set its Maximize property to True or False"),
    ],
)
def test_objective_errors(metrics, objective, message):
    options = _toy.options(
        Metrics=metrics, ObjectiveMetricName=objective, ValidationData=(_toy.XV, _toy.LABELSV)
    )
    with pytest.raises(DLFormatError, match=message):
        dlf.trainnet(_toy.X, _toy.LABELS, _toy.layers(), "crossentropy", options)


def accuracy(Y, T):
    """A metric function with a built-in metric's name."""
    return 0.0


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        (
            ["accuracy", dlf.accuracyMetric()],
            r"names a metric twice \(names compared ignoring case\): Accuracy, Accuracy",
        ),
        # a function named as a built-in metric: its values overwrote the built-in's in the history
        (["accuracy", accuracy], "names a metric twice .*: Accuracy, accuracy"),
        ([dlf.rmseMetric(Name="err"), dlf.mapeMetric(Name="Err")], "names a metric twice .*: err, Err"),
        (dlf.rmseMetric(Name="Loss"), "a metric cannot be named 'Loss'"),
        (dlf.rmseMetric(Name="loss"), "a metric cannot be named 'loss'"),  # ObjectiveMetricName's "loss"
        (3, "Metrics must be a metric name"),
        ("f1", 'Metrics must be one of "accuracy", "rmse", "fscore"'),
    ],
)
def test_metrics_option_errors(metrics, message):
    with pytest.raises(DLFormatError, match=message):
        _toy.options(Metrics=metrics)


# -- several outputs ---------------------------------------------------------------------------


def two_heads():
    """A class head ("softmax") and a response head ("fc2") on one feature input."""
    torch.manual_seed(1)
    net = dlf.dlnetwork()
    net = net.addLayers([dlf.featureInputLayer(2, Name="in"), dlf.fullyConnectedLayer(3, Name="fc1"),
                         dlf.softmaxLayer(Name="softmax")])  # fmt: skip
    net = net.addLayers(dlf.fullyConnectedLayer(1, Name="fc2"))
    return net.connectLayers("in", "fc2")


def heads_loss(Y1, Y2, T1, T2):
    return dlf.crossentropy(Y1, T1) + dlf.mse(Y2, T2)


RESPONSE, RESPONSEV = _toy.X.sum(1, keepdim=True), _toy.XV.sum(1, keepdim=True)
SEEN: list = []


def outputsSeen(*data):
    SEEN.append(tuple(dlf.extractdata(d).shape[0] for d in data))  # the channels of Y1, Y2, T1, T2
    return 0.0


def test_network_output_picks_the_output_a_metric_sees():
    metrics = [dlf.accuracyMetric(NetworkOutput="softmax"), dlf.rmseMetric(NetworkOutput="fc2"),
               FBeta(Name="F", NetworkOutput="softmax"), outputsSeen]  # fmt: skip
    options = _toy.options(Metrics=metrics, ValidationData=((_toy.XV), (_toy.LABELSV, RESPONSEV)),
                           ValidationFrequency=4, OutputNetwork="last-iteration")  # fmt: skip
    SEEN.clear()
    net, info = dlf.trainnet(_toy.X, (_toy.LABELS, RESPONSE), two_heads(), heads_loss, options)
    assert list(info.ValidationHistory.columns) == [
        "Iteration",
        "Loss",
        "Accuracy",
        "RMSE",
        "F",
        "outputsSeen",
    ]
    assert set(SEEN) == {(3, 1, 3, 1)}  # without NetworkOutput a function sees Y1, Y2, T1, T2
    scores, response = (
        dlf.extractdata(Y).double().numpy().T for Y in net.predict(dlf.dlarray(_toy.XV, "BC"))
    )
    targets = _toy.one_hot(_toy.LABELSV)
    tp, fp, fn = counts(scores, targets)
    last = info.ValidationHistory[-1]
    assert last[2] == pytest.approx(100 * np.mean(scores.argmax(1) == targets.argmax(1)))
    assert last[3] == pytest.approx(np.sqrt(np.mean((response - RESPONSEV.double().numpy()) ** 2)), rel=1e-5)
    assert last[4] == pytest.approx(5 * tp[1] / (5 * tp[1] + 4 * fn[1] + fp[1]), rel=1e-6)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        (dlf.rmseMetric(), r"2 outputs \(softmax, fc2\); give the metric RMSE a NetworkOutput"),
        (dlf.rmseMetric(NetworkOutput="fc1"), 'NetworkOutput "fc1" is not an output of the network; its '
                                             "OutputNames are: softmax, fc2"),
    ],
)  # fmt: skip
def test_network_output_errors(metric, message):
    options = _toy.options(Metrics=metric, MaxEpochs=1)
    with pytest.raises(DLFormatError, match=message):
        dlf.trainnet(_toy.X, (_toy.LABELS, RESPONSE), two_heads(), heads_loss, options)


def test_a_metric_object_is_a_value_copies_do_not_share_state():
    metric = dlf.fScoreMetric()
    accumulated(metric, SCORES, TARGETS)
    other = copy.deepcopy(metric)
    other.reset()
    assert metric.evaluate() == pytest.approx(reference("fscore", "micro", SCORES, TARGETS))


def test_in_data_parallel_training_the_workers_copies_are_aggregated(monkeypatch):
    # MiniBatchSize 8 over 2 workers: each updates its copy with 4 observations; aggregate makes
    # the F-scores those of the whole mini-batch, as one process computes them
    from dlformat.training import _distributed

    monkeypatch.setenv(_distributed.WORKERS_VARIABLE, "2")
    histories = []
    for environment in ("parallel", "cpu"):
        options = _toy.options(Metrics=[dlf.fScoreMetric(AverageType="macro"), FBeta()], MaxEpochs=1,
                               ExecutionEnvironment=environment)  # fmt: skip
        net = dlf.dlnetwork(_toy.layers()).to(torch.float64)
        _, info = dlf.trainnet(_toy.X, _toy.LABELS, net, "crossentropy", options)
        histories.append(info.TrainingHistory)
    for column in ("FScore", "FBeta"):
        np.testing.assert_allclose(getattr(histories[0], column), getattr(histories[1], column), rtol=1e-12)
