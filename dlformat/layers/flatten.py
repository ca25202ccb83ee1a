"""MATLAB's ``flattenLayer``: the spatial dimensions folded into the channel dimension."""

from __future__ import annotations

from .._dlarray import DLArray, require_formatted
from ..functional._common import floating_data
from ..functional._dense import flatten_features
from ._base import Layer, matlab_constructor

__all__ = ["FlattenLayer", "flattenLayer"]


class FlattenLayer(Layer):
    """Folds every ``S`` dimension into ``C``; ``B`` and ``T`` are kept.

    ``h × w × c`` per observation becomes ``h·w·c`` channels, in MATLAB's column-major order
    (the first ``S`` fastest, ``C`` slowest): the order in which ``fullyConnectedLayer``
    flattens, so a flatten layer before it changes nothing. ``"SSCB"`` gives ``"CB"``,
    ``"SSCBT"`` gives ``"CBT"``, ``"CB"``, ``"CBT"`` and ``"CU"`` pass unchanged (``U`` is
    kept, as ``B`` and ``T`` are), and unbatched ``"SC"``, ``"SSC"``, ``"SSSC"`` give ``"CU"``
    with a ``U`` of size 1, as the format table of MathWorks' flattenLayer page lists.

    Examples:
        >>> Y = dlf.flattenLayer()(dlf.dlarray(torch.randn(4, 5, 3, 2), "SSCB"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CB', (60, 2))
    """

    default_name = "flatten"

    def predict(self, X: DLArray) -> DLArray:
        X = require_formatted(X, self._caller)
        return flatten_features(DLArray._wrap(floating_data(X._data, self._caller()), X._fmt), self._caller())


flattenLayer = matlab_constructor(FlattenLayer, "flattenLayer")
