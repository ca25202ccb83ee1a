"""trainnet on a dlnetwork with several inputs and outputs: predictors and targets as tuples in
InputNames / OutputNames order, the loss function called as f(Y1, Y2, T1, T2) (MathWorks'
multiple-input and multiple-output training); updates against a float64 NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(7)
X1, X2 = RNG.standard_normal((8, 2)), RNG.standard_normal((8, 3))  # N×C each
T1, T2 = RNG.standard_normal((8, 1)), RNG.standard_normal((8, 1))
W = {
    "fc1": RNG.standard_normal((1, 2)),
    "fc2": RNG.standard_normal((1, 3)),
    "fc3": RNG.standard_normal((1, 3)),
}
B = {name: RNG.standard_normal((1, 1)) for name in W}


def two_by_two(**normalization):
    """Y1 = fc1(x1) + fc2(x2) (output "add"), Y2 = fc3(x2) (output "fc3")."""

    def fc(name):
        return dlf.fullyConnectedLayer(
            1, Name=name, Weights=torch.tensor(W[name]), Bias=torch.tensor(B[name])
        )

    net = dlf.dlnetwork()
    net = net.addLayers([dlf.featureInputLayer(2, Name="in1"), fc("fc1"), dlf.additionLayer(2, Name="add")])
    net = net.addLayers([dlf.featureInputLayer(3, Name="in2", **normalization), fc("fc2")])
    net = net.addLayers(fc("fc3"))
    net = net.connectLayers("fc2", "add/in2")
    return net.connectLayers("in2", "fc3")


def loss(Y1, Y2, T1, T2):
    mse = dlf.l2loss(Y1, T1, NormalizationFactor="all-elements")
    return mse + 0.5 * dlf.l2loss(Y2, T2, NormalizationFactor="all-elements")


def options(**extra):
    settings = dict(Momentum=0, L2Regularization=0, MaxEpochs=2, MiniBatchSize=4, Shuffle="never",
                    InitialLearnRate=0.1, Verbose=False)  # fmt: skip
    return dlf.trainingOptions("sgdm", **{**settings, **extra})


def tensors(value):
    """An array as a tensor, a tuple of arrays as a tuple of tensors."""
    return tuple(map(torch.tensor, value)) if isinstance(value, tuple) else torch.tensor(value)


def reference():
    """Plain gradient descent on L = mean((Y1 − T1)²) + ½ mean((Y2 − T2)²), float64 NumPy."""
    w = {name: value.copy() for name, value in W.items()}
    b = {name: value.copy() for name, value in B.items()}
    losses = []
    for _ in range(2):
        for begin in (0, 4):
            x1, x2, t1, t2 = (a[begin : begin + 4] for a in (X1, X2, T1, T2))
            e1 = x1 @ w["fc1"].T + b["fc1"] + x2 @ w["fc2"].T + b["fc2"] - t1
            e2 = x2 @ w["fc3"].T + b["fc3"] - t2
            losses.append((e1**2).mean() + 0.5 * (e2**2).mean())
            d1, d2 = 2 * e1 / e1.size, e2 / e2.size  # dL/dY1, dL/dY2
            grads = {"fc1": (d1.T @ x1, d1.sum()), "fc2": (d1.T @ x2, d1.sum()), "fc3": (d2.T @ x2, d2.sum())}
            for name, (gw, gb) in grads.items():
                w[name] = w[name] - 0.1 * gw
                b[name] = b[name] - 0.1 * gb
    return w, b, losses


def test_two_inputs_and_two_outputs_train_as_the_numpy_reference():
    net = two_by_two()
    assert net.InputNames == ("in1", "in2") and net.OutputNames == ("add", "fc3")
    data = (torch.tensor(X1), torch.tensor(X2)), (torch.tensor(T1), torch.tensor(T2))
    trained, info = dlf.trainnet(*data, net, loss, options(ValidationData=data, ValidationFrequency=2))
    w, b, losses = reference()
    np.testing.assert_allclose(np.asarray(info.TrainingHistory.Loss), losses, rtol=1e-12)
    for layer in trained.Layers:
        if layer.Name in w:
            np.testing.assert_allclose(layer.Weights.detach().numpy(), w[layer.Name], rtol=1e-12)
            np.testing.assert_allclose(layer.Bias.detach().numpy(), b[layer.Name], rtol=1e-12)
    assert list(info.ValidationHistory.Iteration) == [1, 2, 4]
    assert (
        net.Layers[1].Weights.detach().numpy().tolist() == W["fc1"].tolist()
    )  # the caller's net is unchanged


def test_each_input_layer_gets_the_statistics_of_its_own_predictors():
    net = two_by_two(Normalization="zerocenter")
    data = (torch.tensor(X1), torch.tensor(X2)), (torch.tensor(T1), torch.tensor(T2))
    trained, _ = dlf.trainnet(*data, net, loss, options(MaxEpochs=1))
    mean = trained.Layers[[layer.Name for layer in trained.Layers].index("in2")].Mean
    np.testing.assert_allclose(mean.numpy().ravel(), X2.mean(0), rtol=1e-12)


@pytest.mark.parametrize(
    ("X", "T", "lossFcn", "extra", "message"),
    [
        ((X1, X2), (T1, T2), "mse", {}, r"2 outputs \(add, fc3\); give lossFcn as a function"),
        (X1, (T1, T2), loss, {}, r"2 inputs \(in1, in2\); give the input data as a tuple of 2"),
        ((X1, X2), T1, loss, {}, r"2 outputs \(add, fc3\); give the output data as a tuple of 2"),
        ((X1, X2), (T1, T2), loss, {"Metrics": "rmse"}, r"2 outputs \(add, fc3\); give the metric RMSE a NetworkOutput"),
        ((X1, X2[:5]), (T1, T2), loss, {}, r"predictors must all have one number of observations; they have \[8, 5\]"),
        ((X1, X2), (T1, T2), loss, {"InputDataFormats": "BC"}, r"InputDataFormats has 1 format\(s\); the network has 2"),
    ],
)  # fmt: skip
def test_errors(X, T, lossFcn, extra, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainnet(tensors(X), tensors(T), two_by_two(), lossFcn, options(**extra))


def test_a_dataset_and_a_minibatchqueue_of_several_inputs_and_outputs_train_as_the_tuples():
    from torch.utils.data import TensorDataset

    tuples = (torch.tensor(X1), torch.tensor(X2)), (torch.tensor(T1), torch.tensor(T2))
    expected, _ = dlf.trainnet(*tuples, two_by_two(), loss, options())
    # items: the predictors in InputNames order, then the targets in OutputNames order (batch-first)
    dataset = TensorDataset(*tuples[0], *tuples[1])
    queue = dlf.minibatchqueue(*(t.T for t in (*tuples[0], *tuples[1])), MiniBatchSize=3,
                               MiniBatchFormat=["CB"] * 4)  # fmt: skip
    for source in (dataset, queue):
        got, info = dlf.trainnet(source, two_by_two(), loss, options(ValidationData=source))
        assert len(info.ValidationHistory) == 2  # iterations 1 and 4
        for a, b in zip(got.Learnables.Value, expected.Learnables.Value, strict=True):
            # the sources deliver single-precision data (the queue's OutputCast "single", a
            # Dataset's responses as float32): equal up to float32 rounding of the data
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def test_a_source_must_have_one_item_per_input_and_output():
    from torch.utils.data import TensorDataset

    source = TensorDataset(torch.tensor(X1), torch.tensor(X2), torch.tensor(T1))
    with pytest.raises(DLFormatError, match=r"must be a tuple of 4 \(the predictors, then the targets\)"):
        dlf.trainnet(source, two_by_two(), loss, options())
