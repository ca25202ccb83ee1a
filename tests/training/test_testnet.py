"""testnet against float64 NumPy references written from MATLAB's definitions (trainnet's loss
normalizations, the metric objects' formulas), and TrainingInfo's show / close."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from torch.utils.data import TensorDataset

import dlformat as dlf
from dlformat import DLFormatError

CLASSES = np.array(["a", "b", "c"])


def values(net: dlf.DLNetwork) -> dict[str, np.ndarray]:
    """The network's learnables as float64 arrays, by parameter name."""
    return {name: torch.as_tensor(v).detach().double().numpy() for _, name, v in net.Learnables}


def regression(outputs: int = 2) -> tuple[dlf.DLNetwork, np.ndarray, np.ndarray]:
    torch.manual_seed(0)
    net = dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(outputs)])
    generator = np.random.default_rng(1)
    return net, generator.standard_normal((10, 3)), generator.standard_normal((10, outputs))


def fc(net: dlf.DLNetwork, X: np.ndarray) -> np.ndarray:
    """The fully connected layer in NumPy: Y = X·Wᵀ + bᵀ, N×R."""
    p = values(net)
    return X @ p["Weights"].T + p["Bias"].T


def classifier() -> tuple[dlf.DLNetwork, np.ndarray, np.ndarray, np.ndarray]:
    torch.manual_seed(2)
    net = dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(3), dlf.softmaxLayer()])
    X = np.random.default_rng(3).standard_normal((11, 2))
    labels = CLASSES[[0, 1, 2, 1, 0, 2, 2, 1, 0, 0, 1]]
    Z = fc(net, X)
    P = np.exp(Z - Z.max(1, keepdims=True))
    return net, X, labels, P / P.sum(1, keepdims=True)


@pytest.mark.parametrize("batch", [4, 10, 128])  # 4: mini-batches of 4, 4 and 2
def test_regression_losses_and_metrics_over_unequal_mini_batches(batch):
    net, X, T = regression()
    E = fc(net, X) - T
    huber = np.where(np.abs(E) <= 1, 0.5 * E**2, np.abs(E) - 0.5)
    expected = [
        np.mean(E**2),  # "mse": l2loss normalized by all elements
        np.mean(E**2),
        np.mean(np.abs(E)),
        np.mean(huber),
        np.sqrt(np.mean(E**2)),  # rmseMetric over all elements
    ]
    got = dlf.testnet(net, X, T, ["mse", "l2loss", "l1loss", "huber", "rmse"], MiniBatchSize=batch)
    assert got.dtype == np.float64 and got.shape == (5,)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_classification_metrics_in_the_order_given():
    net, X, labels, P = classifier()
    truth = np.searchsorted(CLASSES, labels)
    onehot = np.eye(3)[truth]
    cross = -np.mean(np.log(P[np.arange(len(truth)), truth]))  # single-label: divided by N
    binary = -np.mean(onehot * np.log(P) + (1 - onehot) * np.log(1 - P))  # multilabel: by N·C
    accuracy = 100 * np.mean(P.argmax(1) == truth)
    metrics = ["crossentropy", "accuracy", "index-crossentropy", "binary-crossentropy"]
    got = dlf.testnet(net, X, labels, metrics, MiniBatchSize=4)
    np.testing.assert_allclose(got, [cross, accuracy, cross, binary], rtol=1e-5)


def test_fscore_is_of_the_whole_test_set_not_a_mean_over_mini_batches():
    net, X, labels, P = classifier()
    truth, predicted = np.searchsorted(CLASSES, labels), P.argmax(1)
    scores = []
    for k in range(3):
        tp = np.sum((predicted == k) & (truth == k))
        fp, fn = np.sum((predicted == k) & (truth != k)), np.sum((predicted != k) & (truth == k))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    got = dlf.testnet(net, X, labels, dlf.fScoreMetric(AverageType="macro"), MiniBatchSize=3)
    np.testing.assert_allclose(got, [np.mean(scores)], rtol=1e-6)


class MeanAbsoluteError(dlf.Metric):
    def __init__(self):
        self.Name, self.Maximize = "MAE", False

    def reset(self):
        self.total, self.count = 0.0, 0

    def update(self, Y, T):
        self.total += float(dlf.extractdata(abs(Y - T)).sum())
        self.count += dlf.extractdata(T).numel()

    def aggregate(self, other):
        self.total, self.count = self.total + other.total, self.count + other.count

    def evaluate(self):
        return self.total / self.count


