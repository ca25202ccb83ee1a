"""MATLAB-named layers against the torch modules a user would write by hand: forward + backward.

Every row times ``layer(X)`` followed by the gradients with respect to the input and every
learnable, against the same for the hand-written torch equivalent (``nn.Conv2d``, ``nn.MaxPool2d``,
...), at batch 32 and at batch 1, in the same process, interleaved round by round (median of the
rounds, and the ratio of the best rounds beside it; see ``interleaved_samples`` in
``bench_position.py``). The dlarray input is labelled over
batch-first memory (``"BCSS"`` → ``"SSCB"``), so both sides hand torch the same ``N × C × ...``
layout. Printed: milliseconds per call and the ratio ours / torch, beside the targets.

    python benchmarks/bench_layers.py                  # CPU
    python benchmarks/bench_layers.py --device cuda
    python benchmarks/bench_layers.py --only conv2d maxpool2d --rounds 3

Add a layer by adding a :class:`Row` to ``ROWS``: a name, and a function ``build(batch, device)``
returning the two forward + backward steps, ``(ours, reference)``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_position import interleaved_samples, row_parser, run_line, timing_clock  # the house timing loop

TARGETS = {32: 1.10, 1: 1.5}  # ratio ours / torch at batch 32 and batch 1 (issue 13)
RECURRENT_TARGETS = {32: 1.15, 1: 1.5}  # issue 14: LSTM, BiLSTM, GRU at T=100, B=32, H=128

Step = Callable[[], object]


@dataclass(frozen=True)
class Row:
    name: str
    what: str
    build: Callable[[int, str], tuple[Step, Step]]
    targets: dict[int, float] | None = None  # per batch; default TARGETS


def _steps(
    layer, module, shape: tuple[int, ...], labels: str, device: str, *, training: bool = True
) -> tuple[Step, Step]:
    """Forward + backward of ``layer`` on a dlarray and of ``module`` on the same batch-first data,
    both in training mode (``training=False``: both in inference mode)."""
    import torch

    import dlformat as dlf

    layer.train(training)
    module.train(training)
    x = torch.randn(shape, device=device, requires_grad=True)
    X = dlf.dlarray(x, labels)
    layer(X)  # first call creates the lazy learnables
    ours_inputs = [x, *layer.parameters()]
    reference_inputs = [x, *module.parameters()]
    upstream_ours = torch.ones_like(dlf.stripdims(layer(X)))
    upstream_reference = torch.ones_like(module(x))

    def ours() -> object:
        Y = dlf.stripdims(layer(dlf.dlarray(x, labels)))
        return torch.autograd.grad(Y, ours_inputs, upstream_ours)

    def reference() -> object:
        return torch.autograd.grad(module(x), reference_inputs, upstream_reference)

    return ours, reference


def _conv1d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    layer = dlf.convolution1dLayer(3, 128, NumChannels=128, Padding="same", device=device)
    module = nn.Conv1d(128, 128, 3, padding=1, device=device)
    return _steps(layer, module, (batch, 128, 512), "BCT", device)


def _conv2d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    layer = dlf.convolution2dLayer(3, 64, NumChannels=64, Padding="same", device=device)
    module = nn.Conv2d(64, 64, 3, padding=1, device=device)
    return _steps(layer, module, (batch, 64, 56, 56), "BCSS", device)


def _conv3d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    layer = dlf.convolution3dLayer(3, 32, NumChannels=32, Padding="same", device=device)
    module = nn.Conv3d(32, 32, 3, padding=1, device=device)
    return _steps(layer, module, (batch, 32, 16, 28, 28), "BCSSS", device)


def _transposed2d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    layer = dlf.transposedConv2dLayer(4, 32, NumChannels=64, Stride=2, Cropping="same", device=device)
    module = nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1, device=device)
    return _steps(layer, module, (batch, 64, 28, 28), "BCSS", device)


def _maxpool2d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    return _steps(dlf.maxPooling2dLayer(2, Stride=2), nn.MaxPool2d(2, 2), (batch, 64, 56, 56), "BCSS", device)


def _avgpool2d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    return _steps(
        dlf.averagePooling2dLayer(2, Stride=2), nn.AvgPool2d(2, 2), (batch, 64, 56, 56), "BCSS", device
    )


def _global_average2d(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    return _steps(
        dlf.globalAveragePooling2dLayer(), nn.AdaptiveAvgPool2d(1), (batch, 256, 14, 14), "BCSS", device
    )


def _batchnorm2d(training: bool) -> Callable[[int, str], tuple[Step, Step]]:
    def build(batch: int, device: str) -> tuple[Step, Step]:
        from torch import nn

        import dlformat as dlf

        layer = dlf.batchNormalizationLayer(NumChannels=64, device=device)
        module = nn.BatchNorm2d(64, device=device)
        return _steps(layer, module, (batch, 64, 56, 56), "BCSS", device, training=training)

    return build


def _layernorm(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    # "BTC" memory: torch normalizes the last dimension, MATLAB's "CBT" layer the C one
    layer = dlf.layerNormalizationLayer(NumChannels=256, device=device)
    module = nn.LayerNorm(256, device=device)
    return _steps(layer, module, (batch, 100, 256), "BTC", device)


def _fully_connected(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    layer = dlf.fullyConnectedLayer(1024, InputSize=1024, device=device)
    module = nn.Linear(1024, 1024, device=device)
    return _steps(layer, module, (batch, 1024), "BC", device)


def _flatten(batch: int, device: str) -> tuple[Step, Step]:
    from torch import nn

    import dlformat as dlf

    # MATLAB flattens S and C column-major, the first S fastest: over "BCSS" memory that is
    # torch's flatten of the reversed spatial dimensions, which costs one copy on both sides
    module = nn.Sequential(_Permute(0, 1, 3, 2), nn.Flatten())
    return _steps(dlf.flattenLayer(), module, (batch, 64, 14, 14), "BCSS", device)


class _Permute:
    """``x.permute(*order)`` as a parameterless module (defined lazily: torch is imported late)."""

    def __new__(cls, *order: int):  # type: ignore[misc]
        from torch import nn

        class Permute(nn.Module):
            def forward(self, x):  # type: ignore[no-untyped-def]
                return x.permute(*order)

        return Permute()


T_STEPS, HIDDEN, FEATURES = 100, 128, 128  # issue 14: T=100, B=32, H=128


def _recurrent(kind: str) -> Callable[[int, str], tuple[Step, Step]]:
    """``lstmLayer``/``bilstmLayer``/``gruLayer`` against ``nn.LSTM``/``nn.GRU`` (its output
    sequence), on ``T × B × features`` memory labelled ``"TBC"``: the layout both kernels take."""

    def build(batch: int, device: str) -> tuple[Step, Step]:
        from torch import nn

        import dlformat as dlf

        constructor = {"lstm": dlf.lstmLayer, "bilstm": dlf.bilstmLayer, "gru": dlf.gruLayer}[kind]
        module_type = nn.GRU if kind == "gru" else nn.LSTM
        layer = constructor(HIDDEN, InputSize=FEATURES, device=device)
        module = nn.Sequential(
            module_type(FEATURES, HIDDEN, bidirectional=kind == "bilstm", device=device), _First()
        )
        ours, reference = _steps(layer, module, (T_STEPS, batch, FEATURES), "TBC", device)
        return ours, reference

    return build


class _First:
    """A parameterless module picking the first of its input's items (a recurrent module's output)."""

    def __new__(cls):  # type: ignore[misc]
        from torch import nn

        class First(nn.Module):
            def forward(self, outputs):  # type: ignore[no-untyped-def]
                return outputs[0]

        return First()


MODEL_CHANNELS, MAX_POSITION, HEADS, KEY_CHANNELS, CLASSES = 64, 128, 4, 64, 10


def _transformer(batch: int, device: str) -> tuple[Step, Step]:
    """MathWorks' time-series transformer (``sequenceInputLayer → positionEmbeddingLayer →
    additionLayer → selfAttentionLayer ×2 → indexing1dLayer → fullyConnectedLayer``, the input also
    feeding the addition) as a ``dlnetwork``, against the same math hand-written on batch-first
    tensors with the network's own weights; the builder checks that both give the same output."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    import dlformat as dlf

    layers = [
        dlf.sequenceInputLayer(MODEL_CHANNELS, Name="input"),
        dlf.positionEmbeddingLayer(MODEL_CHANNELS, MAX_POSITION, Name="pos-emb"),
        dlf.additionLayer(2, Name="add"),
        dlf.selfAttentionLayer(HEADS, KEY_CHANNELS),
        dlf.selfAttentionLayer(HEADS, KEY_CHANNELS),
        dlf.indexing1dLayer("last"),
        dlf.fullyConnectedLayer(CLASSES),
    ]
    net = dlf.dlnetwork(layers, Initialize=False)
    net = dlf.connectLayers(net, "input", "add/in2")
    net = dlf.initialize(net).to(device)
    attention = [layer for layer in net.Layers if type(layer).__name__ == "SelfAttentionLayer"]
    position, fc = net.Layers[1], net.Layers[-1]

    class Transformer(nn.Module):
        """The same network hand-written on ``(B, T, C)`` tensors, sharing the weights."""

        def __init__(self) -> None:
            super().__init__()
            self.position = position.Weights
            self.projections = nn.ParameterList(
                getattr(layer, f"{role}{kind}")
                for layer in attention
                for role in ("Query", "Key", "Value", "Output")
                for kind in ("Weights", "Bias")
            )
            self.fc = nn.ParameterList([fc.Weights, fc.Bias])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            steps = x.shape[1]
            h = x + self.position[:, :steps].t()
            weights = list(self.projections)
            for block in range(len(attention)):
                wq, bq, wk, bk, wv, bv, wo, bo = weights[8 * block : 8 * block + 8]
                q, k, v = (
                    F.linear(h, w, b.reshape(-1)).unflatten(-1, (HEADS, -1)).transpose(1, 2)
                    for w, b in ((wq, bq), (wk, bk), (wv, bv))
                )
                attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2)
                h = F.linear(attended, wo, bo.reshape(-1))
            return F.linear(h[:, -1], self.fc[0], self.fc[1].reshape(-1))

    module = Transformer()
    x = torch.randn(batch, T_STEPS, MODEL_CHANNELS, device=device, requires_grad=True)
    ours_inputs = [x, *net.parameters()]
    reference_inputs = [x, *module.parameters()]
    with torch.no_grad():
        ours_output = dlf.stripdims(dlf.forward(net, dlf.dlarray(x, "BTC")))
        torch.testing.assert_close(ours_output, module(x).t(), rtol=1e-4, atol=1e-5)
    upstream_ours = torch.ones_like(ours_output)
    upstream_reference = torch.ones_like(module(x))

    def ours() -> object:
        Y = dlf.stripdims(dlf.forward(net, dlf.dlarray(x, "BTC")))
        return torch.autograd.grad(Y, ours_inputs, upstream_ours)

    def reference() -> object:
        return torch.autograd.grad(module(x), reference_inputs, upstream_reference)

    return ours, reference


