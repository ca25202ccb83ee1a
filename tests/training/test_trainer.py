"""trainnet / trainNetwork: updates equal float64 hand computations of MATLAB's documented
formulas (solvers, L2 with factors, schedules, gradient thresholds), validation patience, the
best-validation network, reproducible shuffling, data layouts and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(0)
X64 = RNG.standard_normal((8, 2))  # MATLAB's N×C feature data
T64 = RNG.standard_normal((8, 1))  # N×R responses
W0, B0 = np.array([[0.5, -0.3]]), np.array([[0.1]])


def tiny_network(**factors):
    fc = dlf.fullyConnectedLayer(1, Weights=torch.tensor(W0), Bias=torch.tensor(B0), **factors)
    return dlf.dlnetwork([dlf.featureInputLayer(2), fc])


def mse_gradients(W, b, x, t):
    """trainnet's "mse": sum((y − t)²) / numel(y), and its gradients."""
    y = x @ W.T + b.T
    n = y.size
    return 2 / n * (y - t).T @ x, 2 / n * (y - t).sum(0, keepdims=True).T


def hand_train(solver, options, factors):
    """MATLAB's training loop written from its documented formulas, in float64 NumPy."""
    W, b = W0.copy(), B0.copy()
    lr_factor = {"W": factors.get("WeightLearnRateFactor", 1.0), "b": factors.get("BiasLearnRateFactor", 1.0)}
    l2_factor = {"W": factors.get("WeightL2Factor", 1.0), "b": factors.get("BiasL2Factor", 0.0)}
    state = {"W": [0.0, 0.0], "b": [0.0, 0.0]}
    iteration = 0
    for epoch in range(1, options["MaxEpochs"] + 1):
        rate = options["InitialLearnRate"] * 0.5 ** (epoch - 1)  # piecewise, DropPeriod 1, DropFactor 0.5
        for start in range(0, 8, 4):
            iteration += 1
            x, t = X64[start : start + 4], T64[start : start + 4]
            gW, gb = mse_gradients(W, b, x, t)
            params = {"W": W, "b": b}
            grads = {"W": gW + options["L2Regularization"] * l2_factor["W"] * W,
                     "b": gb + options["L2Regularization"] * l2_factor["b"] * b}  # fmt: skip
            for key in params:
                g, alpha = grads[key], rate * lr_factor[key]
                m, v = state[key]
                if solver == "sgdm":  # v ← γv − αg; w ← w + v
                    m = 0.9 * m - alpha * g
                    params[key] = params[key] + m
                elif solver == "adam":  # bias corrections folded into the step
                    m = 0.9 * m + 0.1 * g
                    v = 0.999 * v + 0.001 * g * g
                    step = alpha * np.sqrt(1 - 0.999**iteration) / (1 - 0.9**iteration)
                    params[key] = params[key] - step * m / (np.sqrt(v) + 1e-8)
                else:  # rmsprop: v ← β₂v + (1−β₂)g²; w ← w − αg/(√v + ε)
                    v = 0.9 * v + 0.1 * g * g
                    params[key] = params[key] - alpha * g / (np.sqrt(v) + 1e-8)
                state[key] = [m, v]
            W, b = params["W"], params["b"]
    return W, b


