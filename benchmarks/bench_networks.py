"""Loading MATLAB-saved networks, and running them, against mat-io alone and plain torch (issue 15).

Two tables, every figure a ratio of medians measured in the same process, interleaved round by
round (``interleaved_samples`` in ``bench_position.py``):

* load: for each real file in ``$DLFORMAT_MATLAB_NETWORKS``, ``dlformat.io.load_network(path)``
  and its decoding step alone (``dlformat.io.loadmat(path, [variable])``: the structural scan, mat-io
  and the conversion to a saved-network description) against ``matio.load_from_mat(path,
  variable_names=[variable])`` alone. Target: load ≤ 2× mat-io.
* predict: the loaded CNN (vikas_net.mat, and the smaller harkirat__convnet.mat) and the loaded
  recurrent networks (agoro GRU, mdl_anom BiLSTM), ``net.predict(X)`` at batch 32, against the
  same network written by hand in plain torch (``nn.Conv2d``, ``nn.BatchNorm2d``, ``nn.GRU``,
  ``nn.LSTM``, ...) with the loaded weights copied in; the outputs are checked to agree before
  anything is timed. Eager, and (``--compile``) each side under ``torch.compile``. Targets: ≤ 1.10
  eager, ≤ 1.05 compiled. Dynamo leaves ``nn.GRU``/``nn.LSTM`` modules uncompiled (graph break)
  unless ``torch._dynamo.config.allow_rnn`` is set: the compiled recurrent baselines run eagerly.

    python benchmarks/bench_networks.py --threads 1 --clock cpu --rounds 3
    python benchmarks/bench_networks.py --only load          # or: --only predict
    python benchmarks/bench_networks.py --compile            # also the torch.compile rows

The files with layers that cannot be mapped (pac48: FunctionLayers; mimo: user classdef layers) are
loaded with the ``custom_layers`` factories of examples/saved_network_replacements.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_position import add_timing_arguments, interleaved_samples, timing_clock  # the house timing loop

LOAD_TARGET = 2.0
EAGER_TARGET = 1.10
COMPILED_TARGET = 1.05
BATCH = 32
STEPS = 100  # sequence length of the recurrent rows

Step = Callable[[], object]


def _networks() -> Path:
    folder = os.environ.get("DLFORMAT_MATLAB_NETWORKS")
    if not folder:
        sys.exit("set DLFORMAT_MATLAB_NETWORKS to the folder of MATLAB-saved network files")
    return Path(folder)


# -- custom layers of the two files that need them: examples/saved_network_replacements.py -------
def _custom_layers(file: str) -> dict[str, Callable[[dict], object]] | None:
    path = Path(__file__).resolve().parents[1] / "examples" / "saved_network_replacements.py"
    spec = importlib.util.spec_from_file_location("saved_network_replacements", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"pac48": module.PAC48, "mimo": module.MIMO}.get(file.split("_")[0])


# -- load -------------------------------------------------------------------------------------------
def _network_variable(path: Path) -> str:
    from dlformat.io import whos

    for entry in whos(path):
        kind = str(entry.matlab_class).removesuffix(" (object)")
        if kind in ("SeriesNetwork", "DAGNetwork", "dlnetwork") and not any(c in entry.path for c in ".{("):
            return str(entry.path)
    raise LookupError(f"{path} saves no network")


def _load_cases(path: Path, variable: str, custom: dict | None) -> dict[str, Step]:
    import matio

    from dlformat.io import load_network, loadmat

    return {
        "matio": lambda: matio.load_from_mat(str(path), variable_names=[variable]),
        "decode": lambda: loadmat(path, [variable]),
        "load": lambda: load_network(path, custom_layers=custom),
    }


def measure_load(rounds: int, clock: Callable[[], float]) -> dict[str, dict[str, float]]:
    results = {}
    for path in sorted(_networks().glob("*.mat")):
        variable = _network_variable(path)
        custom = _custom_layers(path.name)
        print(f"load: {path.name} ...", file=sys.stderr)
        samples = interleaved_samples(
            _load_cases(path, variable, custom),
            "cpu",
            rounds,
            batch_seconds=0.0,  # one call per round: a load takes milliseconds to a second
            clock=clock,
        )
        times = {name: statistics.median(values) for name, values in samples.items()}
        results[path.name] = times | {"MiB": path.stat().st_size / 2**20}
    return results


# -- predict: the same networks by hand in plain torch ---------------------------------------------
def _tensor(value) -> object:
    import torch

    import dlformat as dlf

    data = dlf.extractdata(value) if isinstance(value, dlf.DLArray) else value
    return torch.as_tensor(data).detach().float()


def _hand_written_cnn(net) -> object:
    """The series CNN as a user would port it: NCHW, MATLAB's H×W×C×F filters permuted once."""
    import torch
    from torch import nn

    import dlformat.layers as L

    modules: list[nn.Module] = []
    size = None  # (C, H, W) after the layers so far
    for layer in net.Layers:
        if isinstance(layer, L.ImageInputLayer):
            h, w, c = (int(v) for v in layer.InputSize)
            size = (c, h, w)
            if layer.Normalization == "zerocenter":
                mean = _tensor(layer.Mean)  # H×W×C or 1×1×C (MATLAB drops a trailing C of 1)
                mean = mean.reshape((h, w, c) if mean.numel() == h * w * c else (1, 1, c)).permute(2, 0, 1)
                modules.append(_Subtract(mean))
            elif layer.Normalization != "none":
                raise NotImplementedError(layer.Normalization)
        elif isinstance(layer, L.Convolution2DLayer):
            weights = _tensor(layer.Weights).permute(3, 2, 0, 1)  # H×W×C×F → F×C×H×W
            kernel = tuple(weights.shape[2:])
            if layer.PaddingMode == "same":
                padding: object = "same" if tuple(layer.Stride) == (1, 1) else None
            else:
                top, bottom, left, right = (int(v) for v in layer.PaddingSize)
                if top != bottom or left != right:
                    raise NotImplementedError("asymmetric padding")
                padding = (top, left)
            conv = nn.Conv2d(weights.shape[1], weights.shape[0], kernel, tuple(layer.Stride), padding)
            with torch.no_grad():
                conv.weight.copy_(weights)
                conv.bias.copy_(_tensor(layer.Bias).reshape(-1))
            modules.append(conv)
            size = _shape_after(modules, size)
        elif isinstance(layer, L.BatchNormalizationLayer):
            norm = nn.BatchNorm2d(size[0], eps=float(layer.Epsilon))
            with torch.no_grad():
                norm.weight.copy_(_tensor(layer.Scale).reshape(-1))
                norm.bias.copy_(_tensor(layer.Offset).reshape(-1))
                norm.running_mean.copy_(_tensor(layer.TrainedMean).reshape(-1))
                norm.running_var.copy_(_tensor(layer.TrainedVariance).reshape(-1))
            modules.append(norm)
        elif isinstance(layer, L.ReLULayer):
            modules.append(nn.ReLU())
        elif isinstance(layer, L.MaxPooling2DLayer):
            top, bottom, left, right = (int(v) for v in layer.PaddingSize)
            modules.append(nn.MaxPool2d(tuple(layer.PoolSize), tuple(layer.Stride), (top, left)))
            size = _shape_after(modules, size)
        elif isinstance(layer, L.FullyConnectedLayer):
            weights = _tensor(layer.Weights)  # Out × (H·W·C in MATLAB's column-major order)
            c, h, w = size
            # MATLAB flattens h fastest, then w, then c; torch's NCHW flatten has w fastest.
            weights = weights.reshape(-1, c, w, h).transpose(2, 3).reshape(weights.shape[0], -1)
            linear = nn.Linear(weights.shape[1], weights.shape[0])
            with torch.no_grad():
                linear.weight.copy_(weights)
                linear.bias.copy_(_tensor(layer.Bias).reshape(-1))
            modules += [nn.Flatten(), linear]
        elif isinstance(layer, L.SoftmaxLayer):
            modules.append(nn.Softmax(dim=1))
        elif type(layer).__name__.endswith("OutputLayer"):
            pass  # predict stops before the output layer's loss
        else:
            raise NotImplementedError(type(layer).__name__)
    return nn.Sequential(*modules).eval()


