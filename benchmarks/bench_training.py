"""trainnet against a hand-written torch training loop: seconds per epoch, same model, same data.

Each row trains one network for ``--epochs`` epochs with ``trainnet`` (SGDM, MATLAB's update
``v ← μ·v − α·(g + λ·w)``, ``w ← w + v``, shuffled every epoch, ``Verbose`` off) and with the loop
a user would write in torch for the same model: the same layers as torch modules, the same
cross-entropy, the same update rule written by hand on every parameter, the same mini-batch size,
the same shuffling (``torch.randperm`` and ``index_select`` each epoch), data on the same device.
A third column runs the dlformat network in that same hand-written loop: trainnet against it is
trainnet's own per-iteration work; it against torch is the layers' cost.
Both run in the same process, interleaved round by round (median of the rounds; see
``interleaved_samples`` in ``bench_position.py``). A trainnet run includes its per-call setup
(copying the network, checking the data), which the epochs amortize. Printed: milliseconds per
epoch and the ratio trainnet / torch, beside the target (≤ 1.10, issue 16).

    python benchmarks/bench_training.py                 # CPU
    python benchmarks/bench_training.py --device cuda
    python benchmarks/bench_training.py --only lstm --rounds 3
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_position import interleaved_samples, row_parser, run_line, timing_clock  # the house timing loop

TARGET = 1.10  # trainnet / hand-written loop, seconds per epoch (issue 16)
RATE, MOMENTUM, L2 = 0.01, 0.9, 1e-4
Run = Callable[[], object]


@dataclass(frozen=True)
class Row:
    name: str
    what: str
    build: Callable[[str, int], tuple[Run, Run, Run]]


def _hand_loop(module, loss_of, X, T, batch: int, epochs: int, along: int) -> Run:
    """The torch loop: shuffle, cut mini-batches, forward, loss, backward, MATLAB's SGDM by hand."""
    import torch

    from dlformat.training._data import _selected  # index_select in memory order, as trainnet cuts

    parameters = [p for p in module.parameters() if p.requires_grad]
    velocities = [torch.zeros_like(p) for p in parameters]
    count = X.shape[along]

    def run() -> None:
        module.train()
        for _ in range(epochs):
            order = torch.randperm(count, device=X.device)
            for start in range(0, count - batch + 1, batch):
                chosen = order[start : start + batch]
                loss = loss_of(module(_selected(X, along, chosen)), T.index_select(0, chosen))
                gradients = torch.autograd.grad(loss, parameters)
                with torch.no_grad():
                    for p, g, v in zip(parameters, gradients, velocities, strict=True):
                        v.mul_(MOMENTUM).sub_(RATE * (g + L2 * p))
                        p.add_(v)

    return run


def _trainnet(X, T, net, batch: int, epochs: int) -> tuple[Run, Run]:
    """trainnet, and the same dlformat network in the hand-written loop (which separates trainnet's
    own per-iteration work from the layers' cost)."""
    import copy

    import torch

    import dlformat as dlf

    options = dlf.trainingOptions(
        "sgdm", InitialLearnRate=RATE, Momentum=MOMENTUM, L2Regularization=L2, MiniBatchSize=batch,
        MaxEpochs=epochs, Shuffle="every-epoch", Verbose=False,
    )  # fmt: skip
    labels = X._fmt

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = copy.deepcopy(net)

        def forward(self, x: torch.Tensor):
            return self.net(dlf.dlarray(x, labels), training=True)

    def loss_of(Y, t):
        return dlf.crossentropy(Y, dlf.dlarray(t, "BC"), NormalizationFactor="all-elements")._data

    in_loop = _hand_loop(Wrapped(), loss_of, X._data, T._data.T, batch, epochs, labels.index("B"))
    return (lambda: dlf.trainnet(X, T, net, "crossentropy", options)), in_loop


