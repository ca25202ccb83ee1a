"""Per-call cost of a layer at a size where torch's kernel does almost nothing: what dlformat adds.

Each case calls a layer on a tiny dlarray and the hand-written torch module on the same tiny
tensor, forward only under ``torch.no_grad()``, and reports the CPU time of this thread per call
(``time.thread_time``, the best of 7 repeats: on a shared machine that leaves out the time other
processes hold the core). ``extra`` is the difference: the Python work of labels, checks and plans,
which a batch-1 call of a small layer pays in full.

    python benchmarks/bench_overhead.py
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable


def _per_call(function: Callable[[], object], calls: int = 2000, repeats: int = 7) -> float:
    for _ in range(50):
        function()
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        for _ in range(calls):
            function()
        best = min(best, (time.thread_time() - start) / calls)
    return best


def cases() -> dict[str, tuple[object, object, tuple[int, ...], str]]:
    """name: (dlformat layer, torch module, batch-first input shape, its labels)."""
    from torch import nn

    import dlformat as dlf

    return {
        "fullyConnectedLayer(8) / nn.Linear": (
            dlf.fullyConnectedLayer(8, InputSize=8),
            nn.Linear(8, 8),
            (1, 8),
            "BC",
        ),
        "convolution2dLayer(3,4) / nn.Conv2d": (
            dlf.convolution2dLayer(3, 4, NumChannels=4, Padding="same"),
            nn.Conv2d(4, 4, 3, padding=1),
            (1, 4, 5, 5),
            "BCSS",
        ),
        "layerNormalizationLayer / nn.LayerNorm": (
            dlf.layerNormalizationLayer(NumChannels=8),
            nn.LayerNorm(8),
            (1, 5, 8),
            "BTC",
        ),
        "batchNormalizationLayer inference / nn.BatchNorm2d.eval()": (
            dlf.batchNormalizationLayer(NumChannels=4).eval(),
            nn.BatchNorm2d(4).eval(),
            (1, 4, 5, 5),
            "BCSS",
        ),
        "batchNormalizationLayer training / nn.BatchNorm2d": (
            dlf.batchNormalizationLayer(NumChannels=4),
            nn.BatchNorm2d(4),
            (2, 4, 5, 5),
            "BCSS",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args(argv)
    import torch

    import dlformat as dlf

    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, CPU time per call (best of 7 × 2000 calls)")
    print("| layer / torch module | ours (µs) | torch (µs) | extra (µs) |")
    print("|---|---|---|---|")
    for name, (layer, module, shape, labels) in cases().items():
        x = torch.randn(shape)
        with torch.no_grad():
            layer(dlf.dlarray(x, labels))  # the lazy learnables
            ours = _per_call(lambda: layer(dlf.dlarray(x, labels)))  # noqa: B023  (called at once)
            reference = _per_call(lambda: module(x))  # noqa: B023
        print(f"| {name} | {ours * 1e6:.1f} | {reference * 1e6:.1f} | {(ours - reference) * 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
