"""``DLArray``: one torch tensor plus MATLAB dimension labels, kept in canonical order.

The data is always stored permuted into canonical label order (S < C < B < T < U), so
two formatted arrays line up by a plain broadcast once the labels one of them lacks
are inserted as singletons. Every permutation and singleton insertion is an einops
pattern planned once per format (see :mod:`dlformat._format`).
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.utils._pytree as pytree
from einops import rearrange

from . import _format, _tracing
from ._errors import DLFormatError, TensorMethodError
from ._functions import _indexing, _math

__all__ = ["DLArray", "dims", "dlarray", "extractdata", "finddim", "stripdims"]

_check_format = _format.check_format
_labelling_plan = _format.labelling_plan
_droppable_trailing_u = _format.droppable_trailing_u
_drop_trailing_pattern = _format.drop_trailing_pattern
_reorder_plan = _format.reorder_plan
_broadcast_plan = _format.broadcast_plan


def _from_numpy(array: np.ndarray) -> torch.Tensor:
    if array.dtype.kind not in "biufc":
        raise DLFormatError(
            f"dlarray data must be numeric or logical; got a NumPy array of dtype {array.dtype}"
        )
    if array.dtype.kind in "fc" and array.dtype.itemsize > (8 if array.dtype.kind == "f" else 16):
        raise DLFormatError(
            f"dlarray data of NumPy dtype {array.dtype} has no torch counterpart; convert it first, "
            "e.g. array.astype(np.float64)"
        )
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.writeable or any(stride < 0 for stride in array.strides):
        # torch cannot share negatively strided memory, and must never write into read-only memory
        array = array.copy(order="K")
    try:
        return torch.from_numpy(array)
    except (TypeError, ValueError, RuntimeError):
        return torch.from_numpy(np.ascontiguousarray(array))


def _as_tensor(data: object) -> torch.Tensor:
    if isinstance(data, torch.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return _from_numpy(data)
    if isinstance(data, np.generic):
        return _from_numpy(np.asarray(data))
    try:
        tensor = torch.tensor(data)
    except (TypeError, ValueError, RuntimeError) as error:
        raise DLFormatError(
            "dlarray data must be a torch.Tensor, a NumPy array, a number or nested lists of "
            f"numbers; got {type(data).__name__} ({error})"
        ) from None
    if tensor.dtype not in (torch.bool,) and not tensor.is_floating_point() and not tensor.is_complex():
        # numbers written in code are floating, as MATLAB's literals are
        tensor = tensor.to(torch.get_default_dtype())
    return tensor


def _label(tensor: torch.Tensor, fmt: str) -> tuple[torch.Tensor, str]:
    """Apply the format rules 2-4 of docs/formats.md: pad labels with singletons, sort
    canonically, drop trailing U."""
    if not fmt:
        return tensor, ""
    pattern, target = _labelling_plan(fmt, tensor.ndim)
    if pattern is not None:
        tensor = rearrange(tensor, pattern)
    return _without_trailing_u(tensor, target)


def _without_trailing_u(tensor: torch.Tensor, fmt: str) -> tuple[torch.Tensor, str]:
    """Rule 4 of docs/formats.md: singleton trailing ``U`` dimensions after the second are dropped."""
    if len(fmt) > 2 and fmt[-1] == "U":
        drop = _droppable_trailing_u(fmt, tuple(size == 1 for size in tensor.shape))
        if drop:
            tensor = rearrange(tensor, _drop_trailing_pattern(drop))
            fmt = fmt[:-drop]
    return tensor, fmt


def settled(data: torch.Tensor, fmt: str) -> DLArray:
    """A dlarray of data already in canonical order for ``fmt``, with rule 4 applied: what a function
    that keeps the format returns when it may have made a trailing ``U`` a singleton."""
    return DLArray._wrap(*_without_trailing_u(data, fmt))


Operator = Callable[["DLArray", object], "DLArray"]


def _operators(
    op: Callable[[Any, Any], torch.Tensor], in_place: Callable[..., torch.Tensor]
) -> tuple[Operator, ...]:
    """``X op Y``, ``Y op X`` and ``X op= Y`` for a dlarray ``X``."""

    def forward(self: DLArray, other: object) -> DLArray:
        return _elementwise(op, self, other)

    def reflected(self: DLArray, other: object) -> DLArray:
        return _elementwise(op, other, self)

    def update(self: DLArray, other: object) -> DLArray:
        return _in_place(in_place, self, other)

    return forward, reflected, update


def _binary(op: Callable[[Any, Any], torch.Tensor], exact: bool = False) -> tuple[Operator, Operator]:
    """``X op Y`` and ``Y op X`` for the operators with no in-place form here. ``exact``: compare
    in torch's promoted type, not MATLAB's single-wins working type (a comparison computes nothing).
    Anything that is not numeric data is NotImplemented, so ``X == None`` is plain ``False``."""

    def forward(self: DLArray, other: object) -> Any:
        if not _is_operand(other):
            return NotImplemented
        return _elementwise(op, self, other, _keep_types if exact else _single_wins)

    def reflected(self: DLArray, other: object) -> Any:
        if not _is_operand(other):
            return NotImplemented
        return _elementwise(op, other, self, _keep_types if exact else _single_wins)

    return forward, reflected


def _logical(
    function: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> Callable[[Any, Any], torch.Tensor]:
    """A torch logical function that also takes numbers, as MATLAB's ``&`` and ``|`` do."""

    def op(a: Any, b: Any) -> torch.Tensor:
        if not isinstance(a, torch.Tensor):
            a = torch.as_tensor(a, device=b.device)
        if not isinstance(b, torch.Tensor):
            b = torch.as_tensor(b, device=a.device)
        return function(a, b)

    op.__name__ = function.__name__
    return op


