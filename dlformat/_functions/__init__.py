"""MATLAB's functions on dlarrays (issue 12), one module per family, each with MATLAB's format rule.

``_math`` and ``_indexing`` are pure tensor code below :mod:`dlformat._dlarray` (which uses them
for its operators and ``X[...]``); ``_dims`` reads MATLAB's dimension arguments; ``_elementwise``,
``_reductions``, ``_shape``, ``_creation`` and ``_device`` (GPU and random numbers) hold the
functions ``dlformat`` exports under MATLAB's names; ``_interop`` gives torch and NumPy functions
called on a dlarray their outcome.
This package imports nothing itself, so ``_dlarray`` can import its pure modules. The rules and
their sources are in docs/dlarray_functions.md.
"""