@pytest.mark.parametrize("solver", ["sgdm", "adam", "rmsprop"])
@pytest.mark.parametrize(
    "factors",
    [
        {},
        {
            "WeightLearnRateFactor": 2.0,
            "BiasLearnRateFactor": 0.5,
            "WeightL2Factor": 3.0,
            "BiasL2Factor": 1.0,
        },
    ],
)
def test_updates_equal_matlabs_formulas(solver, factors):
    settings = {"MaxEpochs": 2, "InitialLearnRate": 0.05, "L2Regularization": 0.01}
    options = dlf.trainingOptions(
        solver, **settings, MiniBatchSize=4, Shuffle="never", Verbose=False,
        LearnRateSchedule="piecewise", LearnRateDropPeriod=1, LearnRateDropFactor=0.5,
    )  # fmt: skip
    net, info = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), tiny_network(**factors), "mse", options)
    W, b = hand_train(solver, settings, factors)
    np.testing.assert_allclose(net.Layers[1].Weights.detach().numpy(), W, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(net.Layers[1].Bias.detach().numpy(), b, rtol=1e-12, atol=1e-14)
    assert list(info.TrainingHistory.Iteration) == [1, 2, 3, 4]
    assert list(info.TrainingHistory.Epoch) == [1, 1, 2, 2]
    np.testing.assert_allclose(info.TrainingHistory.LearnRate, [0.05, 0.05, 0.025, 0.025])


def test_the_given_network_is_left_unchanged():
    net = tiny_network()
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=4, Verbose=False)
    trained, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), net, "mse", options)
    np.testing.assert_array_equal(net.Layers[1].Weights.detach().numpy(), W0)
    assert not np.array_equal(trained.Layers[1].Weights.detach().numpy(), W0)


def clipped(method, threshold, gW, gb):
    """MATLAB's GradientThresholdMethod, from trainingOptions' documentation."""
    if method == "l2norm":  # each learnable's gradient rescaled to norm `threshold` when above it
        return [g * min(1.0, threshold / np.linalg.norm(g)) for g in (gW, gb)]
    if method == "global-l2norm":  # all rescaled by threshold / L when their joint norm L is above it
        norm = np.sqrt((gW**2).sum() + (gb**2).sum())
        return [g * min(1.0, threshold / norm) for g in (gW, gb)]
    return [np.sign(g) * np.minimum(np.abs(g), threshold) for g in (gW, gb)]  # absolute-value


@pytest.mark.parametrize("method", ["l2norm", "global-l2norm", "absolute-value"])
@pytest.mark.parametrize("threshold", [0.05, 0.3, 100.0])
def test_gradient_threshold_methods(method, threshold):
    options = dlf.trainingOptions(
        "sgdm", Momentum=0, InitialLearnRate=0.1, L2Regularization=0, MaxEpochs=1, MiniBatchSize=8,
        Shuffle="never", Verbose=False, GradientThreshold=threshold, GradientThresholdMethod=method,
    )  # fmt: skip
    net, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), tiny_network(), "mse", options)
    gW, gb = clipped(method, threshold, *mse_gradients(W0, B0, X64, T64))
    np.testing.assert_allclose(net.Layers[1].Weights.detach().numpy(), W0 - 0.1 * gW, rtol=1e-12)
    np.testing.assert_allclose(net.Layers[1].Bias.detach().numpy(), B0 - 0.1 * gb, rtol=1e-12)


def test_validation_patience_stops_at_the_right_iteration():
    # frozen learnables: the validation loss never improves after the first validation
    net = tiny_network(WeightLearnRateFactor=0, BiasLearnRateFactor=0)
    X, T = torch.tensor(X64), torch.tensor(T64)
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=10, MiniBatchSize=2, Verbose=False, ValidationData=(X, T),
        ValidationFrequency=2, ValidationPatience=3, OutputNetwork="last-iteration",
    )  # fmt: skip
    _, info = dlf.trainnet(X, T, net, "mse", options)
    # validations at iterations 1, 2, 4, 6: the 2nd, 3rd and 4th are not better than the 1st
    assert list(info.ValidationHistory.Iteration) == [1, 2, 4, 6]
    assert len(info.TrainingHistory) == 6
    assert info.StopReason == "Met validation criterion"
    assert info.OutputNetworkIteration == 6