logical_and = _logical(torch.logical_and)
logical_or = _logical(torch.logical_or)
logical_xor = _logical(torch.logical_xor)


class DLArray:
    """A torch tensor whose dimensions carry MATLAB labels (``"SSCB"``, ``"CBT"``, ...).

    Create one with :func:`dlarray`. The data is stored in canonical label order, and
    ``shape`` has one entry per label, singletons included.

    Args:
        data: a ``torch.Tensor`` (kept, not copied), a NumPy array of any memory or byte
            order (shared where torch can share it), a number or nested lists of numbers,
            or another ``DLArray`` (relabelled as it is stored).
        fmt: the labels, one per dimension of ``data`` (more labels add trailing
            singleton dimensions). ``None`` or ``""`` gives an unformatted array.

    Attributes:
        shape, dtype, device, ndim, requires_grad, grad: those of the stored tensor
        (``grad`` as a ``DLArray`` of the same format).

    Elementwise ``+ - * /`` between formatted arrays align dimensions by label; plain
    tensors, NumPy arrays and numbers broadcast as in torch against the canonical shape.

    Examples:
        >>> X = dlarray(torch.randn(3, 4, 5), "TCB")
        >>> dims(X), tuple(X.shape)
        ('CBT', (4, 5, 3))
    """

    __slots__ = ("_data", "_fmt")
    _data: torch.Tensor
    _fmt: str

    def __init__(self, data: object, fmt: str | None = None) -> None:
        if isinstance(data, DLArray):
            tensor, fmt = data._data, data._fmt if fmt is None else fmt
        else:
            tensor = _as_tensor(data)
        self._data, self._fmt = _label(tensor, "" if fmt is None else _check_format(fmt))

    @classmethod
    def _wrap(cls, data: torch.Tensor, fmt: str) -> DLArray:
        """Wrap data already in canonical order for ``fmt``, with no checks."""
        array = object.__new__(cls)
        array._data = data
        array._fmt = fmt
        return array

    # -- tensor facts -----------------------------------------------------------------
    @property
    def shape(self) -> torch.Size:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> torch.dtype:
        return self._data.dtype

    @property
    def device(self) -> torch.device:
        return self._data.device

    @property
    def requires_grad(self) -> bool:
        return self._data.requires_grad

    @property
    def grad(self) -> DLArray | None:
        grad = self._data.grad
        return None if grad is None else DLArray._wrap(grad, self._fmt)

    # -- conversions, each keeping the format --------------------------------------------
    def _map(self, function: Callable[[torch.Tensor], torch.Tensor]) -> DLArray:
        return DLArray._wrap(function(self._data), self._fmt)

    def to(self, *args: Any, **kwargs: Any) -> DLArray:
        """``torch.Tensor.to`` on the data: a device, a dtype, or both."""
        return self._map(lambda data: data.to(*args, **kwargs))

    def cpu(self) -> DLArray:
        return self._map(torch.Tensor.cpu)

    def cuda(self, *args: Any, **kwargs: Any) -> DLArray:
        return self._map(lambda data: data.cuda(*args, **kwargs))

    def float(self) -> DLArray:
        return self._map(torch.Tensor.float)

    def double(self) -> DLArray:
        return self._map(torch.Tensor.double)

    def half(self) -> DLArray:
        return self._map(torch.Tensor.half)

    def bfloat16(self) -> DLArray:
        return self._map(torch.Tensor.bfloat16)

    def detach(self) -> DLArray:
        return self._map(torch.Tensor.detach)

    def clone(self) -> DLArray:
        return self._map(torch.Tensor.clone)

    def requires_grad_(self, requires_grad: bool = True) -> DLArray:
        self._data.requires_grad_(requires_grad)
        return self

    # -- arithmetic: label-aligned, MATLAB's precision; in place writes the data, so it needs the
    # result's format and shape (no autograd on leaves that require grad, as in torch).
    # ``X += layer(X)`` is the inference path with no new allocation.
    __add__, __radd__, __iadd__ = _operators(operator.add, torch.Tensor.add_)
    __sub__, __rsub__, __isub__ = _operators(operator.sub, torch.Tensor.sub_)
    __mul__, __rmul__, __imul__ = _operators(operator.mul, torch.Tensor.mul_)
    __truediv__, __rtruediv__, __itruediv__ = _operators(operator.truediv, torch.Tensor.div_)

    def __neg__(self) -> DLArray:
        return self._map(operator.neg)

    # -- more of MATLAB's operators, each label-aligned as + - * / are (docs/dlarray_functions.md) ----
    __pow__, __rpow__ = _binary(operator.pow)  # MATLAB's X.^Y
    __mod__, __rmod__ = _binary(_math.mod)  # MATLAB's mod(X, Y): the sign of the divisor
    __eq__, _ = _binary(operator.eq, exact=True)  # type: ignore[assignment]
    __ne__, _ = _binary(operator.ne, exact=True)  # type: ignore[assignment]
    # Python reflects comparisons itself (2 < X is X > 2): only the forward forms are needed
    __lt__, _ = _binary(operator.lt, exact=True)
    __le__, _ = _binary(operator.le, exact=True)
    __gt__, _ = _binary(operator.gt, exact=True)
    __ge__, _ = _binary(operator.ge, exact=True)
    __and__, __rand__ = _binary(logical_and)  # MATLAB's &: nonzero is true, the result is logical
    __or__, __ror__ = _binary(logical_or)  # MATLAB's |
    del _
    # defining __eq__ would make a dlarray unhashable; it hashes by identity, as a torch.Tensor does
    __hash__ = object.__hash__

    def __invert__(self) -> DLArray:
        """MATLAB's ``~X``: true where ``X`` is zero."""
        return DLArray._wrap(torch.logical_not(self._data), self._fmt)

    def __xor__(self, other: object) -> DLArray:
        raise DLFormatError(
            "^ on a dlarray: in Python ^ is exclusive or, not MATLAB's power. Write X ** 2 for MATLAB's "
            "X.^2, dlformat.xor(A, B) for MATLAB's xor, and dlformat.mtimes for matrix products"
        )

    __rxor__ = __xor__

    def __matmul__(self, other: object) -> DLArray:
        return mtimes(self, other)

    def __rmatmul__(self, other: object) -> DLArray:
        return mtimes(other, self)

    def __pos__(self) -> DLArray:
        return self

    def __abs__(self) -> DLArray:
        return DLArray._wrap(torch.abs(_numeric(self._data)), self._fmt)

    def __round__(self, ndigits: int | None = None) -> DLArray:
        """MATLAB's ``round``: halves away from zero (Python's and torch's round them to even)."""
        return DLArray._wrap(_math.round_half_away(_numeric(self._data), ndigits or 0), self._fmt)

    # -- indexing: MATLAB's rules, positions in the stored (canonical) order ----------------------
    def __getitem__(self, key: object) -> DLArray:
        """``X[...]``: the format is kept and no dimension is dropped (an integer keeps its dimension as
        a singleton, as MATLAB's ``X(:,1,:)`` does); a logical mask of ``X``'s size gives an
        unformatted vector. See docs/dlarray_functions.md#indexing."""
        key, mask_fmt = _index_key(key)
        plan = _indexing.subscripts(tuple(self._data.shape), self._fmt, key, mask_fmt)
        data = _indexing.select(self._data, plan)
        if plan[0] == "mask":
            return DLArray._wrap(data, "")
        return settled(data, self._fmt)

    def __setitem__(self, key: object, value: object) -> None:
        """``X[...] = value``, MATLAB's ``X(...) = value``: the value is aligned by label (a formatted
        value) or broadcast (anything else) and cast to ``X``'s type. ``X`` gets an updated copy of its
        data, as MATLAB's value semantics do: other dlarrays sharing the old tensor do not change, and
        autograd flows through the assignment (also into a leaf that requires grad)."""
        key, mask_fmt = _index_key(key)
        plan = _indexing.subscripts(tuple(self._data.shape), self._fmt, key, mask_fmt)
        self._data = _indexing.assign(self._data, plan, _assigned(self, value))

    # -- Python and NumPy protocols: a defined outcome, never a silent object array -----------------
    def __iter__(self) -> Any:
        raise DLFormatError(
            "a dlarray is not iterable: index it (X[:, i]) or iterate over stripdims(X) (the data in the "
            "stored order)"
        )

    def __bool__(self) -> bool:
        return bool(_one_element(self, "a truth value")._data.item())

    def __float__(self) -> builtins.float:
        return builtins.float(_one_element(self, "float()")._data.item())

    def __int__(self) -> int:
        return int(_one_element(self, "int()")._data.item())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise DLFormatError(
            "NumPy cannot take a dlarray: np.asarray(X) would lose its labels and its stored order. Use "
            "extractdata(X).cpu().numpy() for the data in the stored (canonical) order, or "
            'stripdims(X, "BTC").detach().cpu().numpy() for another order'
        )

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        op = _NUMPY_OPERATORS.get(ufunc)
        if op is not None and method == "__call__" and not kwargs and len(inputs) == 2:
            return _elementwise(op, *inputs)  # an array on the left: array + X, array < X, ...
        raise DLFormatError(
            f"numpy.{ufunc.__name__} cannot take a dlarray. Use dlformat's MATLAB function of that name "
            "where there is one (docs/dlarray_functions.md), or extractdata(X) for the data"
        )

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise DLFormatError(
            f"numpy.{func.__name__} cannot take a dlarray. Use dlformat's MATLAB function of that name where "
            "there is one (docs/dlarray_functions.md), or extractdata(X) for the data"
        )

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        """A torch function called on a dlarray: the ported ones (dlformat._functions._interop) follow
        MATLAB's format rule for their MATLAB counterpart; any other is a DLFormatError."""
        # keyed by name: torch.exp and Tensor.exp share a rule, and dynamo looks a string up reliably
        handler = TORCH_FUNCTIONS.get(getattr(func, "__name__", ""))
        if handler is None:
            raise _unported_torch_function(func)
        return handler(func, args, kwargs or {})

    if not TYPE_CHECKING:  # mypy keeps checking attribute names

        def __getattr__(self, name: str) -> Any:
            if not name.startswith("_") and hasattr(torch.Tensor, name):
                raise TensorMethodError(
                    f"a dlarray has no tensor method .{name}: dlformat ports MATLAB's functions, not torch's "
                    f"methods. Use the MATLAB function (docs/dlarray_functions.md), or "
                    f"stripdims(X).{name}(...) "
                    "on the data in the stored order"
                )
            raise AttributeError(f"'DLArray' object has no attribute '{name}'")

    def _sizes(self) -> str:
        """MATLAB's size display: ``64(C) × 8(B) × 20(T)``, or ``3 × 4`` when unformatted."""
        if self._fmt:
            pairs = zip(self._data.shape, self._fmt, strict=True)
            return " × ".join(f"{size}({label})" for size, label in pairs)
        return " × ".join(str(size) for size in self._data.shape) or "scalar"

    def __repr__(self) -> str:
        sizes = self._sizes()
        details = [str(self._data.dtype).removeprefix("torch."), str(self._data.device)]
        if self._data.requires_grad:
            details.append("requires_grad")
        return f"{sizes} dlarray ({', '.join(details)})"


