"""positionEmbeddingLayer against memory bandwidth and against what users would write instead.

Every figure is a ratio to a baseline measured in the same process, interleaved round by round
(median of the rounds). On CPU the measurements run twice, each in a fresh child process: once
with glibc's default allocator settings, once with large-allocation caching turned on
(``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_``), because glibc otherwise gives every large
allocation fresh pages and page faults, not bandwidth, set the cost of any out-of-place op.

    python benchmarks/bench_position.py                 # CPU, both allocator regimes
    python benchmarks/bench_position.py --device cuda   # CUDA, one regime
    python benchmarks/bench_position.py --write         # also replace the table in docs/performance.md

Targets (issue 6) are printed beside each ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

LARGE = {"C": 512, "B": 32, "T": 512}
SMALL = {"C": 64, "B": 1, "T": 16}
MAX_POSITION = 1024
VOCABULARY = 1000
TUNED = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296"}
DOCS = Path(__file__).resolve().parents[1] / "docs" / "performance.md"


# -- timing -----------------------------------------------------------------------------------------
def _synchronizer(device: str) -> Callable[[], None]:
    import torch

    return torch.cuda.synchronize if device == "cuda" else (lambda: None)


def _calls_per_batch(
    function: Callable[[], object],
    sync: Callable[[], None],
    batch_seconds: float,
    clock: Callable[[], float] = time.perf_counter,
) -> int:
    function()
    sync()
    calls, elapsed = 1, 0.0
    while True:
        start = clock()
        for _ in range(calls):
            function()
        sync()
        elapsed = clock() - start
        if elapsed >= batch_seconds / 4 or calls >= 1 << 20:
            return max(1, int(calls * batch_seconds / max(elapsed, 1e-9)))
        calls *= 4


def interleaved(
    cases: dict[str, Callable[[], object]],
    device: str,
    rounds: int,
    batch_seconds: float = 0.03,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Median seconds per call of each case; the cases take turns, round by round."""
    samples = interleaved_samples(cases, device, rounds, batch_seconds, clock)
    return {name: statistics.median(values) for name, values in samples.items()}


def add_timing_arguments(parser: argparse.ArgumentParser) -> None:
    """``--threads`` and ``--clock``, as every benchmark here takes them."""
    parser.add_argument(
        "--threads", type=int, help="torch CPU threads (1 steadies the figures on a shared, loaded machine)"
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time (default), or this thread's CPU time (time.thread_time): on a shared, loaded "
        "machine it leaves out the time other processes take the core; CPU only, with --threads 1, "
        "where torch computes forward and backward in the calling thread",
    )


def row_parser(description: str | None, rounds: int) -> argparse.ArgumentParser:
    """The arguments of the row-table benchmarks (bench_layers, bench_training): ``--device``,
    ``--rounds``, ``--only`` and the timing arguments."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument(
        "--rounds", type=int, default=rounds, help="interleaved rounds per measurement (median)"
    )
    parser.add_argument("--only", nargs="*", help="row names to run (default: all)")
    add_timing_arguments(parser)
    return parser


def run_line(args: argparse.Namespace, extra: str = "") -> str:
    """Where and how a row-table benchmark ran, as its first printed line."""
    import torch

    where = (
        torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or platform.machine()
    )
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"{args.device} ({where}, {os.cpu_count()} CPUs), torch {torch.__version__}, threads "
        f"{torch.get_num_threads()}, rounds {args.rounds}{extra}, {args.clock} clock; "
        f"load average at the end (1/5/15 min) {load}"
    )


def timing_clock(
    parser: argparse.ArgumentParser, args: argparse.Namespace, device: str = "cpu"
) -> Callable[[], float]:
    """Apply ``--threads`` and return the clock ``--clock`` asks for (refusing a CPU clock that
    would miss work done in other threads)."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.clock == "cpu" and (device != "cpu" or torch.get_num_threads() != 1):
        parser.error("--clock cpu measures one thread: use it with --device cpu and --threads 1")
    return time.thread_time if args.clock == "cpu" else time.perf_counter


