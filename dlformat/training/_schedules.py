"""MATLAB's learning-rate schedules for ``trainingOptions(LearnRateSchedule=...)``.

A schedule gives the learning rate of each training iteration from the base rate
(``InitialLearnRate``). The forms MATLAB takes, and which are ported:

- ``"none"``: the base rate throughout.
- ``"piecewise"``: MATLAB's legacy schedule, the same as ``piecewiseLearnRate()`` with the
  options' ``LearnRateDropFactor`` and ``LearnRateDropPeriod``.
- :func:`piecewiseLearnRate` (R2024b): ``α₀ · DropFactor^floor(k / Period)``;
  :func:`exponentialLearnRate` (R2024b): ``α₀ · DropFactor^(k / Period)``, ``k`` the schedule's
  step (0 first) in its ``FrequencyUnit`` (MathWorks' pages: piecewiseLearnRate,
  exponentialLearnRate).
- a custom schedule: a subclass of :class:`LearnRateSchedule` (MATLAB's
  ``deep.LearnRateSchedule``) with an ``update`` method (MathWorks' "Define Custom Learning Rate
  Schedule").
- a list of schedules, run one after the other: each runs for its ``NumSteps`` and counts its
  steps from its own start (MathWorks' polynomialLearnRate page describes this for lists).
- a callable ``f(baseLearnRate, epoch)`` returning the rate of that epoch (1-based).

``warmupLearnRate``, ``polynomialLearnRate``, ``cosineLearnRate`` and ``cyclicalLearnRate`` are
not ported: their formulas are images on MathWorks' pages that could not be read here; naming
them is a clear error, as is ``"exponential"`` (exponentialLearnRate's defaults are not known).
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable
from typing import Any

from .. import _validate
from .._errors import DLFormatError

__all__ = ["LearnRateSchedule", "exponentialLearnRate", "piecewiseLearnRate"]

# the names MATLAB's trainingOptions takes that dlformat cannot honour yet, and why
_UNSOURCED_FORMULA = "its formula could not be sourced from MathWorks' documentation"
_NOT_PORTED = {
    "warmup": _UNSOURCED_FORMULA,
    "polynomial": _UNSOURCED_FORMULA,
    "cosine": _UNSOURCED_FORMULA,
    "cyclical": _UNSOURCED_FORMULA,
    "exponential": (
        "exponentialLearnRate's default DropFactor and Period could not be sourced; give "
        "exponentialLearnRate(DropFactor=..., Period=..., FrequencyUnit=...)"
    ),
}
_UNITS = ("epoch", "iteration")


class LearnRateSchedule:
    """MATLAB's ``deep.LearnRateSchedule``: the base of schedule objects, built-in and custom.

    A custom schedule (MathWorks: "Define Custom Learning Rate Schedule") is a subclass that sets
    ``FrequencyUnit`` (``"epoch"`` or ``"iteration"``) and ``NumSteps`` (a positive integer, or
    ``Inf`` for a schedule that never ends) in its constructor and defines
    ``update(initialLearnRate, iteration, epoch)``, returning the updated schedule and the learning
    rate, as MATLAB's ``[schedule,learnRate] = update(schedule,initialLearnRate,iteration,epoch)``
    does. ``initialLearnRate`` is the options' ``InitialLearnRate``; ``iteration`` and ``epoch``
    count (from 1) from the schedule's own start, as a schedule inside a list counts its steps.
    With ``FrequencyUnit="epoch"`` the rate is asked for once per epoch and kept for its
    iterations. Training works on a copy: the schedule in the options is left as it was, as
    MATLAB's value objects are. The built-in schedules define :meth:`factor` instead.

    Examples:
        >>> class timeBasedDecayLearnRate(dlf.LearnRateSchedule):
        ...     def __init__(self, decay):
        ...         self.FrequencyUnit, self.NumSteps, self.Decay = "iteration", float("inf"), decay
        ...     def update(self, initialLearnRate, iteration, epoch):
        ...         return self, initialLearnRate / (1 + self.Decay * (iteration - 1))
        >>> schedule = timeBasedDecayLearnRate(0.5)
        >>> schedule.update(0.1, 3, 1)[1]
        0.05
        >>> print(schedule)
          timeBasedDecayLearnRate with properties:
        <BLANKLINE>
                    Decay: 0.5
            FrequencyUnit: "iteration"
                 NumSteps: Inf
    """

    FrequencyUnit: str
    NumSteps: float = math.inf

    def update(self, initialLearnRate: float, iteration: int, epoch: int) -> tuple[LearnRateSchedule, float]:
        """The updated schedule and the learning rate of ``iteration`` in ``epoch`` (both from 1)."""
        step = (epoch if self.FrequencyUnit == "epoch" else iteration) - 1
        return self, initialLearnRate * self.factor(step)

    def factor(self, step: int) -> float:
        """The multiplier of the base rate at the schedule's ``step`` (0 first)."""
        raise NotImplementedError

    def _properties(self) -> dict[str, Any]:
        # a custom schedule shows its own properties, as MATLAB displays a class's public ones
        shared = ("FrequencyUnit", "NumSteps")
        return {
            key: value for key, value in vars(self).items() if not key.startswith("_") and key not in shared
        }

    def __repr__(self) -> str:
        rows = {**self._properties(), "FrequencyUnit": self.FrequencyUnit, "NumSteps": self.NumSteps}
        width = max(len(name) for name in rows)
        shown = [f"  {name:>{width + 2}}: {_number(value)}" for name, value in rows.items()]
        return "\n".join([f"  {type(self).__name__} with properties:", "", *shown])

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and repr(other) == repr(self)

    __hash__ = None  # type: ignore[assignment]