def _formatted(value: object) -> DLArray | None:
    return value if isinstance(value, DLArray) and value._fmt else None


def working_dtype(*dtypes: torch.dtype) -> torch.dtype:
    """The floating type MATLAB computes in when these types meet.

    MATLAB: combining single and double values gives single ("single wins"). dlformat extends
    the rule to torch's other floating types: float64 yields to any narrower floating type,
    and the narrower ones combine by torch's promotion (float16 with bfloat16 gives float32).
    Integer and logical data take the floating type of the other operands, or the default
    dtype (float32) when there is none.
    """
    return _working_dtype(dtypes, torch.get_default_dtype())


@_tracing.cached_plan()
def _working_dtype(dtypes: tuple[torch.dtype, ...], default: torch.dtype) -> torch.dtype:
    """:func:`working_dtype`, once per combination (it runs on every layer call)."""
    floating = [dtype for dtype in dtypes if dtype.is_floating_point]
    if not floating:
        return default
    narrower = [dtype for dtype in floating if dtype != torch.float64] or floating
    result = narrower[0]
    for dtype in narrower[1:]:
        result = torch.promote_types(result, dtype)
    return result


def _single_wins(a: Any, b: Any) -> tuple[Any, Any]:
    """Two tensor operands with a float64 one cast to the other's floating type, as MATLAB's
    single wins over double; anything else is left to torch's promotion."""
    if (
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and a.dtype != b.dtype
        and (a.dtype == torch.float64) != (b.dtype == torch.float64)
        and a.is_floating_point()
        and b.is_floating_point()
    ):
        return (a.to(b.dtype), b) if a.dtype == torch.float64 else (a, b.to(a.dtype))
    return a, b


