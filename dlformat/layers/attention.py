"""MATLAB's ``selfAttentionLayer``: multi-head scaled dot-product self-attention over T (or the single S)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

import einops
import torch
import torch.nn.functional as F

from .. import _format, _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._tracing import constant_under_compile
from ..functional import _require_dimensions
from . import _initializers
from ._base import FactorProperty, Layer, Property, matlab_constructor
from .elementwise import _probability
from .fully_connected import auto_or_positive

__all__ = ["SelfAttentionLayer", "selfAttentionLayer"]

MASKS = ("none", "causal")
WEIGHTS = ("QueryWeights", "KeyWeights", "ValueWeights", "OutputWeights")
BIASES = ("QueryBias", "KeyBias", "ValueBias", "OutputBias")


@lru_cache(maxsize=256)
def _sequence_plan(fmt: str) -> tuple[str, str]:
    """Patterns from ``fmt`` to (batch, sequence, channels) and back; the sequence is T or the one S."""
    if "U" in fmt or fmt.count("S") > (0 if "T" in fmt else 1) or ("T" not in fmt and "S" not in fmt):
        raise DLFormatError(
            f'selfAttentionLayer attends over "T", or over a single "S" when there is no "T"; it takes '
            f'formats such as "CBT", "CT", "SCB" (with "C"); got "{fmt}"'
        )
    names = _format.axis_names(fmt)
    sequence = "t0" if "T" in fmt else "s0"
    batch = "b0" if "B" in fmt else "1"
    to_rows = f"{' '.join(names)} -> {batch} {sequence} c0"
    back = f"{batch} {sequence} c0 -> {' '.join(names)}"
    return to_rows, back


_plan = constant_under_compile(_sequence_plan)


def _divisible_by_heads(layer: SelfAttentionLayer, name: str, value: int) -> None:
    if value % layer.NumHeads:
        raise DLFormatError(f"{name} ({value}) must be divisible by NumHeads ({layer.NumHeads})")


class SelfAttentionLayer(Layer):
    """Multi-head self-attention of each observation's sequence, as MATLAB computes it.

    Queries, keys and values are ``QueryWeights * x + QueryBias`` (and likewise) per sequence
    element; each of ``NumHeads`` heads takes its share of channels (consecutive blocks);
    scores are ``q·k / sqrt(NumKeyChannels / NumHeads)``, softmax over keys; the heads' results
    are concatenated and mapped by ``OutputWeights * y + OutputBias``.

    Args:
        NumHeads: number of heads; divides ``NumKeyChannels`` and ``NumValueChannels``.
        NumKeyChannels: channels of queries and keys (all heads together).
        NumValueChannels: ``"auto"`` (= NumKeyChannels) or the channels of the values.
        OutputSize: ``"auto"`` (= the input's channels) or the output channels.
        AttentionMask: ``"none"`` or ``"causal"``: element ``m`` never attends to ``n > m``
            (the upper triangle is masked, as in ``scaled_dot_product_attention(is_causal=True)``).
        DropoutProbability: dropout on the attention weights during training (default 0).
        InputSize: ``"auto"`` (from the first input) or the input's channels.
        WeightsInitializer: ``"glorot"`` (default) and BiasInitializer ``"zeros"`` (default);
            names or callables ``f(sz)``.
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor: default 1, for all four
            weights / biases at once; BiasL2Factor: default 0.
        Name: the layer name.
        device, dtype: torch factory arguments for the learnables.

    Shape:
        - Input: a dlarray with ``C`` and ``T`` (``"CBT"``, ``"CT"``), or ``C`` and one ``S``.
        - Output: the same format, ``C`` of size ``OutputSize``.

    Attributes:
        QueryWeights, KeyWeights: ``NumKeyChannels × InputSize``; ValueWeights:
        ``NumValueChannels × InputSize``; OutputWeights: ``OutputSize × NumValueChannels``;
        the biases ``n × 1``. ``None`` until ``InputSize`` is known.
    """

    default_name = "selfattention"
    matlab_type = "Self-Attention"
    learnables = WEIGHTS + BIASES
    lazy_size = "InputSize"
    config_keys = (
        "NumHeads",
        "NumKeyChannels",
        "NumValueChannels",
        "OutputSize",
        "AttentionMask",
        "DropoutProbability",
        "InputSize",
        "WeightsInitializer",
        "BiasInitializer",
        "WeightLearnRateFactor",
        "BiasLearnRateFactor",
        "WeightL2Factor",
        "BiasL2Factor",
        "Name",
    )
    NumHeads = Property(_validate.positive_integer, read_only=True, doc="Number of heads.")
    NumKeyChannels = Property(_validate.positive_integer, read_only=True, doc="Query and key channels.")
    NumValueChannels = Property(auto_or_positive, read_only=True, doc='"auto" or value channels.')
    OutputSize = Property(auto_or_positive, read_only=True, doc='"auto" or output channels.')
    AttentionMask = Property(
        partial(_validate.choice, allowed=MASKS), read_only=True, doc='"none" or "causal".'
    )
    DropoutProbability = Property(_probability, doc="Dropout on the attention weights in training.")
    InputSize = Property(auto_or_positive, read_only=True, doc='"auto" or input channels.')
    WeightsInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    BiasInitializer = Property(_initializers.check, doc="Initializer name or callable f(sz).")
    WeightLearnRateFactor = FactorProperty(WEIGHTS, "LearnRateFactor")
    BiasLearnRateFactor = FactorProperty(BIASES, "LearnRateFactor")
    WeightL2Factor = FactorProperty(WEIGHTS, "L2Factor")
    BiasL2Factor = FactorProperty(BIASES, "L2Factor")

    def __init__(
        self,
        NumHeads: int,
        NumKeyChannels: int,
        *,
        NumValueChannels: int | str = "auto",
        OutputSize: int | str = "auto",
        AttentionMask: str = "none",
        DropoutProbability: float = 0,
        InputSize: int | str = "auto",
        WeightsInitializer: str | Callable[..., Any] = "glorot",
        BiasInitializer: str | Callable[..., Any] = "zeros",
        WeightLearnRateFactor: float = 1,
        BiasLearnRateFactor: float = 1,
        WeightL2Factor: float = 1,
        BiasL2Factor: float = 0,
        Name: str = "",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(Name)
        self._assign(
            NumHeads=NumHeads,
            NumKeyChannels=NumKeyChannels,
            NumValueChannels=NumValueChannels,
            OutputSize=OutputSize,
            AttentionMask=AttentionMask,
            DropoutProbability=DropoutProbability,
            InputSize=InputSize,
            WeightsInitializer=WeightsInitializer,
            BiasInitializer=BiasInitializer,
            WeightLearnRateFactor=WeightLearnRateFactor,
            BiasLearnRateFactor=BiasLearnRateFactor,
            WeightL2Factor=WeightL2Factor,
            BiasL2Factor=BiasL2Factor,
        )
        if self.NumValueChannels == "auto":
            self._properties["NumValueChannels"] = self.NumKeyChannels
        _divisible_by_heads(self, "NumKeyChannels", self.NumKeyChannels)
        _divisible_by_heads(self, "NumValueChannels", int(self.NumValueChannels))
        self._init_learnables({}, device, dtype)

    def _learnable_shape(self, name: str) -> tuple[int, ...]:
        columns = self._fixed_size(name)
        channels = {
            "Query": self.NumKeyChannels,
            "Key": self.NumKeyChannels,
            "Value": int(self.NumValueChannels),
            "Output": int(self.OutputSize),
        }
        role = name.removesuffix("Weights").removesuffix("Bias")
        if name.endswith("Bias"):
            return (channels[role], 1)
        return (channels[role], int(self.NumValueChannels) if role == "Output" else columns)

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        rows, columns = self._learnable_shape(name)
        if name.endswith("Bias"):
            return self.BiasInitializer, rows, rows
        return self.WeightsInitializer, columns, rows

    def _size_of(self, X: DLArray) -> int:
        return X.shape[X._fmt.index("C")]

    def _create_missing(self, generator: torch.Generator | None = None) -> None:
        if self.OutputSize == "auto":  # MATLAB: as many output channels as input channels
            self._properties["OutputSize"] = self.InputSize
        super()._create_missing(generator)

    def forward(self, X: DLArray) -> DLArray:
        X = _require_dimensions(X, "C", self._caller)
        if not self._sizes_known():
            self._setup(X)
        try:
            to_rows, back = _plan(X._fmt)
        except DLFormatError as error:
            raise DLFormatError(f"{self._caller()}: {error}") from None
        rows = einops.rearrange(X._data, to_rows)  # (batch, sequence, channels)
        if rows.shape[-1] != self.InputSize:
            raise DLFormatError(
                f'{self._caller()} has InputSize {self.InputSize}; the "{X._fmt}" input has '
                f"{rows.shape[-1]} channels"
            )
        heads = self.NumHeads
        query, key, value = (
            einops.rearrange(
                F.linear(rows, getattr(self, f"{role}Weights"), getattr(self, f"{role}Bias")[:, 0]),
                "b n (h d) -> b h n d",
                h=heads,
            )
            for role in ("Query", "Key", "Value")
        )
        attended = F.scaled_dot_product_attention(
            query,
            key,
            value,
            dropout_p=self.DropoutProbability if self.training else 0.0,
            is_causal=self.AttentionMask == "causal",
            scale=1 / math.sqrt(self.NumKeyChannels // heads),
        )
        merged = einops.rearrange(attended, "b h n d -> b n (h d)")
        result = F.linear(merged, self.OutputWeights, self.OutputBias[:, 0])
        return DLArray._wrap(einops.rearrange(result, back), X._fmt)

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        return [
            ("", ["Name", "NumHeads", "NumKeyChannels", "NumValueChannels", "OutputSize", "InputSize"]),
            ("", ["AttentionMask", "DropoutProbability"]),
            ("Learnable Parameters", list(self.learnables)),
            ("Parameters and Initialization", ["WeightsInitializer", "BiasInitializer"]),
            (
                "Learning Rate and Regularization",
                ["WeightLearnRateFactor", "BiasLearnRateFactor", "WeightL2Factor", "BiasL2Factor"],
            ),
        ]


selfAttentionLayer = matlab_constructor(SelfAttentionLayer, "selfAttentionLayer")
