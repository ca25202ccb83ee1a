"""``OutputFcn``: the functions called with MATLAB's ``info`` struct during training.

Each function is called once before the first iteration (``State`` ``"start"``), after each
iteration (``"iteration"``) and once after training (``"done"``). One that returns true at an
iteration stops training after it, with the stop reason ``"Stopped by OutputFcn"``; what the
functions return at ``"start"`` and ``"done"`` is not used. The fields are trainnet's
(``Epoch``, ``Iteration``, ``TimeElapsed``, ``LearnRate``, ``TrainingLoss``, ``ValidationLoss``,
``Training<Metric>`` and ``Validation<Metric>`` per metric, ``State``) or trainNetwork's
(``Epoch``, ``Iteration``, ``TimeSinceStart``, ``TrainingLoss``, ``ValidationLoss``,
``BaseLearnRate``, ``TrainingAccuracy``, ``TrainingRMSE``, ``ValidationAccuracy``,
``ValidationRMSE``, ``State``); a value not known at that call is ``None`` (MATLAB's ``[]``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from ._metrics import Tracked

__all__ = ["STOPPED", "OutputFcnInfo", "OutputFunctions"]

STOPPED = "Stopped by OutputFcn"


class OutputFcnInfo:
    """MATLAB's ``info`` struct: fields as attributes (``info.Iteration``) and as keys (``info["State"]``)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.__dict__.update(fields)

    def __getitem__(self, name: str) -> Any:
        return self.__dict__[name]

    def keys(self) -> list[str]:
        return list(self.__dict__)

    def __repr__(self) -> str:
        width = max(len(name) for name in self.__dict__)
        shown = [f"  {name:>{width + 2}}: {'[]' if v is None else v}" for name, v in self.__dict__.items()]
        return "\n".join(["  struct with fields:", "", *shown])


class OutputFunctions:
    """Builds the info struct of each call and calls the functions; ``legacy`` picks trainNetwork's fields."""

    def __init__(self, functions: Any, legacy: bool, metrics: Sequence[Tracked]) -> None:
        if functions is None:
            self.functions: list[Callable[[OutputFcnInfo], Any]] = []
        else:
            self.functions = [functions] if callable(functions) else list(functions)
        self.legacy, self.metrics = legacy, list(metrics)

    def __bool__(self) -> bool:
        return bool(self.functions)

    def fields(
        self,
        state: str,
        record: dict[str, Any] | None,
        validation: dict[str, Any] | None,
        elapsed: float,
    ) -> dict[str, Any]:
        record = record or {}
        validation = validation or {}
        if self.legacy:
            fields = {
                "Epoch": record.get("Epoch"),
                "Iteration": record.get("Iteration"),
                "TimeSinceStart": elapsed,
                "TrainingLoss": record.get("TrainingLoss"),
                "ValidationLoss": validation.get("ValidationLoss"),
                "BaseLearnRate": record.get("BaseLearnRate"),
                "TrainingAccuracy": record.get("accuracy"),
                "TrainingRMSE": record.get("rmse"),
                "ValidationAccuracy": validation.get("accuracy"),
                "ValidationRMSE": validation.get("rmse"),
            }
        else:
            fields = {
                "Epoch": record.get("Epoch"),
                "Iteration": record.get("Iteration"),
                "TimeElapsed": datetime.timedelta(seconds=elapsed),
                "LearnRate": record.get("BaseLearnRate"),
                "TrainingLoss": record.get("TrainingLoss"),
                "ValidationLoss": validation.get("ValidationLoss"),
            }
            for metric in self.metrics:
                fields[f"Training{metric.column}"] = record.get(metric.name)
                fields[f"Validation{metric.column}"] = validation.get(metric.name)
        fields["State"] = state
        return fields

    def call(
        self,
        state: str,
        record: dict[str, Any] | None,
        validation: dict[str, Any] | None,
        elapsed: float,
    ) -> bool:
        """Call every function (all of them, even after one asks to stop); whether one asked to."""
        if not self.functions:
            return False
        info = OutputFcnInfo(self.fields(state, record, validation, elapsed))
        answers = [function(info) for function in self.functions]
        return any(bool(answer) for answer in answers)
