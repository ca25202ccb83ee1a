"""Training options that MATLAB saved: a ``TrainingOptionsSGDM`` (``ADAM``, ``RMSProp``, ``LBFGS``,
``LM``) object read from a ``.mat`` file, as dlformat's :class:`TrainingOptions`.

MATLAB users keep the ``options`` of a training run in the workspace they save beside the network
(``save net.mat net layers options``). ``dlformat.io.loadmat`` reads such an object as a
``MatlabObject``; :func:`saved_options` turns it into the options ``trainNetwork`` and ``trainnet``
take, with the solver its class names. The options object's ``saveobj`` saves the values it holds
as one struct (the object's ``any`` property); its other properties are its class's defaults, as
the file stores them. Values that have no Python form here are errors naming the option (a
datastore as ``ValidationData``, a function handle as ``OutputFcn``, a schedule object); give a
Python value for them by name, which replaces the saved one.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np

from .. import _validate
from .._errors import DLFormatError
from ..io._mcos import FunctionHandle, MatlabObject
from ._options import SOLVERS, TrainingOptions

__all__ = ["is_saved_options", "saved_options"]

_PREFIX = "nnet.cnn.TrainingOptions"
_NOT_OPTIONS = ("Version",)  # saveobj's own bookkeeping
_ABSENT = object()  # MATLAB's [] for an option: its default


def is_saved_options(value: object) -> TypeGuard[MatlabObject]:
    """Whether ``value`` is a MATLAB training options object as ``loadmat`` reads it."""
    return isinstance(value, MatlabObject) and value.classname.startswith(_PREFIX)


def saved_options(saved: MatlabObject, overrides: dict[str, Any]) -> TrainingOptions:
    """:class:`TrainingOptions` with the saved object's solver and values, ``overrides`` (by
    MATLAB's option names, any case) replacing saved ones."""
    solver = saved.classname.removeprefix(_PREFIX).lower()
    if solver not in SOLVERS:
        raise DLFormatError(
            f"trainingOptions: a saved '{saved.classname}' has no solver dlformat knows; the solvers are: "
            + ", ".join(SOLVERS)
        )
    held = saved.properties.get("any")
    values = held if isinstance(held, dict) else saved.properties
    replaced = {name.lower() for name in overrides}
    if "preprocessingenvironment" in {name.lower() for name in values}:
        replaced.add("dispatchinbackground")  # the legacy name MATLAB keeps beside it
    options: dict[str, Any] = {}
    for name, value in values.items():
        if name in _NOT_OPTIONS or name == "any" or name.lower() in replaced:
            continue
        converted = _converted(name, value)
        if converted is not _ABSENT:
            options[name] = converted
    return TrainingOptions(solver, **options, **overrides)


def _converted(name: str, value: Any) -> Any:
    """A saved option's value in the form trainingOptions takes; ``_ABSENT`` for MATLAB's ``[]``."""
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        if value.size == 0:
            return _ABSENT
        items = value.ravel().tolist()
        return items[0] if value.size == 1 else items
    if (
        isinstance(value, np.ndarray)
        and value.dtype.kind in "OUT"
        and all(isinstance(item, str) for item in value.ravel())
    ):
        return [str(item) for item in value.ravel()]  # a cell array or string array of names
    if isinstance(value, FunctionHandle):
        kind = f"the MATLAB function handle {value.text}"
    elif isinstance(value, MatlabObject):
        kind = f"a MATLAB object of class {value.classname}"
    else:
        kind = _validate.describe(value)
    raise DLFormatError(
        f"trainingOptions: the saved option {name} is {kind}, which has no Python form here; give it "
        f"by name, e.g. dlf.trainingOptions(options, {name}=...), to replace it"
    )