def _number(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and math.isinf(value):
        return "Inf"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _drop_factor(caller: str, value: object) -> float:
    number = _validate.real(f"{caller}: DropFactor", value)
    if not 0 < number < 1:
        raise DLFormatError(
            f"{caller}: DropFactor must be a number in (0, 1); got {_validate.describe(value)}"
        )
    return number


def _unit(caller: str, value: object) -> str:
    return _validate.choice(f"{caller}: FrequencyUnit", value, _UNITS)


class piecewiseLearnRate(LearnRateSchedule):  # noqa: N801  # MATLAB's class name
    """MATLAB's ``schedule = piecewiseLearnRate(Name=Value)`` (R2024b): multiply the rate by
    ``DropFactor`` every ``Period`` steps: ``α₀ · DropFactor^floor(k / Period)``.

    Defaults ``DropFactor=0.1``, ``Period=10``, ``FrequencyUnit="epoch"`` (MathWorks: the
    object with its defaults equals ``LearnRateSchedule="piecewise"``, whose defaults these are).

    Examples:
        >>> schedule = dlf.piecewiseLearnRate(DropFactor=0.5, Period=2)
        >>> [schedule.factor(k) for k in range(5)]
        [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, *, DropFactor: float = 0.1, Period: int = 10, FrequencyUnit: str = "epoch") -> None:
        self.DropFactor = _drop_factor("piecewiseLearnRate", DropFactor)
        self.Period = _validate.positive_integer("piecewiseLearnRate: Period", Period)
        self.FrequencyUnit = _unit("piecewiseLearnRate", FrequencyUnit)

    def factor(self, step: int) -> float:
        return float(self.DropFactor ** (step // self.Period))

    def _properties(self) -> dict[str, Any]:
        return {"DropFactor": self.DropFactor, "Period": self.Period}


class exponentialLearnRate(LearnRateSchedule):  # noqa: N801  # MATLAB's class name
    """MATLAB's ``schedule = exponentialLearnRate(Name=Value)`` (R2024b): scale the rate by
    ``DropFactor^(1/Period)`` every step, ``α₀ · DropFactor^(k / Period)``.

    MathWorks' page states the formula but its default values could not be read here, so
    ``DropFactor``, ``Period`` and ``FrequencyUnit`` must be given (a clear error otherwise).

    Examples:
        >>> schedule = dlf.exponentialLearnRate(DropFactor=0.25, Period=2, FrequencyUnit="iteration")
        >>> [schedule.factor(k) for k in range(3)]
        [1.0, 0.5, 0.25]
    """

    def __init__(
        self, *, DropFactor: float | None = None, Period: int | None = None, FrequencyUnit: str | None = None
    ) -> None:
        if DropFactor is None or Period is None or FrequencyUnit is None:
            raise DLFormatError(
                "exponentialLearnRate: give DropFactor, Period and FrequencyUnit (MATLAB's defaults are not "
                "yet confirmed from MathWorks' documentation, so dlformat does not guess them)"
            )
        self.DropFactor = _drop_factor("exponentialLearnRate", DropFactor)
        self.Period = _validate.positive_integer("exponentialLearnRate: Period", Period)
        self.FrequencyUnit = _unit("exponentialLearnRate", FrequencyUnit)

    def factor(self, step: int) -> float:
        return float(self.DropFactor ** (step / self.Period))

    def _properties(self) -> dict[str, Any]:
        return {"DropFactor": self.DropFactor, "Period": self.Period}


def check_schedule(name: str, value: object) -> Any:
    """``"none"``, ``"piecewise"``, a schedule object, a list of them, or a callable."""
    if isinstance(value, str):
        reason = _NOT_PORTED.get(value.lower())
        if reason is not None:
            raise DLFormatError(
                f'{name} "{value}" is not yet ported ({reason}); use "none", "piecewise", '
                "piecewiseLearnRate, exponentialLearnRate, a custom schedule or a function"
            )
        return _validate.choice(
            name, value, ("none", "piecewise"), also=", a schedule object, a list, or a function"
        )
    if isinstance(value, LearnRateSchedule):
        return _checked_object(name, value)
    if isinstance(value, (list, tuple)) and value:
        items = [check_schedule(name, item) for item in value]
        if not all(isinstance(item, LearnRateSchedule) for item in items):
            raise DLFormatError(
                f"{name}: a list of schedules holds schedule objects (piecewiseLearnRate, ...)"
            )
        units = [item.FrequencyUnit for item in items]
        if "iteration" in units and "epoch" in units[units.index("iteration") :]:
            # an iteration-counted schedule may end inside an epoch: where MATLAB starts the next
            # epoch-counted one is not documented
            raise DLFormatError(
                f'{name}: a schedule with FrequencyUnit "epoch" after one with "iteration" is not '
                'supported; put the "epoch" schedules first'
            )
        return list(items)
    if callable(value):
        try:
            inspect.signature(value).bind(0.01, 1)
        except TypeError:
            raise DLFormatError(f"{name}: a function schedule takes (baseLearnRate, epoch)") from None
        except ValueError:  # a builtin without a signature: trust it
            pass
        return value
    raise DLFormatError(
        f'{name} must be "none", "piecewise", a schedule object, a list of them, or a function; '
        f"got {_validate.describe(value)}"
    )


def _checked_object(name: str, schedule: LearnRateSchedule) -> LearnRateSchedule:
    """A schedule object whose FrequencyUnit, NumSteps and update method can run (custom ones too)."""
    kind = type(schedule).__name__
    if not hasattr(schedule, "FrequencyUnit"):
        raise DLFormatError(
            f'{name}: {kind} sets no FrequencyUnit; a custom schedule sets it ("epoch" or '
            '"iteration") in its constructor'
        )
    schedule.FrequencyUnit = _unit(f"{name}: {kind}", schedule.FrequencyUnit)
    steps = schedule.NumSteps
    if not (isinstance(steps, float) and steps == math.inf):
        _validate.positive_integer(f"{name}: {kind}'s NumSteps (or Inf)", steps)
    own = type(schedule)
    if own.update is LearnRateSchedule.update and own.factor is LearnRateSchedule.factor:
        raise DLFormatError(
            f"{name}: {kind} defines no update method; a custom schedule defines "
            "update(initialLearnRate, iteration, epoch) returning (schedule, learnRate)"
        )
    return schedule


class Scheduler:
    """The learning rate of each iteration, from the options' base rate and schedule.

    ``rate`` is asked once per iteration, in order: custom schedules may keep state.
    """

    def __init__(
        self, base: float, schedule: Any, drop_factor: float, drop_period: int, per_epoch: int
    ) -> None:
        self.base = base
        self.per_epoch = per_epoch
        self.function: Callable[[float, int], float] | None = None
        self.schedules: list[LearnRateSchedule] = []
        if isinstance(schedule, str):
            if schedule == "piecewise":
                self.schedules = [_legacy_piecewise(drop_factor, drop_period)]
        elif isinstance(schedule, LearnRateSchedule):
            self.schedules = [schedule]
        elif isinstance(schedule, list):
            self.schedules = schedule
        else:
            self.function = schedule
        # training updates copies: the options' schedule objects stay as they were (MATLAB values)
        self.schedules = copy.deepcopy(self.schedules)
        self._held: tuple[int, int, float] | None = None  # an epoch schedule's (index, epoch, rate)

    def rate(self, iteration: int, epoch: int) -> float:
        """The rate of ``iteration`` (1-based) in ``epoch`` (1-based)."""
        if self.function is not None:
            value = self.function(self.base, epoch)
            return _validate.positive("LearnRateSchedule function's learning rate", value)
        first = 1  # the training iteration where the running schedule started
        for index, schedule in enumerate(self.schedules):
            first_epoch = (first - 1) // self.per_epoch + 1
            in_epochs = schedule.FrequencyUnit == "epoch"
            step = epoch - first_epoch if in_epochs else iteration - first
            if step < schedule.NumSteps:
                return self._update(index, iteration - first + 1, epoch - first_epoch + 1, in_epochs)
            # epoch schedules all come first (check_schedule), so an epoch one ends on an epoch's end
            first += int(schedule.NumSteps) * (self.per_epoch if in_epochs else 1)
        return self.base

    def _update(self, index: int, iteration: int, epoch: int, in_epochs: bool) -> float:
        if in_epochs and self._held is not None and self._held[:2] == (index, epoch):
            return self._held[2]
        schedule = self.schedules[index]
        result = schedule.update(self.base, iteration, epoch)
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], LearnRateSchedule)):
            raise DLFormatError(
                f"{type(schedule).__name__}.update must return (schedule, learnRate), as MATLAB's "
                f"[schedule,learnRate] = update(...) does; got {_validate.describe(result)}"
            )
        self.schedules[index] = result[0]
        # 0 is a rate: the legacy "piecewise" with LearnRateDropFactor 0 (MATLAB allows [0, 1]) gives it
        rate = _validate.factor(f"the learning rate from {type(schedule).__name__}.update", result[1])
        if in_epochs:
            self._held = (index, epoch, rate)
        return rate


def _legacy_piecewise(drop_factor: float, drop_period: int) -> LearnRateSchedule:
    schedule = piecewiseLearnRate.__new__(piecewiseLearnRate)
    # LearnRateDropFactor may be 0 or 1 (MATLAB's legacy option allows [0, 1]); the object's check does not
    schedule.DropFactor, schedule.Period, schedule.FrequencyUnit = drop_factor, drop_period, "epoch"
    return schedule