def _keep_types(a: Any, b: Any) -> tuple[Any, Any]:
    return a, b


def _elementwise(
    op: Callable[[Any, Any], torch.Tensor],
    left: object,
    right: object,
    cast: Callable[[Any, Any], tuple[Any, Any]] = _single_wins,
) -> DLArray:
    left_formatted, right_formatted = _formatted(left), _formatted(right)
    if left_formatted is not None and right_formatted is not None:
        out_fmt, a, b, sources = _aligned(left_formatted, right_formatted)
        a, b = cast(a, b)
        try:
            return DLArray._wrap(op(a, b), out_fmt)
        except RuntimeError:
            # aligned by label, torch's broadcast rule is MATLAB's: only a failure needs naming
            _check_sizes(out_fmt, left_formatted, right_formatted, sources)
            raise
    a, b = cast(_operand(left), _operand(right))
    if left_formatted is not None:
        _check_plain_operand(left_formatted, b)
        return DLArray._wrap(op(a, b), left_formatted._fmt)
    if right_formatted is not None:
        _check_plain_operand(right_formatted, a)
        return DLArray._wrap(op(a, b), right_formatted._fmt)
    return DLArray._wrap(op(a, b), "")


def _aligned(
    left: DLArray, right: DLArray
) -> tuple[str, torch.Tensor, torch.Tensor, tuple[tuple[int | None, int | None], ...]]:
    """Both operands' data with singletons where the other has a label they lack."""
    out_fmt, left_pattern, right_pattern, sources = _broadcast_plan(left._fmt, right._fmt)
    a = left._data if left_pattern is None else rearrange(left._data, left_pattern)
    b = right._data if right_pattern is None else rearrange(right._data, right_pattern)
    return out_fmt, a, b, sources


