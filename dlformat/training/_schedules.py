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
- a list of schedules, run one after the other: each runs for its ``NumSteps`` and counts its
  steps from its own start (MathWorks' polynomialLearnRate page describes this for lists).
- a callable ``f(baseLearnRate, epoch)`` returning the rate of that epoch (1-based).

``warmupLearnRate``, ``polynomialLearnRate``, ``cosineLearnRate`` and ``cyclicalLearnRate`` are
not ported: their formulas are images on MathWorks' pages that could not be read here; naming
them is a clear error.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

from .. import _validate
from .._errors import DLFormatError

__all__ = ["LearnRateSchedule", "exponentialLearnRate", "piecewiseLearnRate"]

_NOT_PORTED = ("warmup", "polynomial", "cosine", "cyclical")


class LearnRateSchedule:
    """Base of the schedule objects: ``FrequencyUnit``, ``NumSteps`` and :meth:`factor`."""

    FrequencyUnit: str
    NumSteps: float = math.inf

    def factor(self, step: int) -> float:
        """The multiplier of the base rate at the schedule's ``step`` (0 first)."""
        raise NotImplementedError

    def _properties(self) -> dict[str, Any]:
        return {}

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
    return _validate.choice(f"{caller}: FrequencyUnit", value, ("epoch", "iteration"))


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
        if value.lower() in _NOT_PORTED:
            raise DLFormatError(
                f'{name} "{value}" is not yet ported (its formula could not be sourced); use "none", '
                '"piecewise", piecewiseLearnRate, exponentialLearnRate or a function'
            )
        return _validate.choice(
            name, value, ("none", "piecewise"), also=", a schedule object, a list, or a function"
        )
    if isinstance(value, LearnRateSchedule):
        return value
    if isinstance(value, (list, tuple)) and value:
        items = [check_schedule(name, item) for item in value]
        if not all(isinstance(item, LearnRateSchedule) for item in items):
            raise DLFormatError(
                f"{name}: a list of schedules holds schedule objects (piecewiseLearnRate, ...)"
            )
        units = {item.FrequencyUnit for item in items}
        if len(units) > 1:
            raise DLFormatError(
                f"{name}: a list mixing FrequencyUnit values is not yet supported; use one unit"
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


class Scheduler:
    """The learning rate of each iteration, from the options' base rate and schedule."""

    def __init__(self, base: float, schedule: Any, drop_factor: float, drop_period: int) -> None:
        self.base = base
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

    def rate(self, iteration: int, epoch: int) -> float:
        """The rate of ``iteration`` (1-based) in ``epoch`` (1-based)."""
        if self.function is not None:
            value = self.function(self.base, epoch)
            return _validate.positive("LearnRateSchedule function's learning rate", value)
        rate = self.base
        step = (epoch if self.schedules and self.schedules[0].FrequencyUnit == "epoch" else iteration) - 1
        for schedule in self.schedules:
            if step < schedule.NumSteps:
                return self.base * schedule.factor(step)
            step -= int(schedule.NumSteps)
        return rate


def _legacy_piecewise(drop_factor: float, drop_period: int) -> LearnRateSchedule:
    schedule = piecewiseLearnRate.__new__(piecewiseLearnRate)
    # LearnRateDropFactor may be 0 or 1 (MATLAB's legacy option allows [0, 1]); the object's check does not
    schedule.DropFactor, schedule.Period, schedule.FrequencyUnit = drop_factor, drop_period, "epoch"
    return schedule
