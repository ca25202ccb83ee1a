"""dlformat: MATLAB Deep Learning Toolbox formats and layers on PyTorch.

A MATLAB ``dlarray`` carries dimension labels (``"SSCB"``, ``"CBT"``, ...) and layers act
on those labels; dlformat brings the same semantics, MATLAB's layer names, properties and
errors to ``torch``.
"""

from . import functional, layers, training
from ._batching import collate, padsequences
from ._dlarray import DLArray, dims, dlarray, extractdata, finddim, stripdims
from ._errors import DLFormatError, LayerError
from ._factors import getL2Factor, getLearnRateFactor, param_groups, setL2Factor, setLearnRateFactor
from ._functions import _all as _functions
from ._functions._all import *  # noqa: F403  # MATLAB's functions on dlarrays (docs/dlarray_functions.md)
from ._version import __version__
from .functional import crossentropy, ctc, huber, indexcrossentropy, l1loss, l2loss, mse
from .layers import *  # noqa: F403  # every layer class and MATLAB constructor (layers.__all__)
from .layers.convolution import *  # noqa: F403  # for mypy, which reads only literal __all__ lists:
from .layers.pooling import *  # noqa: F403  # layers.__all__ adds these two modules' lists with +=
from .networks import (
    DAGNetwork,
    DLNetwork,
    LayerGraph,
    SeriesNetwork,
    addLayers,
    analyzeNetwork,
    assembleNetwork,
    classify,
    classifyAndUpdateState,
    connectLayers,
    disconnectLayers,
    dlnetwork,
    forward,
    initialize,
    layerGraph,
    minibatchpredict,
    predict,
    predictAndUpdateState,
    removeLayers,
    replaceLayer,
    resetState,
)
from .training import (
    AcceleratedFunction,
    LBFGSState,
    LearnRateSchedule,
    LegacyTrainingInfo,
    MiniBatchQueue,
    TrainingInfo,
    TrainingOptions,
    TrainingProgressMonitor,
    adamupdate,
    clearCache,
    dlaccelerate,
    dldivergence,
    dlfeval,
    dlgradient,
    dljacobian,
    dllaplacian,
    dlode45,
    dlupdate,
    exponentialLearnRate,
    groupSubPlot,
    lbfgsState,
    lbfgsupdate,
    minibatchqueue,
    piecewiseLearnRate,
    recordMetrics,
    rmspropupdate,
    sgdmupdate,
    trainingOptions,
    trainingProgressMonitor,
    trainnet,
    trainNetwork,
    updateInfo,
)

__all__ = [
    "AcceleratedFunction",
    "DAGNetwork",
    "DLArray",
    "DLFormatError",
    "DLNetwork",
    "LayerError",
    "LayerGraph",
    "LBFGSState",
    "LearnRateSchedule",
    "LegacyTrainingInfo",
    "MiniBatchQueue",
    "SeriesNetwork",
    "TrainingInfo",
    "TrainingOptions",
    "TrainingProgressMonitor",
    "__version__",
    "adamupdate",
    "addLayers",
    "analyzeNetwork",
    "assembleNetwork",
    "classify",
    "classifyAndUpdateState",
    "clearCache",
    "collate",
    "connectLayers",
    "crossentropy",
    "ctc",
    "dims",
    "disconnectLayers",
    "dlaccelerate",
    "dlarray",
    "dldivergence",
    "dlfeval",
    "dlgradient",
    "dljacobian",
    "dllaplacian",
    "dlode45",
    "dlnetwork",
    "dlupdate",
    "extractdata",
    "exponentialLearnRate",
    "finddim",
    "forward",
    "functional",
    "getL2Factor",
    "getLearnRateFactor",
    "groupSubPlot",
    "lbfgsState",
    "lbfgsupdate",
    "huber",
    "indexcrossentropy",
    "initialize",
    "l1loss",
    "l2loss",
    "layerGraph",
    "minibatchpredict",
    "minibatchqueue",
    "mse",
    "padsequences",
    "param_groups",
    "piecewiseLearnRate",
    "predict",
    "predictAndUpdateState",
    "recordMetrics",
    "removeLayers",
    "replaceLayer",
    "resetState",
    "rmspropupdate",
    "setL2Factor",
    "setLearnRateFactor",
    "sgdmupdate",
    "stripdims",
    "trainNetwork",
    "trainingOptions",
    "trainingProgressMonitor",
    "training",
    "trainnet",
    "updateInfo",
    *layers.__all__,
    *_functions.__all__,
]


def __getattr__(name: str) -> object:
    # A MATLAB user's first try of a name dlformat lacks should say so, not suggest a
    # near-miss ("Did you mean 'FeatureInputLayer'?"): Python fills in name/obj for errors from a
    # module __getattr__ and suggests from them, unless obj is given (None) here.
    if name.startswith("__"):
        raise AttributeError(f"module 'dlformat' has no attribute '{name}'")
    raise AttributeError(
        f"dlformat has no '{name}': if it is a MATLAB function or layer, dlformat does not port it yet. "
        "The ported MATLAB names are listed in docs/matlab_names.md (and in dlformat.__all__)",
        obj=None,
    )
