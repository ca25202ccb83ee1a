"""MATLAB's ``lstm`` and ``gru``: recurrent operations over the ``T`` dimension.

MATLAB stacks the gates of its weights in the same order torch's fused kernels expect them:
LSTM ``[input; forget; cell candidate; output]``, GRU ``[reset; update; candidate]`` (the
``lstmLayer`` and ``gruLayer`` pages, "Algorithms"). So the default options run on
``torch.lstm``/``torch.gru`` (cuDNN on a GPU) with MATLAB's matrices as they are: MATLAB's one
bias goes to torch's input bias and zeros to its recurrent bias, except in the GRU's
``"recurrent-bias-after-multiplication"`` mode, whose second half *is* torch's recurrent bias
(torch computes the candidate as ``tanh(W x + b_in + r * (R h + b_hn))``).
Options torch has no kernel for (``"softsign"``, ``"hard-sigmoid"``, the GRU's
``"before-multiplication"``) run a loop over time steps, each step one batched operation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from .._tracing import cached_plan
from ._common import as_data, formatted_input, working_dtype
from ._compiled_gru import gru as fused_gru
from ._sliding import as_dtype

__all__ = ["gru", "lstm"]

STATE_ACTIVATIONS = ("tanh", "softsign")
GATE_ACTIVATIONS = ("sigmoid", "hard-sigmoid")
RESET_GATE_MODES = ("after-multiplication", "before-multiplication", "recurrent-bias-after-multiplication")
LSTM_GATES = 4
GRU_GATES = 3

Activation = Callable[[torch.Tensor], torch.Tensor]


def _hard_sigmoid(x: torch.Tensor) -> torch.Tensor:
    # MATLAB's hard-sigmoid: 0 below -2.5, 0.2 x + 0.5 between, 1 above 2.5
    return (0.2 * x + 0.5).clamp(0.0, 1.0)


STATE_FUNCTIONS: dict[str, Activation] = {"tanh": torch.tanh, "softsign": F.softsign}
GATE_FUNCTIONS: dict[str, Activation] = {"sigmoid": torch.sigmoid, "hard-sigmoid": _hard_sigmoid}


class _Steps(NamedTuple):
    """How data of one format meets torch's recurrent kernels: ``permutation`` puts the stored
    dimensions in the order ``T``, ``B`` (those present), ``C``, then the ``S`` dimensions last
    first, so that flattening the features runs the first ``S`` fastest, as ``fullyconnect``
    flattens them; a missing ``B`` or ``T`` is a size-1 one inside and absent outside."""

    permutation: tuple[int, ...]
    time: bool
    batch: bool
    output_format: str
    as_is: bool  # the data is stored (T, B, C) already ("TBC"): no permute and reshape to record


@cached_plan()
def _steps_plan(fmt: str) -> _Steps | None:
    """The plan of :func:`_to_steps` and :func:`_from_steps` for ``fmt`` (plain permutes and
    reshapes: this runs on every call of every recurrent layer); ``None`` for a format the
    operations refuse (see :func:`_sequence_plan`)."""
    if "U" in fmt or "C" not in fmt:
        return None
    lead = tuple(fmt.index(label) for label in "TB" if label in fmt)
    features = tuple(reversed([index for index, label in enumerate(fmt) if label in "SC"]))
    output = "C" + "B" * ("B" in fmt) + "T" * ("T" in fmt)
    return _Steps(lead + features, "T" in fmt, "B" in fmt, output, fmt == "TBC")


def _sequence_plan(fmt: str, caller: str) -> _Steps:
    """:func:`_steps_plan`, or the error naming ``caller`` for a format it refuses."""
    plan = _steps_plan(fmt)
    if plan is not None:
        return plan
    if "U" in fmt:
        raise DLFormatError(
            f'{caller} cannot take format "{fmt}": "U" dimensions have no meaning for it; relabel them'
        )
    raise DLFormatError(f'{caller} needs data with a "C" dimension; got format "{fmt}"')


def _to_steps(data: torch.Tensor, plan: _Steps) -> torch.Tensor:
    """``data`` as ``(T, B, features)``."""
    if plan.as_is:
        return data
    moved = data.permute(plan.permutation)
    lead = int(plan.time) + int(plan.batch)
    steps = moved.shape[0] if plan.time else 1
    batch = moved.shape[int(plan.time)] if plan.batch else 1
    return moved.reshape(steps, batch, math.prod(moved.shape[lead:]))


def _from_steps(steps: torch.Tensor, plan: _Steps) -> torch.Tensor:
    """A ``(T, B, H)`` result as ``H × B × T`` without the dimensions the input lacks."""
    moved = steps.permute(2, 1, 0)
    kept = (moved.shape[0],) + (moved.shape[1],) * plan.batch + (moved.shape[2],) * plan.time
    return moved.reshape(kept)


class RecurrentInputs(NamedTuple):
    """What every recurrent operation takes, unchecked: ``caller`` and the state labels name
    things in errors; ``states`` pairs each label with its initial value."""

    caller: str
    X: DLArray
    states: tuple[tuple[str, Any], ...]
    weights: Any
    recurrentWeights: Any
    bias: Any
    state_activation: str = "tanh"
    gate_activation: str = "sigmoid"
    # False: the caller keeps only the final states' values (a layer without state outputs),
    # so they are returned detached, without recording their reshapes on every call
    state_gradients: bool = True


class _Recurrence:
    """One recurrent operation's inputs, checked and laid out as torch's kernels take them.

    ``x`` is ``(T, B, features)``; ``states`` are ``(directions, B, H)``; the parameters are
    split per direction. ``gates`` is 4 (LSTM) or 3 (GRU); ``directions`` 1, or 2 for BiLSTM,
    whose matrices stack the forward direction's rows over the backward's.
    """

    def __init__(
        self, inputs: RecurrentInputs, *, gates: int, directions: int = 1, bias_sets: int = 1
    ) -> None:
        caller, X, states, weights, recurrentWeights, bias = inputs[:6]
        self.plan = _sequence_plan(X._fmt, caller)
        x = _to_steps(X._data, self.plan)
        W = as_data(weights, f"{caller} weights")
        R = as_data(recurrentWeights, f"{caller} recurrentWeights")
        b = as_data(bias, f"{caller} bias")
        if R.ndim != 2 or R.shape[0] != gates * directions * R.shape[1]:
            raise DLFormatError(
                f"{caller} recurrentWeights must be {gates * directions}*NumHiddenUnits × NumHiddenUnits; "
                f"got {_validate.matlab_size(tuple(R.shape)) or 'a scalar'}"
            )
        hidden = R.shape[1]
        rows = gates * directions * hidden
        if W.ndim != 2 or tuple(W.shape) != (rows, x.shape[-1]):
            given = _validate.matlab_size(tuple(X.shape))
            raise DLFormatError(
                f"{caller} weights must be {rows} × {x.shape[-1]} ({gates * directions}*NumHiddenUnits × the "
                f'input\'s features) for the "{X._fmt}" input of size {given}; '
                f"got {_validate.matlab_size(tuple(W.shape)) or 'a scalar'}"
            )
        if b.numel() != rows * bias_sets:
            raise DLFormatError(
                f"{caller} bias must have {rows * bias_sets} elements "
                f"({gates * directions * bias_sets}*NumHiddenUnits); got {b.numel()}"
            )
        raw_states = [(label, as_data(value, f"{caller} {label}")) for label, value in states]
        dtype = working_dtype(x.dtype, W.dtype, R.dtype, b.dtype, *(s.dtype for _, s in raw_states))
        self.caller, self.hidden, self.directions, self.batch = caller, hidden, directions, x.shape[1]
        self.state_gradients = inputs.state_gradients
        # as_dtype and _split skip the torch calls that would change nothing: this runs on every
        # call of every recurrent layer, and each such call costs about a microsecond
        self.x = as_dtype(x, dtype)
        self.weights = _split(as_dtype(W, dtype), directions)
        self.recurrent = _split(as_dtype(R, dtype), directions)
        # bias_sets 2: [input biases; recurrent biases], each stacked per direction
        flat_bias = as_dtype(b.reshape(-1), dtype)
        self.biases = [_split(part, directions) for part in _split(flat_bias, bias_sets)]
        self.states = [self._state(label, value, dtype) for label, value in raw_states]

    def _state(self, label: str, value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """A ``directions*H × 1`` or ``× B`` state as ``(directions, B, H)``, one column broadcast over
        the batch as MATLAB does."""
        size = self.directions * self.hidden
        if value.ndim == 2 and value.shape[0] == size:
            columns: torch.Tensor | None = value  # the layers' own state: no reshape (per-call cost)
        else:
            columns = value.reshape(size, -1) if value.numel() % size == 0 and value.numel() else None
        if columns is None or value.ndim > 2 or columns.shape[1] not in (1, self.batch):
            raise DLFormatError(
                f"{self.caller} {label} must be {size} × 1 or {size} × {self.batch} (NumHiddenUnits × one "
                f"or every observation); got {_validate.matlab_size(tuple(value.shape)) or 'a scalar'}"
            )
        per_direction = as_dtype(columns, dtype).reshape(self.directions, self.hidden, -1).transpose(1, 2)
        return per_direction.expand(self.directions, self.batch, self.hidden)

    def params(self, recurrent_bias: bool) -> list[torch.Tensor]:
        """torch's flat parameter list: per direction ``w_ih, w_hh, b_ih, b_hh``."""
        return _flat_params(
            self.weights, self.recurrent, self.biases[0], self.biases[1] if recurrent_bias else None
        )

    def output(self, steps: torch.Tensor, last: bool = False) -> DLArray:
        """``(T, B, directions*H)`` as a dlarray of the output format; ``last``: only the last
        time step, without ``T`` (MATLAB's ``OutputMode="last"``)."""
        return _output(steps, self.plan, last)

    def final(self, state: torch.Tensor) -> torch.Tensor:
        """A final ``(directions, B, H)`` state as MATLAB's ``directions*H × B`` state."""
        return _final(state, self.state_gradients)

    def looped(
        self, step: Callable[..., tuple[torch.Tensor, ...]], recurrent_bias: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Run ``step`` over time per direction (the backward one on the reversed sequence):
        the outputs ``(T, B, directions*H)`` and the final states, each ``(directions, B, H)``."""
        outputs, finals = [], []
        for direction in range(self.directions):
            x = self.x if direction == 0 else self.x.flip(0)
            projected = F.linear(x, self.weights[direction], self.biases[0][direction])
            extra = self.biases[1][direction] if recurrent_bias else None
            carried = tuple(state[direction] for state in self.states)
            sequence = []
            for inputs in projected.unbind(0):
                carried = step(inputs, carried, self.recurrent[direction], extra)
                sequence.append(carried[0])
            stacked = torch.stack(sequence)
            outputs.append(stacked if direction == 0 else stacked.flip(0))
            finals.append(carried)
        states = [torch.stack([final[index] for final in finals]) for index in range(len(self.states))]
        return torch.cat(outputs, dim=-1), states


def _flat_params(
    weights: tuple[torch.Tensor, ...],
    recurrent: tuple[torch.Tensor, ...],
    input_biases: tuple[torch.Tensor, ...],
    recurrent_biases: tuple[torch.Tensor, ...] | None,
) -> list[torch.Tensor]:
    """torch's flat parameter list from per-direction parts: per direction ``w_ih, w_hh, b_ih,
    b_hh`` (``b_hh`` zeros without ``recurrent_biases``: MATLAB's one bias is torch's input bias)."""
    flat: list[torch.Tensor] = []
    for direction, input_bias in enumerate(input_biases):
        rec = torch.zeros_like(input_bias) if recurrent_biases is None else recurrent_biases[direction]
        flat += [weights[direction], recurrent[direction], input_bias, rec]
    return flat


def _output(steps: torch.Tensor, plan: _Steps, last: bool) -> DLArray:
    """``(T, B, directions*H)`` as a dlarray of the output format; ``last``: only the last time
    step, without ``T`` (MATLAB's ``OutputMode="last"``)."""
    if last and plan.time:
        # the last step taken from the contiguous (T, B, H) result, not from the H × B × T
        # view: its gradient is then a contiguous (T, B, H) tensor, which the fused kernel's
        # backward takes as it is (from the view it copied the whole sequence's gradient)
        final = steps[-1]
        return DLArray._wrap(final.t() if plan.batch else final[0], plan.output_format[:-1])
    return DLArray._wrap(_from_steps(steps, plan), plan.output_format)


def _final(state: torch.Tensor, gradients: bool) -> torch.Tensor:
    """A final ``(directions, B, H)`` state as MATLAB's ``directions*H × B`` state; detached
    unless its ``gradients`` are wanted (a state output)."""
    return _unstack(state if gradients else state.detach())


def _split(data: torch.Tensor, parts: int) -> tuple[torch.Tensor, ...]:
    """``data.chunk(parts)``; one part is ``data`` itself."""
    return (data,) if parts == 1 else data.chunk(parts)


def _unstack(state: torch.Tensor) -> torch.Tensor:
    """``(directions, B, H)`` as MATLAB's ``directions*H × B`` state."""
    return state.transpose(1, 2).reshape(-1, state.shape[1])


def _lstm_step(state_fn: Activation, gate_fn: Activation) -> Callable[..., tuple[torch.Tensor, ...]]:
    def step(
        inputs: torch.Tensor, carried: tuple[torch.Tensor, ...], R: torch.Tensor, _: Any
    ) -> tuple[torch.Tensor, ...]:
        h, c = carried
        i, f, g, o = torch.addmm(inputs, h, R.t()).chunk(LSTM_GATES, dim=-1)
        c = gate_fn(f) * c + gate_fn(i) * state_fn(g)
        return gate_fn(o) * state_fn(c), c

    return step


def _gru_step(
    mode: str, state_fn: Activation, gate_fn: Activation
) -> Callable[..., tuple[torch.Tensor, ...]]:
    def step(
        inputs: torch.Tensor, carried: tuple[torch.Tensor, ...], R: torch.Tensor, extra: torch.Tensor | None
    ) -> tuple[torch.Tensor, ...]:
        (h,) = carried
        hidden = h.shape[-1]
        gate_inputs = torch.addmm(inputs[..., : 2 * hidden], h, R[: 2 * hidden].t())
        if extra is not None:
            gate_inputs = gate_inputs + extra[: 2 * hidden]
        r, z = gate_fn(gate_inputs).chunk(2, dim=-1)
        candidate_rows = R[2 * hidden :]
        if mode == "before-multiplication":
            candidate = torch.addmm(inputs[..., 2 * hidden :], r * h, candidate_rows.t())
        else:
            recurrent = h @ candidate_rows.t()
            if extra is not None:
                recurrent = recurrent + extra[2 * hidden :]
            candidate = inputs[..., 2 * hidden :] + r * recurrent
        return ((1 - z) * state_fn(candidate) + z * h,)

    return step


def run_lstm(
    inputs: RecurrentInputs, *, directions: int = 1, last: bool = False
) -> tuple[DLArray, torch.Tensor, torch.Tensor]:
    """The LSTM (``directions`` 2: BiLSTM): output (``last``: its last time step only), final
    hidden and cell state as ``directions*H × B`` tensors."""
    run = _Recurrence(inputs, gates=LSTM_GATES, directions=directions)
    state_activation, gate_activation = inputs.state_activation, inputs.gate_activation
    if state_activation == "tanh" and gate_activation == "sigmoid":
        h0, c0 = (state.contiguous() for state in run.states)
        steps, h, c = _fused_lstm(run.x, h0, c0, run.params(False))
    else:
        step = _lstm_step(STATE_FUNCTIONS[state_activation], GATE_FUNCTIONS[gate_activation])
        steps, (h, c) = run.looped(step)
    return run.output(steps, last), run.final(h), run.final(c)


def run_gru(
    inputs: RecurrentInputs, *, reset_gate_mode: str = "after-multiplication", last: bool = False
) -> tuple[DLArray, torch.Tensor]:
    """The GRU: output (``last``: its last time step only) and final hidden state as an
    ``H × B`` tensor."""
    recurrent_bias = reset_gate_mode == "recurrent-bias-after-multiplication"
    run = _Recurrence(inputs, gates=GRU_GATES, bias_sets=2 if recurrent_bias else 1)
    state_activation, gate_activation = inputs.state_activation, inputs.gate_activation
    fused = state_activation == "tanh" and gate_activation == "sigmoid"
    if fused and reset_gate_mode != "before-multiplication":
        params = run.params(recurrent_bias)
        steps, h = fused_gru(run.x, run.states[0].contiguous(), params)  # opaque under torch.compile
    else:
        step = _gru_step(reset_gate_mode, STATE_FUNCTIONS[state_activation], GATE_FUNCTIONS[gate_activation])
        steps, (h,) = run.looped(step, recurrent_bias)
    return run.output(steps, last), run.final(h)


def _fused_lstm(
    x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor, params: list[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``torch.lstm`` with torch's flat parameters of one direction (4 tensors) or two (8)."""
    steps, h, c = torch.lstm(x, (h0, c0), params, True, 1, 0.0, True, len(params) == 8, False)
    return steps, h, c


# -- the recurrent layers' own path ---------------------------------------------------------------
# A layer calls its operation with its own parameters: tensors whose shapes its learnables'
# assignment checks (rows × InputSize, rows × NumHiddenUnits, rows × 1), its input's features
# checked against InputSize (the layer's _fit_input), and its state buffers. Where those are all
# of the input's dtype and the layer's options are the fused kernels' (the layer decides that),
# the functions below lay them out for the kernel without the general path's checks and
# conversions (about 20 µs a call, measured: docs/performance.md, "The LSTM row"); anything else
# (mixed dtypes, a state of another shape, a "U" format) gets None back and runs the general
# path, whose errors name the problem.


def _layer_layout(
    X: DLArray, states: tuple[torch.Tensor, ...], tensors: tuple[torch.Tensor, ...], directions: int
) -> tuple[_Steps, torch.Tensor, list[torch.Tensor]] | None:
    """The plan, ``(T, B, features)`` data and ``(directions, B, H)`` states of a layer's call,
    or ``None`` where the general path must run."""
    data = X._data
    dtype = data.dtype
    plan = _steps_plan(X._fmt)
    if plan is None:
        return None
    for tensor in tensors + states:
        if tensor.dtype != dtype:
            return None
    x = _to_steps(data, plan)
    batch = x.shape[1]
    hidden = tensors[1].shape[1]  # the recurrent weights: rows × NumHiddenUnits
    laid = []
    for state in states:
        # the state buffers are assigned unchecked (a call, or the user): the general path
        # checks them and names a column count that does not fit this call's batch
        if state.ndim != 2 or state.shape[0] != directions * hidden or state.shape[1] not in (1, batch):
            return None
        per_direction = state.reshape(directions, hidden, -1).transpose(1, 2)
        if per_direction.shape[1] != batch:
            per_direction = per_direction.expand(directions, batch, hidden)
        laid.append(per_direction.contiguous())  # a stored final state is laid out so already
    return plan, x, laid


def layer_lstm(
    X: DLArray,
    states: tuple[torch.Tensor, torch.Tensor],
    weights: torch.Tensor,
    recurrentWeights: torch.Tensor,
    bias: torch.Tensor,
    *,
    directions: int = 1,
    last: bool = False,
    state_gradients: bool = True,
) -> tuple[DLArray, torch.Tensor, torch.Tensor] | None:
    """:func:`run_lstm` with the default activations, as an LSTM or BiLSTM layer calls it on its
    own tensors (see above): the same values, or ``None`` where the general path must run."""
    laid = _layer_layout(X, states, (weights, recurrentWeights, bias), directions)
    if laid is None:
        return None
    plan, x, (h0, c0) = laid
    parts = (_split(weights, directions), _split(recurrentWeights, directions))
    params = _flat_params(*parts, _split(bias.reshape(-1), directions), None)
    steps, h, c = _fused_lstm(x, h0, c0, params)
    return _output(steps, plan, last), _final(h, state_gradients), _final(c, state_gradients)


def layer_gru(
    X: DLArray,
    states: tuple[torch.Tensor],
    weights: torch.Tensor,
    recurrentWeights: torch.Tensor,
    bias: torch.Tensor,
    *,
    reset_gate_mode: str = "after-multiplication",
    last: bool = False,
    state_gradients: bool = True,
) -> tuple[DLArray, torch.Tensor] | None:
    """:func:`run_gru` with the default activations, as a GRU layer calls it on its own tensors
    (see above): the same values, or ``None`` where the general path must run (also the
    ``"before-multiplication"`` mode, which has no fused kernel)."""
    if reset_gate_mode == "before-multiplication":
        return None
    laid = _layer_layout(X, states, (weights, recurrentWeights, bias), 1)
    if laid is None:
        return None
    plan, x, (h0,) = laid
    flat_bias = bias.reshape(-1)
    if reset_gate_mode == "recurrent-bias-after-multiplication":
        input_bias, recurrent_bias = flat_bias.chunk(2)
        params = _flat_params((weights,), (recurrentWeights,), (input_bias,), (recurrent_bias,))
    else:
        params = _flat_params((weights,), (recurrentWeights,), (flat_bias,), None)
    steps, h = fused_gru(x, h0, params)
    return _output(steps, plan, last), _final(h, state_gradients)


def _state_output(state: torch.Tensor, restore: Callable[[DLArray], DLArray]) -> DLArray:
    """A returned state: ``"CB"`` for formatted input, unformatted (``H × B``) otherwise."""
    return restore(DLArray._wrap(state, "CB"))


# the options both recurrent functions take, with MATLAB's defaults
RECURRENT_OPTIONS = {
    "DataFormat": None,
    "StateActivationFunction": "tanh",
    "GateActivationFunction": "sigmoid",
}


def _activations(options: dict[str, Any]) -> tuple[str, str]:
    """The checked state and gate activation options."""
    return (
        _validate.choice("StateActivationFunction", options["StateActivationFunction"], STATE_ACTIVATIONS),
        _validate.choice("GateActivationFunction", options["GateActivationFunction"], GATE_ACTIVATIONS),
    )


@matlab_function(shared=RECURRENT_OPTIONS)
def lstm(
    X: Any, H0: Any, C0: Any, weights: Any, recurrentWeights: Any, bias: Any, **options: Any
) -> tuple[DLArray, DLArray, DLArray]:
    """MATLAB's ``[Y, hiddenState, cellState] = lstm(X, H0, C0, weights, recurrentWeights, bias)``.

    Long short-term memory over ``T``; per time step, with ``σ`` the gate activation and
    ``tanh`` the state activation, ``[i; f; g; o] = W x + R h + b`` (gates stacked in MATLAB's
    order: input, forget, cell candidate, output), ``c = σ(f)·c + σ(i)·tanh(g)``,
    ``h = σ(o)·tanh(c)``; ``Y`` holds ``h`` of every time step.

    Args:
        X: a formatted dlarray with ``C`` (``"CBT"``, ``"CT"``, ``"CB"``: one time step), or
            unformatted data with ``DataFormat``. ``S`` dimensions are flattened into the
            features as ``fullyconnect`` flattens them.
        H0, C0: initial hidden and cell state, ``NumHiddenUnits × 1`` (used for every
            observation) or ``NumHiddenUnits × NumObservations``.
        weights: ``4*NumHiddenUnits × InputSize``; recurrentWeights: ``4*NumHiddenUnits ×
            NumHiddenUnits``; bias: ``4*NumHiddenUnits`` values.
        DataFormat: the format of unformatted ``X``; the outputs are then unformatted.
        StateActivationFunction: ``"tanh"`` (default) or ``"softsign"`` (``x / (1 + |x|)``).
        GateActivationFunction: ``"sigmoid"`` (default) or ``"hard-sigmoid"`` (``0.2 x + 0.5``
            clipped to [0, 1]).

    Returns:
        ``(Y, hiddenState, cellState)``, always all three (Python has no ``nargout``): ``Y`` in
        ``X``'s format without ``S`` (``"CBT"`` in, ``"CBT"`` out), ``C`` of size
        ``NumHiddenUnits``; the states ``NumHiddenUnits × NumObservations``, format ``"CB"``.
        The default activations run on ``torch.lstm`` (cuDNN on a GPU); the others loop over
        time steps.

    Examples:
        >>> X = dlf.dlarray(torch.randn(10, 32, 64), "CBT")
        >>> H0 = torch.zeros(3, 1)
        >>> Y, h, c = F.lstm(X, H0, H0, torch.randn(12, 10), torch.randn(12, 3), torch.randn(12))
        >>> dlf.dims(Y), tuple(Y.shape), dlf.dims(h), tuple(c.shape)
        ('CBT', (3, 32, 64), 'CB', (3, 32))
    """
    X, restore = formatted_input(X, options["DataFormat"], "lstm")
    states = (("H0", H0), ("C0", C0))
    Y, h, c = run_lstm(
        RecurrentInputs("lstm", X, states, weights, recurrentWeights, bias, *_activations(options))
    )
    return restore(Y), _state_output(h, restore), _state_output(c, restore)


@matlab_function(shared=RECURRENT_OPTIONS)
def gru(
    X: Any,
    H0: Any,
    weights: Any,
    recurrentWeights: Any,
    bias: Any,
    *,
    ResetGateMode: str = "after-multiplication",
    **options: Any,
) -> tuple[DLArray, DLArray]:
    """MATLAB's ``[Y, hiddenState] = gru(X, H0, weights, recurrentWeights, bias)``.

    Gated recurrent unit over ``T``; gates stacked in MATLAB's order reset, update, candidate:
    ``r = σ(W_r x + R_r h + b_r)``, ``z = σ(W_z x + R_z h + b_z)``, and the candidate per
    ``ResetGateMode``:

    - ``"after-multiplication"`` (default): ``tanh(W_h x + b_h + r·(R_h h))``;
    - ``"before-multiplication"``: ``tanh(W_h x + b_h + R_h (r·h))``;
    - ``"recurrent-bias-after-multiplication"``: ``tanh(W_h x + b_Wh + r·(R_h h + b_Rh))``, with
      ``bias`` of ``6*NumHiddenUnits`` values: the input biases of the three gates, then the
      recurrent ones (which the reset and update gates add too);

    then ``h = (1 - z)·candidate + z·h``.

    Args:
        X: a formatted dlarray with ``C`` (``"CBT"``, ...), or unformatted data with ``DataFormat``.
        H0: initial hidden state, ``NumHiddenUnits × 1`` or ``× NumObservations``.
        weights: ``3*NumHiddenUnits × InputSize``; recurrentWeights: ``3*NumHiddenUnits ×
            NumHiddenUnits``; bias: ``3*NumHiddenUnits`` values (``6*`` in the recurrent-bias mode).
        DataFormat, StateActivationFunction, GateActivationFunction: as for :func:`lstm`.
        ResetGateMode: one of the three modes above.

    Returns:
        ``(Y, hiddenState)``: ``Y`` in ``X``'s format without ``S``, ``C`` of size
        ``NumHiddenUnits``; the state ``NumHiddenUnits × NumObservations`` (``"CB"``). The
        after-multiplication modes with the default activations run on ``torch.gru``; the
        others loop over time steps.

    Examples:
        >>> X = dlf.dlarray(torch.randn(10, 32, 64), "CBT")
        >>> Y, h = F.gru(X, torch.zeros(3, 1), torch.randn(9, 10), torch.randn(9, 3), torch.randn(9))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(h.shape)
        ('CBT', (3, 32, 64), (3, 32))
    """
    X, restore = formatted_input(X, options["DataFormat"], "gru")
    mode = _validate.choice("ResetGateMode", ResetGateMode, RESET_GATE_MODES)
    inputs = RecurrentInputs("gru", X, (("H0", H0),), weights, recurrentWeights, bias, *_activations(options))
    Y, h = run_gru(inputs, reset_gate_mode=mode)
    return restore(Y), _state_output(h, restore)