ROWS = [
    Row("conv1d", "convolution1dLayer(3,128) vs nn.Conv1d, 128×512", _conv1d),
    Row("conv2d", "convolution2dLayer(3,64) vs nn.Conv2d, 64×56×56", _conv2d),
    Row("conv3d", "convolution3dLayer(3,32) vs nn.Conv3d, 32×16×28×28", _conv3d),
    Row("transconv2d", "transposedConv2dLayer(4,32,Stride=2) vs nn.ConvTranspose2d, 64×28×28", _transposed2d),
    Row("maxpool2d", "maxPooling2dLayer(2,Stride=2) vs nn.MaxPool2d, 64×56×56", _maxpool2d),
    Row("avgpool2d", "averagePooling2dLayer(2,Stride=2) vs nn.AvgPool2d, 64×56×56", _avgpool2d),
    Row("gapool2d", "globalAveragePooling2dLayer vs nn.AdaptiveAvgPool2d(1), 256×14×14", _global_average2d),
    Row(
        "batchnorm-train",
        "batchNormalizationLayer (training) vs nn.BatchNorm2d, 64×56×56",
        _batchnorm2d(True),
    ),
    Row(
        "batchnorm-infer",
        "batchNormalizationLayer (inference) vs nn.BatchNorm2d.eval(), 64×56×56",
        _batchnorm2d(False),
    ),
    Row("layernorm", "layerNormalizationLayer vs nn.LayerNorm, C=256 T=100", _layernorm),
    Row("fc", "fullyConnectedLayer(1024) vs nn.Linear, 1024 features", _fully_connected),
    Row("flatten", "flattenLayer vs permute + nn.Flatten, 64×14×14", _flatten),
    Row("lstm", "lstmLayer(128) vs nn.LSTM, T=100 features 128", _recurrent("lstm"), RECURRENT_TARGETS),
    Row(
        "bilstm",
        "bilstmLayer(128) vs nn.LSTM(bidirectional), T=100 features 128",
        _recurrent("bilstm"),
        RECURRENT_TARGETS,
    ),
    Row("gru", "gruLayer(128) vs nn.GRU, T=100 features 128", _recurrent("gru"), RECURRENT_TARGETS),
    Row(
        "transformer",
        "time-series transformer dlnetwork vs hand-written module, C=64 T=100, 4 heads",
        _transformer,
    ),
]


