"""``rearrange``: einops' ``rearrange`` for the patterns dlformat's plans build, a little cheaper.

The format plans route dimensions with einops patterns (readable, built once per format), and a
layer call runs several. ``einops.rearrange`` looks its recipe up on every call (about 2.7 µs for
a two-axis permutation on a 2-core machine, against 2.0 µs here). The patterns the plans build
are simple: plain axis names (or ``1``, a size-1 axis to drop) on the left, names, ``1`` and
parenthesized groups on the right. Such a pattern is compiled once (cached) into one ``permute``
and one ``reshape``, exactly what einops does with it; any other pattern, or one with axis sizes
given, goes to einops.
"""

from __future__ import annotations

from typing import Any

import einops
import torch

from ._tracing import cached_plan

# the permutation of the input's axes, and the output's terms: (positions in the permuted
# tensor whose sizes multiply into that axis), an empty tuple being a new size-1 axis
_Plan = tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...]]


@cached_plan(1024)
def _compile(pattern: str) -> _Plan | None:
    """The plan of a simple pattern: (input rank, permutation, output terms); ``None`` otherwise."""
    left, arrow, right = pattern.partition("->")
    if not arrow or "(" in left or "..." in pattern:
        return None
    inputs = left.split()
    names = [name for name in inputs if name != "1"]
    tokens = right.replace("(", " ( ").replace(")", " ) ").split()
    terms: list[list[str]] = []
    group: list[str] | None = None
    for token in tokens:
        if token == "(":
            if group is not None:
                return None
            group = []
        elif token == ")":
            if group is None:
                return None
            terms.append(group)
            group = None
        elif group is not None:
            if token != "1":
                group.append(token)
        else:
            terms.append([] if token == "1" else [token])
    used = [name for term in terms for name in term]
    if group is not None or sorted(used) != sorted(names) or len(set(names)) != len(names):
        return None
    # the size-1 axes the left drops go last, where the reshape drops them
    order = [inputs.index(name) for name in used] + [i for i, name in enumerate(inputs) if name == "1"]
    position = {name: index for index, name in enumerate(used)}
    return len(inputs), tuple(order), tuple(tuple(position[name] for name in term) for term in terms)


def rearrange(tensor: torch.Tensor, pattern: str, **sizes: Any) -> torch.Tensor:
    """``rearrange(tensor, pattern, **sizes)``, one ``permute`` and ``reshape`` for the
    simple patterns of the format plans (see the module docstring)."""
    plan = None if sizes else _compile(pattern)
    if plan is None or plan[0] != tensor.ndim:
        return einops.rearrange(tensor, pattern, **sizes)
    _, order, terms = plan
    permuted = tensor.permute(order)
    shape = permuted.shape
    if len(terms) == len(order) and all(len(term) == 1 for term in terms):
        return permuted  # a pure permutation
    used = sum(len(term) for term in terms)
    if any(size != 1 for size in shape[used:]):
        return einops.rearrange(tensor, pattern)  # einops names the "1" axis that is not of size 1
    final = []
    for term in terms:
        size = 1
        for index in term:
            size *= shape[index]
        final.append(size)
    return permuted.reshape(final)
