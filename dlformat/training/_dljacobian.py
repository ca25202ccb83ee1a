"""MATLAB's ``dljacobian``, ``dldivergence`` and ``dllaplacian`` (R2024b): derivatives of model
outputs with respect to their inputs, one observation at a time, for physics-informed losses.

``dim`` is the *operation dimension*: the dimension of ``u`` and ``x`` holding the components
that are differentiated. Every other dimension indexes independent points (observations), and
``u`` and ``x`` must have the same sizes there: the derivative of ``u(i, n)`` is taken with
respect to ``x(j, n)`` of the same point ``n`` only. One backward pass per component of ``u``
along ``dim`` gives all points at once.

The result layout is not settled from MathWorks' text available here; it is inferred from
MathWorks' physics-informed examples, where ``Ux = dljacobian(U, X, 1)`` of ``1 × N`` arrays is
used as a ``1 × N`` array (``dldivergence(Ux, X, 1)``, ``Ut - alpha*Uxx``): the ``x``
component index is appended after ``u``'s dimensions, ``size(jac) = [size(u) size(x, dim)]``, so
a one-component ``x`` gives ``u``'s size. See docs/training_loop.md.
"""

from __future__ import annotations

from typing import Any

import torch

from .. import _validate
from .._dlarray import DLArray
from .._errors import DLFormatError
from .._options import matlab_function
from ._dlfeval import inside_dlfeval

__all__ = ["dldivergence", "dljacobian", "dllaplacian"]


def _traced_data(caller: str, name: str, value: Any) -> torch.Tensor:
    if not isinstance(value, (DLArray, torch.Tensor)):
        raise DLFormatError(f"{caller}: {name} must be a dlarray; got {_validate.describe(value)}")
    if isinstance(value, DLArray) and value._fmt:
        # MATLAB's examples strip the labels first; how labels map to dim here is not settled
        raise DLFormatError(
            f'{caller}: {name} must be an unformatted dlarray; got format "{value._fmt}". '
            f"Call stripdims on it first, as MathWorks' physics-informed examples do"
        )
    data = value._data if isinstance(value, DLArray) else value
    if not data.is_floating_point():
        raise DLFormatError(f"{caller}: {name} must be real floating data; got dtype {data.dtype}")
    if not data.requires_grad:
        raise DLFormatError(
            f"{caller}: {name} is not traced; compute it inside the function dlfeval evaluates, from "
            f"the dlarrays passed to dlfeval"
        )
    return data


def _operands(
    caller: str, u: Any, x: Any, dim: Any, higher: Any
) -> tuple[torch.Tensor, torch.Tensor, int, bool]:
    if not inside_dlfeval():
        raise DLFormatError(f"{caller} must be called inside a function evaluated by dlfeval, as in MATLAB")
    create = _validate.flag(f"{caller} EnableHigherDerivatives", higher)
    u_data = _traced_data(caller, "u", u)
    x_data = _traced_data(caller, "x", x)
    ndims = max(u_data.dim(), x_data.dim(), 2)
    operation = _validate.dimension_number(f"{caller} dim", dim)  # finddim's one number too
    if operation > ndims:
        raise DLFormatError(f"{caller} dim must be at most {ndims} (the number of dimensions); got {dim}")
    # MATLAB's trailing singleton dimensions, so that a 1-by-N array matches an N-element vector
    u_data = u_data.reshape(*u_data.shape, *([1] * (ndims - u_data.dim())))
    x_shape = (*x_data.shape, *([1] * (ndims - x_data.dim())))
    axis = operation - 1
    points_u = [size for d, size in enumerate(u_data.shape) if d != axis]
    points_x = [size for d, size in enumerate(x_shape) if d != axis]
    if points_u != points_x:
        raise DLFormatError(
            f"{caller}: u ({_validate.matlab_size(u_data.shape)}) and x ({_validate.matlab_size(x_shape)}) "
            f"must have the same sizes in every dimension but the operation dimension {operation}"
        )
    return u_data, x_data, axis, create


def _component_gradients(u: torch.Tensor, x: torch.Tensor, axis: int, create: bool) -> list[torch.Tensor]:
    """For each component ``i`` of ``u`` along ``axis``: d(sum over points of u_i)/dx, shaped as
    ``x`` with ``u``'s number of dimensions.

    Points are independent, so this holds du_i(n)/dx_j(n) at each point n.
    """
    shape = (*x.shape, *([1] * (u.dim() - x.dim())))
    gradients = []
    for index in range(u.shape[axis]):
        seed = torch.zeros_like(u)
        seed.select(axis, index).fill_(1)
        (found,) = torch.autograd.grad(u, x, seed, retain_graph=True, create_graph=create, allow_unused=True)
        gradients.append((torch.zeros_like(x) if found is None else found).reshape(shape))
    return gradients