def largest_error(Y, T):
    return float(dlf.extractdata(abs(Y - T)).max())


def test_custom_metric_object_and_function_with_loss_names():
    net, X, T = regression()
    E = np.abs(fc(net, X) - T)
    batches = [E[0:4], E[4:8], E[8:10]]  # a function's value: the mean of its mini-batch values
    function = sum(b.max() * len(b) for b in batches) / 10  # weighted by their observations
    got = dlf.testnet(net, X, T, [MeanAbsoluteError(), largest_error, "mse"], MiniBatchSize=4)
    np.testing.assert_allclose(got, [E.mean(), function, np.mean(E**2)], rtol=1e-5)


@pytest.mark.parametrize(("direction", "padding"), [("right", 0.0), ("left", 1.5)])
def test_sequences_are_padded_per_mini_batch(direction, padding):
    torch.manual_seed(4)
    net = dlf.dlnetwork([dlf.sequenceInputLayer(2), dlf.fullyConnectedLayer(1)])
    generator = np.random.default_rng(5)
    lengths = (3, 5, 4)
    X = [generator.standard_normal((n, 2)) for n in lengths]  # trainnet's s×c sequences
    T = [generator.standard_normal((n, 1)) for n in lengths]
    p = values(net)

    def padded(items, longest):
        out = np.full((len(items), longest, items[0].shape[1]), padding)
        for i, item in enumerate(items):
            if direction == "right":
                out[i, : len(item)] = item
            else:
                out[i, longest - len(item) :] = item
        return out

    total = 0.0
    for part in ((0, 1), (2,)):  # MiniBatchSize 2: each padded to its own longest sequence
        longest = max(lengths[i] for i in part)
        x, t = padded([X[i] for i in part], longest), padded([T[i] for i in part], longest)
        y = x @ p["Weights"].T + p["Bias"].T
        total += np.mean((y - t) ** 2) * len(part) / 3  # padded steps are not masked out
    got = dlf.testnet(
        net, X, T, "mse", MiniBatchSize=2, SequencePaddingDirection=direction, SequencePaddingValue=padding
    )
    np.testing.assert_allclose(got, [total], rtol=1e-5)


@pytest.mark.parametrize("kind", ["Dataset", "minibatchqueue"])
def test_a_data_source_gives_what_its_arrays_give(kind):
    net, X, T = regression()
    Xt, Tt = torch.tensor(X, dtype=torch.float32), torch.tensor(T, dtype=torch.float32)
    if kind == "Dataset":
        source = TensorDataset(Xt, Tt)
    else:  # MATLAB's C×B mini-batches, of a size of its own
        source = dlf.minibatchqueue(Xt.T, Tt.T, MiniBatchSize=4, MiniBatchFormat=["CB", "CB"])
    np.testing.assert_allclose(
        dlf.testnet(net, source, ["mse", "rmse"], MiniBatchSize=3),
        dlf.testnet(net, X, T, ["mse", "rmse"], MiniBatchSize=3),
        rtol=1e-6,
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error of a machine without CUDA")
def test_gpu_without_cuda_is_an_error():
    net, X, T = regression()
    with pytest.raises(DLFormatError, match="no CUDA device"):
        dlf.testnet(net, X, T, "mse", ExecutionEnvironment="gpu")


def test_matlab_name_value_pairs():
    net, X, T = regression()
    np.testing.assert_array_equal(
        dlf.testnet(net, X, T, "mse", "MiniBatchSize", 3), dlf.testnet(net, X, T, "mse", MiniBatchSize=3)
    )


def test_the_network_is_left_unchanged():
    torch.manual_seed(6)
    layers = [
        dlf.featureInputLayer(2),
        dlf.fullyConnectedLayer(3),
        dlf.batchNormalizationLayer(),
        dlf.reluLayer(),
    ]
    net = dlf.dlnetwork(layers)
    net, _ = dlf.trainnet(
        torch.randn(16, 2),
        torch.randn(16, 3),
        net,
        "mse",
        dlf.trainingOptions("adam", MaxEpochs=1, Verbose=False),
    )
    before = {k: v.clone() for k, v in net.state_dict().items()}
    state = [torch.as_tensor(v).detach().clone() for _, _, v in net.State]
    dlf.testnet(
        net, np.random.default_rng(7).standard_normal((9, 2)), np.zeros((9, 3)), "mse", MiniBatchSize=4
    )
    after = net.state_dict()
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)
    for old, (_, _, new) in zip(state, net.State, strict=True):
        assert torch.equal(old, torch.as_tensor(new))


