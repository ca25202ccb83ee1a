"""MATLAB's ``dlaccelerate``: an ``AcceleratedFunction`` that calls a deep learning function.

MATLAB traces the first call for each *input pattern* (the sizes, formats and types of the dlarray
inputs and the values of the other inputs), caches the trace and replays it on later calls with the
same pattern; the results are the same as calling the function (MathWorks, ``dlaccelerate``:
https://www.mathworks.com/help/deeplearning/ref/dlaccelerate.html). torch's eager autograd already
records the graph on every call, so dlformat calls the function itself, every time: results and
gradients are exactly those of the plain function. It keeps MATLAB's cache bookkeeping of input
patterns, so ``CacheSize``, ``HitRate``, ``Occupancy`` and ``clearCache`` behave as in MATLAB code
that inspects them. It does not route the call through ``torch.compile``, whose fused kernels can
round differently; ``docs/training_loop.md`` says why.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import torch

from .. import _validate
from .._display import Table
from .._dlarray import DLArray
from .._errors import DLFormatError

__all__ = ["AcceleratedFunction", "clearCache", "dlaccelerate"]

_CHECK_MODES = ("none", "tolerance")


class _Setting:
    """A settable property checked on assignment: ``Enabled = _Setting(_validate.flag)`` keeps the
    checked value in ``self._Enabled``."""

    def __init__(self, check: Callable[[str, Any], Any]) -> None:
        self.check = check

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else instance.__dict__[f"_{self.name}"]

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[f"_{self.name}"] = self.check(f"AcceleratedFunction {self.name}", value)


def _pattern(value: Any) -> Hashable:
    """The part of an input that selects a cached trace, as MATLAB keys its cache.

    dlarrays and tensors by size, format, type, device and whether they are traced; numbers,
    text, logicals and ``None`` by value; containers item by item; any other object (a network,
    for example) by identity.
    """
    if isinstance(value, DLArray):
        data = value._data
        return ("dlarray", tuple(data.shape), value._fmt, data.dtype, data.device, data.requires_grad)
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, value.device, value.requires_grad)
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value).__name__, value)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_pattern(item) for item in value))
    if isinstance(value, dict):
        return ("dict", tuple((key, _pattern(item)) for key, item in value.items()))
    if isinstance(value, Table):
        return ("table", tuple(value.columns), tuple(tuple(_pattern(c) for c in row) for row in value.rows))
    return ("object", type(value).__qualname__, id(value))


class AcceleratedFunction:
    """MATLAB's ``deep.AcceleratedFunction``; create it with :func:`dlaccelerate`.

    Call it as the function it wraps. Properties, as MATLAB's: ``Function`` (read-only),
    ``Enabled`` (true: calls are counted in the cache; false: calls go straight to the function),
    ``CacheSize`` (the most input patterns kept, default 50), ``HitRate`` and ``Occupancy``
    (percentages, read-only), ``CheckMode`` (``"none"`` or ``"tolerance"``) and
    ``CheckTolerance`` (default 1e-4). Method: ``clearCache``.

    Examples:
        >>> def f(x):
        ...     return x * 2
        >>> accfun = dlf.dlaccelerate(f)
        >>> x = dlf.dlarray(torch.ones(3, 2), "CB")
        >>> y1, y2 = accfun(x), accfun(x)
        >>> accfun.HitRate, accfun.Occupancy
        (50.0, 2.0)
        >>> dlf.dims(y2), dlf.extractdata(y2).tolist()
        ('CB', [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]])
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        if not callable(fun):
            raise DLFormatError(
                f"dlaccelerate needs a function to accelerate (MATLAB's function handle @modelLoss); "
                f"got {_validate.describe(fun)}"
            )
        self._function = fun
        self.Enabled = True
        self._cache_size = 50
        self.CheckMode = "none"
        self.CheckTolerance = 1e-4
        self._patterns: set[Hashable] = set()
        self._calls = 0
        self._hits = 0

    # -- MATLAB's properties --------------------------------------------------------------------
    @property
    def Function(self) -> Callable[..., Any]:
        """The underlying function (read-only, as in MATLAB)."""
        return self._function

    Enabled = _Setting(_validate.flag)
    CheckMode = _Setting(lambda name, value: _validate.choice(name, value, _CHECK_MODES))
    CheckTolerance = _Setting(_validate.positive)

    @property
    def CacheSize(self) -> int:
        return self._cache_size

    @CacheSize.setter
    def CacheSize(self, value: Any) -> None:
        size = _validate.positive_integer("AcceleratedFunction CacheSize", value)
        if size < len(self._patterns):
            raise DLFormatError(
                f"AcceleratedFunction CacheSize {size} is smaller than the {len(self._patterns)} "
                f"input patterns cached; call clearCache(accfun) first"
            )
        self._cache_size = size

    @property
    def HitRate(self) -> float:
        """Percentage of the enabled calls whose input pattern was already cached."""
        return 100.0 * self._hits / self._calls if self._calls else 0.0

    @property
    def Occupancy(self) -> float:
        """Percentage of ``CacheSize`` that the cached input patterns fill."""
        return 100.0 * len(self._patterns) / self._cache_size

    # -- methods ----------------------------------------------------------------------------------
    def clearCache(self) -> None:
        """MATLAB's ``clearCache(accfun)``: forget the cached input patterns and the hit count."""
        self._patterns.clear()
        self._calls = 0
        self._hits = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.Enabled:
            key = (_pattern(args), _pattern(kwargs))
            self._calls += 1
            if key in self._patterns:
                self._hits += 1
            elif len(self._patterns) < self._cache_size:
                self._patterns.add(key)
        # the same call whatever the cache says: "accelerated" results equal the function's, and
        # CheckMode "tolerance" (a comparison against the unaccelerated call) always passes
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        name = getattr(self._function, "__qualname__", repr(self._function))
        return (
            "AcceleratedFunction with properties:\n\n"
            f"          Function: @{name}\n"
            f"           Enabled: {int(self.Enabled)}\n"
            f"         CacheSize: {self._cache_size}\n"
            f"           HitRate: {self.HitRate:g}\n"
            f"         Occupancy: {self.Occupancy:g}\n"
            f"         CheckMode: '{self.CheckMode}'\n"
            f"    CheckTolerance: {self.CheckTolerance:.4e}"
        )


def dlaccelerate(fun: Callable[..., Any]) -> AcceleratedFunction:
    """MATLAB's ``accfun = dlaccelerate(fun)``: an :class:`AcceleratedFunction` calling ``fun``.

    Results and gradients (inside :func:`dlfeval` too) are exactly those of ``fun``; see
    :class:`AcceleratedFunction` for the properties.
    """
    return AcceleratedFunction(fun)


def clearCache(accfun: AcceleratedFunction) -> None:
    """MATLAB's ``clearCache(accfun)``, as a function; also ``accfun.clearCache()``."""
    if not isinstance(accfun, AcceleratedFunction):
        raise DLFormatError(
            f"clearCache needs an AcceleratedFunction (from dlaccelerate); got {_validate.describe(accfun)}"
        )
    accfun.clearCache()