def test_best_validation_network():
    # training pulls w toward 2, the validation targets want w = 1: the validation loss falls, then rises
    x = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(8, 1)
    layers = lambda: [  # noqa: E731
        dlf.featureInputLayer(1),
        dlf.fullyConnectedLayer(1, Weights=torch.zeros(1, 1, dtype=torch.float64),
                                Bias=torch.zeros(1, 1, dtype=torch.float64), BiasLearnRateFactor=0),
    ]  # fmt: skip
    common = {"Momentum": 0, "InitialLearnRate": 0.1, "L2Regularization": 0, "MiniBatchSize": 8}
    options = dlf.trainingOptions(
        "sgdm", **common, MaxEpochs=20, Verbose=False, ValidationData=(x, 1 * x), ValidationFrequency=1,
        OutputNetwork="best-validation",
    )  # fmt: skip
    net, info = dlf.trainnet(x, 2 * x, layers(), "mse", options)
    losses = np.array(info.ValidationHistory.Loss)
    best = int(np.array(info.ValidationHistory.Iteration)[losses.argmin()])
    assert 1 < best < 20 and info.OutputNetworkIteration == best
    # the same training stopped at that iteration gives the returned network
    again = dlf.trainingOptions("sgdm", **common, MaxEpochs=best, Verbose=False)
    reference, _ = dlf.trainnet(x, 2 * x, layers(), "mse", again)
    torch.testing.assert_close(net.Layers[1].Weights, reference.Layers[1].Weights, rtol=0, atol=0)


@pytest.mark.parametrize("shuffle", ["once", "every-epoch"])
def test_shuffle_is_reproducible(shuffle):
    options = dlf.trainingOptions("adam", MaxEpochs=3, MiniBatchSize=3, Shuffle=shuffle, Verbose=False)
    results = []
    for _ in range(2):
        torch.manual_seed(7)
        net, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), tiny_network(), "mse", options)
        results.append(net.Layers[1].Weights.detach().clone())
    torch.manual_seed(8)
    other, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), tiny_network(), "mse", options)
    torch.testing.assert_close(results[0], results[1], rtol=0, atol=0)
    assert not torch.equal(results[0], other.Layers[1].Weights.detach())


def test_incomplete_last_mini_batch_is_discarded():
    options = dlf.trainingOptions("sgdm", MaxEpochs=2, MiniBatchSize=3, Verbose=False)
    _, info = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), tiny_network(), "mse", options)
    assert list(info.TrainingHistory.Epoch) == [1, 1, 2, 2]  # 8 observations: two mini-batches of 3


def test_batch_normalization_state_is_kept():
    torch.manual_seed(0)
    layers = [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(4), dlf.batchNormalizationLayer(), dlf.reluLayer(),
              dlf.fullyConnectedLayer(1)]  # fmt: skip
    options = dlf.trainingOptions("adam", MaxEpochs=2, MiniBatchSize=4, Verbose=False)
    net, _ = dlf.trainnet(torch.randn(16, 3) + 5, torch.randn(16, 1), layers, "mse", options)
    mean = dict(((row[0], row[1]), row[2]) for row in net.State)[("batchnorm", "TrainedMean")]
    assert float(mean.abs().sum()) > 0  # moved from its initial zeros by the training forward passes


def test_classification_with_labels_trainnet_and_trainNetwork():
    torch.manual_seed(0)
    X = torch.randn(40, 2)
    labels = np.where(X[:, 0].numpy() > 0, "right", "left")
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(2), dlf.softmaxLayer()]
    options = dlf.trainingOptions("adam", InitialLearnRate=0.05, MaxEpochs=30, MiniBatchSize=10, Verbose=False,
                                  Metrics="accuracy")  # fmt: skip
    net, info = dlf.trainnet(X, labels, layers, "crossentropy", options)
    assert info.TrainingHistory.columns == ("Iteration", "Loss", "Accuracy", "Epoch", "LearnRate")
    assert info.TrainingHistory.Accuracy[-1] >= 90
    scores = dlf.predict(net, dlf.dlarray(X, "BC"))
    predicted, _ = dlf.scores2label(scores, ["left", "right"])  # classes in sorted order, as categorical's
    assert (predicted == labels).mean() > 0.9
    legacy, info = dlf.trainNetwork(X, labels, [*layers, dlf.classificationLayer()], options)
    assert isinstance(legacy, dlf.SeriesNetwork)
    assert info.TrainingAccuracy.shape == (120,) and info.TrainingAccuracy[-1] >= 90
    names, _ = dlf.classify(legacy, dlf.dlarray(X, "BC"))
    assert (names == labels).mean() > 0.9


