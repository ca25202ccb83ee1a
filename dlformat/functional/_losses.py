"""MATLAB's loss functions on dlarrays: ``crossentropy``, ``indexcrossentropy``, ``mse``, ``l1loss``,
``l2loss`` and ``huber``; and Computer Vision Toolbox's ``generalizedDice`` similarity, which
``dicePixelClassificationLayer``'s loss is built on.

Each function computes one loss value per element (per prediction, for the single-label
cross-entropies, whose value sums over the classes along ``C``), multiplies it by the weights and
the mask, and then either returns the values (``Reduction="none"``, in the predictions' format) or
sums them and divides by MATLAB's normalization factor (``Reduction="sum"``, the default), giving
an unformatted scalar dlarray as MATLAB does. The formulas and their MathWorks pages are in
docs/training_loop.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from einops import rearrange

from .. import _format, _validate
from .._dlarray import DLArray, dlarray
from .._errors import DLFormatError
from .._options import matlab_function
from ._common import as_data, formatted_input, working_dtype

__all__ = ["crossentropy", "generalizedDice", "huber", "indexcrossentropy", "l1loss", "l2loss", "mse"]

NORMALIZATIONS = ("batch-size", "all-elements", "mask-included", "none")
REDUCTIONS = ("sum", "none")
CLASSIFICATION_MODES = ("single-label", "multilabel")
TARGET_CATEGORIES = ("exclusive", "independent")
# the options every loss function but mse takes, with MATLAB's defaults
LOSS_OPTIONS = {
    "WeightsFormat": None,
    "Mask": None,
    "NormalizationFactor": "batch-size",
    "Reduction": "sum",
    "DataFormat": None,
}


def _size(shape: tuple[int, ...] | torch.Size) -> str:
    return _validate.matlab_size(tuple(shape)) or "a scalar"


def _trimmed(shape: tuple[int, ...] | torch.Size) -> tuple[int, ...]:
    """A size without its trailing singletons, as MATLAB's ``size`` ignores them."""
    sizes = list(shape)
    while sizes and sizes[-1] == 1:
        sizes.pop()
    return tuple(sizes)


def _without_channel(fmt: str, shape: tuple[int, ...] | torch.Size) -> tuple[int, ...]:
    """``shape`` with the ``C`` dimension of ``fmt`` set to 1 (class indices have one "class")."""
    sizes = list(shape)
    if "C" in fmt:
        sizes[fmt.index("C")] = 1
    return tuple(sizes)


def _targets(caller: str, targets: Any, Y: DLArray, indices: bool = False) -> torch.Tensor:
    """The targets as a tensor in the predictions' canonical order (``C`` of size 1 for indices).

    MATLAB: formatted targets must have the predictions' format; unformatted targets take it,
    their dimensions in the order the predictions' data is stored in.
    """
    want = _without_channel(Y._fmt, Y.shape) if indices else tuple(Y.shape)
    if isinstance(targets, DLArray) and targets._fmt:
        fmt, data = targets._fmt, targets._data
        if indices and fmt == Y._fmt.replace("C", "") and fmt != Y._fmt:
            data = data.unsqueeze(Y._fmt.index("C"))
        elif fmt != Y._fmt:
            allowed = f'"{Y._fmt}"' + (
                f' (with "C" of size 1) or "{Y._fmt.replace("C", "")}"' if indices else ""
            )
            raise DLFormatError(
                f'{caller}: the targets have format "{fmt}"; they must have the format of the predictions, '
                f"{allowed}"
            )
    else:
        data = as_data(targets, f"{caller} targets")
    if tuple(data.shape) != want:
        alternatives = [want]
        if indices and "C" in Y._fmt:
            alternatives.append(tuple(size for index, size in enumerate(want) if index != Y._fmt.index("C")))
        if not any(_trimmed(data.shape) == _trimmed(shape) for shape in alternatives):
            raise DLFormatError(
                f"{caller}: the targets have size {_size(data.shape)}; they must have the size of the "
                f'predictions, {_size(want)} (in the predictions\' order "{Y._fmt}"'
                + (', "C" of size 1' if indices else "")
                + ")"
            )
        data = data.reshape(want)
    return data


