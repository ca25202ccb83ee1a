"""MATLAB's ``inputLayer`` (R2023b): data of a custom format, or unformatted data (R2025a), enters
a network.

MathWorks' page (https://www.mathworks.com/help/deeplearning/ref/nnet.cnn.layer.inputlayer.html):
``inputLayer(inputSize, inputFormat)``, ``inputLayer(inputSize)`` for unformatted data;
``inputSize`` is a row vector of positive integers, ``NaN`` for a batch or time dimension of
variable size; ``inputFormat`` a format of the labels S, C, B, T, U (S and U repeat, C, B, T at
most once), ``""`` passing the data on unformatted. The sizes follow the labels in the order
the format writes them (``inputLayer([3 NaN], "CB")``), which need not be the canonical order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .. import _format, _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from ._base import Layer, matlab_constructor
from ._properties import Property

__all__ = ["InputLayer", "inputLayer"]

VARIABLE = "BT"  # the labels whose size may be NaN (the page: variable batch or time size)
NAN = float("nan")  # one object, so that sizes holding NaN compare equal (config round trips)


def _sizes(name: str, value: object) -> tuple[float, ...]:
    """A row vector of positive integers or NaN (kept as ``float("nan")``)."""
    if isinstance(value, DLArray):
        value = value._data
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray, int, float)):
        raise DLFormatError(
            f"{name} must be a row vector of positive integers or NaN; got {_validate.describe(value)}"
        )
    scalar = isinstance(value, (int, float))
    items = [value] if scalar else np.asarray(value, dtype=object).reshape(-1).tolist()
    if not items:
        raise DLFormatError(f"{name} must hold at least one size; got an empty vector")
    sizes: list[float] = []
    for item in items:
        if isinstance(item, (float, np.floating)) and math.isnan(item):
            sizes.append(NAN)
        else:
            sizes.append(_validate.positive_integer(name, item))
    return tuple(sizes)


def _input_format(name: str, value: object) -> str:
    return _format.check_format(_validate.text(name, value))


def _shown(size: float) -> str:
    return "NaN" if isinstance(size, float) and math.isnan(size) else str(int(size))


class InputLayer(Layer):
    """MATLAB's ``inputLayer``: data of the layer's ``InputFormat`` enters the network.

    Args:
        InputSize: one size per label of ``InputFormat``, in that format's order; ``NaN`` for
            a ``B`` or ``T`` dimension whose size varies (MathWorks' page allows NaN for the
            batch and time dimensions).
        InputFormat: the data's format, any labels S, C, B, T, U (``"CBT"``, ``"SCB"``,
            ``"BTC"``, ``"CT"``...); ``""`` (default, MATLAB R2025a's ``inputLayer(inputSize)``)
            passes the data on unformatted.
        Name: the layer name (automatic names ``input``, ``input_1``, ...).

    Shape:
        - Input: a formatted dlarray whose format holds ``InputFormat``'s labels, or data in
          ``InputFormat``'s order (a plain tensor or an unformatted dlarray), labelled with it.
          Every size that is not ``NaN`` must match.
        - Output: the data as a formatted dlarray (canonical label order), or unformatted for
          ``InputFormat=""``. Integer and logical data become the default float dtype.

    Examples:
        >>> layer = dlf.inputLayer([3, float("nan"), 5], "CBT")
        >>> Y = layer(torch.ones(3, 2, 5))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (3, 2, 5))
        >>> Y = dlf.inputLayer([4, 7], "TC")(torch.ones(4, 7))  # T×C data, in the format's order
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CT', (7, 4))
    """

    default_name = "input"
    matlab_type = "Input"
    default_inputs = 0

    InputSize = Property(_sizes, positional=True, read_only=True, doc="Sizes, in InputFormat's order.")
    InputFormat = Property(
        _input_format, default="", positional=True, read_only=True, doc='The data format ("" unformatted).'
    )

    def _check_properties(self) -> None:
        fmt, sizes = self.InputFormat, self.InputSize
        if fmt and len(fmt) != len(sizes):
            raise DLFormatError(
                f'inputLayer: InputSize has {len(sizes)} sizes and InputFormat "{fmt}" {len(fmt)} labels; '
                "give one size per label"
            )
        for index, size in enumerate(sizes):
            label = fmt[index] if fmt else ""
            if math.isnan(size) and (not label or label not in VARIABLE):
                where = f'the "{label}" dimension' if label else "an unformatted input"
                raise DLFormatError(
                    f"inputLayer: InputSize may be NaN only for a batch (B) or time (T) dimension; "
                    f"{where} (size {index + 1}) needs its size"
                )

    @property
    def _canonical_sizes(self) -> tuple[float, ...]:
        """The sizes in the canonical order of the data the layer passes on."""
        fmt, sizes = self.InputFormat, tuple(self.InputSize)
        if not fmt:
            return sizes
        order = sorted(range(len(fmt)), key=lambda index: "SCBTU".index(fmt[index]))
        return tuple(sizes[index] for index in order)

    def example_input(
        self, device: torch.device | str | None = None, dtype: torch.dtype | None = None
    ) -> DLArray:
        """Ones of the layer's sizes, each ``NaN`` size 1 (batch 1, one time step): what
        ``initialize(net)`` and ``analyzeNetwork(net)`` run when given no data."""
        shape = tuple(1 if math.isnan(size) else int(size) for size in self._canonical_sizes)
        data = torch.ones(shape, device=device, dtype=dtype)
        return DLArray._wrap(data, _format.canonical(self.InputFormat)) if self.InputFormat else dlarray(data)

    def predict(self, data: Any) -> DLArray:
        fmt = self.InputFormat
        if isinstance(data, DLArray) and data._fmt:
            if not fmt:
                raise DLFormatError(
                    f'{self._caller()} takes unformatted data (InputFormat ""); got a "{data._fmt}" dlarray. '
                    "Pass stripdims(X), or give the layer an InputFormat"
                )
            if data._fmt != _format.canonical(fmt):
                raise DLFormatError(f'{self._caller()} needs data of format "{fmt}"; got "{data._fmt}"')
            X = data
        elif fmt:
            X = dlarray(data._data if isinstance(data, DLArray) else data, fmt)
        else:
            X = data if isinstance(data, DLArray) else dlarray(data)
        self._check_sizes(X)
        if not X._data.is_floating_point():
            # as MATLAB's other input layers pass integer and logical data on: the default float
            X = DLArray._wrap(X._data.to(torch.get_default_dtype()), X._fmt)
        return X

    def _check_sizes(self, X: DLArray) -> None:
        wanted = self._canonical_sizes
        shape = tuple(X.shape) + (1,) * (len(wanted) - X.ndim)  # MATLAB's trailing singletons
        fits = len(shape) == len(wanted) and all(
            math.isnan(size) or size == got for size, got in zip(wanted, shape, strict=True)
        )
        if not fits:
            expected = "×".join(_shown(size) for size in wanted)
            labels = f' ("{_format.canonical(self.InputFormat)}")' if self.InputFormat else ""
            raise DLFormatError(
                f"{self._caller()} needs data of size {expected}{labels} (NaN: any size); got "
                f"{_validate.matlab_size(tuple(X.shape))}"
            )

    def _display_value(self, name: str) -> str:
        if name == "InputSize":
            return "[" + " ".join(_shown(size) for size in self.InputSize) + "]"
        return super()._display_value(name)


inputLayer = matlab_constructor(InputLayer, "inputLayer")
