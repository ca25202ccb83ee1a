"""MATLAB's ``selfAttentionLayer`` (multi-head scaled dot-product self-attention over T, or the
single S) and ``attentionLayer`` (the same attention between given queries, keys and values, with
no learnables): both thin layers over :func:`dlformat.functional.attention`.

Ports, as MATLAB names them: ``HasPaddingMaskInput`` adds an input ``"mask"`` after the data
inputs (``"in"``; ``"query"``, ``"key"``, ``"value"``) and ``HasScoresOutput`` an output
``"scores"`` after ``"out"``: the attention weights, ``numKeys × numQueries × numHeads ×
numObservations`` labelled ``"UUUU"`` (MATLAB's own attentionLayer source labels them so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import torch

from .. import _validate
from .._dlarray import DLArray, dlarray, require_dimensions, stripdims
from .._errors import DLFormatError
from ..functional import attention, fullyconnect
from ..functional._attention import MASKS, sequence_plan
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, auto_size_property, factor_properties, initializer_property
from .recurrent import _flag

__all__ = ["AttentionLayer", "SelfAttentionLayer", "attentionLayer", "selfAttentionLayer"]

WEIGHTS = ("QueryWeights", "KeyWeights", "ValueWeights", "OutputWeights")
BIASES = ("QueryBias", "KeyBias", "ValueBias", "OutputBias")


def _attention_mask(name: str, value: Any) -> str | torch.Tensor:
    """``"none"``, ``"causal"``, or a logical ``numKeys × numQueries (× numObservations)`` array of
    zeros and ones (stored as a bool tensor; nonzero: the query may attend to that key)."""
    if isinstance(value, str):
        return _validate.choice(name, value, MASKS)
    data = value._data if isinstance(value, DLArray) else value
    try:
        data = torch.as_tensor(data)
    except (TypeError, ValueError, RuntimeError):
        data = None
    if (
        data is None
        or data.ndim not in (2, 3)
        or data.numel() == 0
        or data.is_complex()
        or not bool(((data == 0) | (data == 1)).all())
    ):
        raise DLFormatError(
            f'{name} must be "none", "causal", or a numKeys × numQueries (× numObservations) array of '
            f"zeros and ones; got {_validate.describe(value)}"
        )
    return data.detach().clone() != 0


def _scale(name: str, value: Any) -> str | float:
    if isinstance(value, str):
        return _validate.choice(name, value, ("auto",))
    return _validate.real(name, value)


# declared in both layers' bodies, where each lands in MATLAB's display order
HAS_MASK_INPUT = Property(
    _flag, default=False, read_only=True, group="Attention", doc='An extra input "mask".'
)
HAS_SCORES_OUTPUT = Property(
    _flag, default=False, read_only=True, group="Attention", doc='An extra output "scores".'
)


class _AttentionPorts(Layer):
    """What both attention layers share: their optional ``"mask"`` input and ``"scores"`` output,
    and the call into :func:`attention` that fills them."""

    data_inputs: ClassVar[tuple[str, ...]] = ()
    NumHeads: int
    AttentionMask: Any
    HasPaddingMaskInput: bool
    HasScoresOutput: bool

    def _set_ports(self) -> None:
        self._ports["in"] = (*self.data_inputs, "mask") if self.HasPaddingMaskInput else self.data_inputs
        self._ports["out"] = ("out", "scores") if self.HasScoresOutput else ("out",)

    def _mask_of(self, mask: tuple[Any, ...]) -> Any:
        if len(mask) != int(self.HasPaddingMaskInput):
            raise DLFormatError(
                f"{self._caller()} takes {len(self._ports['in'])} inputs ({', '.join(self._ports['in'])}); "
                f"got {len(self.data_inputs) + len(mask)}"
            )
        return mask[0] if mask else None

    def _attention(
        self, queries: DLArray, keys: DLArray, values: DLArray, mask: Any, dropout: float, scale: Any
    ) -> Any:
        try:
            result = attention(
                queries,
                keys,
                values,
                self.NumHeads,
                Scale=scale,
                PaddingMask=mask,
                AttentionMask=self.AttentionMask,
                DropoutProbability=dropout,
                ReturnWeights=self.HasScoresOutput,
            )
        except DLFormatError as error:
            raise DLFormatError(f"{self._caller()}: {error}") from None
        if not self.HasScoresOutput:
            return result
        Y, scores = result
        return Y, DLArray._wrap(scores._data, "UUUU")


class SelfAttentionLayer(_AttentionPorts):
    """Multi-head self-attention of each observation's sequence, as MATLAB computes it.

    Queries, keys and values are ``QueryWeights * x + QueryBias`` (and likewise) per sequence
    element; :func:`dlformat.functional.attention` splits them into ``NumHeads`` heads
    (consecutive channel blocks), scales the scores by ``1/sqrt(NumKeyChannels / NumHeads)``
    and concatenates the heads, which ``OutputWeights * y + OutputBias`` maps to the output.

    Args:
        NumHeads: number of heads; divides ``NumKeyChannels`` and ``NumValueChannels``.
        NumKeyChannels: channels of queries and keys (all heads together).
        NumValueChannels: ``"auto"`` (= NumKeyChannels) or the channels of the values.
        OutputSize: ``"auto"`` (= the input's channels) or the output channels.
        AttentionMask: ``"none"``, ``"causal"`` (element ``m`` never attends to ``n > m``), or a
            logical ``numKeys × numQueries (× numObservations)`` array: 0 forbids that pair.
        DropoutProbability: dropout on the attention weights during training (default 0).
        HasPaddingMaskInput: a second input ``"mask"`` (default false): the input's format and
            size (its first channel is read), 0 marking padding no element attends to.
        HasScoresOutput: a second output ``"scores"`` (default false): the attention weights,
            ``numKeys × numQueries × NumHeads × numObservations``, format ``"UUUU"``.
        InputSize: ``"auto"`` (from the first input) or the input's channels.
        WeightsInitializer: ``"glorot"`` (default) and BiasInitializer ``"zeros"`` (default).
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor: default 1, for all four
            weights / biases at once; BiasL2Factor: default 0.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Shape:
        - Input: a dlarray with ``C`` and ``T`` (``"CBT"``, ``"CT"``), or ``C`` and one ``S``, or
          ``C`` with neither (``"CB"``, ``"C"``: each observation a sequence of one element, so
          the softmax over its one key is 1 and the output is ``OutputWeights * (ValueWeights * x
          + ValueBias) + OutputBias``; real MATLAB code feeds ``"CB"`` from ``bilstmLayer(...,
          OutputMode="last")``, see docs/networks.md).
        - Output: the same format, ``C`` of size ``OutputSize``.

    QueryWeights, KeyWeights, ValueWeights, OutputWeights and the four biases may be given at
    construction (``InputSize`` then follows ``QueryWeights``).

    Attributes:
        QueryWeights, KeyWeights: ``NumKeyChannels × InputSize``; ValueWeights:
        ``NumValueChannels × InputSize``; OutputWeights: ``OutputSize × NumValueChannels``;
        the biases ``n × 1``. ``None`` until ``InputSize`` is known.

    Examples:
        >>> layer = dlf.selfAttentionLayer(2, 8, AttentionMask="causal")
        >>> Y = layer(dlf.dlarray(torch.randn(6, 3, 5), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (6, 3, 5))
    """

    default_name = "selfattention"
    matlab_type = "Self-Attention"
    lazy_size = "InputSize"
    lazy_size_from = ("QueryWeights", 1)  # MATLAB infers InputSize from NumKeyChannels × InputSize
    lazy_meaning = "channels"

    NumHeads = Property(_validate.positive_integer, positional=True, read_only=True, doc="Number of heads.")
    NumKeyChannels = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Query and key channels."
    )
    NumValueChannels = auto_size_property('"auto" or value channels.')
    OutputSize = auto_size_property('"auto" or output channels.')
    InputSize = auto_size_property('"auto" or input channels.')
    AttentionMask = Property(
        _attention_mask,
        default="none",
        read_only=True,
        group="Attention",
        doc='"none", "causal" or an array.',
    )
    DropoutProbability = Property(
        _validate.probability,
        default=0.0,
        group="Attention",
        doc="Dropout on the attention weights in training.",
    )
    HasPaddingMaskInput = HAS_MASK_INPUT
    HasScoresOutput = HAS_SCORES_OUTPUT
    data_inputs = ("in",)
    QueryWeights = Learnable(initializer="WeightsInitializer")
    KeyWeights = Learnable(initializer="WeightsInitializer")
    ValueWeights = Learnable(initializer="WeightsInitializer")
    OutputWeights = Learnable(initializer="WeightsInitializer")
    QueryBias = Learnable(initializer="BiasInitializer")
    KeyBias = Learnable(initializer="BiasInitializer")
    ValueBias = Learnable(initializer="BiasInitializer")
    OutputBias = Learnable(initializer="BiasInitializer")
    WeightsInitializer = initializer_property("glorot")
    BiasInitializer = initializer_property("zeros")
    WeightLearnRateFactor, WeightL2Factor = factor_properties(WEIGHTS)
    BiasLearnRateFactor, BiasL2Factor = factor_properties(BIASES, l2=0.0)

    def _check_properties(self) -> None:
        self._set_ports()
        if self.NumValueChannels == "auto":
            self._properties["NumValueChannels"] = self.NumKeyChannels
        for name in ("NumKeyChannels", "NumValueChannels"):
            if getattr(self, name) % self.NumHeads:
                raise DLFormatError(
                    f"{name} ({getattr(self, name)}) must be divisible by NumHeads ({self.NumHeads})"
                )

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        columns = self._fixed_size(name)
        output = (
            columns if self.OutputSize == "auto" else int(self.OutputSize)
        )  # MATLAB: as many as the input
        channels = {
            "Query": self.NumKeyChannels,
            "Key": self.NumKeyChannels,
            "Value": self.NumValueChannels,
            "Output": output,
        }
        role = name.removesuffix("Weights").removesuffix("Bias")
        if name.endswith("Bias"):
            return (channels[role], 1)
        return (channels[role], self.NumValueChannels if role == "Output" else columns)

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        rows, columns = self._learnable_shape(name)
        if name.endswith("Bias"):
            return self.BiasInitializer, rows, rows
        return self.WeightsInitializer, columns, rows

    def _ensure_sizes(self, X: Any) -> None:
        super()._ensure_sizes(X)
        if self.OutputSize == "auto":
            self._properties["OutputSize"] = self.InputSize

    def _check_input(self, data: Any) -> DLArray:
        X = require_dimensions(data, "C", self._caller)
        floating_data(X._data, self._caller())
        try:
            sequence_plan(_as_sequence(X._fmt))
        except DLFormatError as error:
            raise DLFormatError(f"{self._caller()}: {error}") from None
        self._fit_input(X)
        return X

    def predict(self, X: DLArray, *mask: Any) -> Any:
        return self._attend(self._check_input(X), self._mask_of(mask), 0.0)

    def forward(self, X: DLArray, *mask: Any) -> Any:  # type: ignore[override]  # MATLAB's forward, see Layer
        return self._attend(self._check_input(X), self._mask_of(mask), self.DropoutProbability)

    def _attend(self, X: DLArray, mask: Any, dropout: float) -> Any:
        # the projections act per sequence element: a sequence along one S is relabelled T for
        # them, and data with neither ("CB") is a sequence of one element, given a singleton T
        as_time = _as_sequence(X._fmt).replace("S", "T") if "T" not in X._fmt else X._fmt
        sequence = X if as_time == X._fmt else dlarray(X._data, as_time)
        query, key, value = (
            fullyconnect(sequence, getattr(self, f"{role}Weights"), getattr(self, f"{role}Bias"))
            for role in ("Query", "Key", "Value")
        )
        attended = self._attention(query, key, value, mask, dropout, "auto")
        attended, scores = attended if self.HasScoresOutput else (attended, None)
        result = fullyconnect(attended, self.OutputWeights, self.OutputBias)
        if as_time != X._fmt:
            data = stripdims(result, as_time)
            if len(as_time) > len(X._fmt):  # the singleton T given to "CB" data (last) goes again
                data = data.squeeze(-1)
            result = DLArray._wrap(data, X._fmt)
        return result if scores is None else (result, scores)


def _as_sequence(fmt: str) -> str:
    """``fmt`` with a time dimension for data that has neither ``T`` nor ``S`` (``"CB"``,
    ``"C"``): each observation is then a sequence of one element (see the class's Shape)."""
    return fmt + "T" if "T" not in fmt and "S" not in fmt and "U" not in fmt else fmt


class AttentionLayer(_AttentionPorts):
    """Multi-head scaled dot-product attention of given queries, keys and values (MATLAB's
    ``attentionLayer``, for cross-attention): :func:`dlformat.functional.attention` as a layer,
    with no learnables.

    Each of ``NumHeads`` heads takes consecutive channel blocks of the queries, keys and values;
    the weights are a softmax over the keys of ``Scale · q·k``; the heads' results are
    concatenated along ``C``.

    Args:
        NumHeads: number of heads; divides the channels of the queries, keys and values.
        Scale: ``"auto"`` (``1/sqrt(D)``, ``D`` the key channels divided by NumHeads) or a number.
        AttentionMask: ``"none"``, ``"causal"`` (query ``m`` never attends to key ``n > m``), or a
            logical ``numKeys × numQueries (× numObservations)`` array: 0 forbids that pair.
        DropoutProbability: dropout on the attention weights during training (default 0).
        HasPaddingMaskInput: a fourth input ``"mask"`` (default false), in the keys' format and
            size (its first channel is read): 0 marks keys that no query attends to.
        HasScoresOutput: a second output ``"scores"`` (default false): the attention weights,
            ``numKeys × numQueries × NumHeads × numObservations``, format ``"UUUU"``.
        Name: the layer name.

    Shape:
        - Inputs ``"query"``, ``"key"``, ``"value"``: dlarrays with ``C`` and ``T``, or ``C`` and
          one ``S``; queries and keys have the same channels, keys and values the same length.
        - Output ``"out"``: the queries' format, ``C`` of the values' size.

    Examples:
        >>> layer = dlf.attentionLayer(2)
        >>> Q = dlf.dlarray(torch.randn(8, 3, 5), "CBT")
        >>> KV = dlf.dlarray(torch.randn(8, 3, 7), "CBT")
        >>> Y = layer(Q, KV, KV)
        >>> dlf.dims(Y), tuple(Y.shape), layer.InputNames
        ('CBT', (8, 3, 5), ('query', 'key', 'value'))
    """

    default_name = "attention"
    matlab_type = "Attention"
    data_inputs = ("query", "key", "value")

    NumHeads = Property(_validate.positive_integer, positional=True, read_only=True, doc="Number of heads.")
    Scale = Property(_scale, default="auto", read_only=True, group="Attention", doc='"auto" or a number.')
    AttentionMask = SelfAttentionLayer.AttentionMask
    DropoutProbability = SelfAttentionLayer.DropoutProbability
    HasPaddingMaskInput = HAS_MASK_INPUT
    HasScoresOutput = HAS_SCORES_OUTPUT

    def _check_properties(self) -> None:
        self._set_ports()

    def predict(self, queries: Any, keys: Any, values: Any, *mask: Any) -> Any:
        return self._attend(queries, keys, values, mask, 0.0)

    def forward(self, queries: Any, keys: Any, values: Any, *mask: Any) -> Any:  # type: ignore[override]
        return self._attend(queries, keys, values, mask, self.DropoutProbability)

    def _attend(self, queries: Any, keys: Any, values: Any, mask: tuple[Any, ...], dropout: float) -> Any:
        padding = self._mask_of(mask)
        for name, X in zip(self.data_inputs, (queries, keys, values), strict=True):
            floating_data(require_dimensions(X, "C", self._caller)._data, f"{self._caller()} {name}")
        return self._attention(queries, keys, values, padding, dropout, self.Scale)


selfAttentionLayer = matlab_constructor(SelfAttentionLayer, "selfAttentionLayer")
attentionLayer = matlab_constructor(AttentionLayer, "attentionLayer")