def _aligned(caller: str, what: str, W: DLArray, Y: DLArray) -> torch.Tensor:
    """Formatted ``W`` as a tensor that broadcasts against ``Y``'s canonical data, by label."""
    missing = sorted({label for label in W._fmt if W._fmt.count(label) > Y._fmt.count(label)})
    if missing:
        raise DLFormatError(
            f'{caller}: the {what} have format "{W._fmt}", with "{"".join(missing)}" dimensions the '
            f'predictions ("{Y._fmt}") lack; their labels must be among the predictions\' labels'
        )
    _, _, pattern, _ = _format.broadcast_plan(Y._fmt, W._fmt)
    data = W._data if pattern is None else rearrange(W._data, pattern)
    for index, (have, size) in enumerate(zip(data.shape, Y.shape, strict=True)):
        if have not in (1, size):
            raise DLFormatError(
                f'{caller}: dimension {index} ("{Y._fmt[index]}") of the {what} has size {have}; the '
                f"predictions have {size} there (sizes must match or be 1)"
            )
    return data


def _weights(caller: str, weights: Any, WeightsFormat: str | None, Y: DLArray) -> torch.Tensor | None:
    """The weights as a tensor broadcasting against ``Y``'s canonical data.

    Formatted weights align by label; unformatted ones take ``WeightsFormat``. Without it, a
    scalar weights everything, a vector with one value per class is class weights (``"C"``), and
    an array of the predictions' size weights each element.
    """
    if weights is None:
        if WeightsFormat is not None:
            raise DLFormatError(f"{caller}: WeightsFormat labels the weights; there are no weights")
        return None
    if isinstance(weights, DLArray) and weights._fmt:
        if WeightsFormat is not None:
            raise DLFormatError(
                f"{caller}: WeightsFormat is only for unformatted weights; the weights have format "
                f'"{weights._fmt}"'
            )
        return _aligned(caller, "weights", weights, Y)
    data = as_data(weights, f"{caller} weights")
    if WeightsFormat is not None:
        fmt = _format.check_format(WeightsFormat)
        if len(fmt) < data.ndim:
            raise DLFormatError(
                f'{caller}: WeightsFormat "{fmt}" labels {len(fmt)} dimensions; the weights have {data.ndim}'
            )
        return _aligned(caller, "weights", dlarray(data, fmt), Y)
    if data.numel() == 1:
        return data.reshape(())
    if len(_trimmed(data.shape)) <= 1 or sum(size > 1 for size in data.shape) == 1:
        classes = Y.shape[Y._fmt.index("C")] if "C" in Y._fmt else None
        if data.numel() != classes:
            raise DLFormatError(
                f'{caller}: unformatted vector weights are class weights, one per class along "C" '
                f"({classes if classes is not None else 'the predictions have no C'}); got {data.numel()} "
                'values. Give WeightsFormat (e.g. WeightsFormat="B" for observation weights) or formatted '
                "weights"
            )
        return _aligned(caller, "weights", dlarray(data.reshape(-1), "C"), Y)
    if _trimmed(data.shape) == _trimmed(Y.shape):
        return data.reshape(Y.shape)
    raise DLFormatError(
        f"{caller}: unformatted weights of size {_size(data.shape)} are neither class weights nor of the "
        f"predictions' size {_size(Y.shape)}; give WeightsFormat to label them"
    )


def _mask(caller: str, Mask: Any, Y: DLArray) -> torch.Tensor | None:
    """The mask as a tensor broadcasting against ``Y``'s canonical data (nonzero = included)."""
    if Mask is None:
        return None
    if isinstance(Mask, DLArray) and Mask._fmt:
        data = _aligned(caller, "mask", Mask, Y)
    else:
        data = as_data(Mask, f"{caller} Mask")
        sizes = _trimmed(data.shape)
        padded = sizes + (1,) * (Y.ndim - len(sizes))
        fits = all(have in (1, size) for have, size in zip(padded, Y.shape, strict=False))
        if len(sizes) > Y.ndim or not fits:
            raise DLFormatError(
                f"{caller}: the mask has size {_size(data.shape)}; an unformatted mask must have the size of "
                f"the predictions, {_size(Y.shape)}, or 1 where it applies to all (or be a formatted dlarray "
                "aligned by label)"
            )
        data = data.reshape(padded)
    if data.is_complex():
        raise DLFormatError(f"{caller}: the mask must be real or logical; got dtype {data.dtype}")
    return data


