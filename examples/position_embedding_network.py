"""The network of MATLAB's positionEmbeddingLayer page, ported line by line and trained.

MATLAB:

    layers = [sequenceInputLayer(1,Name="input")
              wordEmbeddingLayer(64,128,Name="wordemb")
              positionEmbeddingLayer(64,128,Name="posemb")
              additionLayer(2,Name="add")
              selfAttentionLayer(4,256,AttentionMask="causal")
              fullyConnectedLayer(128)
              softmaxLayer];
    net = dlnetwork; net = addLayers(net,layers); net = connectLayers(net,"wordemb","add/in2");

The task, generated here (no download): each sequence repeats a random motif of 4 words, so
the next word is the one 4 steps back. Word order matters, which is what the position
embedding gives the attention. The script trains with Adam, prints the falling loss with a
progress bar, saves ``net.Learnables`` to a .mat file, reloads them into a fresh network and
checks that its predictions are identical.

    python examples/position_embedding_network.py [--steps 300] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

import dlformat as dlf
from dlformat.io import load_learnables, save_learnables

VOCABULARY = 128
MOTIF = 4


def build_network() -> dlf.DLNetwork:
    layers = [
        dlf.sequenceInputLayer(1, Name="input"),
        dlf.wordEmbeddingLayer(64, 128, Name="wordemb"),
        dlf.positionEmbeddingLayer(64, 128, Name="posemb"),
        dlf.additionLayer(2, Name="add"),
        dlf.selfAttentionLayer(4, 256, AttentionMask="causal"),
        dlf.fullyConnectedLayer(128),
        dlf.softmaxLayer(),
    ]
    net = dlf.dlnetwork()
    net = dlf.addLayers(net, layers)
    net = dlf.connectLayers(net, "wordemb", "add/in2")
    return dlf.initialize(net)


def motif_batch(batch: int, length: int, generator: torch.Generator) -> tuple[dlf.DLArray, torch.Tensor]:
    """Inputs (1-based word indices, "CBT") and the next word of each position (0-based class)."""
    motifs = torch.randint(1, VOCABULARY + 1, (batch, MOTIF), generator=generator)
    words = motifs.repeat(1, (length + 1) // MOTIF + 1)[:, : length + 1]
    return dlf.dlarray(words[:, :-1].float(), "BTC"), words[:, 1:] - 1  # "BTC": C is a trailing singleton


def cross_entropy(Y: dlf.DLArray, targets: torch.Tensor) -> torch.Tensor:
    """MATLAB's crossentropy on softmax output, averaged over observations and time steps."""
    probabilities = dlf.stripdims(Y, "BTC")
    picked = probabilities.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return -picked.clamp_min(1e-12).log().mean()


def progress(step: int, steps: int, loss: float, width: int = 30) -> str:
    done = width * step // steps
    return f"[{'#' * done}{'-' * (width - done)}] step {step:4d}/{steps}  loss {loss:.4f}"


def train(
    net: dlf.DLNetwork, steps: int, batch: int, length: int, seed: int, learn_rate: float = 3e-3
) -> list[float]:
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(dlf.param_groups(net, lr=learn_rate))
    losses = []
    for step in range(1, steps + 1):
        X, targets = motif_batch(batch, length, generator)
        loss = cross_entropy(dlf.forward(net, X), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        milestone = step % max(steps // 6, 1) == 0 or step == steps
        if sys.stdout.isatty():  # redraw the bar in place, keeping a line at each milestone
            print("\r" + progress(step, steps, loss.item()), end="\n" if milestone else "", flush=True)
        elif milestone:
            print(progress(step, steps, loss.item()), flush=True)
    return losses


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for learnables.mat (default: a temp folder)"
    )
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    net = build_network()
    dlf.analyzeNetwork(net, motif_batch(2, args.length, torch.Generator().manual_seed(1))[0])
    losses = train(net, args.steps, args.batch, args.length, args.seed)

    folder = args.out or Path(tempfile.mkdtemp(prefix="dlformat-example-"))
    path = folder / "learnables.mat"
    save_learnables(net, path)
    torch.manual_seed(args.seed + 1)
    fresh = build_network()
    load_learnables(fresh, path)
    X, targets = motif_batch(16, args.length, torch.Generator().manual_seed(12345))
    expected, reloaded = dlf.predict(net, X), dlf.predict(fresh, X)
    identical = torch.equal(dlf.stripdims(expected), dlf.stripdims(reloaded))
    accuracy = (
        (dlf.stripdims(expected, "BTC").argmax(-1)[:, MOTIF:] == targets[:, MOTIF:]).float().mean().item()
    )
    print(f"learnables saved to {path}; reloaded network predicts identically: {identical}")
    print(f"next-word accuracy once the motif has been seen: {accuracy:.1%}")
    if not identical:
        raise SystemExit("the reloaded network's predictions differ")
    return {"losses": losses, "path": path, "identical": identical, "accuracy": accuracy}


if __name__ == "__main__":
    main(sys.argv[1:])
