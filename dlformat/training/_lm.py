"""``trainingOptions("lm")``'s own options: MATLAB's ``TrainingOptionsLM`` (R2024b).

Source: MathWorks' TrainingOptionsLM page
(https://www.mathworks.com/help/deeplearning/ref/nnet.cnn.trainingoptionslm.html): the
Levenberg–Marquardt solver is a full-batch solver for regression networks with few learnables;
its options, their defaults and their ranges are the page's, in its order. The defaults of
``GradientTolerance`` and ``StepTolerance`` could not be read there (docs/training.md). The
training itself is in :mod:`._lm_training`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _validate
from .._errors import DLFormatError
from ._lbfgs import LBFGS_EXCLUDED

__all__ = ["LM_EXCLUDED", "LM_OPTIONS"]


def _increase(name: str, value: object) -> float:
    number = _validate.real(name, value)
    if not number > 1:
        raise DLFormatError(f"{name} must be a finite number greater than 1; got {_validate.describe(value)}")
    return number


def _decrease(name: str, value: object) -> float:
    number = _validate.real(name, value)
    if not 0 < number < 1:
        raise DLFormatError(f"{name} must be a number in (0, 1); got {_validate.describe(value)}")
    return number


# trainingOptions("lm")'s own options (name -> (default, check)), in MATLAB's display order; every
# number is finite (an infinite MaxDampingFactor would let a loss that never decreases raise the
# damping for ever)
LM_OPTIONS: dict[str, tuple[Any, Callable[[str, Any], Any]]] = {
    "MaxIterations": (1000, _validate.positive_integer),
    "InitialDampingFactor": (0.001, _validate.positive),
    "MaxDampingFactor": (1e10, _validate.positive),
    "DampingIncreaseFactor": (10.0, _increase),
    "DampingDecreaseFactor": (0.1, _decrease),
    "GradientTolerance": (1e-5, _validate.positive),  # default not read on MathWorks' page: L-BFGS's
    "StepTolerance": (1e-5, _validate.positive),  # default not read on MathWorks' page: L-BFGS's
}
# the LM solver takes the whole data set as one batch each iteration, with the step it solves
# for: the mini-batch and learning-rate options are not its own, as for L-BFGS
LM_EXCLUDED = LBFGS_EXCLUDED