def _in_place(op: Callable[[torch.Tensor, Any], torch.Tensor], target: DLArray, other: object) -> DLArray:
    """``target op= other`` writing into ``target``'s data, whose format and shape must hold the result."""
    other_formatted = _formatted(other)
    if other_formatted is None:
        if target._fmt:
            _check_plain_operand(target, _operand(other))
        op(target._data, _operand(other))
        return target
    if not target._fmt:
        raise DLFormatError(
            f'an in-place operation on an unformatted dlarray cannot take a "{other_formatted._fmt}" '
            "dlarray; label the target first or use the out-of-place operator"
        )
    out_fmt, a, b, sources = _aligned(target, other_formatted)
    if out_fmt != target._fmt:
        raise DLFormatError(
            f'cannot update a "{target._fmt}" dlarray in place with a "{other_formatted._fmt}" one: the '
            f'result would have format "{out_fmt}"; in place, the other operand may only use the '
            "target's labels (use the out-of-place operator instead)"
        )
    try:
        op(a, b)
    except RuntimeError:
        _check_sizes(out_fmt, target, other_formatted, sources)
        if torch.broadcast_shapes(a.shape, b.shape) != a.shape:
            raise DLFormatError(
                f'cannot update a "{target._fmt}" dlarray of shape {tuple(a.shape)} in place with one of '
                f"shape {tuple(other_formatted._data.shape)}: the result would be larger than the target"
            ) from None
        raise
    return target


def _operand(value: object) -> Any:
    if isinstance(value, DLArray):
        return value._data
    if isinstance(value, np.ndarray):
        return _from_numpy(value)
    return value


def _check_sizes(
    out_fmt: str, left: DLArray, right: DLArray, sources: tuple[tuple[int | None, int | None], ...]
) -> None:
    for index, (label, (i, j)) in enumerate(zip(out_fmt, sources, strict=True)):
        if i is None or j is None:
            continue
        m, n = left._data.shape[i], right._data.shape[j]
        if m != n and m != 1 and n != 1:
            raise DLFormatError(
                f'cannot combine dlarrays of formats "{left._fmt}" and "{right._fmt}": dimension '
                f'{index} ("{label}") has size {m} in one and {n} in the other; sizes must match '
                f"or be 1"
            )


