"""BatchNormalizationStatistics: "population" sets batch normalization's TrainedMean and
TrainedVariance from one more pass over the training data (MathWorks' batchNormalizationLayer
page); "moving" and "auto" keep the running statistics. References in float64 NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf

RNG = np.random.default_rng(5)
X64 = RNG.standard_normal((10, 2)) * [2.0, 0.5] + [3.0, -1.0]  # N×C, channels far from zero mean
T64 = RNG.standard_normal((10, 1))


def layers():
    torch.manual_seed(0)
    return [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(3, Name="fc1"), dlf.batchNormalizationLayer(Name="bn1"),
            dlf.reluLayer(), dlf.fullyConnectedLayer(2, Name="fc2"), dlf.batchNormalizationLayer(Name="bn2"),
            dlf.fullyConnectedLayer(1, Name="fc3")]  # fmt: skip


def trained(statistics, batch=4):
    options = dlf.trainingOptions("sgdm", MaxEpochs=2, MiniBatchSize=batch, Verbose=False,
                                  BatchNormalizationStatistics=statistics)  # fmt: skip
    net, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), layers(), "mse", options)
    return net


def numpy_of(net, name, prop):
    layer = net.Layers[[layer.Name for layer in net.Layers].index(name)]
    return getattr(layer, prop).detach().double().numpy()


def population_reference(net, batch):
    """One pass in mini-batches of ``batch`` (the last one short): each batch normalization layer's
    input pooled over every observation, mean and biased variance; inside the pass each layer
    normalizes by its own mini-batch's statistics (training behaviour)."""
    W1, b1 = numpy_of(net, "fc1", "Weights"), numpy_of(net, "fc1", "Bias")
    W2, b2 = numpy_of(net, "fc2", "Weights"), numpy_of(net, "fc2", "Bias")
    scale1, offset1 = numpy_of(net, "bn1", "Scale").ravel(), numpy_of(net, "bn1", "Offset").ravel()
    eps = 1e-5  # batchNormalizationLayer's default Epsilon
    inputs1, inputs2 = [], []
    for begin in range(0, len(X64), batch):
        x = X64[begin : begin + batch]
        a = x @ W1.T + b1.ravel()
        inputs1.append(a)
        normalized = (a - a.mean(0)) / np.sqrt(a.var(0) + eps) * scale1 + offset1
        inputs2.append(np.maximum(normalized, 0) @ W2.T + b2.ravel())
    every1, every2 = np.concatenate(inputs1), np.concatenate(inputs2)
    return (every1.mean(0), every1.var(0)), (every2.mean(0), every2.var(0))


def test_population_statistics_are_those_of_one_more_pass_over_the_training_data():
    net = trained("population")
    (mean1, var1), (mean2, var2) = population_reference(net, 4)
    for name, mean, var in (("bn1", mean1, var1), ("bn2", mean2, var2)):
        assert numpy_of(net, name, "TrainedMean").shape == (mean.size, 1)
        np.testing.assert_allclose(numpy_of(net, name, "TrainedMean").ravel(), mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(numpy_of(net, name, "TrainedVariance").ravel(), var, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("statistics", ["moving", "auto"])
def test_moving_and_auto_keep_the_running_statistics(statistics):
    net, moving = trained(statistics), trained("population")
    (mean1, _), _ = population_reference(net, 4)
    # the same training (same seed), only the statistics differ: running ones are no population ones
    np.testing.assert_array_equal(numpy_of(net, "fc1", "Weights"), numpy_of(moving, "fc1", "Weights"))
    assert not np.allclose(numpy_of(net, "bn1", "TrainedMean").ravel(), mean1, rtol=1e-3)


def test_a_network_without_batch_normalization_is_left_as_trained():
    options = dict(MaxEpochs=1, MiniBatchSize=5, Verbose=False)
    nets = []
    for statistics in ("population", "moving"):
        torch.manual_seed(0)
        net, _ = dlf.trainnet(torch.tensor(X64), torch.tensor(T64), [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)],
                              "mse", dlf.trainingOptions("adam", BatchNormalizationStatistics=statistics, **options))  # fmt: skip
        nets.append(net)
    np.testing.assert_array_equal(numpy_of(nets[0], "fc", "Weights"), numpy_of(nets[1], "fc", "Weights"))


@pytest.mark.parametrize("statistics", ["population", "auto"])
def test_trainNetwork_sets_population_statistics_too_and_by_default(statistics):
    """trainNetwork's "auto" is "population": the default of the options it was written for (the
    R2022b TrainingOptionsSGDM class defaults saved in vikas_net.mat, see the next test)."""
    options = dlf.trainingOptions("sgdm", MaxEpochs=1, MiniBatchSize=3, Verbose=False,
                                  BatchNormalizationStatistics=statistics)  # fmt: skip
    net, _ = dlf.trainNetwork(
        torch.tensor(X64), torch.tensor(T64), [*layers(), dlf.regressionLayer()], options
    )
    (mean1, var1), _ = population_reference(net, 3)
    np.testing.assert_allclose(numpy_of(net, "bn1", "TrainedMean").ravel(), mean1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numpy_of(net, "bn1", "TrainedVariance").ravel(), var1, rtol=1e-5, atol=1e-6)


def test_the_option_is_checked():
    with pytest.raises(dlf.DLFormatError, match="BatchNormalizationStatistics"):
        dlf.trainingOptions("sgdm", BatchNormalizationStatistics="batch")


def test_a_matlab_written_sgdm_options_object_has_dlformats_defaults(networks):
    """vikas_net.mat (MATLAB R2022b) holds a TrainingOptionsSGDM object, saved with its class's
    default property values: each is dlformat's default, except BatchNormalizationStatistics and
    OutputNetwork, whose R2022b defaults ("population", "last-iteration") are what dlformat's
    "auto" does for trainNetwork, the training function of that release."""
    from dlformat.io import loadmat

    saved = loadmat(networks / "vikas_net.mat", ["options"])["options"]
    assert saved.classname == "nnet.cnn.TrainingOptionsSGDM"
    ours = dlf.trainingOptions("sgdm")
    release_specific = {"BatchNormalizationStatistics": "population", "OutputNetwork": "last-iteration"}
    compared = 0
    for name, value in saved.properties.items():
        if name == "any":  # what the object's saveobj returned: the values the user set
            continue
        array = np.asarray(value)
        matlab = (
            None
            if array.size == 0
            else (array.item() if array.dtype != object and array.size == 1 else value)
        )
        if name in release_specific:
            assert matlab == release_specific[name] and getattr(ours, name) == "auto", name
        else:
            assert getattr(ours, name) == matlab, name
        compared += 1
    assert compared == 29