class _Subtract:
    """Lazily defined torch module (torch is imported only in the measuring functions)."""

    def __new__(cls, mean):  # type: ignore[no-untyped-def]
        from torch import nn

        class Subtract(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.register_buffer("mean", mean)

            def forward(self, x):  # type: ignore[no-untyped-def]
                return x - self.mean

        return Subtract()


def _shape_after(modules: list, size: tuple[int, int, int]) -> tuple[int, int, int]:
    import torch

    with torch.no_grad():
        probe = torch.zeros(1, *size)
        probe = modules[-1](probe)
    return tuple(probe.shape[1:])


def _hand_written_recurrent(net) -> object:
    """The series recurrent network as a user would port it: time-major ``T × B × C``, nn.GRU /
    nn.LSTM with MATLAB's gate blocks (GRU: reset, update, candidate; LSTM: input, forget, cell,
    output, the same orders as torch's) copied in."""
    import torch
    from torch import nn

    import dlformat.layers as L

    class Recurrent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.steps = nn.ModuleList()

        def forward(self, x):  # type: ignore[no-untyped-def]
            for step in self.steps:
                x = step(x)[0] if isinstance(step, nn.RNNBase) else step(x)
            return x

    model = Recurrent()
    for layer in net.Layers:
        if isinstance(layer, (L.GRULayer, L.LSTMLayer, L.BiLSTMLayer)):
            if getattr(layer, "OutputMode", "sequence") != "sequence":
                raise NotImplementedError("OutputMode last")
            hidden, inputs = int(layer.NumHiddenUnits), int(layer.InputSize)
            bidirectional = isinstance(layer, L.BiLSTMLayer)
            kind = nn.GRU if isinstance(layer, L.GRULayer) else nn.LSTM
            rnn = kind(inputs, hidden, bidirectional=bidirectional)
            input_weights = _tensor(layer.InputWeights)
            recurrent_weights = _tensor(layer.RecurrentWeights)
            bias = _tensor(layer.Bias).reshape(-1)
            # torch's GRU resets after the recurrent product, bias included: MATLAB's
            # "after-multiplication" is it with no recurrent bias; "recurrent-bias-after-
            # multiplication" stacks the recurrent bias under the input bias.
            mode = getattr(layer, "ResetGateMode", "after-multiplication")
            if mode == "recurrent-bias-after-multiplication":
                bias, recurrent_bias = bias.chunk(2)
            elif mode == "after-multiplication":
                recurrent_bias = torch.zeros_like(bias)
            else:
                raise NotImplementedError(mode)
            directions = 2 if bidirectional else 1
            with torch.no_grad():
                for d, suffix in enumerate(("", "_reverse")[:directions]):
                    rows = slice(
                        d * input_weights.shape[0] // directions,
                        (d + 1) * input_weights.shape[0] // directions,
                    )
                    getattr(rnn, f"weight_ih_l0{suffix}").copy_(input_weights[rows])
                    getattr(rnn, f"weight_hh_l0{suffix}").copy_(recurrent_weights[rows])
                    getattr(rnn, f"bias_ih_l0{suffix}").copy_(bias[rows])
                    getattr(rnn, f"bias_hh_l0{suffix}").copy_(recurrent_bias[rows])
            model.steps.append(rnn)
        elif isinstance(layer, L.ReLULayer):
            model.steps.append(nn.ReLU())
        elif isinstance(layer, L.FullyConnectedLayer):
            weights = _tensor(layer.Weights)
            linear = nn.Linear(weights.shape[1], weights.shape[0])
            with torch.no_grad():
                linear.weight.copy_(weights)
                linear.bias.copy_(_tensor(layer.Bias).reshape(-1))
            model.steps.append(linear)
        elif isinstance(layer, (L.SequenceInputLayer, L.DropoutLayer)):
            if getattr(layer, "Normalization", "none") != "none":
                raise NotImplementedError(layer.Normalization)
        elif type(layer).__name__.endswith("OutputLayer"):
            pass
        else:
            raise NotImplementedError(type(layer).__name__)
    return model.eval()


# file, short name, kind
PREDICT = [
    ("vikas_net.mat", "CNN vikas (320×320×3, 3 conv + BN)", "cnn"),
    ("harkirat__convnet.mat", "CNN harkirat (112×92×1, 1 conv)", "cnn"),
    ("agoro_gru_ph_model.mat", f"GRU agoro (4 × GRU 50, T={STEPS})", "recurrent"),
    ("mdl_anom__Results_TrainedNetwork.mat", f"BiLSTM mdl_anom (3 × BiLSTM, T={STEPS})", "recurrent"),
]


def _predict_pair(file: str, kind: str) -> tuple[Step, Step, object, object]:
    """``(ours, reference)`` predict calls on the same batch-first (CNN) or time-major (recurrent)
    memory, after checking their outputs agree; also the two callables' models for compiling."""
    import torch

    import dlformat as dlf
    from dlformat.io import load_network

    net = load_network(_networks() / file)
    generator = torch.Generator().manual_seed(0)
    if kind == "cnn":
        h, w, c = (int(v) for v in net.Layers[0].InputSize)
        x = torch.rand(BATCH, c, h, w, generator=generator) * 255
        labels = "BCSS"
        reference = _hand_written_cnn(net)
    else:
        c = int(net.Layers[0].InputSize)
        x = torch.randn(STEPS, BATCH, c, generator=generator)
        labels = "TBC"
        reference = _hand_written_recurrent(net)

    def ours() -> object:
        return net.predict(dlf.dlarray(x, labels))

    def theirs() -> object:
        return reference(x)

    with torch.no_grad():
        mine = ours()
        data = dlf.extractdata(mine)
        expected = theirs()
        if kind == "cnn":
            expected = expected.t()  # N×K → MATLAB's K×N ("CB")
        else:
            expected = expected.permute(2, 1, 0)  # T×B×C → C×B×T
        torch.testing.assert_close(data, expected, rtol=1e-4, atol=1e-4)
    return ours, theirs, net, reference


def measure_predict(
    rounds: int, clock: Callable[[], float], with_compile: bool, only: list[str] | None
) -> dict[str, dict[str, float]]:
    import torch

    results = {}
    for file, name, kind in PREDICT:
        if only and not any(word in file for word in only):
            continue
        print(f"predict: {file} ...", file=sys.stderr)
        ours, theirs, net, reference = _predict_pair(file, kind)
        with torch.no_grad():
            samples = interleaved_samples({"ours": ours, "torch": theirs}, "cpu", rounds, clock=clock)
            times = {key: statistics.median(values) for key, values in samples.items()}
            if with_compile:
                times |= _compiled(net, reference, kind, rounds, clock)
        results[name] = times
    return results


def _compiled(net, reference, kind: str, rounds: int, clock: Callable[[], float]) -> dict[str, float]:
    import torch

    import dlformat as dlf

    generator = torch.Generator().manual_seed(1)
    if kind == "cnn":
        h, w, c = (int(v) for v in net.Layers[0].InputSize)
        x, labels = torch.rand(BATCH, c, h, w, generator=generator) * 255, "BCSS"
    else:
        x, labels = torch.randn(STEPS, BATCH, int(net.Layers[0].InputSize), generator=generator), "TBC"

    def ours_fn(data):  # type: ignore[no-untyped-def]
        return dlf.extractdata(net.predict(dlf.dlarray(data, labels)))

    ours_compiled = torch.compile(ours_fn)
    theirs_compiled = torch.compile(reference)
    start = time.perf_counter()
    ours_compiled(x)
    ours_seconds = time.perf_counter() - start
    start = time.perf_counter()
    theirs_compiled(x)
    theirs_seconds = time.perf_counter() - start
    samples = interleaved_samples(
        {"ours": lambda: ours_compiled(x), "torch": lambda: theirs_compiled(x)}, "cpu", rounds, clock=clock
    )
    return {
        "compiled_ours": statistics.median(samples["ours"]),
        "compiled_torch": statistics.median(samples["torch"]),
        "compile_s_ours": ours_seconds,
        "compile_s_torch": theirs_seconds,
    }


# -- reporting -------------------------------------------------------------------------------------
def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def _status(value: float, target: float) -> str:
    return "**met**" if value <= target else "**missed**"


def load_table(results: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        "| file (MiB) | mat-io alone | decode (`loadmat`) | `load_network` | decode / mat-io | "
        "load / mat-io | target | status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for file, t in results.items():
        ratio = t["load"] / t["matio"]
        lines.append(
            f"| {file} ({t['MiB']:.1f}) | {_ms(t['matio'])} | {_ms(t['decode'])} | {_ms(t['load'])} | "
            f"{t['decode'] / t['matio']:.2f} | {ratio:.2f} | ≤ {LOAD_TARGET:g} | "
            f"{_status(ratio, LOAD_TARGET)} |"
        )
    return lines


def predict_table(results: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        f"| network, batch {BATCH} | ours | plain torch | eager ours / torch | target | status |"
        " compiled ours / torch | target | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, t in results.items():
        eager = t["ours"] / t["torch"]
        row = (
            f"| {name} | {_ms(t['ours'])} | {_ms(t['torch'])} | {eager:.2f} | ≤ {EAGER_TARGET:g} | "
            f"{_status(eager, EAGER_TARGET)} |"
        )
        if "compiled_ours" in t:
            compiled = t["compiled_ours"] / t["compiled_torch"]
            row += (
                f" {compiled:.2f} ({_ms(t['compiled_ours'])} / {_ms(t['compiled_torch'])}; compiled in "
                f"{t['compile_s_ours']:.0f} s / {t['compile_s_torch']:.0f} s) | ≤ {COMPILED_TARGET:g} | "
                f"{_status(compiled, COMPILED_TARGET)} |"
            )
        else:
            row += " not run | | |"
        lines.append(row)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per measurement (median)")
    add_timing_arguments(parser)
    parser.add_argument("--only", choices=("load", "predict"), help="one of the two tables")
    parser.add_argument("--files", nargs="*", help="predict rows whose file name contains one of these")
    parser.add_argument("--compile", action="store_true", help="also the torch.compile rows (slow on CPU)")
    args = parser.parse_args(argv)

    import torch

    clock = timing_clock(parser, args)
    started = time.perf_counter()
    report = []
    if args.only != "predict":
        report += ["", *load_table(measure_load(args.rounds, clock))]
    if args.only != "load":
        report += ["", *predict_table(measure_predict(args.rounds, clock, args.compile, args.files))]
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    header = (
        f"Measured {time.strftime('%Y-%m-%d')} by `python benchmarks/bench_networks.py "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}` in {time.perf_counter() - started:.0f} s: "
        f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} CPUs), torch "
        f"{torch.__version__}, threads {torch.get_num_threads()}, rounds {args.rounds}, {args.clock} clock; "
        f"load average at the end (1/5/15 min) {load}"
    )
    print("\n".join([header, *report]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