def _cnn(device: str, epochs: int) -> tuple[Run, Run]:
    """imageInput 28×28×1 → conv 3×3×8 → batchnorm → relu → maxpool 2 → conv 3×3×16 → relu → fc 10 →
    softmax; 1024 images, mini-batches of 128."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    import dlformat as dlf

    torch.manual_seed(0)
    count, batch, classes = 1024, 128, 10
    images = torch.randn(count, 1, 28, 28, device=device)  # batch-first memory for both sides
    labels = torch.randint(0, classes, (count,), device=device)
    onehot = F.one_hot(labels, classes).float()
    layers = [
        dlf.imageInputLayer([28, 28, 1], Normalization="none"),
        dlf.convolution2dLayer(3, 8, Padding="same"),
        dlf.batchNormalizationLayer(),
        dlf.reluLayer(),
        dlf.maxPooling2dLayer(2, Stride=2),
        dlf.convolution2dLayer(3, 16, Padding="same"),
        dlf.reluLayer(),
        dlf.fullyConnectedLayer(classes),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork(layers).to(device)
    module = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 14 * 14, classes),
    ).to(device)  # fmt: skip
    ours = _trainnet(dlf.dlarray(images, "BCSS"), dlf.dlarray(onehot, "BC"), net, batch, epochs)
    reference = _hand_loop(module, lambda Y, T: F.cross_entropy(Y, T), images, labels, batch, epochs, along=0)
    return (*ours, reference)


def _lstm(device: str, epochs: int) -> tuple[Run, Run]:
    """sequenceInput 8 → lstm 64 (last) → fc 4 → softmax; 512 sequences of 50 steps, mini-batches
    of 64."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    import dlformat as dlf

    torch.manual_seed(0)
    count, batch, steps, channels, hidden, classes = 512, 64, 50, 8, 64, 4
    sequences = torch.randn(steps, count, channels, device=device)  # torch's T×N×C for both sides
    labels = torch.randint(0, classes, (count,), device=device)
    onehot = F.one_hot(labels, classes).float()
    layers = [
        dlf.sequenceInputLayer(channels),
        dlf.lstmLayer(hidden, OutputMode="last"),
        dlf.fullyConnectedLayer(classes),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork(layers).to(device)

    class LastStep(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm, self.fc = nn.LSTM(channels, hidden), nn.Linear(hidden, classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(self.lstm(x)[0][-1])

    module = LastStep().to(device)
    ours = _trainnet(dlf.dlarray(sequences, "TBC"), dlf.dlarray(onehot, "BC"), net, batch, epochs)
    reference = _hand_loop(
        module, lambda Y, T: F.cross_entropy(Y, T), sequences, labels, batch, epochs, along=1
    )
    return (*ours, reference)


ROWS = [
    Row("cnn", "small CNN (2 conv, batchnorm, maxpool, fc), 1024 images 28×28, batch 128", _cnn),
    Row("lstm", "LSTM 64 (last step) + fc, 512 sequences 8×50, batch 64", _lstm),
]


def measure(
    rows: list[Row], device: str, rounds: int, epochs: int, clock
) -> dict[str, dict[str, list[float]]]:
    results = {}
    for row in rows:
        ours, in_loop, reference = row.build(device, epochs)
        cases = {"trainnet": ours, "in_loop": in_loop, "torch": reference}
        samples = interleaved_samples(cases, device, rounds, 0.0, clock)
        results[row.name] = {name: [t / epochs for t in values] for name, values in samples.items()}
    return results


def report(rows: list[Row], results: dict[str, dict[str, list[float]]]) -> list[str]:
    lines = [
        "| model | trainnet | dlformat net, torch loop | torch loop | trainnet / torch (medians) "
        "| (best rounds) | trainnet / dlformat net in the loop | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        times = results[row.name]
        ours, in_loop, reference = (statistics.median(times[n]) for n in ("trainnet", "in_loop", "torch"))
        ratio = ours / reference
        best = min(times["trainnet"]) / min(times["torch"])
        verdict = "met" if ratio <= TARGET else "**missed**"
        lines.append(
            f"| {row.what} | {ours * 1e3:.1f} ms | {in_loop * 1e3:.1f} ms | {reference * 1e3:.1f} ms | "
            f"{ratio:.2f} | {best:.2f} | {ours / in_loop:.2f} | ≤ {TARGET:.2f} {verdict} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = row_parser(__doc__, rounds=5)
    parser.add_argument("--epochs", type=int, default=3, help="epochs per training run")
    args = parser.parse_args(argv)
    clock = timing_clock(parser, args, args.device)
    rows = [row for row in ROWS if not args.only or row.name in args.only]
    results = measure(rows, args.device, args.rounds, args.epochs, clock)
    print(run_line(args, f", {args.epochs} epochs per run"))
    print("\n".join(report(rows, results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
