"""MATLAB's ``patchEmbeddingLayer`` (vision transformers): splits the image into non-overlapping
patches, maps each patch to ``OutputSize`` channels and flattens the patch grid into one ``S``.

From MATLAB's own source of the layer (R2023b, Computer Vision Toolbox; a public copy, cited in
docs/networks.md): ``dlconv(X, Weights, Bias, Stride=PatchSize)``, then the spatial dimensions
flattened column-major (the first fastest) or row-major (the last fastest), and the output
labelled with the input's labels from its last ``S`` on (``"SSCB"`` → ``"SCB"``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import einops

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional import dlconv
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import (
    Learnable,
    Property,
    auto_size_property,
    choice_property,
    factor_properties,
    initializer_property,
)

__all__ = ["PatchEmbeddingLayer", "patchEmbeddingLayer"]

FLATTEN_MODES = ("column-major", "row-major")
WEIGHTS_INITIALIZERS = ("narrow-normal", "glorot", "he", "orthogonal", "zeros", "ones")
BIAS_INITIALIZERS = ("narrow-normal", "zeros", "ones")


def _patch_size(name: str, value: Any) -> int | tuple[int, ...]:
    """A positive integer (the same for every spatial dimension) or a row of them (one each);
    a one-element row is a scalar, as MATLAB's ``isscalar`` sees it."""
    values = value.tolist() if hasattr(value, "tolist") else value
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    try:
        if not values or any(isinstance(v, (list, tuple)) for v in values):
            raise DLFormatError("")
        sizes = tuple(_validate.positive_integer(name, v) for v in values)
    except DLFormatError:
        raise DLFormatError(
            f"{name} must be a positive integer or a row vector of positive integers; got "
            f"{_validate.describe(value)}"
        ) from None
    return sizes[0] if len(sizes) == 1 else sizes