def test_index_crossentropy_equals_crossentropy():
    X = torch.tensor(X64)
    labels = np.array(["a", "b", "c", "a", "b", "c", "a", "b"])
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(3, Weights=torch.ones(3, 2, dtype=torch.float64) * 0.1,
              Bias=torch.zeros(3, 1, dtype=torch.float64)), dlf.softmaxLayer()]  # fmt: skip
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=8, Verbose=False)
    one, _ = dlf.trainnet(X, labels, layers, "crossentropy", options)
    two, _ = dlf.trainnet(X, labels, layers, "index-crossentropy", options)
    torch.testing.assert_close(one.Layers[1].Weights, two.Layers[1].Weights)


def test_verbose_tables(capsys):
    X, T = torch.tensor(X64), torch.tensor(T64)
    options = dlf.trainingOptions("sgdm", MaxEpochs=2, MiniBatchSize=4, VerboseFrequency=2, ValidationData=(X, T),
                                  ValidationFrequency=3)  # fmt: skip
    dlf.trainNetwork(
        X, T, [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1), dlf.regressionLayer()], options
    )
    lines = capsys.readouterr().out.splitlines()
    assert [cell.strip() for cell in lines[1].strip("|").split("|")] == [
        "Epoch", "Iteration", "Time Elapsed", "Mini-batch", "Validation", "Mini-batch", "Validation", "Base Learning",
    ]  # fmt: skip
    rows = [
        line for line in lines if line.startswith("|") and line.strip("|").split("|")[0].strip().isdigit()
    ]
    assert [int(row.strip("|").split("|")[1]) for row in rows] == [
        1,
        2,
        3,
        4,
    ]  # 1, every 2nd, validations, last
    assert lines[-1] == "Training finished: Max epochs completed."
    dlf.trainnet(X, T, [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)], "mse", options)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "Iteration",
        "Epoch",
        "TimeElapsed",
        "LearnRate",
        "TrainingLoss",
        "ValidationLoss",
    ]
    assert lines[-1] == "Training stopped: Max epochs completed"


def test_image_and_sequence_layouts():
    torch.manual_seed(0)
    images = torch.randn(5, 5, 1, 6)  # MATLAB's H×W×C×N
    layers = [dlf.imageInputLayer([5, 5, 1], Normalization="none"), dlf.convolution2dLayer(3, 2),
              dlf.globalAveragePooling2dLayer(), dlf.fullyConnectedLayer(1)]  # fmt: skip
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=3, Verbose=False)
    _, info = dlf.trainnet(images, torch.randn(6, 1), layers, "mse", options)
    assert len(info.TrainingHistory) == 2
    sequences = [torch.randn(2, n) for n in (3, 5, 4, 6)]  # C×T, padded per mini-batch
    targets = [torch.randn(1, s.shape[1]) for s in sequences]  # sequence-to-sequence responses
    layers = [dlf.sequenceInputLayer(2), dlf.lstmLayer(3), dlf.fullyConnectedLayer(1)]
    options = dlf.trainingOptions(
        "adam", MaxEpochs=1, MiniBatchSize=2, Verbose=False, SequencePaddingDirection="left"
    )
    _, info = dlf.trainnet(sequences, targets, layers, "mse", options)
    assert len(info.TrainingHistory) == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda o: dlf.trainnet(X64, T64, tiny_network(), "mse", {}),
            "options must come from dlf.trainingOptions",
        ),
        (lambda o: dlf.trainnet(X64, T64, tiny_network(), "cross-entropy", o), "lossFcn must be one of"),
        (
            lambda o: dlf.trainnet(X64, T64[:5], tiny_network(), "mse", o),
            "X has 8 observations; the targets have 5",
        ),
        (
            lambda o: dlf.trainnet(
                X64,
                T64,
                [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1), dlf.regressionLayer()],
                "mse",
                o,
            ),
            "must not have output layers",
        ),
        (
            lambda o: dlf.trainNetwork(X64, T64, [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)], o),
            "must end in one output layer",
        ),
        (
            lambda o: dlf.trainNetwork(
                X64,
                T64,
                [
                    dlf.featureInputLayer(2),
                    dlf.fullyConnectedLayer(2),
                    dlf.softmaxLayer(),
                    dlf.classificationLayer(),
                ],
                o,
            ),
            "needs class labels",
        ),
        (
            lambda o: dlf.trainnet(
                X64,
                T64,
                tiny_network(),
                "mse",
                dlf.trainingOptions("sgdm", OutputNetwork="best-validation", Verbose=False),
            ),
            "needs ValidationData",
        ),
        (lambda o: dlf.trainnet("data", T64, tiny_network(), "mse", o), "X must be numeric"),
    ],
)
def test_errors(call, message):
    with pytest.raises(DLFormatError, match=message):
        call(dlf.trainingOptions("sgdm", MaxEpochs=1, Verbose=False))