class _LossInputs:
    """One loss call's checked predictions, weights, mask and reduction options."""

    def __init__(self, caller: str, Y: Any, weights: Any, options: dict[str, Any], needs: str = "") -> None:
        self.caller = caller
        self.normalization = _validate.choice(
            f"{caller} NormalizationFactor", options["NormalizationFactor"], NORMALIZATIONS
        )
        self.reduction = _validate.choice(f"{caller} Reduction", options["Reduction"], REDUCTIONS)
        self.X, self.restore = formatted_input(Y, options["DataFormat"], caller, needs=needs)
        self.weights = _weights(caller, weights, options["WeightsFormat"], self.X)
        self.mask = _mask(caller, options["Mask"], self.X)

    def reduce(self, values: torch.Tensor, included: torch.Tensor | None) -> DLArray:
        """MATLAB's reduction of the loss values: as they are, or summed and normalized to a scalar.

        ``included`` (the mask, as booleans of the values' shape) is what ``"mask-included"`` counts.
        """
        fmt = self.X._fmt
        if self.reduction == "none":
            return self.restore(DLArray._wrap(values, fmt))
        if self.normalization == "mask-included":
            if included is None:
                raise DLFormatError(f'{self.caller}: NormalizationFactor "mask-included" needs a Mask')
            if "B" in fmt:
                others = [index for index in range(values.ndim) if index != fmt.index("B")]
                sums, counts = (
                    values.sum(others) if others else values,
                    included.sum(others) if others else included,
                )
            else:
                sums, counts = values.sum(), included.sum()
            # an observation with no included element adds nothing (instead of 0/0)
            per_observation = torch.where(counts > 0, sums / counts.clamp_min(1), torch.zeros_like(sums))
            return DLArray._wrap(per_observation.sum(), "")
        total = values.sum()
        if self.normalization == "batch-size":
            total = total / (values.shape[fmt.index("B")] if "B" in fmt else 1)
        elif self.normalization == "all-elements":
            total = total / max(values.numel(), 1)
        return DLArray._wrap(total, "")


def _included(mask: torch.Tensor | None, shape: tuple[int, ...] | torch.Size) -> torch.Tensor | None:
    return None if mask is None else (mask != 0).expand(shape)


def _log(data: torch.Tensor) -> torch.Tensor:
    """``log`` of probabilities bounded away from zero, so that ``0 · log 0`` counts 0."""
    return torch.log(data.clamp_min(torch.finfo(data.dtype).tiny))


def _apply(values: torch.Tensor, *factors: torch.Tensor | None) -> torch.Tensor:
    for factor in factors:
        if factor is not None:
            values = values * factor.to(values.dtype)
    return values


def _dtype(Y: torch.Tensor, *others: torch.Tensor | None) -> torch.dtype:
    return working_dtype(Y.dtype, *(other.dtype for other in others if other is not None))


