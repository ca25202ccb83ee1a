"""MATLAB's ``resize2dLayer`` and ``resize3dLayer``: the spatial dimensions resized by a scale, to a
size, or to the size of a reference input."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional._common import floating_data
from ..functional._resize import GEOMETRIC_MODES, ROUNDING_MODES, resize_spatial
from ._base import Layer, matlab_constructor
from ._properties import Property, choice_property

__all__ = ["Resize2DLayer", "Resize3DLayer", "resize2dLayer", "resize3dLayer"]


def _sizes(name: str, value: object, count: int, check: Any) -> tuple[Any, ...] | None:
    """``None`` (MATLAB's []), or ``count`` values (one value stands for all)."""
    if value is None:
        return None
    values = list(value) if isinstance(value, (list, tuple, np.ndarray, torch.Tensor)) else [value]
    if len(values) == 1:
        values *= count
    if len(values) != count:
        raise DLFormatError(f"{name} must have 1 or {count} elements; got {len(values)}")
    return tuple(check(name, item) for item in values)


def _logical(name: str, value: object) -> bool:
    if isinstance(value, (bool, np.bool_)) or value in (0, 1):
        return bool(value)
    raise DLFormatError(f"{name} must be true or false; got {_validate.describe(value)}")


def _positive_size(name: str, value: object) -> int:
    if isinstance(value, float) and math.isnan(value):
        raise DLFormatError(
            f"{name} with NaN (keep the aspect ratio) is not supported: how MATLAB rounds the other size is "
            "not documented in the sources dlformat follows; give both sizes"
        )
    return _validate.positive_integer(name, value)


class _ResizeLayer(Layer):
    """Resizes the ``S`` dimensions (2 or 3 of them, ``spatial``) of its input."""

    spatial = 2
    # declared here in MATLAB's display order; resize3dLayer redeclares the first three for 3-D
    Scale = Property(
        partial(_sizes, count=2, check=_validate.positive), default=None, read_only=True, doc="[sh sw]."
    )
    OutputSize = Property(
        partial(_sizes, count=2, check=_positive_size), default=None, read_only=True, doc="[h w]."
    )
    EnableReferenceInput = Property(_logical, default=False, read_only=True, doc="Add the input ref.")
    Method = choice_property(("nearest", "bilinear"), "nearest", '"nearest" or "bilinear".')
    GeometricTransformMode = choice_property(GEOMETRIC_MODES, "half-pixel", '"half-pixel" or "asymmetric".')
    NearestRoundingMode = choice_property(ROUNDING_MODES, "round", '"round" or "floor" ("onnx-10" refused).')

    def _check_properties(self) -> None:
        given = [self.Scale is not None, self.OutputSize is not None, self.EnableReferenceInput]
        if sum(given) != 1:
            raise DLFormatError(
                f"{type(self).__name__} needs exactly one of Scale, OutputSize or EnableReferenceInput=true; "
                f"got {sum(given)}"
            )
        if self.EnableReferenceInput:
            self._ports["in"] = ("in", "ref")
        if self.NearestRoundingMode == "onnx-10":
            raise DLFormatError(
                f'{type(self).__name__}: NearestRoundingMode "onnx-10" is not supported (its rounding is not '
                'defined in the sources dlformat follows); use "round" or "floor"'
            )

    def _output_size(self, X: DLArray, ref: DLArray | None) -> tuple[int, ...]:
        if ref is not None:
            ref = require_dimensions(ref, "S", self._caller)
            if ref._fmt.count("S") < self.spatial:
                raise DLFormatError(
                    f'{self._caller()}: the reference input needs {self.spatial} "S" dimensions; got format '
                    f'"{ref._fmt}"'
                )
            return tuple(int(size) for size in ref.shape[: self.spatial])
        if self.OutputSize is not None:
            return tuple(self.OutputSize)
        sizes = tuple(size * scale for size, scale in zip(X.shape, self.Scale, strict=False))
        if any(abs(size - round(size)) > 1e-9 * max(1.0, size) for size in sizes):
            raise DLFormatError(
                f"{self._caller()}: Scale {list(self.Scale)} times the input's spatial size "
                f"{_validate.matlab_size(tuple(X.shape[: self.spatial]))} is not a whole size, and how "
                "MATLAB rounds it is not documented in the sources dlformat follows; give OutputSize instead"
            )
        return tuple(max(1, round(size)) for size in sizes)

    def predict(self, X: Any, ref: Any = None) -> DLArray:
        if self.EnableReferenceInput and ref is None:
            raise DLFormatError(f"{self._caller()} has EnableReferenceInput=true: give it inputs in and ref")
        if not self.EnableReferenceInput and ref is not None:
            raise DLFormatError(f"{self._caller()} takes one input (EnableReferenceInput is false)")
        X = require_dimensions(X, "S", self._caller)
        if X._fmt.count("S") != self.spatial:
            raise DLFormatError(
                f'{self._caller()} resizes data with {self.spatial} "S" dimensions; got format "{X._fmt}"'
            )
        data = floating_data(X._data, self._caller())
        sizes = self._output_size(X, ref)
        resized = resize_spatial(
            data, sizes, self.Method, self.GeometricTransformMode, self.NearestRoundingMode
        )
        return DLArray._wrap(resized, X._fmt)


class Resize2DLayer(_ResizeLayer):
    """MATLAB's ``resize2dLayer``: resizes the two ``S`` dimensions (height, width) of its input.

    Exactly one of ``Scale``, ``OutputSize`` or ``EnableReferenceInput=True`` says the output
    size: ``round(size·Scale)`` (a scale that does not give whole sizes is refused),
    ``OutputSize`` ``[h w]``, or the first two ``S`` sizes of the second input ``ref``. Input
    element ``i`` (from 0) of the output reads the input at ``(i + 0.5)·n/m − 0.5``
    (``GeometricTransformMode="half-pixel"``) or ``i·n/m`` (``"asymmetric"``), for input size
    ``n`` and output size ``m``; ``Method="nearest"`` takes the element at ``round(x)``
    (``NearestRoundingMode="round"``, halves away from zero) or ``floor(x)`` (``"floor"``),
    ``"bilinear"`` interpolates; beyond the border the edge element is used. Channels, batch and
    time are kept.

    Args:
        Scale: ``[sh sw]`` or one number for both.
        OutputSize: ``[h w]``.
        EnableReferenceInput: ``True`` adds the input ``ref`` (inputs ``in``, ``ref``).
        Method: ``"nearest"`` (default) or ``"bilinear"``.
        GeometricTransformMode: ``"half-pixel"`` (default) or ``"asymmetric"``.
        NearestRoundingMode: ``"round"`` (default) or ``"floor"``; ``"onnx-10"`` is refused.
        Name: the layer name.

    Examples:
        >>> layer = dlf.resize2dLayer(Scale=2, Method="bilinear")
        >>> tuple(layer(dlf.dlarray(torch.rand(3, 4, 2, 1), "SSCB")).shape)
        (6, 8, 2, 1)
    """

    default_name = "resize"
    matlab_type = "Resize 2D"


class Resize3DLayer(_ResizeLayer):
    """MATLAB's ``resize3dLayer``: resizes the three ``S`` dimensions of its input, as
    :class:`Resize2DLayer` does two; ``Method`` is ``"nearest"`` or ``"trilinear"``.

    Examples:
        >>> layer = dlf.resize3dLayer(OutputSize=[4, 4, 2])
        >>> tuple(layer(dlf.dlarray(torch.rand(2, 2, 2, 3, 1), "SSSCB")).shape)
        (4, 4, 2, 3, 1)
    """

    default_name = "resize"
    matlab_type = "Resize 3D"
    spatial = 3
    Scale = Property(
        partial(_sizes, count=3, check=_validate.positive), default=None, read_only=True, doc="[sh sw sd]."
    )
    OutputSize = Property(
        partial(_sizes, count=3, check=_positive_size), default=None, read_only=True, doc="[h w d]."
    )
    Method = choice_property(("nearest", "trilinear"), "nearest", '"nearest" or "trilinear".')


resize2dLayer = matlab_constructor(Resize2DLayer, "resize2dLayer")
resize3dLayer = matlab_constructor(Resize3DLayer, "resize3dLayer")