def test_input_statistics_come_from_the_training_data():
    rng = np.random.default_rng(1)
    images = (
        rng.standard_normal((4, 4, 2, 6)) + np.array([1.0, -3.0])[:, None]
    )  # H×W×C×N, channel means 1, -3
    layers = [dlf.imageInputLayer([4, 4, 2]), dlf.convolution2dLayer(3, 1), dlf.globalAveragePooling2dLayer(),
              dlf.fullyConnectedLayer(1)]  # fmt: skip  # imageInputLayer's default Normalization: "zerocenter"
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=3, Verbose=False)
    net, _ = dlf.trainnet(torch.tensor(images), torch.zeros(6, 1), layers, "mse", options)
    mean = net.Layers[0].Mean.numpy()
    assert mean.shape == (1, 1, 2)  # one value per channel, as MATLAB's training computes it
    np.testing.assert_allclose(mean.ravel(), images.mean(axis=(0, 1, 3)), rtol=1e-12)
    assert layers[0].Mean is None  # the caller's layer is left as it was


def test_sequence_zscore_statistics_skip_the_padding():
    rng = np.random.default_rng(2)
    sequences = [rng.standard_normal((2, n)) for n in (3, 7, 5)]
    layers = [dlf.sequenceInputLayer(2, Normalization="zscore"), dlf.lstmLayer(2, OutputMode="last"),
              dlf.fullyConnectedLayer(1)]  # fmt: skip
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=3, Verbose=False)
    net, _ = dlf.trainnet([torch.tensor(s) for s in sequences], torch.zeros(3, 1), layers, "mse", options)
    every = np.concatenate(sequences, axis=1)
    np.testing.assert_allclose(net.Layers[0].Mean.numpy().ravel(), every.mean(1), rtol=1e-12)
    np.testing.assert_allclose(
        net.Layers[0].StandardDeviation.numpy().ravel(), every.std(1, ddof=1), rtol=1e-12
    )


@pytest.mark.parametrize(("reset", "kept"), [(False, True), (True, False)])
def test_reset_input_normalization(reset, kept):
    layers = [dlf.featureInputLayer(2, Normalization="zerocenter", Mean=torch.tensor([[5.0, 5.0]], dtype=torch.float64)),
              dlf.fullyConnectedLayer(1)]  # fmt: skip
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=1, MiniBatchSize=4, Verbose=False, ResetInputNormalization=reset
    )
    net, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), layers, "mse", options)
    expected = [5.0, 5.0] if kept else X64.mean(0)
    np.testing.assert_allclose(net.Layers[0].Mean.numpy().ravel(), expected, rtol=1e-12)


