"""trainnet / trainNetwork on a minibatchqueue, a torch Dataset or a DataLoader (read once, then
trained as the same data given as arrays), and trainnet's s×c layout of vector sequences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import dlformat as dlf
from dlformat import DLFormatError

RNG = np.random.default_rng(5)
FEATURES = torch.tensor(RNG.standard_normal((12, 3)), dtype=torch.float32)  # N×C
CLASSES = torch.tensor(RNG.integers(0, 3, 12))  # torch's 0-based class indices
IMAGES = torch.tensor(RNG.standard_normal((12, 2, 4, 5)), dtype=torch.float32)  # torch's N×C×H×W


def options(**extra):
    settings = {
        "InitialLearnRate": 0.1,
        "MaxEpochs": 2,
        "MiniBatchSize": 4,
        "Shuffle": "never",
        "Verbose": False,
    }
    return dlf.trainingOptions("sgdm", **{**settings, **extra})


def weights(net):
    return [value.detach().clone() for value in net.Learnables.Value]


def feature_layers(classes=3):
    torch.manual_seed(0)
    return [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(classes), dlf.softmaxLayer()]


def assert_same(a, b, tolerance=0.0):
    for x, y in zip(weights(a), weights(b), strict=True):
        torch.testing.assert_close(x, y, rtol=tolerance, atol=tolerance)


def as_labels(indices):
    return np.array([str(int(k)) for k in indices])


def datasets(X, T, batch_size):
    """The pair as a torch Dataset and as a DataLoader of it."""
    return pytest.mark.parametrize(
        "source",
        [TensorDataset(X, T), DataLoader(TensorDataset(X, T), batch_size=batch_size)],
        ids=["Dataset", "DataLoader"],
    )


@datasets(FEATURES, CLASSES, 5)
def test_a_dataset_trains_as_the_same_arrays(source):
    expected, _ = dlf.trainnet(FEATURES, as_labels(CLASSES), feature_layers(), "crossentropy", options())
    got, info = dlf.trainnet(source, feature_layers(), "crossentropy", options())
    assert len(info.TrainingHistory) == 6  # 12 observations, MiniBatchSize 4, 2 epochs
    assert_same(got, expected)


def test_a_minibatchqueue_trains_as_the_same_arrays():
    queue = dlf.minibatchqueue(FEATURES.T, FEATURES[:, :1].T, MiniBatchSize=5, MiniBatchFormat=["CB", "CB"])
    layers = [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(1)]
    torch.manual_seed(0)
    expected, _ = dlf.trainnet(FEATURES, FEATURES[:, :1], dlf.dlnetwork(layers), "mse", options())
    torch.manual_seed(0)
    got, _ = dlf.trainnet(queue, dlf.dlnetwork(layers), "mse", options())
    assert_same(got, expected, 1e-6)  # the queue's C×N data multiplies in another memory order


def test_a_dataloader_of_batch_first_images_trains_as_matlab_layout_arrays():
    torch.manual_seed(0)
    layers = [
        dlf.imageInputLayer([4, 5, 2], Normalization="none"),
        dlf.fullyConnectedLayer(3),
        dlf.softmaxLayer(),
    ]
    matlab_layout = IMAGES.permute(2, 3, 1, 0)  # H×W×C×N
    expected, _ = dlf.trainnet(
        matlab_layout, as_labels(CLASSES), dlf.dlnetwork(layers), "crossentropy", options()
    )
    loader = DataLoader(TensorDataset(IMAGES, CLASSES), batch_size=3)
    got, _ = dlf.trainnet(loader, dlf.dlnetwork(layers), "crossentropy", options())
    assert_same(got, expected)


class NamedDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, index):
        return FEATURES[index], str(int(CLASSES[index]))


def test_a_dataset_of_class_names_trains_as_the_same_arrays():
    expected, _ = dlf.trainnet(FEATURES, as_labels(CLASSES), feature_layers(), "crossentropy", options())
    got, _ = dlf.trainnet(NamedDataset(), feature_layers(), "crossentropy", options())
    assert_same(got, expected)


def test_trainnetwork_takes_a_dataset_with_class_indices_named_in_order():
    indices = torch.arange(12) % 11  # 11 classes: "10" comes after "9", as the indices do
    layers = [*feature_layers(11), dlf.classificationLayer()]
    net, info = dlf.trainNetwork(TensorDataset(FEATURES, indices), layers, options())
    assert list(net.Layers[-1].Classes) == [str(k) for k in range(11)]
    assert len(info.TrainingLoss) == 6


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (dlf.minibatchqueue(FEATURES.T, MiniBatchFormat="CB"), "must have two outputs"),
        (dlf.minibatchqueue(FEATURES.T, FEATURES.T), 'output 1 needs a format with "B"'),
        (TensorDataset(FEATURES), r"must be a pair \(x, t\)"),
        (TensorDataset(FEATURES, torch.zeros(12, 2, 3)), "give TargetDataFormats"),
        (TensorDataset(FEATURES, CLASSES - 1), "0-based class indices; got -1"),
    ],
)
def test_unusable_sources_are_clear_errors(source, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainnet(source, feature_layers(), "crossentropy", options())


def test_sequences_from_a_dataloader_need_input_data_formats():
    loader = DataLoader(TensorDataset(torch.zeros(4, 3, 6), torch.zeros(4, 1)), batch_size=2)
    layers = [dlf.sequenceInputLayer(3), dlf.lstmLayer(2, OutputMode="last"), dlf.fullyConnectedLayer(1)]
    with pytest.raises(DLFormatError, match="give InputDataFormats"):
        dlf.trainnet(loader, layers, "mse", options())
    net, _ = dlf.trainnet(loader, layers, "mse", options(InputDataFormats="BCT"))
    assert isinstance(net, dlf.DLNetwork)


# -- trainnet's vector sequences: s×c (time first) ------------------------------------------------
SEQUENCES = [torch.tensor(RNG.standard_normal((3, n)), dtype=torch.float32) for n in (5, 7, 3, 6)]
RESPONSES = torch.tensor(RNG.standard_normal((4, 1)), dtype=torch.float32)


def sequence_layers():
    torch.manual_seed(0)
    return [dlf.sequenceInputLayer(3), dlf.lstmLayer(4, OutputMode="last"), dlf.fullyConnectedLayer(1)]


def test_trainnet_reads_s_by_c_sequences_as_channels_first_ones():
    channels_first, _ = dlf.trainnet(SEQUENCES, RESPONSES, sequence_layers(), "mse", options(MiniBatchSize=2))
    time_first = [s.T for s in SEQUENCES]
    got, _ = dlf.trainnet(time_first, RESPONSES, sequence_layers(), "mse", options(MiniBatchSize=2))
    assert_same(got, channels_first)


@pytest.mark.parametrize("container", [list, "object array"])
def test_square_sequences_are_read_as_trainnet_reads_them_time_first(container):
    squares = [torch.tensor(RNG.standard_normal((3, 3)), dtype=torch.float32) for _ in range(4)]
    given: object = squares
    if container == "object array":  # MATLAB's cell array as NumPy holds it
        given = np.empty(len(squares), dtype=object)
        given[:] = [s.numpy() for s in squares]
    got, _ = dlf.trainnet(given, RESPONSES, sequence_layers(), "mse", options())
    # the rows of each matrix are its time steps: the same data as a "CBT" array of the transposes
    time_steps = dlf.dlarray(torch.stack([s.T for s in squares], 1), "CBT")
    expected, _ = dlf.trainnet(time_steps, RESPONSES, sequence_layers(), "mse", options())
    assert_same(got, expected)


def test_s_by_c_sequences_in_an_object_array_are_read_as_in_a_list():
    given = np.empty(len(SEQUENCES), dtype=object)
    given[:] = [s.T.numpy() for s in SEQUENCES]  # time first, as trainnet takes them
    got, _ = dlf.trainnet(given, RESPONSES, sequence_layers(), "mse", options(MiniBatchSize=2))
    expected, _ = dlf.trainnet(SEQUENCES, RESPONSES, sequence_layers(), "mse", options(MiniBatchSize=2))
    assert_same(got, expected)


def test_sequences_of_neither_layout_are_a_clear_error():
    mixed = [torch.zeros(3, 5), torch.zeros(6, 3), torch.zeros(4, 4)]
    with pytest.raises(DLFormatError, match="must all be s×3 matrices"):
        dlf.trainnet(mixed, torch.zeros(3, 1), sequence_layers(), "mse", options())


VALIDATION = torch.tensor(RNG.standard_normal((7, 3)), dtype=torch.float32)  # N×C
VALIDATION_CLASSES = torch.tensor([0, 1, 2, 0, 1, 2, 1])


@datasets(VALIDATION, VALIDATION_CLASSES, 3)
def test_validation_data_from_a_dataset_validates_as_the_same_arrays(source):
    settings = {"ValidationFrequency": 2, "Metrics": "accuracy"}
    _, expected = dlf.trainnet(FEATURES, as_labels(CLASSES), feature_layers(), "crossentropy",
                               options(ValidationData=(VALIDATION, as_labels(VALIDATION_CLASSES)), **settings))  # fmt: skip
    _, got = dlf.trainnet(TensorDataset(FEATURES, CLASSES), feature_layers(), "crossentropy",
                            options(ValidationData=source, **settings))  # fmt: skip
    assert list(got.ValidationHistory.Iteration) == [1, 2, 4, 6]
    np.testing.assert_array_equal(
        np.asarray(got.ValidationHistory.Loss), np.asarray(expected.ValidationHistory.Loss)
    )
    np.testing.assert_array_equal(
        np.asarray(got.ValidationHistory.Accuracy), np.asarray(expected.ValidationHistory.Accuracy)
    )


def test_validation_data_from_a_minibatchqueue():
    targets = FEATURES[:, :1]
    queue = dlf.minibatchqueue(
        VALIDATION.T, VALIDATION[:, :1].T, MiniBatchSize=3, MiniBatchFormat=["CB", "CB"]
    )
    layers = [dlf.featureInputLayer(3), dlf.fullyConnectedLayer(1)]
    results = []
    for validation in ((VALIDATION, VALIDATION[:, :1]), queue):
        torch.manual_seed(0)
        _, info = dlf.trainnet(
            FEATURES, targets, dlf.dlnetwork(layers), "mse", options(ValidationData=validation)
        )
        results.append(np.asarray(info.ValidationHistory.Loss))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
    # trainNetwork validates on it too
    legacy = [*layers, dlf.regressionLayer()]
    _, info = dlf.trainNetwork(FEATURES, targets, legacy, options(ValidationData=queue))
    assert (
        np.isfinite(info.FinalValidationLoss) and np.isfinite(info.ValidationLoss).sum() == 2
    )  # iterations 1, 6
    shown = repr(options(ValidationData=queue))  # MATLAB's display names the source
    assert "ValidationData: [1×1 minibatchqueue]" in shown


def test_validation_data_of_another_kind_is_an_error():
    with pytest.raises(DLFormatError, match=r"pair .*minibatchqueue, Dataset or DataLoader"):
        options(ValidationData=VALIDATION)
