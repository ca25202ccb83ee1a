"""Ports of other systems' position encodings, each named and parametrised as its source is.

- :mod:`dlformat.compat.neoml`: NeoML's ``CPositionalEmbeddingLayer``.
- :mod:`dlformat.compat.keras`: the ``PositionalEmbedding`` layer of Keras's transformer examples.
- :mod:`dlformat.compat.julia`: PositionalEmbeddings.jl's ``AbsolutePE`` and ``RoPE``.

tensor2tensor's ``get_timing_signal_1d`` is :func:`dlformat.functional.timing_signal_1d`.
"""

from . import julia, keras, neoml

__all__ = ["julia", "keras", "neoml"]
