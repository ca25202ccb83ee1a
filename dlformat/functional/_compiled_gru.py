"""``torch.gru`` as one opaque operation under ``torch.compile``.

torch's compiler decomposes ``aten.gru`` into one step per time step (``torch._decomp``'s GRU
loops over the sequence; its LSTM has a one-operation path on CPU), so compiling a GRU network
took time in proportion to sequence length times layers: 332 s for the four-layer GRU network of
issue 15 at 100 steps (79 s at 5 steps, 205 s at 20). Under compilation the GRU runs instead as a
custom operator that the compiled code calls as it is, the same kernel eager mode runs. That is
done where no gradient is recorded (``torch.no_grad()``, ``torch.inference_mode()``, or no input
requiring one): the operator has no backward (inside an operator torch records no gradients, so
``torch.gru``'s own cannot serve). Compiled training keeps ``torch.gru`` and its per-step
decomposition. Eager calls do not change: they call ``torch.gru`` directly.
"""

from __future__ import annotations

import torch


def gru(x: torch.Tensor, h0: torch.Tensor, params: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """One unidirectional GRU layer on ``x`` ``(T, B, features)`` from ``h0`` ``(1, B, H)``, with
    torch's flat parameters ``[w_ih, w_hh, b_ih, b_hh]``: the steps ``(T, B, H)`` and final state."""
    recording = torch.is_grad_enabled() and any(tensor.requires_grad for tensor in (x, h0, *params))
    if torch.compiler.is_compiling() and not recording:
        steps, h = torch.ops.dlformat.gru(x, h0, params)
        return steps, h
    return _fused(x, h0, params)


def _fused(
    x: torch.Tensor, h0: torch.Tensor, params: list[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    steps, h = torch.gru(x, h0, params, True, 1, 0.0, True, False, False)
    return steps, h


@torch.library.custom_op("dlformat::gru", mutates_args=())
def _gru(x: torch.Tensor, h0: torch.Tensor, params: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    return _fused(x, h0, params)


@_gru.register_fake
def _gru_fake(
    x: torch.Tensor, h0: torch.Tensor, params: list[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    return x.new_empty((x.shape[0], x.shape[1], h0.shape[-1])), torch.empty_like(h0)
