"""MATLAB's ``selfAttentionLayer``: multi-head scaled dot-product self-attention over T (or the single S)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _validate
from .._dlarray import DLArray, dlarray, require_dimensions, stripdims
from .._errors import DLFormatError
from ..functional import attention, fullyconnect
from ..functional._attention import MASKS, sequence_plan
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, choice_property, factor_properties, initializer_property

__all__ = ["SelfAttentionLayer", "selfAttentionLayer"]

WEIGHTS = ("QueryWeights", "KeyWeights", "ValueWeights", "OutputWeights")
BIASES = ("QueryBias", "KeyBias", "ValueBias", "OutputBias")


class SelfAttentionLayer(Layer):
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
        AttentionMask: ``"none"`` or ``"causal"``: element ``m`` never attends to ``n > m``.
        DropoutProbability: dropout on the attention weights during training (default 0).
        InputSize: ``"auto"`` (from the first input) or the input's channels.
        WeightsInitializer: ``"glorot"`` (default) and BiasInitializer ``"zeros"`` (default).
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor: default 1, for all four
            weights / biases at once; BiasL2Factor: default 0.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Shape:
        - Input: a dlarray with ``C`` and ``T`` (``"CBT"``, ``"CT"``), or ``C`` and one ``S``.
        - Output: the same format, ``C`` of size ``OutputSize``.

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
    lazy_meaning = "channels"

    NumHeads = Property(_validate.positive_integer, positional=True, read_only=True, doc="Number of heads.")
    NumKeyChannels = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Query and key channels."
    )
    NumValueChannels = Property(
        _validate.auto_or_positive, default="auto", read_only=True, doc='"auto" or value channels.'
    )
    OutputSize = Property(
        _validate.auto_or_positive, default="auto", read_only=True, doc='"auto" or output channels.'
    )
    InputSize = Property(
        _validate.auto_or_positive, default="auto", read_only=True, doc='"auto" or input channels.'
    )
    AttentionMask = choice_property(MASKS, "none", '"none" or "causal".', group="Attention")
    DropoutProbability = Property(
        _validate.probability,
        default=0.0,
        group="Attention",
        doc="Dropout on the attention weights in training.",
    )
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

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        # MATLAB infers InputSize from given query weights (NumKeyChannels × InputSize)
        shape = tuple(getattr(given.get("QueryWeights"), "shape", ()))
        return int(shape[1]) if len(shape) == 2 else None

    def _size_of(self, X: DLArray) -> int:
        return X.shape[X._fmt.index("C")]

    def _ensure_sizes(self, X: Any) -> None:
        super()._ensure_sizes(X)
        if self.OutputSize == "auto":
            self._properties["OutputSize"] = self.InputSize

    def _check_input(self, data: Any) -> DLArray:
        X = require_dimensions(data, "C", self._caller)
        floating_data(X._data, self._caller())
        try:
            sequence_plan(X._fmt)
        except DLFormatError as error:
            raise DLFormatError(f"{self._caller()}: {error}") from None
        self._fit_input(X)
        return X

    def predict(self, X: DLArray) -> DLArray:
        return self._attend(self._check_input(X), 0.0)

    def forward(self, X: DLArray) -> DLArray:  # type: ignore[override]  # MATLAB's forward, see Layer
        return self._attend(self._check_input(X), self.DropoutProbability)

    def _attend(self, X: DLArray, dropout: float) -> DLArray:
        # the projections act per sequence element: a sequence along one S is relabelled T for them
        as_time = X._fmt.replace("S", "T") if "T" not in X._fmt else X._fmt
        sequence = X if as_time == X._fmt else dlarray(X._data, as_time)
        query, key, value = (
            fullyconnect(sequence, getattr(self, f"{role}Weights"), getattr(self, f"{role}Bias"))
            for role in ("Query", "Key", "Value")
        )
        attended = attention(
            query, key, value, self.NumHeads, AttentionMask=self.AttentionMask, DropoutProbability=dropout
        )
        result = fullyconnect(attended, self.OutputWeights, self.OutputBias)
        if as_time == X._fmt:
            return result
        return DLArray._wrap(stripdims(result, as_time), X._fmt)


selfAttentionLayer = matlab_constructor(SelfAttentionLayer, "selfAttentionLayer")