def test_errors_name_the_bad_value():
    net, X, T = regression()
    with pytest.raises(DLFormatError, match="testnet: net must be a dlnetwork"):
        dlf.testnet([dlf.featureInputLayer(3)], X, T, "mse")
    with pytest.raises(DLFormatError, match="initialized"):
        dlf.testnet(
            dlf.dlnetwork([dlf.featureInputLayer(3), dlf.fullyConnectedLayer(2)], Initialize=False),
            X,
            T,
            "mse",
        )
    with pytest.raises(DLFormatError, match="accurcy"):
        dlf.testnet(net, X, T, "accurcy")
    with pytest.raises(DLFormatError, match="unknown option 'Shuffle'"):
        dlf.testnet(net, X, T, "mse", Shuffle="never")
    with pytest.raises(DLFormatError, match=r"testnet.*MiniBatchSize"):
        dlf.testnet(net, X, T, "mse", MiniBatchSize=0)
    with pytest.raises(DLFormatError, match=r'ExecutionEnvironment.*"parallel"'):
        dlf.testnet(net, X, T, "mse", ExecutionEnvironment="parallel")
    with pytest.raises(DLFormatError, match="data source that holds the targets"):
        dlf.testnet(net, X, "mse")
    with pytest.raises(DLFormatError, match="at least one metric"):
        dlf.testnet(net, X, T, [])
    classes_net, Xc, labels, _ = classifier()
    with pytest.raises(DLFormatError, match=r"2 classes .* 3 channels"):
        dlf.testnet(classes_net, Xc[:4], labels[[0, 1, 4, 7]], "accuracy")


@pytest.fixture
def info():
    generator = torch.Generator().manual_seed(8)
    X = torch.randn(24, 2, generator=generator)
    labels = CLASSES[(X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()]
    torch.manual_seed(0)
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(3), dlf.softmaxLayer()]
    options = dlf.trainingOptions(
        "adam", MaxEpochs=2, MiniBatchSize=8, Verbose=False, Metrics="accuracy",
        ValidationData=(X[:9], labels[:9]), ValidationFrequency=2,
    )  # fmt: skip
    return dlf.trainnet(X, labels, layers, "crossentropy", options)[1]


def test_show_draws_the_histories_and_close_closes_the_figure(info):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = info.show()
    assert figure.number in plt.get_fignums()
    loss, accuracy = figure.axes
    assert (loss.get_ylabel(), accuracy.get_ylabel()) == ("Loss", "Accuracy")
    # training (thin), smoothed, validation, then a dotted line at each of the 2 epochs' ends
    training, smoothed_line, validation, *epochs = loss.lines
    np.testing.assert_allclose(training.get_ydata(), info.TrainingHistory.Loss)
    expected = [info.TrainingHistory.Loss[0]]  # s₁ = x₁, sₖ = 0.6·sₖ₋₁ + 0.4·xₖ
    for value in info.TrainingHistory.Loss[1:]:
        expected.append(0.6 * expected[-1] + 0.4 * value)
    np.testing.assert_allclose(smoothed_line.get_ydata(), expected)
    np.testing.assert_allclose(validation.get_xdata(), info.ValidationHistory.Iteration)
    np.testing.assert_allclose(accuracy.lines[2].get_ydata(), info.ValidationHistory.Accuracy)
    assert [line.get_xdata()[0] for line in epochs] == [3.5, 6.5]
    assert loss.get_title() == "Training stopped: Max epochs completed"
    info.close()
    assert figure.number not in plt.get_fignums()
    info.close()  # nothing left to close


def test_show_without_matplotlib_names_the_extra(info, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(DLFormatError, match=r"show\(info\) needs matplotlib.*plot"):
        info.show()
