"""Pure format parsing and planning: strings and tuples in, strings and tuples out.

Nothing here touches a tensor. Every function is cached, so a format is parsed and
validated once, and the einops patterns that route dimensions are built once per
pair of formats. The tensor side (:mod:`dlformat._dlarray`) only looks the plans up.
"""

from __future__ import annotations

from ._errors import DLFormatError
from ._tracing import cached_plan

LABELS = "SCBTU"
"""Every dimension label, in canonical order: spatial, channel, batch, time, unspecified."""

_RANK = {label: rank for rank, label in enumerate(LABELS)}
_REPEATABLE = frozenset("SU")
_DESCRIPTION = "S (spatial), C (channel), B (batch), T (time) or U (unspecified)"


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


@cached_plan(1024)
def parse(fmt: str) -> str:
    """Validate a format string and return it unchanged.

    Raises :class:`DLFormatError` for a non-string, an unknown label, or a repeated
    ``C``, ``B`` or ``T``.
    """
    for position, label in enumerate(fmt):
        if label not in _RANK:
            raise DLFormatError(
                f"invalid dimension label {_quote(label)} at position {position} of format "
                f"{_quote(fmt)}; each label must be one of {_DESCRIPTION}"
            )
    for label in "CBT":
        if fmt.count(label) > 1:
            raise DLFormatError(
                f'format {_quote(fmt)} has {fmt.count(label)} "{label}" dimensions; '
                f'"C", "B" and "T" may appear at most once each (only "S" and "U" repeat)'
            )
    return fmt


def check_format(fmt: object) -> str:
    """Like :func:`parse`, but first checks that ``fmt`` is a string at all."""
    if not isinstance(fmt, str):
        raise DLFormatError(
            f'a format must be a string of the labels {_DESCRIPTION}, such as "SSCB"; '
            f"got {fmt!r} ({type(fmt).__name__})"
        )
    return parse(fmt)


def check_label(label: object) -> str:
    """Validate a single dimension label, as :func:`dlformat.finddim` takes it."""
    if not isinstance(label, str) or len(label) != 1 or label not in _RANK:
        raise DLFormatError(f"a dimension label must be one of {_DESCRIPTION}; got {_quote(label)}")
    return label


@cached_plan(1024)
def axis_names(fmt: str) -> tuple[str, ...]:
    """einops axis names for a format: repeated labels are numbered in order (s0, s1, ...)."""
    seen: dict[str, int] = {}
    names = []
    for label in fmt:
        index = seen.get(label, 0)
        seen[label] = index + 1
        names.append(f"{label.lower()}{index}")
    return tuple(names)


@cached_plan(1024)
def canonical(fmt: str) -> str:
    """The labels of ``fmt`` in canonical order S < C < B < T < U (a stable sort)."""
    return "".join(sorted(parse(fmt), key=_RANK.__getitem__))


@cached_plan(1024)
def labelling_plan(fmt: str, ndim: int) -> tuple[str | None, str]:
    """Plan for ``dlarray(data, fmt)`` on data with ``ndim`` dimensions.

    Returns ``(pattern, canonical_format)``: the einops pattern that permutes the data
    into canonical order and appends a singleton for each label beyond ``ndim``
    (``None`` when nothing moves), and the canonical format.
    """
    parse(fmt)
    if len(fmt) < ndim:
        raise DLFormatError(
            f"format {_quote(fmt)} has {len(fmt)} label(s) but the data has {ndim} dimensions; "
            f"give at least one label per dimension (extra labels add trailing singleton dimensions)"
        )
    names = axis_names(fmt)
    target = canonical(fmt)
    order = sorted(range(len(fmt)), key=lambda i: _RANK[fmt[i]])
    if len(fmt) == ndim and order == list(range(ndim)):
        return None, target
    source = " ".join(names[:ndim])
    destination = " ".join(names[i] if i < ndim else "1" for i in order)
    return f"{source} -> {destination}", target


@cached_plan(1024)
def droppable_trailing_u(fmt: str, singleton: tuple[bool, ...]) -> int:
    """How many trailing ``U`` dimensions MATLAB drops: singletons after the second dimension."""
    count = 0
    for index in range(len(fmt) - 1, 1, -1):
        if fmt[index] != "U" or not singleton[index]:
            break
        count += 1
    return count


@cached_plan(64)
def drop_trailing_pattern(count: int) -> str:
    """The einops pattern that removes ``count`` trailing singleton dimensions."""
    return "... " + "1 " * count + "-> ..."


@cached_plan(1024)
def reorder_plan(source: str, target: str) -> str | None:
    """Pattern taking data in canonical ``source`` order to the order of ``target``.

    ``target`` may add singleton labels but must hold every label of ``source``
    (as many ``S`` and ``U`` as ``source`` has, at least). Repeated labels keep
    their relative order. ``None`` means no change.
    """
    parse(target)
    for label in LABELS:
        have, want = source.count(label), target.count(label)
        if have > want:
            raise DLFormatError(
                f"format {_quote(target)} does not hold every dimension of a {_quote(source)} array: "
                f'it has {want} "{label}" label(s) and the array has {have}; '
                f"the target format may add labels but must keep all of the array's"
            )
    if source == target:
        return None
    source_names = axis_names(source)
    present = set(source_names)
    destination = " ".join(name if name in present else "1" for name in axis_names(target))
    return f"{' '.join(source_names)} -> {destination}"


@cached_plan(1024)
def broadcast_plan(
    left: str, right: str
) -> tuple[str, str | None, str | None, tuple[tuple[int | None, int | None], ...]]:
    """Align two canonical formats for elementwise arithmetic.

    Returns ``(out_format, left_pattern, right_pattern, sources)``: the result's
    format; the einops patterns that insert singletons into each operand where it
    lacks a label (``None`` if it lacks none); and for every result dimension the
    index it comes from in each operand (``None`` where that operand lacks it).
    Repeated ``S`` and ``U`` pair up in order; different non-zero counts are an error.
    """
    out = []
    for label in LABELS:
        a, b = left.count(label), right.count(label)
        if a and b and a != b:
            raise DLFormatError(
                f"cannot combine dlarrays of formats {_quote(left)} and {_quote(right)}: they have "
                f'{a} and {b} "{label}" dimensions; repeated labels pair up in order, so their '
                f"counts must match (or one operand must have none)"
            )
        out.append(label * max(a, b))
    out_format = "".join(out)
    out_names = axis_names(out_format)

    def expand(fmt: str) -> tuple[str | None, tuple[int | None, ...]]:
        names = axis_names(fmt)
        index = {name: i for i, name in enumerate(names)}
        sources = tuple(index.get(name) for name in out_names)
        if fmt == out_format:
            return None, sources
        destination = " ".join(name if name in index else "1" for name in out_names)
        return f"{' '.join(names)} -> {destination}", sources

    left_pattern, left_sources = expand(left)
    right_pattern, right_sources = expand(right)
    return out_format, left_pattern, right_pattern, tuple(zip(left_sources, right_sources, strict=True))