def interleaved_samples(
    cases: dict[str, Callable[[], object]],
    device: str,
    rounds: int,
    batch_seconds: float = 0.03,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds per call of each case in each round; the cases take turns, round by round. ``clock``
    is wall time by default; ``time.thread_time`` counts only this thread's CPU time (see
    ``bench_layers.py --clock``)."""
    sync = _synchronizer(device)
    calls = {name: _calls_per_batch(function, sync, batch_seconds, clock) for name, function in cases.items()}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, function in cases.items():
            sync()
            start = clock()
            for _ in range(calls[name]):
                function()
            sync()
            samples[name].append((clock() - start) / calls[name])
    return samples


# -- the measurements (one child process) -----------------------------------------------------------
def measure(device: str, rounds: int, with_compile: bool) -> dict[str, float]:
    import torch
    from torch import nn

    import dlformat as dlf

    torch.manual_seed(0)
    C, B, T = LARGE["C"], LARGE["B"], LARGE["T"]
    layer = dlf.positionEmbeddingLayer(C, MAX_POSITION, device=device)
    embedding = nn.Embedding(MAX_POSITION, C, device=device)
    weights = layer.Weights
    x_cbt = torch.randn(C, B, T, device=device)
    x_btc = torch.randn(B, T, C, device=device)
    out = torch.empty_like(x_cbt)
    X = dlf.dlarray(x_cbt, "CBT")
    X_btc = dlf.dlarray(x_btc, "BTC")
    ready_btc = layer(X_btc)
    X_update = dlf.dlarray(torch.randn(C, B, T, device=device), "CBT")

    def add_in_place() -> None:
        nonlocal X_update
        with torch.no_grad():
            X_update += layer(X_update)

    times = interleaved(
        {
            "clone": x_cbt.clone,
            "copy_": lambda: out.copy_(x_cbt),
            "idiom": lambda: x_btc + embedding(torch.arange(T, device=device)),
            "naive": lambda: x_btc + weights[:, :T].t(),
            "ours_cbt": lambda: X + layer(X),
            "ours_btc": lambda: X_btc + layer(X_btc),
            "btc_layer": lambda: layer(X_btc),
            "btc_add_only": lambda: X_btc + ready_btc,
            "ours_in_place": add_in_place,
        },
        device,
        rounds,
    )

    few = dlf.dlarray(torch.empty(C, 1, T, device=device), "CBT")
    many = dlf.dlarray(torch.empty(C, 256, T, device=device), "CBT")
    alone = interleaved({"1": lambda: layer(few), "256": lambda: layer(many)}, device, rounds)
    times |= {"layer_b1": alone["1"], "layer_b256": alone["256"]}

    leaf = x_cbt.clone().requires_grad_()
    upstream = torch.randn_like(x_cbt)
    added = (dlf.dlarray(leaf, "CBT") + layer(dlf.dlarray(leaf, "CBT")))._data
    times |= {
        f"backward_{name}": value
        for name, value in interleaved(
            {
                "ours": lambda: torch.autograd.grad(added, (leaf, weights), upstream, retain_graph=True),
                "copy_": lambda: out.copy_(upstream),
            },
            device,
            rounds,
        ).items()
    }

    c, b, t = SMALL["C"], SMALL["B"], SMALL["T"]
    small_layer = dlf.positionEmbeddingLayer(c, MAX_POSITION, device=device)

    class RawPositionEmbedding(nn.Module):  # what a hand-written port of the layer would be
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.randn(c, MAX_POSITION, device=device))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.weight[:, : x.shape[-1]].unsqueeze(1)

    raw = RawPositionEmbedding()
    x_small = torch.randn(c, b, t, device=device)
    X_small = dlf.dlarray(x_small, "CBT")
    times |= {
        f"small_{name}": value
        for name, value in interleaved(
            {"ours": lambda: X_small + small_layer(X_small), "raw": lambda: x_small + raw(x_small)},
            device,
            rounds,
        ).items()
    }
    with torch.no_grad():
        times |= {
            f"small_no_grad_{name}": value
            for name, value in interleaved(
                {"ours": lambda: X_small + small_layer(X_small), "raw": lambda: x_small + raw(x_small)},
                device,
                rounds,
            ).items()
        }

    if with_compile:
        times |= _compiled_against_eager(device, rounds)
    return times


def _compiled_against_eager(device: str, rounds: int) -> dict[str, float]:
    import torch
    from torch import nn

    import dlformat as dlf

    class TokenAndPosition(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(VOCABULARY, LARGE["C"], device=device)
            self.posemb = dlf.positionEmbeddingLayer(LARGE["C"], MAX_POSITION, device=device)

        def forward(self, ids: torch.Tensor) -> dlf.DLArray:
            X = dlf.dlarray(self.tokens(ids), "BTC")
            return X + self.posemb(X)

    model = TokenAndPosition().eval()
    compiled = torch.compile(model, fullgraph=True)
    ids = torch.randint(0, VOCABULARY, (LARGE["B"], LARGE["T"]), device=device)
    start = time.perf_counter()
    with torch.no_grad():
        compiled(ids)
        compile_seconds = time.perf_counter() - start
        times = interleaved({"eager": lambda: model(ids), "compiled": lambda: compiled(ids)}, device, rounds)
    return {
        "compile_eager": times["eager"],
        "compile_compiled": times["compiled"],
        "compile_s": compile_seconds,
    }


# -- reporting -------------------------------------------------------------------------------------
def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def _row(results: dict[str, dict[str, float]], what: str, ratio, detail, target: str, check) -> str:
    cells, verdicts = [], []
    for times in results.values():
        value = ratio(times)
        cells.append(f"{value:.2f} ({detail(times)})")
        if check is not None:
            verdicts.append(check(value, times))
    verdict = "" if check is None else ("**met**" if all(verdicts) else "**missed**")
    return f"| {what} | " + " | ".join(cells) + f" | {target} | {verdict} |"


def table(results: dict[str, dict[str, float]]) -> list[str]:
    """One Markdown table; one column per regime, ratios with the two times they come from."""
    regimes = list(results)
    lines = [
        "| measurement (ratio, from the times in brackets) | " + " | ".join(regimes) + " | target | status |",
        "|---|" + "---|" * len(regimes) + "---|---|",
    ]
    rows = [
        (
            "`layer(X)` alone, time at B=256 / time at B=1",
            lambda t: t["layer_b256"] / t["layer_b1"],
            lambda t: f"{_ms(t['layer_b256'])} / {_ms(t['layer_b1'])}",
            "≤ 1.5",
            lambda v, t: v <= 1.5,
        ),
        (
            '`X + layer(X)`, X canonical "CBT": `x.clone()` time / ours',
            lambda t: t["clone"] / t["ours_cbt"],
            lambda t: f"{_ms(t['clone'])} / {_ms(t['ours_cbt'])}",
            "≥ 0.85",
            lambda v, t: v >= 0.85,
        ),
        (
            '`X + layer(X)`, X = `dlarray(x_btc, "BTC")`: `x.clone()` time / ours',
            lambda t: t["clone"] / t["ours_btc"],
            lambda t: f"{_ms(t['clone'])} / {_ms(t['ours_btc'])}",
            "≥ 0.85",
            lambda v, t: v >= 0.85,
        ),
        (
            '… where the "BTC" time goes: `layer(X)` (relayout of the columns) + adding a ready view',
            lambda t: (t["btc_layer"] + t["btc_add_only"]) / t["ours_btc"],
            lambda t: f"{_ms(t['btc_layer'])} + {_ms(t['btc_add_only'])} of {_ms(t['ours_btc'])}",
            "(profile)",
            None,
        ),
        (
            "`X += layer(X)` (no_grad): `out.copy_(x)` time / ours",
            lambda t: t["copy_"] / t["ours_in_place"],
            lambda t: f"{_ms(t['copy_'])} / {_ms(t['ours_in_place'])}",
            "≥ 0.8",
            lambda v, t: v >= 0.8,
        ),
        (
            "backward of `X + layer(X)` (dX and dWeights): `out.copy_(dY)` time / ours",
            lambda t: t["backward_copy_"] / t["backward_ours"],
            lambda t: f"{_ms(t['backward_copy_'])} / {_ms(t['backward_ours'])}",
            "≥ 0.7",
            lambda v, t: v >= 0.7,
        ),
        (
            "small C=64 B=1 T=16, `X + layer(X)`: ours / raw torch module",
            lambda t: t["small_ours"] / t["small_raw"],
            lambda t: f"{_ms(t['small_ours'])} / {_ms(t['small_raw'])}",
            "≤ 2 and ≤ 25 µs",
            lambda v, t: v <= 2 and t["small_ours"] <= 25e-6,
        ),
        (
            "small, under `torch.no_grad()`: ours / raw torch module",
            lambda t: t["small_no_grad_ours"] / t["small_no_grad_raw"],
            lambda t: f"{_ms(t['small_no_grad_ours'])} / {_ms(t['small_no_grad_raw'])}",
            "(for the record)",
            None,
        ),
        (
            "idiom `x_btc + nn.Embedding(P, C)(torch.arange(T))`: clone time / idiom",
            lambda t: t["clone"] / t["idiom"],
            lambda t: f"{_ms(t['clone'])} / {_ms(t['idiom'])}",
            "(baseline)",
            None,
        ),
        (
            "naive port `x_btc + W[:, :T].t()`: clone time / naive",
            lambda t: t["clone"] / t["naive"],
            lambda t: f"{_ms(t['clone'])} / {_ms(t['naive'])}",
            "(baseline)",
            None,
        ),
        (
            "`out.copy_(x)` time / `x.clone()` time (the allocator's share)",
            lambda t: t["copy_"] / t["clone"],
            lambda t: f"{_ms(t['copy_'])} / {_ms(t['clone'])}",
            "(machine fact)",
            None,
        ),
    ]
    lines += [_row(results, *row) for row in rows]
    compiled = {name: times for name, times in results.items() if "compile_compiled" in times}
    if compiled:
        cells = [
            f"{t['compile_eager'] / t['compile_compiled']:.2f} ({_ms(t['compile_eager'])} / "
            f"{_ms(t['compile_compiled'])}; compiled in {t['compile_s']:.0f} s)"
            if name in compiled
            else "not run"
            for name, t in results.items()
        ]
        met = all(t["compile_eager"] >= t["compile_compiled"] for t in compiled.values())
        lines.append(
            "| token + position embedding + addition: eager time / `torch.compile(fullgraph=True)` | "
            + " | ".join(cells)
            + f" | ≥ 1 | {'**met**' if met else '**missed**'} |"
        )
    return lines


def machine(device: str) -> str:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    where = f"{torch.cuda.get_device_name()} (CUDA {torch.version.cuda})" if device == "cuda" else cpu
    return (
        f"{where}, {os.cpu_count()} CPU cores, torch {torch.__version__} with {torch.get_num_threads()} "
        f"threads, Python {platform.python_version()}"
    )


def write_docs(device: str, report: list[str]) -> None:
    start, end = f"<!-- bench_position {device} start -->", f"<!-- bench_position {device} end -->"
    text = DOCS.read_text()
    block = "\n".join([start, *report, end])
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOCS.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per measurement (median)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile row")
    parser.add_argument(
        "--write", action="store_true", help="replace this device's table in docs/performance.md"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        with_compile = not args.no_compile
        print(json.dumps(measure(args.device, args.rounds, with_compile)))
        return 0

    regimes = (
        {"default allocator": {}}
        if args.device == "cuda"
        else {"default allocator": {}, "tuned allocator": TUNED}
    )
    results = {}
    started = time.perf_counter()
    for index, (regime, extra) in enumerate(regimes.items()):
        env = {key: value for key, value in os.environ.items() if key not in TUNED} | extra
        command = [sys.executable, __file__, "--child", "--device", args.device, "--rounds", str(args.rounds)]
        if args.no_compile or index > 0:  # the compiled model is measured once
            command.append("--no-compile")
        print(f"measuring: {regime} ...", file=sys.stderr)
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        results[regime] = json.loads(done.stdout.strip().splitlines()[-1])
    report = [
        f"Measured {time.strftime('%Y-%m-%d')} by `python benchmarks/bench_position.py"
        + (" --device cuda" if args.device == "cuda" else "")
        + f"` in {time.perf_counter() - started:.0f} s; {machine(args.device)}. Float32, default size "
        + f"C={LARGE['C']} B={LARGE['B']} T={LARGE['T']} (MaxPosition {MAX_POSITION}); medians of "
        + f"{args.rounds} interleaved rounds.",
        "",
        *table(results),
    ]
    print("\n".join(report))
    if args.write:
        write_docs(args.device, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
