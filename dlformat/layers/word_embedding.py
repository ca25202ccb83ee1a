"""MATLAB's ``wordEmbeddingLayer``: 1-based word indices to learned vectors."""

from __future__ import annotations

import torch.nn.functional as F

from .. import _validate
from .._dlarray import DLArray
from ..functional._embedding import word_rows
from ..functional._position import _per_element
from ._base import Layer, matlab_constructor
from ._properties import Learnable, Property, choice_property, factor_properties, initializer_property

__all__ = ["WordEmbeddingLayer", "wordEmbeddingLayer"]

OOV_MODES = ("map-to-last", "error")


class WordEmbeddingLayer(Layer):
    """Maps word indices to ``Dimension``-channel vectors: index ``k`` gives ``Weights[:, k-1]``.

    Indices are 1-based, as MATLAB's are. An index that is not an integer in 1 .. NumWords is
    out of vocabulary: ``OOVMode="map-to-last"`` (default) maps it to the last column,
    ``"error"`` raises a :class:`DLFormatError` naming it. See :func:`dlformat.functional.embed`.

    Args:
        Dimension: channels of each embedding vector.
        NumWords: vocabulary size (columns of ``Weights``).
        OOVMode: ``"map-to-last"`` or ``"error"``.
        WeightsInitializer: ``"narrow-normal"`` (default), ``"glorot"``, ``"he"``, ``"zeros"``,
            ``"ones"`` or a callable ``f(sz)``.
        Weights: initial ``Dimension × NumWords`` weights (copied).
        WeightLearnRateFactor, WeightL2Factor: factors ``>= 0``.
        Name: the layer name.
        device, dtype, generator: torch factory arguments for ``Weights``.

    Shape:
        - Input: a formatted dlarray of indices whose ``C`` has size 1 or is absent (``"CBT"``,
          ``"BT"``, ...); any real or integer dtype.
        - Output: the input's format with ``C`` of size ``Dimension``; dtype of ``Weights``.

    Examples:
        >>> layer = dlf.wordEmbeddingLayer(4, 10)
        >>> Y = layer(dlf.dlarray(torch.tensor([[[1.0, 5.0, 10.0]]]), "CBT"))
        >>> dlf.dims(Y), tuple(Y.shape)
        ('CBT', (4, 1, 3))
    """

    default_name = "wordembedding"

    Dimension = Property(
        _validate.positive_integer, positional=True, read_only=True, doc="Channels per word vector."
    )
    NumWords = Property(_validate.positive_integer, positional=True, read_only=True, doc="Vocabulary size.")
    OOVMode = choice_property(OOV_MODES, "map-to-last", '"map-to-last" or "error".')
    Weights = Learnable(initializer="WeightsInitializer", shape=("Dimension", "NumWords"))
    WeightsInitializer = initializer_property("narrow-normal")
    WeightLearnRateFactor, WeightL2Factor = factor_properties("Weights")

    def predict(self, X: DLArray) -> DLArray:
        indices, place = _per_element(X, "word index", self._caller)
        refusal = (
            f'{self._caller()} with OOVMode "error" got word index {{bad}}, '
            "outside the vocabulary 1 .. {n} "
            '(indices are 1-based); use OOVMode "map-to-last" to map such words to the last vector'
        )
        rows = word_rows(indices.detach(), self.NumWords, self.OOVMode == "map-to-last", refusal)
        return place(F.embedding(rows, self.Weights.t()))


wordEmbeddingLayer = matlab_constructor(WordEmbeddingLayer, "wordEmbeddingLayer")