@matlab_function
def dljacobian(u: Any, x: Any, dim: Any, *, EnableHigherDerivatives: Any = True) -> DLArray:
    """MATLAB's ``jac = dljacobian(u, x, dim)``: ``jac(..., i, ..., j) = du_i/dx_j`` per point.

    ``u`` and ``x`` are traced unformatted dlarrays of the same sizes but along ``dim``; the
    result has size ``[size(u) size(x, dim)]`` (the ``x`` component last), unformatted.
    ``EnableHigherDerivatives`` (default true) traces the computation, so a loss built from the
    Jacobian can itself be differentiated (torch's ``create_graph``).

    Examples:
        >>> def f(x):
        ...     u = dlf.dlarray(dlf.stripdims(x) ** 2)
        ...     return dlf.dljacobian(u, x, 1)
        >>> jac = dlf.dlfeval(f, dlf.dlarray(torch.tensor([[1.0, 2.0, 3.0]])))
        >>> dlf.extractdata(jac).tolist()
        [[2.0, 4.0, 6.0]]
    """
    u_data, x_data, axis, create = _operands("dljacobian", u, x, dim, EnableHigherDerivatives)
    rows = [gradient.movedim(axis, -1) for gradient in _component_gradients(u_data, x_data, axis, create)]
    jacobian = torch.stack(rows, dim=axis)
    # MATLAB drops trailing singleton dimensions beyond the second
    while jacobian.dim() > 2 and jacobian.shape[-1] == 1:
        jacobian = jacobian.squeeze(-1)
    return DLArray._wrap(jacobian, "")


@matlab_function
def dldivergence(u: Any, x: Any, dim: Any, *, EnableHigherDerivatives: Any = True) -> DLArray:
    """MATLAB's ``div = dldivergence(u, x, dim)``: ``sum_i du_i/dx_i`` per point.

    ``u`` and ``x`` are traced unformatted dlarrays of the same size; the result is ``u``'s size
    with 1 along ``dim``, unformatted. ``EnableHigherDerivatives`` as in :func:`dljacobian`.

    Examples:
        >>> def f(x):
        ...     u = dlf.dlarray(dlf.stripdims(x) ** 2)
        ...     return dlf.dldivergence(u, x, 1)
        >>> div = dlf.dlfeval(f, dlf.dlarray(torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
        >>> dlf.extractdata(div).tolist()
        [[8.0, 12.0]]
    """
    u_data, x_data, axis, create = _operands("dldivergence", u, x, dim, EnableHigherDerivatives)
    x_size = x_data.shape[axis] if axis < x_data.dim() else 1
    if u_data.shape[axis] != x_size:
        raise DLFormatError(
            f"dldivergence: u and x must have the same size along the operation dimension {axis + 1}; got "
            f"{u_data.shape[axis]} and {x_size}"
        )
    gradients = _component_gradients(u_data, x_data, axis, create)
    divergence = sum(
        (gradient.narrow(axis, index, 1) for index, gradient in enumerate(gradients)),
        start=torch.zeros_like(gradients[0].narrow(axis, 0, 1)),
    )
    return DLArray._wrap(divergence, "")


@matlab_function
def dllaplacian(u: Any, x: Any, dim: Any, *, EnableHigherDerivatives: Any = True) -> DLArray:
    """MATLAB's ``lap = dllaplacian(u, x, dim)``: ``sum_j d²u_i/dx_j²`` per point and component.

    ``u`` and ``x`` are traced unformatted dlarrays of the same sizes but along ``dim``; the
    result has ``u``'s size (one Laplacian per component of ``u``: MathWorks' example has one
    component, ``size(lap) = size(u) = 1×N``), unformatted. ``EnableHigherDerivatives`` as in
    :func:`dljacobian`. One double backward pass per pair of ``u`` and ``x`` components.

    Examples:
        >>> def f(x):
        ...     u = dlf.dlarray((dlf.stripdims(x) ** 3).sum(0, keepdim=True))
        ...     return dlf.dllaplacian(u, x, 1)
        >>> lap = dlf.dlfeval(f, dlf.dlarray(torch.tensor([[1.0, 2.0], [3.0, 4.0]])))
        >>> dlf.extractdata(lap).tolist()
        [[24.0, 36.0]]
    """
    u_data, x_data, axis, create = _operands("dllaplacian", u, x, dim, EnableHigherDerivatives)
    x_size = x_data.shape[axis] if axis < x_data.dim() else 1
    components = []
    for gradient in _component_gradients(u_data, x_data, axis, True):
        # d/dx_j of du_i/dx_j, summed over j (the points are independent, so sums over points separate)
        total = torch.zeros_like(gradient.narrow(axis, 0, 1))
        if gradient.requires_grad:  # otherwise u is linear in x: no second derivative
            for j in range(x_size):
                (second,) = _component_gradients(gradient.narrow(axis, j, 1), x_data, axis, create)
                total = total + second.narrow(axis, j, 1)
        components.append(total)
    return DLArray._wrap(torch.cat(components, dim=axis).to(u_data.dtype), "")
