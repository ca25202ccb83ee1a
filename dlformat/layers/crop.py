"""MATLAB's ``crop2dLayer``: crop the first input to the height and width of a reference input."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import _validate
from .._dlarray import DLArray, require_dimensions
from .._errors import DLFormatError
from ..functional._common import floating_data
from ._base import Layer, matlab_constructor
from ._properties import Property

__all__ = ["Crop2DLayer", "crop2dLayer"]

MODES = ("centercrop", "custom")


def _location(name: str, value: object) -> tuple[int, int]:
    """``[x y]``: the 1-based column and row of the window's upper-left corner."""
    if isinstance(value, (list, tuple, np.ndarray, torch.Tensor)) and len(value) == 2:
        x, y = (_validate.positive_integer(name, item) for item in value)
        return (x, y)
    raise DLFormatError(
        f'{name} must be "auto" or a 2-element row vector [x y]; got {_validate.describe(value)}'
    )


def _mode_or_location(name: str, value: object) -> str | tuple[int, int]:
    """The constructor's one argument: a mode, or a location (which means mode "custom")."""
    if isinstance(value, str):
        return _validate.choice(name, value, MODES, also=", or a location [x y]")
    return _location(name, value)


def _location_or_auto(name: str, value: object) -> str | tuple[int, int]:
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    return _location(name, value)


class Crop2DLayer(Layer):
    """Crops input ``in`` to the height and width of input ``ref`` (MATLAB's ``crop2dLayer``).

    The first two ``S`` dimensions are cropped; every other dimension of ``in`` is kept, and
    ``ref`` gives only its first two ``S`` sizes. ``"SSCB"`` in gives ``"SSCB"`` out
    (``"SSC"``, ``"SSCBT"``, ``"SSCT"`` likewise).

    Args:
        Mode: ``"centercrop"`` (the window in the centre of ``in``) or ``"custom"``; or, as
            MATLAB's ``crop2dLayer(location)``, a location ``[x y]``, which sets ``Location``
            and ``Mode="custom"``.
        Location: ``"auto"`` (centercrop) or ``[x y]``: the window's upper-left corner at
            column ``x`` and row ``y`` of ``in``, counted from 1.
        Name: the layer name.

    Centering where the margin ``H - h`` is odd: MathWorks' page does not say which side keeps
    the extra row; ``floor((H - h) / 2)`` and ``floor(H / 2) - floor(h / 2)`` disagree when
    ``H`` is even and ``h`` odd, and the layer then refuses with an error (give ``Location``).

    Examples:
        >>> crop = dlf.crop2dLayer("centercrop", Name="crop")
        >>> X = dlf.dlarray(torch.arange(36.0).reshape(6, 6, 1, 1), "SSCB")
        >>> ref = dlf.dlarray(torch.zeros(2, 4, 1, 1), "SSCB")
        >>> crop.InputNames, tuple(crop(X, ref).shape)
        (('in', 'ref'), (2, 4, 1, 1))
    """

    default_name = "crop"
    matlab_type = "Crop 2D"
    Mode = Property(_mode_or_location, positional=True, read_only=True, doc='"centercrop" or "custom".')
    Location = Property(_location_or_auto, default="auto", read_only=True, doc='"auto" or [x y].')

    def _check_properties(self) -> None:
        self._ports["in"] = ("in", "ref")
        if isinstance(self.Mode, tuple):
            self._properties["Location"], self._properties["Mode"] = self.Mode, "custom"
        if (self.Mode == "custom") != (self.Location != "auto"):
            raise DLFormatError(
                f'{type(self).__name__}: Mode "custom" goes with a Location [x y], Mode "centercrop" with '
                f'Location "auto"; got Mode "{self.Mode}" and Location {self.Location!r}'
            )

    def _offsets(self, have: tuple[int, int], want: tuple[int, int]) -> tuple[int, int]:
        """0-based (row, column) of the window's corner."""
        if any(w > h for h, w in zip(have, want, strict=True)):
            raise DLFormatError(
                f"{self._caller()}: the reference's height and width {_validate.matlab_size(want)} exceed "
                f"the input's {_validate.matlab_size(have)}"
            )
        if self.Location != "auto":
            x, y = self.Location
            if y - 1 + want[0] > have[0] or x - 1 + want[1] > have[1]:
                raise DLFormatError(
                    f"{self._caller()}: a {_validate.matlab_size(want)} window at Location [{x} {y}] "
                    f"does not fit in the input's {_validate.matlab_size(have)}"
                )
            return (y - 1, x - 1)
        margins = tuple((h - w) // 2 for h, w in zip(have, want, strict=True))
        if margins != tuple(h // 2 - w // 2 for h, w in zip(have, want, strict=True)):
            raise DLFormatError(
                f"{self._caller()}: centering a {_validate.matlab_size(want)} window in "
                f"{_validate.matlab_size(have)} is ambiguous (an even size minus an odd one) and MATLAB's "
                "choice is not documented; give Location [x y]"
            )
        return (margins[0], margins[1])

    def predict(self, X: Any, ref: Any) -> DLArray:
        X = require_dimensions(X, "SC", self._caller)
        ref = require_dimensions(ref, "S", self._caller)
        for name, array, wrong in (("in", X, X._fmt.count("S") != 2), ("ref", ref, ref._fmt.count("S") < 2)):
            if wrong:  # the reference gives its first two S sizes
                raise DLFormatError(
                    f'{self._caller()} crops 2-D images: input {name} needs two "S" dimensions; got format '
                    f'"{array._fmt}"'
                )
        have, want = (int(X.shape[0]), int(X.shape[1])), (int(ref.shape[0]), int(ref.shape[1]))
        row, column = self._offsets(have, want)
        data = floating_data(X._data, self._caller())
        return DLArray._wrap(data[row : row + want[0], column : column + want[1]], X._fmt)


crop2dLayer = matlab_constructor(Crop2DLayer, "crop2dLayer")
