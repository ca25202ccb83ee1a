"""Load speed and peak memory of dlformat.io.loadmat against SciPy and bare h5py.

Writes a float32 weight matrix (200 MB by default) as a compressed MAT v7 file and as v7.3,
then loads each in a fresh process per run, several times, and reports median wall time and
peak resident memory above the process's baseline, each as a ratio:

- v7:   dlformat.io.loadmat  vs  scipy.io.loadmat(mat_dtype=True)
- v7.3: dlformat.io.loadmat  vs  h5py.File(...)["x"][()]

Targets (issue 3): time ratio <= 1.15, peak memory <= 1.3 × the data.

    python benchmarks/bench_matio.py [--megabytes 200] [--repeats 3] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

# Every process that uses dlformat has torch imported, so the baselines import it too (the
# same environment for every loader); "scipy without torch" is measured for the record.
LOADERS = {
    "dlformat": "from dlformat.io import loadmat\ndef load(path): return loadmat(path)['x']",
    "scipy": "import torch, scipy.io\ndef load(path): return scipy.io.loadmat(path, mat_dtype=True)['x']",
    "scipy without torch": (
        "import scipy.io\ndef load(path): return scipy.io.loadmat(path, mat_dtype=True)['x']"
    ),
    "h5py": "import torch, h5py\ndef load(path):\n    with h5py.File(path, 'r') as f: return f['x'][()]",
}

# Each child first loads a tiny file of the same version, so one-time costs (lazy imports,
# first-call setup) are paid before the measured load, as in any process that loads twice.
# Peak memory is the child's own high-water mark (VmHWM), reset just before the measured
# load: getrusage's ru_maxrss survives fork+exec and would report the parent's peak.
CHILD = """
import json, sys, time
{loader}
load(sys.argv[2])
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset VmHWM to the current resident size
baseline = status("VmRSS")
start = time.perf_counter()
x = load(sys.argv[1])
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "peak": status("VmHWM") - baseline, "nbytes": x.nbytes}}))
"""


def measure(loader: str, path: Path, warm_up: Path) -> dict[str, float]:
    script = CHILD.format(loader=LOADERS[loader])
    command = [sys.executable, "-c", script, str(path), str(warm_up)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def _seconds(runs: list[dict[str, float]]) -> list[float]:
    return [run["seconds"] for run in runs]


def run(megabytes: int, repeats: int) -> str:
    from dlformat.io import savemat

    elements = megabytes * 2**20 // 4
    rows = 1024
    data = np.random.default_rng(0).standard_normal((rows, elements // rows), dtype=np.float32)
    table = [
        f"{data.nbytes / 2**20:.0f} MB float32 matrix ({rows}×{data.shape[1]}); median (min–max) of "
        f"{repeats} fresh processes, each warmed up by loading a tiny file of the same version first.",
        "",
        "| file | dlformat.io.loadmat | baseline | time ratio: medians / best runs (target ≤ 1.15) "
        "| peak memory / data: dlformat / baseline (target ≤ 1.3) |",
        "|---|---|---|---|---|",
    ]
    notes = []
    with tempfile.TemporaryDirectory() as folder:
        for version, baseline in (("7", "scipy"), ("7.3", "h5py")):
            path = Path(folder) / f"weights_v{version}.mat"
            warm_up = Path(folder) / f"tiny_v{version}.mat"
            savemat(path, {"x": data}, version=version)
            savemat(warm_up, {"x": data[:2, :2]}, version=version)
            results: dict[str, list[dict[str, float]]] = {"dlformat": [], baseline: []}
            for _ in range(repeats):  # interleaved, so drift in the machine hits both alike
                for name in results:
                    results[name].append(measure(name, path, warm_up))
            ours, theirs = _seconds(results["dlformat"]), _seconds(results[baseline])
            peaks = [statistics.median(r["peak"] for r in results[name]) / data.nbytes for name in results]
            cells = [
                f"v{version} ({path.stat().st_size / 2**20:.0f} MB file)",
                f"{statistics.median(ours):.3f} s ({min(ours):.3f}–{max(ours):.3f})",
                f"{baseline} {statistics.median(theirs):.3f} s ({min(theirs):.3f}–{max(theirs):.3f})",
                f"{statistics.median(ours) / statistics.median(theirs):.2f} / {min(ours) / min(theirs):.2f}",
                f"{peaks[0]:.2f}× / {peaks[1]:.2f}×",
            ]
            table.append("| " + " | ".join(cells) + " |")
            if version == "7":
                plain = _seconds([measure("scipy without torch", path, warm_up) for _ in range(repeats)])
                notes.append(
                    f"SciPy on the v7 file in a process without torch: {statistics.median(plain):.3f} s."
                )
    return "\n".join([*table, "", *notes]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    table = run(args.megabytes, args.repeats)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)


if __name__ == "__main__":
    main()