def test_trainNetwork_with_a_layer_graph_gives_a_dag_network():
    torch.manual_seed(0)
    lgraph = dlf.layerGraph([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(2, Name="fc1"),
                             dlf.additionLayer(2, Name="add"), dlf.fullyConnectedLayer(1), dlf.regressionLayer()])  # fmt: skip
    lgraph = dlf.addLayers(lgraph, dlf.fullyConnectedLayer(2, Name="skip"))
    lgraph = dlf.connectLayers(lgraph, "featureinput", "skip")
    lgraph = dlf.connectLayers(lgraph, "skip", "add/in2")
    options = dlf.trainingOptions("adam", InitialLearnRate=0.05, MaxEpochs=20, MiniBatchSize=8, Verbose=False)
    X = torch.randn(32, 2)
    net, info = dlf.trainNetwork(X, X.sum(1, keepdim=True), lgraph, options)
    assert isinstance(net, dlf.DAGNetwork) and net.OutputNames == ("regressionoutput",)
    assert info.TrainingLoss[-1] < info.TrainingLoss[0]
    assert (
        "skip" in lgraph.layers and lgraph._by_name["skip"].Weights is None
    )  # the caller's graph is untouched
    Y = dlf.predict(net, dlf.dlarray(X, "BC"))
    assert dlf.dims(Y) == "CB" and tuple(Y.shape) == (1, 32)


def test_trainNetwork_refuses_several_output_layers_as_matlab_does():
    lgraph = dlf.layerGraph(
        [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1), dlf.regressionLayer(Name="out1")]
    )
    lgraph = dlf.addLayers(lgraph, [dlf.fullyConnectedLayer(1, Name="fc2"), dlf.regressionLayer(Name="out2")])
    lgraph = dlf.connectLayers(lgraph, "featureinput", "fc2")
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, Verbose=False)
    X = torch.randn(8, 2)
    with pytest.raises(
        DLFormatError, match=r"it has 2 .*does not train networks with several outputs either"
    ):
        dlf.trainNetwork(X, X[:, :1], lgraph, options)


def test_the_legacy_info_struct():
    X, T = torch.tensor(X64), torch.tensor(T64)
    options = dlf.trainingOptions("sgdm", MaxEpochs=3, MiniBatchSize=4, Verbose=False, ValidationData=(X, T),
                                  ValidationFrequency=4)  # fmt: skip
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1), dlf.regressionLayer()]
    _, info = dlf.trainNetwork(X, T, layers, options)
    assert list(vars(info)) == [
        "TrainingLoss", "TrainingRMSE", "ValidationLoss", "ValidationRMSE", "BaseLearnRate",
        "FinalValidationLoss", "FinalValidationRMSE", "OutputNetworkIteration",
    ]  # fmt: skip
    assert info.TrainingLoss.shape == (6,) and info.OutputNetworkIteration == 6
    validated = ~np.isnan(info.ValidationLoss)
    assert validated.tolist() == [True, False, False, True, False, True]  # iteration 1, every 4th, the last
    assert info.FinalValidationLoss == info.ValidationLoss[-1]
    # regressionLayer's loss is half the mean squared error per observation; its RMSE is not halved
    np.testing.assert_allclose(
        info.FinalValidationRMSE**2 / 2, info.FinalValidationLoss, rtol=1e-6
    )  # float32 net


def test_sequences_in_a_numpy_object_array():
    cells = np.empty(4, dtype=object)  # how scipy.io reads a MATLAB cell array of sequences
    for index, length in enumerate((3, 4, 5, 6)):
        cells[index] = RNG.standard_normal((2, length))
    layers = [dlf.sequenceInputLayer(2), dlf.lstmLayer(3, OutputMode="last"), dlf.fullyConnectedLayer(1)]
    options = dlf.trainingOptions("adam", MaxEpochs=1, MiniBatchSize=2, Verbose=False)
    _, info = dlf.trainnet(cells, torch.randn(4, 1), layers, "mse", options)
    assert len(info.TrainingHistory) == 2