Times = dict[tuple[str, int], dict[str, list[float]]]


def measure(
    rows: list[Row], device: str, rounds: int, clock: Callable[[], float] = time.perf_counter
) -> Times:
    """Seconds per forward + backward in each round, ``"ours"`` and ``"torch"``, per row and batch."""
    import torch

    torch.manual_seed(0)
    results = {}
    for row in rows:
        for batch in TARGETS:
            ours, reference = row.build(batch, device)
            results[(row.name, batch)] = interleaved_samples(
                {"ours": ours, "torch": reference}, device, rounds, clock=clock
            )
    return results


def report(rows: list[Row], results: Times) -> list[str]:
    """The table: medians of the rounds and their ratio (the target's measure), and the ratio of the
    best rounds (what each costs when nothing else disturbs it; on a shared machine the medians move
    from run to run)."""
    lines = [
        "| layer | batch | ours (ms) | torch (ms) | ratio of medians | ratio of best rounds | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for batch, target in (row.targets or TARGETS).items():
            times = results[(row.name, batch)]
            ours, reference = (statistics.median(times[case]) for case in ("ours", "torch"))
            ratio = ours / reference
            best = min(times["ours"]) / min(times["torch"])
            verdict = "met" if ratio <= target else "**missed**"
            times_ms = f"{ours * 1e3:.3f} | {reference * 1e3:.3f}"
            lines.append(
                f"| {row.what} | {batch} | {times_ms} | {ratio:.2f} | {best:.2f} | ≤ {target:.2f} {verdict} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = row_parser(__doc__, rounds=7)
    args = parser.parse_args(argv)
    clock = timing_clock(parser, args, args.device)
    rows = [row for row in ROWS if not args.only or row.name in args.only]
    results = measure(rows, args.device, args.rounds, clock)
    print(run_line(args))
    print("\n".join(report(rows, results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