def _check_plain_operand(formatted: DLArray, other: object) -> None:
    if not isinstance(other, torch.Tensor):
        return
    shape = formatted._data.shape
    if other.ndim > len(shape):
        raise DLFormatError(
            f"a {other.ndim}-D tensor of shape {tuple(other.shape)} cannot broadcast against a "
            f'"{formatted._fmt}" dlarray of shape {tuple(shape)}: the result would have unlabelled '
            f"dimensions; wrap it with dlarray(tensor, fmt) to align it by label"
        )
    try:
        torch.broadcast_shapes(shape, other.shape)
    except RuntimeError:
        raise DLFormatError(
            f"a tensor of shape {tuple(other.shape)} does not broadcast against the canonical shape "
            f'{tuple(shape)} of a "{formatted._fmt}" dlarray'
        ) from None


# -- helpers of the operators, indexing and protocols above ------------------------------------------
def _is_operand(value: object) -> bool:
    """Numeric data an operator takes: a dlarray, tensor, NumPy array or number."""
    return isinstance(value, (DLArray, torch.Tensor, np.ndarray, np.generic, int, float, complex))


def _numeric(data: torch.Tensor) -> torch.Tensor:
    """Logical data as MATLAB computes on it (single: torch's default dtype); anything else as it is."""
    return data.to(torch.get_default_dtype()) if data.dtype == torch.bool else data


def _one_element(X: DLArray, what: str) -> DLArray:
    if X._data.numel() != 1:
        raise DLFormatError(
            f"{what} of a dlarray needs exactly one element; this one has {X._data.numel()} "
            f'(size {tuple(X._data.shape)}). Reduce it first, e.g. all(X, "all") or any(X, "all")'
        )
    return X


def _index_key(key: object) -> tuple[object, str | None]:
    """The key with dlarrays replaced by their data, and the format of a dlarray mask."""
    if isinstance(key, DLArray):
        return key._data, key._fmt
    if isinstance(key, tuple) and any(isinstance(item, DLArray) for item in key):
        return tuple(item._data if isinstance(item, DLArray) else item for item in key), None
    return key, None


def _assigned(target: DLArray, value: object) -> torch.Tensor:
    """The value of ``target[...] = value`` as data in ``target``'s dimensions (labels aligned)."""
    formatted = _formatted(value)
    if formatted is not None:
        if not target._fmt:
            raise DLFormatError(
                f'cannot assign a "{formatted._fmt}" dlarray into an unformatted one: label the target, or '
                "assign stripdims(value)"
            )
        out_fmt, _, pattern, _ = _broadcast_plan(target._fmt, formatted._fmt)
        if out_fmt != target._fmt:
            raise DLFormatError(
                f'cannot assign a "{formatted._fmt}" dlarray into a "{target._fmt}" one: the value may only '
                "use the target's labels (it may lack some)"
            )
        return formatted._data if pattern is None else rearrange(formatted._data, pattern)
    data = _operand(value)
    if not isinstance(data, torch.Tensor):
        if not _is_operand(data):
            raise DLFormatError(
                f"indexed assignment needs numeric data (a dlarray, tensor, NumPy array or number); got "
                f"{type(value).__name__}"
            )
        data = torch.as_tensor(data)
    if data.ndim > target._data.ndim:
        raise DLFormatError(
            f"indexed assignment: a value of size {tuple(data.shape)} has more dimensions than the "
            f"{target._data.ndim} of the target; wrap it with dlarray(value, fmt) to align it by label"
        )
    return data


_NUMPY_OPERATORS: dict[Any, Callable[[Any, Any], torch.Tensor]] = {
    np.add: operator.add,
    np.subtract: operator.sub,
    np.multiply: operator.mul,
    np.true_divide: operator.truediv,
    np.power: operator.pow,
    np.remainder: _math.mod,
    np.equal: operator.eq,
    np.not_equal: operator.ne,
    np.less: operator.lt,
    np.less_equal: operator.le,
    np.greater: operator.gt,
    np.greater_equal: operator.ge,
    np.logical_and: logical_and,
    np.logical_or: logical_or,
    np.bitwise_and: logical_and,
    np.bitwise_or: logical_or,
}

