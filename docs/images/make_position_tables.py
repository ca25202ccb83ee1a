"""Draws docs/images/position_tables.png: three sinusoidal tables side by side.

    python docs/images/make_position_tables.py

Needs matplotlib: the dlformat[plot] extra (pip install -e ".[plot]" in the repository).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from dlformat._plot import generated_table

DIM, POSITIONS = 128, 100
PANELS = [
    ("sinusoid", "interleaved", "interleaved (MATLAB, NeoML, Julia AbsolutePE)"),
    ("sinusoid", "halves", "halves (sin block, then cos block)"),
    ("timing-signal", "", "tensor2tensor timing signal"),
]


def main() -> None:
    figure, axes = plt.subplots(1, 3, figsize=(15, 4), dpi=80, sharey=True)
    for axis, (kind, layout, title) in zip(axes, PANELS, strict=True):
        table = generated_table(kind, DIM, POSITIONS, layout or "interleaved", 10000.0)
        image = axis.imshow(
            table, aspect="auto", origin="lower", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
        )
        axis.set_title(title)
        axis.set_xlabel("position")
    axes[0].set_ylabel("channel")
    figure.colorbar(image, ax=axes, fraction=0.02)
    output = Path(__file__).with_name("position_tables.png")
    figure.savefig(output)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