@matlab_function(shared=LOSS_OPTIONS)
def crossentropy(
    Y: Any,
    targets: Any,
    weights: Any = None,
    *,
    ClassificationMode: str | None = None,
    TargetCategories: str | None = None,
    **options: Any,
) -> DLArray:
    """MATLAB's ``loss = crossentropy(Y, targets)``: cross-entropy of probabilities and targets.

    Single-label (``TargetCategories="exclusive"``, ``ClassificationMode="single-label"``, the
    default): ``−Σ w·T·log Y`` over the classes along ``C``, one value per prediction.
    Multilabel (``"independent"`` / ``"multilabel"``): ``−w·(T·log Y + (1−T)·log(1−Y))`` per
    element. Reduced as MATLAB does: summed and divided by ``NormalizationFactor`` —
    ``"batch-size"`` (default; the number of observations, so time steps and spatial positions
    add up), ``"all-elements"`` (the number of predictions: the elements of ``Y``, ``C`` counted
    once for single-label), ``"mask-included"`` (per observation, the included predictions), or
    ``"none"``. ``Reduction="none"`` returns the values in ``Y``'s format instead.

    Args:
        Y: probabilities, a formatted dlarray with ``C`` (``"CB"``, ``"CBT"``, ``"SSCB"``), or
            unformatted data with ``DataFormat``.
        targets: one-hot or binary targets of ``Y``'s size (formatted: ``Y``'s format).
        weights: class weights (a vector, one per class), or weights labelled by a format
            (``WeightsFormat`` or a formatted dlarray) broadcasting against ``Y``.
        Mask: nonzero where an element counts; ``Y``'s size or a formatted dlarray.

    Returns:
        An unformatted scalar dlarray (``Reduction="sum"``), or the unreduced values.

    Examples:
        >>> Y = F.softmax(dlf.dlarray(torch.randn(3, 4), "CB"))
        >>> T = dlf.dlarray(torch.eye(3)[:, [0, 1, 2, 0]], "CB")
        >>> loss = dlf.crossentropy(Y, T)
        >>> dlf.dims(loss), tuple(loss.shape)
        ('', ())
    """
    mode = _mode(ClassificationMode, TargetCategories)
    loss = _LossInputs("crossentropy", Y, weights, options, needs="C")
    X, w, m = loss.X, loss.weights, loss.mask
    T = _targets(loss.caller, targets, X)
    dtype = _dtype(X._data, T, w)
    P, T = X._data.to(dtype), T.to(dtype)
    if mode == "exclusive":
        channel = X._fmt.index("C")
        values = _apply(-T * _log(P), w, m).sum(channel, keepdim=True)
        included = None if m is None else (m != 0).expand(X.shape).any(channel, keepdim=True)
    else:
        values = _apply(-(T * _log(P) + (1 - T) * _log(1 - P)), w, m)
        included = _included(m, X.shape)
    return loss.reduce(values, included)


