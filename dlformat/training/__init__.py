"""MATLAB's custom training loop: ``dlfeval``, ``dlgradient``, ``dljacobian``, ``dlaccelerate``,
``dlupdate``, the solver update functions, ``minibatchqueue`` and ``trainingProgressMonitor``;
``trainnet`` and its options, schedules and metric objects (``_metrics``); ``testnet``.

One module per concept: ``_dlfeval`` (evaluation with tracing), ``_dlgradient``, ``_dlupdate``,
``_solvers`` (``adamupdate``, ``sgdmupdate``, ``rmspropupdate``), ``_lbfgs`` (``lbfgsupdate``,
``lbfgsState``), ``_dlode45``, ``_minibatchqueue``,
``_monitor``; ``_parameters`` takes apart and rebuilds the containers parameters come in
(a network, a Learnables table, dicts, lists, tuples, dlarrays). The loss functions are in
:mod:`dlformat.functional`. See docs/training_loop.md.
"""

from ._dlaccelerate import AcceleratedFunction, clearCache, dlaccelerate
from ._dlfeval import dlfeval
from ._dlgradient import dlgradient
from ._dljacobian import dldivergence, dljacobian, dllaplacian
from ._dlode45 import dlode45
from ._dlupdate import dlupdate
from ._lbfgs import LBFGSState, lbfgsState, lbfgsupdate
from ._metrics import (
    AccuracyMetric,
    AUCMetric,
    FScoreMetric,
    MAPEMetric,
    Metric,
    PrecisionMetric,
    RecallMetric,
    RMSEMetric,
    RSquaredMetric,
    accuracyMetric,
    aucMetric,
    fScoreMetric,
    mapeMetric,
    precisionMetric,
    recallMetric,
    rmseMetric,
    rSquaredMetric,
)
from ._minibatchqueue import MiniBatchQueue, minibatchqueue
from ._monitor import (
    TrainingProgressMonitor,
    groupSubPlot,
    recordMetrics,
    trainingProgressMonitor,
    updateInfo,
)
from ._options import TrainingOptions, trainingOptions
from ._schedules import LearnRateSchedule, exponentialLearnRate, piecewiseLearnRate
from ._solvers import adamupdate, rmspropupdate, sgdmupdate
from ._testnet import testnet
from ._trainer import LegacyTrainingInfo, TrainingInfo, trainnet, trainNetwork

__all__ = [
    "AUCMetric",
    "AcceleratedFunction",
    "AccuracyMetric",
    "FScoreMetric",
    "LBFGSState",
    "LearnRateSchedule",
    "LegacyTrainingInfo",
    "MAPEMetric",
    "Metric",
    "MiniBatchQueue",
    "PrecisionMetric",
    "RMSEMetric",
    "RSquaredMetric",
    "RecallMetric",
    "TrainingInfo",
    "TrainingOptions",
    "TrainingProgressMonitor",
    "accuracyMetric",
    "adamupdate",
    "aucMetric",
    "clearCache",
    "dlaccelerate",
    "dldivergence",
    "dlfeval",
    "dlgradient",
    "dljacobian",
    "dllaplacian",
    "dlode45",
    "dlupdate",
    "exponentialLearnRate",
    "fScoreMetric",
    "groupSubPlot",
    "lbfgsState",
    "lbfgsupdate",
    "mapeMetric",
    "minibatchqueue",
    "piecewiseLearnRate",
    "precisionMetric",
    "rSquaredMetric",
    "recallMetric",
    "recordMetrics",
    "rmseMetric",
    "rmspropupdate",
    "sgdmupdate",
    "testnet",
    "trainNetwork",
    "trainingOptions",
    "trainingProgressMonitor",
    "trainnet",
    "updateInfo",
]
