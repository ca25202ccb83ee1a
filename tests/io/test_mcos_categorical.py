"""MATLAB-written categorical arrays read into dlformat's Categorical (dlformat/io/_mcos.py), and
savemat's refusal to write one.

matio_test_tables_v73.mat was written by MATLAB from mat-io's generator script
(tests/data/generators/test_tables_v5.m of foreverallama/matio); each variable's MATLAB expression
is rebuilt here with dlf.categorical and must give the same array. vikas_net.mat holds a real
workspace: YPred = classify(net, validation images), YValidation, their accuracy and the scores.
"""

from __future__ import annotations

import numpy as np
import pytest

import dlformat as dlf
from dlformat import DLFormatError
from dlformat.io import loadmat, savemat

pytest.importorskip("matio")

# the generator script's expressions, in dlformat's spelling
EXPRESSIONS = {
    "cat_scalar": lambda: dlf.categorical(np.array([["red", "green", "blue", "red"]], dtype=object)),
    "cat_array": lambda: dlf.categorical(np.array([["low", "medium"], ["high", "low"]], dtype=object)),
    "cat_unordered": lambda: dlf.categorical(
        np.array([["cold", "hot", "warm"]], dtype=object), ["cold", "warm", "hot"]
    ),
    "cat_ordered": lambda: dlf.categorical(
        np.array([["small", "medium", "large"]], dtype=object), ["small", "medium", "large"], "Ordinal", True
    ),
    "cat_from_numeric": lambda: dlf.categorical(
        np.array([[1, 2, 3, 2, 1]]), [1, 2, 3], ["low", "medium", "high"]
    ),
    "cat_empty": lambda: dlf.categorical(np.empty((0, 0), dtype=object)),
    "cat_missing": lambda: dlf.categorical(
        np.array([["cat", "", "dog", "mouse"]], dtype=object), ["cat", "dog", "mouse"]
    ),
    "cat_string": lambda: dlf.categorical(np.array([["spring", "summer", "autumn", "winter"]], dtype=object)),
    "cat_mixed_case": lambda: dlf.categorical(np.array([["On", "off", "OFF", "ON", "on"]], dtype=object)),
    # repmat(["yes" "no" "maybe"], [2, 1, 2])
    "cat_3D": lambda: dlf.categorical(
        np.tile(np.array(["yes", "no", "maybe"], dtype=object)[None, :, None], (2, 1, 2))
    ),
}


@pytest.mark.parametrize("variable", sorted(EXPRESSIONS))
def test_matlab_written_categoricals_read_as_the_expressions_that_made_them(corpus, variable):
    loaded = loadmat(corpus / "matio_test_tables_v73.mat", [variable])[variable]
    expected = EXPRESSIONS[variable]()
    assert isinstance(loaded, dlf.Categorical)
    assert loaded.shape == expected.shape and dlf.categories(loaded) == dlf.categories(expected)
    assert loaded.tolist() == expected.tolist()
    assert dlf.isordinal(loaded) == dlf.isordinal(expected)
    assert dlf.isprotected(loaded) == dlf.isprotected(expected)


def test_a_real_workspaces_labels_give_matlabs_accuracy_and_scores2label(networks):
    values = loadmat(networks / "vikas_net.mat", ["YPred", "YValidation", "accuracy", "probs"])
    YPred, YValidation = values["YPred"], values["YValidation"]
    assert YPred.shape == (413, 1) and dlf.categories(YPred) == [
        "apple_red_delicios_1",
        "apple_red_yellow_1",
        "apple_rotten_1",
    ]
    # the script's accuracy = mean(YPred == YValidation), as MATLAB computed and saved it
    assert np.mean(YPred == YValidation) == pytest.approx(float(values["accuracy"][0, 0]), abs=1e-12)
    # MATLAB's classify took the top score of each row of probs (413×3): scores2label gives the same
    labels, _ = dlf.scores2label(values["probs"], dlf.categories(YPred), 2)
    assert isinstance(labels, dlf.Categorical) and dlf.isequal(labels, YPred.ravel())
    assert dlf.categories(labels) == dlf.categories(YPred)


def test_classify_of_the_saved_network_matches_the_saved_label(networks):
    values = loadmat(networks / "vikas_net.mat", ["I", "test_Pred"])
    net = dlf.io.load_network(networks / "vikas_net.mat")
    classes = net.Layers[-1].Classes
    assert dlf.iscategorical(classes) and dlf.categories(classes) == dlf.categories(values["test_Pred"])
    image = dlf.dlarray(values["I"].astype(np.float32)[..., None], "SSCB")
    labels, _ = dlf.classify(net, image)
    assert isinstance(labels, dlf.Categorical) and (labels == values["test_Pred"]).all()


def test_savemat_refuses_a_categorical_and_says_what_to_save(tmp_path):
    with pytest.raises(
        DLFormatError, match=r"labels is a categorical array, a MATLAB object.*categories\(C\)"
    ):
        savemat(tmp_path / "out.mat", {"labels": dlf.categorical(["a", "b"])})
    assert not (tmp_path / "out.mat").exists()