def softmax_crossentropy(Z: DLArray, targets: Any) -> DLArray:
    """``crossentropy(softmax(Z), targets, NormalizationFactor="all-elements")`` (single-label, no
    weights or mask) from the softmax's input ``Z``: ``-Σ T·log_softmax(Z) / N`` over ``Z``'s
    float32/float64 data, ``N`` the predictions (``Z``'s elements over its classes).

    trainnet's fused training loss when the network ends in a ``softmaxLayer`` and the loss is
    ``"crossentropy"``: one ``log_softmax`` instead of the softmax's probabilities clamped and
    logged. The values are the unfused loss's within float rounding, except where a probability
    underflows to 0: the unfused loss clamps it to the smallest normal number, ``log_softmax``
    stays exact (finite)."""
    T = _targets("crossentropy", targets, Z)
    dtype = _dtype(Z._data, T)
    channel = Z._fmt.index("C")
    values = -T.to(dtype) * torch.log_softmax(Z._data.to(dtype), channel)  # T is data: no node for −
    predictions = max(values.numel() // max(values.shape[channel], 1), 1)
    return DLArray._wrap(values.sum() / predictions, "")


def _mode(ClassificationMode: object, TargetCategories: object) -> str:
    """``"exclusive"`` or ``"independent"`` from MATLAB's two spellings of the choice."""
    from_mode = from_categories = None
    if ClassificationMode is not None:
        given = _validate.choice(
            "crossentropy ClassificationMode",
            ClassificationMode,
            CLASSIFICATION_MODES,
            aliases={"multi-label": "multilabel", "singlelabel": "single-label"},
        )
        from_mode = "independent" if given == "multilabel" else "exclusive"
    if TargetCategories is not None:
        from_categories = _validate.choice(
            "crossentropy TargetCategories", TargetCategories, TARGET_CATEGORIES
        )
    if from_mode and from_categories and from_mode != from_categories:
        raise DLFormatError(
            f'crossentropy: ClassificationMode "{ClassificationMode}" and TargetCategories '
            f'"{TargetCategories}" disagree; "single-label" goes with "exclusive" and "multilabel" with '
            '"independent" (give one)'
        )
    return from_categories or from_mode or "exclusive"


@matlab_function(shared=LOSS_OPTIONS)
def indexcrossentropy(Y: Any, targets: Any, weights: Any = None, **options: Any) -> DLArray:
    """MATLAB's ``loss = indexcrossentropy(Y, targets)``: cross-entropy with class-index targets.

    ``targets`` are MATLAB's 1-based class indices (``k`` picks row ``k`` of ``C``), of ``Y``'s size
    with ``C`` of size 1 or without ``C``; they may be integer or floating. The value per
    prediction is ``−w_k·log Y_k``, so ``indexcrossentropy(Y, k)`` equals ``crossentropy(Y, T)``
    for the one-hot ``T`` of ``k``, with the same weights, mask, normalization and reduction.

    Examples:
        >>> Y = F.softmax(dlf.dlarray(torch.randn(3, 4), "CB"))
        >>> loss = dlf.indexcrossentropy(Y, torch.tensor([1, 2, 3, 1]))
        >>> onehot = torch.eye(3)[:, [0, 1, 2, 0]]
        >>> bool(torch.isclose(dlf.extractdata(loss), dlf.extractdata(dlf.crossentropy(Y, onehot))))
        True
    """
    loss = _LossInputs("indexcrossentropy", Y, weights, options, needs="C")
    X, w, m, caller = loss.X, loss.weights, loss.mask, loss.caller
    channel, classes = X._fmt.index("C"), X.shape[X._fmt.index("C")]
    index = _class_indices(caller, _targets(caller, targets, X, indices=True), classes)
    shape = _without_channel(X._fmt, X.shape)

    def picked(data: torch.Tensor | None) -> torch.Tensor | None:
        """The value at each target's class, of the loss values' shape."""
        if data is None or data.ndim == 0 or data.shape[channel] == 1:
            return data
        return data.expand(X.shape).gather(channel, index.expand(shape))

    dtype = _dtype(X._data, w)
    picked_mask = picked(m)
    values = _apply(-_log(X._data.to(dtype).gather(channel, index)), picked(w), picked_mask)
    included = None if picked_mask is None else (picked_mask != 0).expand(shape)
    return loss.reduce(values, included)


def _class_indices(caller: str, data: torch.Tensor, classes: int) -> torch.Tensor:
    """0-based int64 indices from MATLAB's 1-based ones, each checked to be an integer in 1..classes."""
    if data.dtype == torch.bool or data.is_complex():
        raise DLFormatError(f"{caller}: targets must be class indices 1..{classes}; got dtype {data.dtype}")
    if data.numel():
        if data.is_floating_point():
            bad = (data != data.round()) | (data < 1) | (data > classes)
        else:
            bad = (data < 1) | (data > classes)
        if bool(bad.any()):
            value = data[bad][0].item()
            raise DLFormatError(
                f"{caller}: targets must be MATLAB's 1-based class indices, integers in 1..{classes} "
                f"(the size of C); got {value}"
            )
    return data.long() - 1


def _elementwise_loss(
    caller: str,
    Y: Any,
    targets: Any,
    weights: Any,
    options: dict[str, Any],
    loss: Callable[..., torch.Tensor],
) -> DLArray:
    """``loss(Y − T)`` per element, weighted, masked and reduced as MATLAB's regression losses are."""
    inputs = _LossInputs(caller, Y, weights, options)
    X, w, m = inputs.X, inputs.weights, inputs.mask
    T = _targets(caller, targets, X)
    dtype = _dtype(X._data, T, w)
    values = _apply(loss(X._data.to(dtype) - T.to(dtype)), w, m)
    return inputs.reduce(values, _included(m, X.shape))


@matlab_function(shared=LOSS_OPTIONS)
def l1loss(Y: Any, targets: Any, weights: Any = None, **options: Any) -> DLArray:
    """MATLAB's ``loss = l1loss(Y, targets)``: ``Σ w·|Y − T|`` over the elements, divided by the
    ``NormalizationFactor`` (default ``"batch-size"``: the mean absolute error per observation).

    Examples:
        >>> Y = dlf.dlarray(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "CB")
        >>> float(dlf.extractdata(dlf.l1loss(Y, torch.zeros(2, 2))))  # (1 + 2 + 3 + 4) / 2 observations
        5.0
    """
    return _elementwise_loss("l1loss", Y, targets, weights, options, torch.abs)


@matlab_function(shared=LOSS_OPTIONS)
def l2loss(Y: Any, targets: Any, weights: Any = None, **options: Any) -> DLArray:
    """MATLAB's ``loss = l2loss(Y, targets)``: ``Σ w·(Y − T)²`` over the elements, divided by the
    ``NormalizationFactor`` (default ``"batch-size"``). Not halved: :func:`mse` is the half one.

    Examples:
        >>> Y = dlf.dlarray(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "CB")
        >>> float(dlf.extractdata(dlf.l2loss(Y, torch.zeros(2, 2))))  # (1 + 4 + 9 + 16) / 2
        15.0
    """
    return _elementwise_loss("l2loss", Y, targets, weights, options, torch.square)


@matlab_function(shared=LOSS_OPTIONS)
def huber(
    Y: Any, targets: Any, weights: Any = None, *, TransitionPoint: float = 1.0, **options: Any
) -> DLArray:
    """MATLAB's ``loss = huber(Y, targets)``: ``½d²`` where ``|d| ≤ δ``, ``δ|d| − ½δ²`` beyond, for
    ``d = Y − T`` and ``δ = TransitionPoint`` (default 1); weighted, masked and normalized as
    :func:`l1loss`.

    Examples:
        >>> Y = dlf.dlarray(torch.tensor([[0.5, 3.0]]), "CB")
        >>> float(dlf.extractdata(dlf.huber(Y, torch.zeros(1, 2))))  # (0.125 + 2.5) / 2
        1.3125
    """
    delta = _validate.positive("huber TransitionPoint", TransitionPoint)

    def loss(difference: torch.Tensor) -> torch.Tensor:
        size = difference.abs()
        return torch.where(size <= delta, 0.5 * difference.square(), delta * size - 0.5 * delta**2)

    return _elementwise_loss("huber", Y, targets, weights, options, loss)


@matlab_function
def mse(Y: Any, targets: Any, *, DataFormat: str | None = None) -> DLArray:
    """MATLAB's ``loss = mse(Y, targets)``: half mean squared error, ``Σ (Y − T)² / (2N)``.

    ``N`` is the number of observations (the size of ``B``, 1 without one); the sum runs over every
    element, so channels, time steps and spatial positions add up — MATLAB's definition, with its
    factor ½ (MathWorks' ``mse`` page). ``l2loss`` is the unhalved loss with options.

    Examples:
        >>> Y = dlf.dlarray(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "CB")
        >>> float(dlf.extractdata(dlf.mse(Y, torch.zeros(2, 2))))  # (1 + 4 + 9 + 16) / (2 · 2)
        7.5
    """
    X, _ = formatted_input(Y, DataFormat, "mse")
    T = _targets("mse", targets, X)
    dtype = _dtype(X._data, T)
    total = (X._data.to(dtype) - T.to(dtype)).square().sum()
    observations = X.shape[X._fmt.index("B")] if "B" in X._fmt else 1
    return DLArray._wrap(total / (2 * observations), "")


@matlab_function
def generalizedDice(X: Any, target: Any, *, DataFormat: str | None = None) -> Any:
    """Computer Vision Toolbox's ``similarity = generalizedDice(X, target)``: the generalized
    Sørensen-Dice similarity, per observation, of predictions ``X`` and ``target`` (same size).

    With ``R_k`` the sum of ``target`` over the spatial dimensions for class (channel) ``k``,
    ``w_k = 1 / max(eps, R_k²)``, ``I_k = Σ X·target`` and ``U_k = Σ (X² + target²)`` over the
    spatial dimensions, the similarity is ``(2 Σ_k w_k I_k + eps) / (Σ_k w_k U_k + eps)``, ``eps``
    the machine epsilon of the data's precision: MathWorks' own implementation of the function
    (``iCalcGeneralizedDice``, R2021a), whose page describes it as weighting the classes "by the
    inverse size of the expected region".

    Args:
        X: predictions: a formatted dlarray whose labels are ``S``, ``C`` and ``B`` only (at least
            one ``S``, and ``C``); unformatted data with ``DataFormat`` (the result then comes back
            unformatted, in the given dimension order); or a plain array, its last dimension the
            classes and the others spatial (the result a scalar).
        target: the targets, of ``X``'s size (a formatted ``target`` must have ``X``'s format).

    Returns:
        The similarity: for dlarrays, ``X``'s dimensions with each ``S`` and ``C`` reduced to 1
        (one value per observation, along ``B``).

    Examples:
        >>> X = dlf.dlarray(torch.tensor([[0.9, 0.1], [0.2, 0.8]]).reshape(2, 2, 1), "SCB")
        >>> T = dlf.dlarray(torch.tensor([[1.0, 0.0], [0.0, 1.0]]).reshape(2, 2, 1), "SCB")
        >>> round(float(dlf.extractdata(dlf.generalizedDice(X, T)).reshape(-1)[0]), 6)
        0.971429
    """
    plain = not isinstance(X, DLArray) and DataFormat is None
    if plain:  # MATLAB's numeric input: the last dimension holds the classes
        data = as_data(X, "generalizedDice input")
        DataFormat = "S" * (data.ndim - 1) + "C"
    given = (
        X._fmt
        if isinstance(X, DLArray) and X._fmt
        else _validate.text("generalizedDice: DataFormat", DataFormat)
    )
    if any(label not in "SCB" for label in given) or "C" not in given or "S" not in given:
        raise DLFormatError(
            f'generalizedDice needs data labelled "S", "C" and "B" only, with a "C" and at least one "S" '
            f'(such as "SSCB"); got format "{given}"'
        )
    Y, _ = formatted_input(X, DataFormat, "generalizedDice")
    if isinstance(target, DLArray) and target._fmt and target._fmt != Y._fmt:
        raise DLFormatError(
            f'generalizedDice: X and target must have the same format; got "{Y._fmt}" and "{target._fmt}"'
        )
    T = as_data(target, "generalizedDice target") if not isinstance(target, DLArray) else target._data
    if not isinstance(target, DLArray) or not target._fmt:
        T = T if DataFormat is None else dlarray(T, DataFormat)._data
    if tuple(T.shape) != tuple(Y.shape):
        raise DLFormatError(
            f"generalizedDice: X and target must have the same size; got {_size(Y.shape)} and "
            f"{_size(T.shape)}"
        )
    dtype = _dtype(Y._data, T)
    x, t = Y._data.to(dtype), T.to(dtype)
    spatial = tuple(index for index, label in enumerate(Y._fmt) if label == "S")
    channel = Y._fmt.index("C")
    eps = torch.finfo(dtype).eps
    weights = 1 / torch.clamp(t.sum(spatial, keepdim=True).square(), min=eps)
    intersection = (x * t).sum(spatial, keepdim=True)
    union = (x.square() + t.square()).sum(spatial, keepdim=True)
    numerator = 2 * (weights * intersection).sum(channel, keepdim=True) + eps
    denominator = (weights * union).sum(channel, keepdim=True) + eps
    dice = numerator / denominator
    if plain:
        return dice.reshape(())
    if isinstance(X, DLArray) and X._fmt:
        return DLArray._wrap(dice, Y._fmt)
    # unformatted data: back in the order DataFormat gave its dimensions, as MATLAB's ipermute
    assert DataFormat is not None
    order = sorted(range(len(DataFormat)), key=lambda index: "SCB".index(DataFormat[index]))
    return DLArray._wrap(dice.permute(sorted(range(len(order)), key=order.__getitem__)), "")