TORCH_FUNCTIONS: dict[str, Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = {}
"""The torch functions that take dlarrays, by name (``"exp"`` is ``torch.exp`` and ``Tensor.exp``), each
with its MATLAB counterpart's format rule: ``handler(func, args, kwargs)``; filled by
:mod:`dlformat._functions._interop`. Any other torch function called on a dlarray is an error."""

TORCH_HINTS: dict[str, str] = {}
"""For an unported torch function's name, the dlformat function that does its work (filled there too)."""


def _unported_torch_function(func: Any) -> DLFormatError:
    name = torch.overrides.resolve_name(func) or getattr(func, "__qualname__", repr(func))
    short = name.rsplit(".", 1)[-1]
    hint = TORCH_HINTS.get(short)
    instead = f"Use {hint}, or " if hint else "Use "
    return DLFormatError(
        f"{name} has no dlarray rule in dlformat: only the torch functions with a MATLAB counterpart are "
        f"ported for dlarrays (docs/dlarray_functions.md). {instead}stripdims(X) (the data in the stored "
        "order, with autograd) or extractdata(X) (detached) to call it on a plain tensor"
    )


def _is_scalar(value: object) -> bool:
    data = value._data if isinstance(value, DLArray) else value
    if isinstance(data, torch.Tensor):
        return data.numel() == 1
    if isinstance(data, np.ndarray):
        return data.size == 1
    return isinstance(data, (int, float, complex, np.generic))


def mtimes(A: object, B: object) -> DLArray:
    """MATLAB's ``mtimes`` (``A*B``), Python's ``A @ B``: the matrix product of unformatted 2-D data.

    MATLAB's rule: one input can be formatted only when the other is an unformatted scalar (the
    product is then elementwise and keeps the format). Vectors (1-D data) are columns, as MATLAB's
    are; a scalar times a matrix is elementwise; the result is an unformatted dlarray.
    """
    formatted = _formatted(A)
    if formatted is None:
        formatted = _formatted(B)  # (never `or`: a dlarray's truth value is its data's)
    if formatted is not None:
        other = B if formatted is A else A
        if _formatted(other) is None and _is_scalar(other):
            return _elementwise(operator.mul, A, B)
        raise DLFormatError(
            f'mtimes (A*B, A @ B) cannot take a formatted dlarray ("{formatted._fmt}") with anything but an '
            "unformatted scalar, as in MATLAB. For a layer's product use dlformat.functional.fullyconnect; "
            "for a plain matrix product use stripdims on both sides"
        )
    if _is_scalar(A) or _is_scalar(B):
        return _elementwise(operator.mul, A, B)
    a, b = (torch.as_tensor(_operand(value)) for value in (A, B))
    for name, data in (("first", a), ("second", b)):
        if data.ndim > 2:
            raise DLFormatError(
                f"mtimes (A*B, A @ B) multiplies matrices; the {name} input has {data.ndim} dimensions "
                f"{tuple(data.shape)}. Use pagemtimes for pages of matrices"
            )
    a = a.reshape(-1, 1) if a.ndim == 1 else a
    b = b.reshape(-1, 1) if b.ndim == 1 else b
    if a.shape[1] != b.shape[0]:
        raise DLFormatError(
            f"mtimes (A*B, A @ B): inner sizes must agree; got {a.shape[0]}×{a.shape[1]} times "
            f"{b.shape[0]}×{b.shape[1]}"
        )
    dtype = working_dtype(a.dtype, b.dtype)
    return DLArray._wrap(torch.matmul(a.to(dtype), b.to(dtype)), "")


def _require_dlarray(function: str, value: object) -> DLArray:
    if not isinstance(value, DLArray):
        raise DLFormatError(
            f"{function} needs a dlarray; got {type(value).__name__}. "
            'Create one with dlformat.dlarray(data, "CBT") (your format)'
        )
    return value


def require_formatted(X: Any, caller: Callable[[], str]) -> DLArray:
    """``X`` itself, checked to be a formatted dlarray; ``caller()`` names who needs it."""
    if not isinstance(X, DLArray) or not X._fmt:
        got = "an unformatted dlarray" if isinstance(X, DLArray) else f"a {type(X).__name__}"
        raise DLFormatError(
            f'{caller()} needs a formatted dlarray input, such as dlarray(x, "CBT"); got {got}'
        )
    return X


def require_dimensions(X: Any, labels: str, caller: Callable[[], str], accepted: str = "") -> DLArray:
    """``X`` itself, checked to be a dlarray with every label of ``labels``.

    ``accepted`` (e.g. ``'"CB", "SSCB", "CBT"'``) lists formats the caller takes, for the message:
    the error names the caller, the format it got, and what it accepts, as MATLAB's layers do.
    """
    if not isinstance(X, DLArray) or any(label not in X._fmt for label in labels):
        got = f'format "{X._fmt}"' if isinstance(X, DLArray) else f"a {type(X).__name__}"
        wanted = " and ".join(f'"{label}"' for label in labels)
        noun = f"a {wanted} dimension" if len(labels) == 1 else f"{wanted} dimensions"
        such = f"; it takes formats such as {accepted}" if accepted else ""
        raise DLFormatError(f"{caller()} needs a dlarray with {noun}; got {got}{such}")
    return X


def dlarray(data: object, fmt: str | None = None) -> DLArray:
    """Label ``data`` with MATLAB dimension labels (MATLAB's ``dlarray``).

    See :class:`DLArray`. ``dlarray(X)`` on a ``DLArray`` returns ``X`` itself;
    ``dlarray(X, fmt)`` relabels its data as it is stored (canonical order).

    Examples:
        >>> dims(dlarray(torch.randn(5, 4, 3, 2), "TSSU"))
        'SSTU'
    """
    if isinstance(data, DLArray) and fmt is None:
        return data
    return DLArray(data, fmt)


def as_dlarray(X: Any) -> DLArray:
    """``X`` itself if it is a dlarray, else an unformatted dlarray of it."""
    return X if isinstance(X, DLArray) else dlarray(X)


def dims(X: DLArray) -> str:
    """The format of ``X`` in canonical order, ``""`` when unformatted."""
    return _require_dlarray("dims", X)._fmt


def finddim(X: DLArray, label: str) -> tuple[int, ...]:
    """MATLAB's ``finddim``: the dimension numbers of ``label`` in ``X``'s format, counted from 1 as
    MATLAB counts them; ``()`` (MATLAB's empty result) when the format lacks it or ``X`` is unformatted.

    The numbers go straight into MATLAB's functions that take dimensions (``dlf.mean(X,
    dlf.finddim(X, "T"))``, ``dlf.size(X, dlf.finddim(X, "S"))``); a one-number result counts as
    MATLAB's scalar there. Source: MathWorks' finddim page ("returned as a vector of positive
    integers"; ``finddim(X, "S")`` of an ``"SSCBT"`` array is ``[1 2]``).

    Examples:
        >>> X = dlarray(torch.randn(5, 4, 3, 2), "TSSU")  # stored "SSTU"
        >>> finddim(X, "T"), finddim(X, "S"), finddim(X, "B")
        ((3,), (1, 2), ())
    """
    fmt = _require_dlarray("finddim", X)._fmt
    label = _format.check_label(label)
    return tuple(number for number, have in enumerate(fmt, start=1) if have == label)


def stripdims(X: DLArray, fmt: str | None = None) -> torch.Tensor:
    """The data of ``X`` as a plain tensor, keeping autograd.

    With no ``fmt`` the data comes in canonical order. With ``fmt`` it is permuted into
    that order, which may add singleton labels but must hold every label of ``X``:
    ``stripdims(Y, "BTC")`` hands a ``"CBT"`` array to batch-first code.
    """
    X = _require_dlarray("stripdims", X)
    if fmt is None:
        return X._data
    target = _check_format(fmt)
    if not X._fmt:
        raise DLFormatError(
            f'stripdims(X, "{target}") needs a formatted dlarray; X is unformatted. '
            'Label it first with dlarray(X, "...")'
        )
    pattern = _reorder_plan(X._fmt, target)
    return X._data if pattern is None else rearrange(X._data, pattern)


def extractdata(X: DLArray) -> torch.Tensor:
    """The data of ``X`` in canonical order, detached from autograd (shares memory)."""
    return _require_dlarray("extractdata", X)._data.detach()


def _flatten(X: DLArray) -> tuple[list[torch.Tensor], str]:
    return [X._data], X._fmt


def _flatten_with_keys(X: DLArray) -> tuple[list[tuple[pytree.KeyEntry, torch.Tensor]], str]:
    return [(pytree.GetAttrKey("data"), X._data)], X._fmt


def _unflatten(children: Any, fmt: str) -> DLArray:
    return DLArray._wrap(next(iter(children)), fmt)


pytree.register_pytree_node(
    DLArray,
    _flatten,
    _unflatten,
    serialized_type_name="dlformat.DLArray",
    flatten_with_keys_fn=_flatten_with_keys,
)