def test_a_per_gate_l2_vector_decays_each_gates_rows_by_its_own_factor():
    """A zero, frozen fullyConnectedLayer after the LSTM makes the loss's gradient with respect to
    the LSTM's learnables zero, so one sgdm step (momentum 0) is the L2 term alone:
    w ← w − α·λ·f_gate·w, with f_gate MATLAB's per-gate factor repeated over the gate's rows."""
    hidden, rate, l2 = 3, 0.1, 0.5
    gates = [0.0, 1.0, 2.0, 4.0]
    lstm = dlf.lstmLayer(
        hidden, InputSize=2, OutputMode="last", RecurrentWeightsL2Factor=gates, dtype=torch.float64
    )
    fc = dlf.fullyConnectedLayer(1, Weights=torch.zeros(1, hidden), WeightLearnRateFactor=0)
    R0, W0 = (value.detach().numpy().copy() for value in (lstm.RecurrentWeights, lstm.InputWeights))
    sequences = [torch.tensor(RNG.standard_normal((2, n))) for n in (4, 3)]  # C×T
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=1, MiniBatchSize=2, Momentum=0, InitialLearnRate=rate, L2Regularization=l2,
        Shuffle="never", Verbose=False,
    )  # fmt: skip
    net = dlf.dlnetwork([dlf.sequenceInputLayer(2), lstm, fc]).double()
    trained, _ = dlf.trainnet(sequences, torch.tensor(RNG.standard_normal((2, 1))), net, "mse", options)
    factor = np.repeat(np.asarray(gates), hidden)[:, None]
    R, W = (
        value.detach().numpy()
        for value in (trained.Layers[1].RecurrentWeights, trained.Layers[1].InputWeights)
    )
    np.testing.assert_allclose(R, R0 - rate * l2 * factor * R0, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(W, W0 - rate * l2 * W0, rtol=1e-12, atol=1e-15)  # scalar factor 1


def _sequence_classifier(last=None):
    torch.manual_seed(3)
    layers = [
        dlf.sequenceInputLayer(3),
        dlf.lstmLayer(5, OutputMode="last"),
        dlf.fullyConnectedLayer(4),
        last if last is not None else dlf.softmaxLayer(),
    ]
    return dlf.dlnetwork(layers).double()


def test_fused_softmax_crossentropy_trains_as_the_unfused_loss():
    """trainnet's "crossentropy" on a network ending in softmaxLayer is computed from the softmax's
    input (log_softmax); the same loss given as a function runs on the softmax's output. The two
    give the same losses, metrics (which see the softmax's output) and trained parameters."""
    generator = torch.Generator().manual_seed(7)
    X = dlf.dlarray(torch.randn(6, 24, 3, generator=generator, dtype=torch.float64), "TBC")
    T = dlf.dlarray(torch.eye(4, dtype=torch.float64)[torch.randint(0, 4, (24,), generator=generator)], "BC")
    options = dlf.trainingOptions(
        "sgdm", MaxEpochs=2, MiniBatchSize=8, Shuffle="never", Verbose=False, Metrics="accuracy",
        InitialLearnRate=0.5,
    )  # fmt: skip

    def unfused(Y, targets):
        return dlf.crossentropy(Y, targets, NormalizationFactor="all-elements")

    fused_net, fused = dlf.trainnet(X, T, _sequence_classifier(), "crossentropy", options)
    plain_net, plain = dlf.trainnet(X, T, _sequence_classifier(), unfused, options)
    for column in ("Loss", "Accuracy"):
        np.testing.assert_allclose(
            getattr(fused.TrainingHistory, column), getattr(plain.TrainingHistory, column), rtol=1e-12
        )
    for (_, _, trained), (_, _, reference) in zip(fused_net.Learnables, plain_net.Learnables, strict=True):
        torch.testing.assert_close(trained, reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("last", "loss", "expected"),
    [
        pytest.param(None, "crossentropy", ("fc", "softmax"), id="softmax-crossentropy"),
        pytest.param(None, "binary-crossentropy", None, id="other-loss-name"),
        pytest.param(None, lambda Y, T: dlf.crossentropy(Y, T), None, id="loss-function"),
        pytest.param(dlf.sigmoidLayer, "crossentropy", None, id="sigmoid-output"),
        pytest.param(
            lambda: type("MySoftmax", (dlf.SoftmaxLayer,), {})(), "crossentropy", None, id="subclass"
        ),
    ],
)
def test_where_the_softmax_crossentropy_is_fused(last, loss, expected):
    from dlformat.training._trainer import _NAMED_LOSSES, _fused_outputs

    net = _sequence_classifier(last() if last is not None else None)
    loss_fn = _NAMED_LOSSES[loss] if isinstance(loss, str) else loss
    assert _fused_outputs(net, loss_fn) == expected


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("solver", ["sgdm", "adam", "rmsprop"])
def test_trainnets_solver_steps_equal_the_update_functions_in_every_floating_dtype(solver, dtype):
    """trainnet's solver (all parameters at once where it can) gives sgdmupdate's, adamupdate's and
    rmspropupdate's values bit for bit over several steps, learn-rate factors applied, in each
    floating dtype a network may have (torch's in-place multi-tensor multiply by a number rounds
    the number to float16/bfloat16 first: momentum 0.9 became 0.8984375 in bfloat16)."""
    from dlformat.training import _parameters
    from dlformat.training._trainer import _Solver

    torch.manual_seed(0)
    layers = [
        dlf.featureInputLayer(3),
        dlf.fullyConnectedLayer(64, WeightLearnRateFactor=0.5),
        dlf.fullyConnectedLayer(2),
    ]
    net = dlf.dlnetwork(layers).to(dtype)
    reference = copy.deepcopy(net)
    settings = {
        "sgdm": {"Momentum": 0.9},
        "adam": {"GradientDecayFactor": 0.9, "SquaredGradientDecayFactor": 0.99, "Epsilon": 1e-3},
        "rmsprop": {"SquaredGradientDecayFactor": 0.99, "Epsilon": 1e-3},
    }[solver]
    options = dlf.trainingOptions(solver, **settings)
    trainer = _Solver(options, net)
    keys, parameters, _ = _parameters.network_rows(net)
    generator = torch.Generator().manual_seed(1)
    states: list = [[], []]  # the update functions' state tables ([] before the first call)
    rate = 0.5
    for iteration in range(1, 4):
        grads = [torch.randn(p.shape, generator=generator).to(dtype) for p in parameters]
        trainer.step(grads, rate, iteration)
        table = _parameters.network_table(keys, grads)
        if solver == "sgdm":
            reference, states[0] = dlf.sgdmupdate(reference, table, states[0], rate, 0.9)
        elif solver == "adam":
            reference, *states = dlf.adamupdate(reference, table, *states, iteration, rate, 0.9, 0.99, 1e-3)
        else:
            reference, states[0] = dlf.rmspropupdate(reference, table, states[0], rate, 0.99, 1e-3)
    for index, ((_, name, got), (_, _, expected)) in enumerate(
        zip(net.Learnables, reference.Learnables, strict=True)
    ):
        assert got.dtype == dtype
        assert torch.equal(got, expected), name
        for kind, table in enumerate(state for state in states if len(state)):
            assert torch.equal(trainer.states[index][kind], table.Value[index]), (name, kind)


@pytest.mark.parametrize("solver", ["sgdm", "lbfgs", "lm"])
def test_a_network_without_learnables_is_refused_before_training(solver):
    X, T = torch.randn(8, 3), torch.randn(8, 3)
    limit = {"MaxEpochs": 1} if solver == "sgdm" else {"MaxIterations": 1}
    options = dlf.trainingOptions(solver, Verbose=False, **limit)
    with pytest.raises(DLFormatError, match="trainnet: the network has no learnable parameters"):
        dlf.trainnet(X, T, [dlf.featureInputLayer(3), dlf.reluLayer()], "mse", options)
    with pytest.raises(DLFormatError, match="trainNetwork: the network has no learnable parameters"):
        dlf.trainNetwork(X, T, [dlf.featureInputLayer(3), dlf.reluLayer(), dlf.regressionLayer()],
                         dlf.trainingOptions("sgdm", MaxEpochs=1, Verbose=False))  # fmt: skip
