"""The examples run as users run them, and do what they say."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_position_embedding_network_trains_saves_and_reloads(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "position_embedding_network.py"), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "64(C) × 2(B) × 20(T)" in out and "128(C) × 2(B) × 20(T)" in out  # analyzeNetwork's table
    losses = [float(line.rsplit("loss", 1)[1]) for line in out.splitlines() if line.startswith("[")]
    assert len(losses) >= 6 and losses[-1] < 0.5 * losses[0]
    assert "reloaded network predicts identically: True" in out
    assert (tmp_path / "learnables.mat").is_file()


def test_the_loss_floor_is_what_the_task_allows(tmp_path):
    """The first MOTIF words of a sequence are unpredictable, so the loss cannot fall below their share."""
    example = load_example("position_embedding_network")
    result = example.main(["--steps", "300", "--out", str(tmp_path)])
    floor = example.MOTIF / 20 * np.log(example.VOCABULARY)
    assert floor * 0.95 < np.mean(result["losses"][-20:]) < floor * 1.25
    assert result["accuracy"] > 0.95


def test_the_nanogpt_custom_training_loop_port_learns(tmp_path, capsys):
    """MathWorks' nanoGPT training loop (dlfeval, dlgradient, adamupdate, minibatchqueue, monitor)."""
    example = load_example("custom_training_loop")
    result = example.main(["--iterations", "80", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    chance = np.log(len(result["vocabulary"]))
    training, validation = result["training"], result["validation"]
    assert len(training) == 80 and len(validation) == 1 + 80 // 25
    assert validation[0] > 0.9 * chance and validation[-1] < 0.5 * validation[0]
    assert np.mean(training[-10:]) < 0.5 * training[0]
    assert "iteration   75  training loss" in out and (tmp_path / "training_progress.png").is_file()


def run_example(name: str) -> str:
    """Runs ``examples/<name>.py`` as a user runs it; a generous timeout, CI machines are shared."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, timeout=180, check=False
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    return done.stdout


def last_number(out: str, prefix: str) -> float:
    line = next(line for line in out.splitlines() if line.startswith(prefix))
    return float(line[len(prefix) :].split()[0].rstrip("%"))


def test_the_time_series_transformer_port_learns_with_trainnetwork():
    """MathWorks' time-series transformer, trainNetwork with a piecewise schedule, legacy table."""
    out = run_example("time_series_transformer")
    assert (
        "Mini-batch" in out and "Base Learning" in out and "Training finished: Max epochs completed." in out
    )
    rows = [line for line in out.splitlines() if re.match(r"\|\s+\d+ \|", line)]
    rates = [float(row.rsplit("|", 2)[1]) for row in rows]
    assert rates[0] == 0.01 and rates[-1] == 0.005  # the piecewise schedule halved the rate after epoch 15
    assert last_number(out, "final validation loss") < 0.05
    assert last_number(out, "validation RMSE of the next value:") < 0.3


def test_the_lstm_sequence_classifier_learns_with_trainnetwork():
    """Variable-length sequences (a list of C×T arrays), class names, classificationLayer, classify."""
    out = run_example("lstm_sequence_classifier")
    assert "Accuracy" in out and "Training finished: Max epochs completed." in out
    assert last_number(out, "validation accuracy") >= 90


def test_the_image_cnn_learns_with_trainnet():
    """H×W×C×N images, trainnet's "crossentropy" with the accuracy metric, minibatchpredict, scores2label."""
    out = run_example("image_cnn_trainnet")
    assert "TrainingAccuracy" in out and "Training stopped: Max epochs completed" in out
    assert last_number(out, "validation accuracy") >= 90