class PatchEmbeddingLayer(Layer):
    """Maps each ``PatchSize`` patch of pixels to a vector of ``OutputSize`` channels.

    The patches tile the spatial dimensions from the first element without overlap (a remainder
    smaller than a patch is left out, as a stride-``PatchSize`` convolution leaves it); the patch
    grid is flattened into one ``S``: ``"column-major"`` (default) puts the first spatial index
    fastest, ``"row-major"`` the last.

    Args:
        PatchSize: a positive integer (every spatial dimension) or one per spatial dimension.
        OutputSize: output channels.
        SpatialFlattenMode: ``"column-major"`` (default) or ``"row-major"``.
        Weights: ``PatchSize × InputSize × OutputSize`` (fixes ``InputSize``, and a scalar
            ``PatchSize``'s dimensions); Bias: ``OutputSize × 1``.
        InputSize: ``"auto"`` (from the first input) or the input's channels (needs a vector
            ``PatchSize``: a scalar's number of spatial dimensions comes from the first input).
        WeightsInitializer: ``"glorot"`` (default; inputs ``prod(PatchSize)·InputSize``, outputs
            ``prod(PatchSize)·OutputSize``), ``"he"``, ``"orthogonal"``, ``"narrow-normal"``,
            ``"zeros"``, ``"ones"`` or a callable ``f(sz)``; BiasInitializer: ``"zeros"``
            (default), ``"narrow-normal"``, ``"ones"`` or a callable.
        WeightLearnRateFactor, BiasLearnRateFactor, WeightL2Factor, BiasL2Factor: default 1.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for the learnables.

    Shape:
        - Input: one or more ``S``, ``C``, and any ``B``, ``T``, ``U`` (``"SSCB"``).
        - Output: one ``S`` (the patches), ``C`` of size OutputSize, the input's other labels
          (``"SSCB"`` → ``"SCB"``).

    Examples:
        >>> layer = dlf.patchEmbeddingLayer(4, 16)
        >>> Y = layer(dlf.dlarray(torch.randn(8, 12, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape), tuple(layer.Weights.shape)
        ('SCB', (6, 16, 2), (4, 4, 3, 16))
    """

    default_name = "patchembed"
    matlab_type = "Patch Embedding"
    lazy_size = "InputSize"
    lazy_meaning = "channels"

    PatchSize = Property(
        _patch_size, positional=True, read_only=True, doc="Patch size per spatial dimension."
    )
    InputSize = auto_size_property('"auto" or input channels.')
    OutputSize = Property(_validate.positive_integer, positional=True, read_only=True, doc="Output channels.")
    SpatialFlattenMode = choice_property(FLATTEN_MODES, "column-major", '"column-major" or "row-major".')
    Weights = Learnable(initializer="WeightsInitializer")
    Bias = Learnable(initializer="BiasInitializer", shape=("OutputSize", 1))
    WeightsInitializer = initializer_property("glorot", names=WEIGHTS_INITIALIZERS)
    BiasInitializer = initializer_property("zeros", names=BIAS_INITIALIZERS)
    WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")
    BiasLearnRateFactor, BiasL2Factor = factor_properties("Bias")

    def _patches(self) -> tuple[int, ...]:
        if isinstance(self.PatchSize, int):
            raise DLFormatError(
                f"{self._caller()} has a scalar PatchSize ({self.PatchSize}): its number of spatial "
                "dimensions, and so the weights' size, comes from the first input; give PatchSize "
                "as one size per spatial dimension to fix the weights earlier"
            )
        patches: tuple[int, ...] = self.PatchSize
        return patches

    def _learnable_shape(self, name: str) -> tuple[int, ...] | None:
        if name == "Weights":
            return (*self._patches(), self._fixed_size(name), self.OutputSize)
        return super()._learnable_shape(name)

    def _initializer(self, name: str) -> tuple[str | Callable[..., Any], int, int]:
        if name == "Bias":
            return self.BiasInitializer, self.OutputSize, self.OutputSize
        area = math.prod(self._patches())
        return self.WeightsInitializer, area * self._fixed_size(name), area * self.OutputSize

    def _size_from_given(self, given: dict[str, Any]) -> int | None:
        shape = tuple(getattr(given.get("Weights"), "shape", ()))
        if len(shape) < 3:
            return None
        if isinstance(self.PatchSize, int):  # as MATLAB: one size per spatial dimension of the weights
            self._properties["PatchSize"] = (self.PatchSize,) * (len(shape) - 2)
        return int(shape[-2])

    def _sizes_from_input(self, X: Any) -> None:
        if isinstance(self.PatchSize, int):
            self._properties["PatchSize"] = (self.PatchSize,) * X._fmt.count("S")

    def predict(self, X: DLArray) -> DLArray:
        X = require_dimensions(X, "SC", self._caller)
        floating_data(X._data, self._caller())
        self._fit_input(X)
        count = X._fmt.count("S")
        patches = self._patches()
        spatial = tuple(X.shape[:count])  # S comes first in a dlarray's format
        if len(patches) != count or any(n < p for n, p in zip(spatial, patches, strict=True)):
            raise DLFormatError(
                f'{self._caller()} has PatchSize {list(patches)}; the "{X._fmt}" input has spatial size '
                f"{list(spatial)}: it needs {len(patches)} spatial dimensions, each at least its patch size"
            )
        Y = dlconv(X, self.Weights, self.Bias, Stride=patches)
        names = [f"s{i}" for i in range(count)]
        order = names if self.SpatialFlattenMode == "row-major" else names[::-1]
        # torch flattens row-major (the last index fastest); column-major lists the dimensions reversed
        data = einops.rearrange(Y._data, f"{' '.join(names)} ... -> ({' '.join(order)}) ...")
        return DLArray._wrap(data, Y._fmt[count - 1 :])


patchEmbeddingLayer = matlab_constructor(PatchEmbeddingLayer, "patchEmbeddingLayer")
