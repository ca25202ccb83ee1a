"""MATLAB's custom training loop: ``dlfeval``, ``dlgradient``, ``dlupdate``, the solver update
functions, ``minibatchqueue`` and ``trainingProgressMonitor``.

One module per concept: ``_dlfeval`` (evaluation with tracing), ``_dlgradient``, ``_dlupdate``,
``_solvers`` (``adamupdate``, ``sgdmupdate``, ``rmspropupdate``), ``_minibatchqueue``,
``_monitor``; ``_parameters`` takes apart and rebuilds the containers parameters come in
(a network, a Learnables table, dicts, lists, tuples, dlarrays). The loss functions are in
:mod:`dlformat.functional`. See docs/training_loop.md.
"""

from ._dlfeval import dlfeval
from ._dlgradient import dlgradient
from ._dlupdate import dlupdate
from ._minibatchqueue import MiniBatchQueue, minibatchqueue
from ._monitor import (
    TrainingProgressMonitor,
    groupSubPlot,
    recordMetrics,
    trainingProgressMonitor,
    updateInfo,
)
from ._solvers import adamupdate, rmspropupdate, sgdmupdate

__all__ = [
    "MiniBatchQueue",
    "TrainingProgressMonitor",
    "adamupdate",
    "dlfeval",
    "dlgradient",
    "dlupdate",
    "groupSubPlot",
    "minibatchqueue",
    "recordMetrics",
    "rmspropupdate",
    "sgdmupdate",
    "trainingProgressMonitor",
    "updateInfo",
]
