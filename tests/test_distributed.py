"""DistributedDataParallel over a dlnetwork: two gloo processes equal one process on the whole batch."""

from __future__ import annotations

import functools
import importlib.util
import os
import socket
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import dlformat as dlf

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "position_embedding_network.py"
STEPS, BATCH, LENGTH = 4, 8, 12


@functools.cache
def _example():
    spec = importlib.util.spec_from_file_location("position_embedding_network", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _batches():
    example = _example()
    generator = torch.Generator().manual_seed(7)
    return [example.motif_batch(BATCH, LENGTH, generator) for _ in range(STEPS)]


def _train(net, batches, rank=0, world=1):
    """Adam steps on this rank's share of every batch; DDP averages the gradients over ranks."""
    example = _example()
    optimizer = torch.optim.Adam(dlf.param_groups(getattr(net, "module", net), lr=1e-2))
    share = BATCH // world
    for X, targets in batches:
        part = dlf.dlarray(dlf.stripdims(X, "CBT")[:, rank * share : (rank + 1) * share], "CBT")
        loss = example.cross_entropy(net(part), targets[rank * share : (rank + 1) * share])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _worker(rank: int, world: int, port: int, folder: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        net = _example().build_network()
        ddp = torch.nn.parallel.DistributedDataParallel(net)
        _train(ddp, _batches(), rank, world)
        torch.save(net.state_dict(), Path(folder) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_ddp_on_two_ranks_equals_one_process_on_the_combined_batch(tmp_path):
    mp.spawn(_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    torch.manual_seed(0)
    single = _example().build_network()
    start = {key: value.clone() for key, value in single.state_dict().items()}
    _train(single, _batches())
    ranks = [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(2)]
    for key, expected in single.state_dict().items():
        assert not torch.equal(expected, start[key]), f"{key} did not train"
        torch.testing.assert_close(ranks[0][key], ranks[1][key], rtol=0, atol=0)
        torch.testing.assert_close(ranks[0][key], expected, rtol=0, atol=1e-5)


# -- batch normalization state under DDP ----------------------------------------------------------
# dlformat keeps DDP's default, broadcast_buffers=True (docs/networks.md, "Network State"): before
# every forward, rank 0's state values (batch normalization's running statistics) replace every
# other rank's, so all ranks start each step from the same State; each rank's batch statistics
# come from its own share of the batch, and rank 0's running statistics are the ones that last.


def _bn_shares(rank: int) -> list:
    generator = torch.Generator().manual_seed(11)
    batches = [torch.randn(3, BATCH, generator=generator, dtype=torch.float64) * 2 + 1 for _ in range(STEPS)]
    share = BATCH // 2
    return [batch[:, rank * share : (rank + 1) * share] for batch in batches]


def _bn_worker(rank: int, world: int, port: int, folder: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        net = dlf.dlnetwork(
            [
                dlf.featureInputLayer(3, Name="in"),
                dlf.batchNormalizationLayer(Name="bn", dtype=torch.float64),
                dlf.fullyConnectedLayer(2, Name="fc", dtype=torch.float64),
            ]
        )
        seen = []  # the running mean each forward starts from, on this rank
        net.Layers["bn"].register_forward_pre_hook(lambda layer, args: seen.append(layer.TrainedMean.clone()))
        ddp = torch.nn.parallel.DistributedDataParallel(net)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        for share in _bn_shares(rank):
            loss = dlf.stripdims(ddp(dlf.dlarray(share, "CB"), training=True)).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save({"seen": seen, "mean": net.Layers["bn"].TrainedMean}, Path(folder) / f"bn{rank}.pt")
    finally:
        dist.destroy_process_group()


def test_ddp_broadcasts_rank_0s_batch_normalization_state_before_every_forward(tmp_path):
    mp.spawn(_bn_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    ranks = [torch.load(tmp_path / f"bn{rank}.pt") for rank in range(2)]
    for first, second in zip(ranks[0]["seen"], ranks[1]["seen"], strict=True):
        assert torch.equal(first, second)  # every step starts from the same State on both ranks
    # rank 0's running mean: MathWorks' update over rank 0's shares only (the input feeds bn directly)
    mean = torch.zeros(3, 1, dtype=torch.float64)
    for share in _bn_shares(0):
        mean = 0.1 * share.mean(dim=1, keepdim=True) + 0.9 * mean
    torch.testing.assert_close(ranks[0]["mean"], mean, rtol=1e-12, atol=1e-12)
    assert not torch.equal(ranks[1]["mean"], ranks[0]["mean"])  # rank 1's last update is its own
