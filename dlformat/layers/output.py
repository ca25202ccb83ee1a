"""MATLAB's output layers: ``classificationLayer``, ``regressionLayer``, ``pixelClassificationLayer``,
``dicePixelClassificationLayer``, and the bases of custom output layers,
``nnet.layer.ClassificationLayer`` and ``nnet.layer.RegressionLayer``.

An output layer ends a ``layerGraph`` or a layer array for ``assembleNetwork`` (MATLAB's
legacy ``trainNetwork`` workflow): it has one input and no outputs, passes its input through
when predicting (a network's prediction is what reaches it), and holds the loss in
``forwardLoss(Y, T)``, MATLAB's method name. ``dlnetwork`` refuses these layers, as MATLAB's
does: there the loss goes to ``trainnet`` or a custom training loop.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from .. import _validate
from .._categorical import Categorical
from .._dlarray import DLArray, as_dlarray, require_dimensions, require_formatted
from .._errors import DLFormatError
from ..functional import crossentropy, generalizedDice, mse
from ._base import Layer, matlab_constructor
from ._properties import Property

__all__ = [
    "ClassificationLayer",
    "ClassificationOutputLayer",
    "DicePixelClassificationLayer",
    "OutputLayer",
    "PixelClassificationLayer",
    "RegressionLayer",
    "RegressionOutputLayer",
    "classificationLayer",
    "dicePixelClassificationLayer",
    "pixelClassificationLayer",
    "regressionLayer",
]

HYPERPARAMETERS = "Hyperparameters"


def _names(label: str, value: object, *, empty: str) -> str | tuple[str, ...]:
    """``empty`` (``"auto"``) or a list of unique, non-empty names, kept as a tuple."""
    if isinstance(value, str) and value.lower() == empty:
        return empty
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise DLFormatError(f'{label} must be "{empty}" or a list of names; got {_validate.describe(value)}')
    names = tuple(_validate.text(label, name) for name in value)
    if not names or not all(names) or len(set(names)) != len(names):
        raise DLFormatError(f"{label} must be unique, non-empty names; got {list(names)}")
    return names


def _classes(label: str, value: object) -> str | Categorical:
    """``"auto"``, or the classes as MATLAB's output layers hold them: a categorical whose elements
    and categories are the names in order (MathWorks' ClassificationOutputLayer page: names ``str``
    become ``categorical(str, str)``). A categorical given keeps its elements' order."""
    if isinstance(value, Categorical):
        if (value.codes < 0).any():
            raise DLFormatError(f"{label} must name each class; the categorical given has undefined elements")
        value = tuple(value.tolist()) if value.ndim else (value.tolist(),)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "UO":
        value = tuple(str(item) for item in value.ravel())
    names = _names(label, value, empty="auto")
    if isinstance(names, str):
        return names
    return Categorical(np.arange(1, len(names) + 1), names)


def class_names(classes: str | Categorical) -> list[str]:
    """The names of a layer's ``Classes`` (``[]`` while ``"auto"``)."""
    return [] if isinstance(classes, str) else list(classes.categories)


def _class_weights(label: str, value: object) -> str | tuple[float, ...]:
    """``"none"`` or one positive weight per class."""
    if isinstance(value, str) and value.lower() == "none":
        return "none"
    try:
        data = None if isinstance(value, str) else torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        data = None
    if data is None or data.ndim > 2 or (data.ndim == 2 and min(data.shape) != 1) or data.numel() == 0:
        raise DLFormatError(
            f'{label} must be "none" or a vector of positive numbers; got {_validate.describe(value)}'
        )
    weights = tuple(float(weight) for weight in data.reshape(-1))
    if not all(weight > 0 and weight != float("inf") for weight in weights):
        raise DLFormatError(f"{label} must be positive and finite; got {list(weights)}")
    return weights


def _response_names(label: str, value: object) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)) and not value:
        return ()
    names = _names(label, value, empty="")
    return () if names == "" else tuple(names)


class OutputLayer(Layer):
    """Base of MATLAB's output layers: one input, no outputs; ``predict`` passes the data
    through and ``forwardLoss(Y, T)`` gives the loss (MATLAB's ``nnet.layer.ClassificationLayer``
    and ``nnet.layer.RegressionLayer`` define the same method for custom output layers)."""

    default_outputs = 0
    LossFunction: ClassVar[str] = ""

    def predict(self, X: DLArray) -> DLArray:
        return require_formatted(X, self._caller)

    def forwardLoss(self, Y: Any, T: Any) -> DLArray:
        """The loss of predictions ``Y`` against targets ``T`` (an unformatted scalar dlarray)."""
        raise NotImplementedError(f"{type(self).__name__} must define forwardLoss(self, Y, T)")

    def _display_groups(self) -> list[tuple[str, list[str]]]:
        groups = super()._display_groups()
        extra = [name for name in ("OutputSize",) if hasattr(type(self), name)]
        return [("", groups[0][1] + extra), *groups[1:], (HYPERPARAMETERS, ["LossFunction"])]

    def _display_value(self, name: str) -> str:
        value = getattr(self, name)
        if isinstance(value, Categorical):
            return f"[{len(value)}×1 categorical]"
        if isinstance(value, tuple):
            if not value:
                return "{}"
            kind = "categorical" if name == "Classes" else "double" if name == "ClassWeights" else "cell"
            return f"[{len(value)}×1 {kind}]"
        return super()._display_value(name)


class ClassificationLayer(OutputLayer):
    """MATLAB's ``nnet.layer.ClassificationLayer``: the base of custom classification output layers.

    A subclass defines ``forwardLoss(self, Y, T)``: ``Y`` the network's scores, ``T`` the
    one-hot targets in ``Y``'s format (``trainNetwork`` encodes class labels with ``Classes``;
    label images give one-hot ``"SSCB"`` targets, a pixel with an undefined label all zeros).
    ``Classes`` is ``"auto"`` until ``trainNetwork`` sets it from the labels; ``classify``
    names its labels from it. A ``backwardLoss`` is never called: autograd differentiates
    ``forwardLoss``, as MATLAB does for a layer without one.

    Examples:
        >>> class SSELayer(dlf.ClassificationLayer):
        ...     def forwardLoss(self, Y, T):  # sum of squares per observation, then their mean
        ...         return dlf.sum((Y - T) ** 2, "all") / dlf.size(Y, dlf.finddim(Y, "B"))
        >>> layer = SSELayer(Name="sse")
        >>> Y = dlf.dlarray(torch.tensor([[0.8, 0.4], [0.2, 0.6]]), "CB")
        >>> T = dlf.dlarray(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), "CB")
        >>> layer.Classes, round(float(dlf.extractdata(layer.forwardLoss(Y, T))), 4)
        ('auto', 0.2)
    """

    Classes = Property(
        _classes,
        default="auto",
        read_only=True,
        doc='"auto" (set by training) or the classes: a categorical of the class names, in order.',
    )

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        if isinstance(config.get("Classes"), Categorical):  # plain names rebuild it (network files)
            config["Classes"] = class_names(config["Classes"])
        return config


class _ClassificationBase(ClassificationLayer):
    """ClassWeights and the weighted cross-entropy both built-in classification layers share."""

    LossFunction = "crossentropyex"

    ClassWeights = Property(
        _class_weights,
        default="none",
        read_only=True,
        doc='"none" or one positive weight per class of Classes (which must then be given).',
    )

    def _check_properties(self) -> None:
        weights, classes = self.ClassWeights, self.Classes
        if weights != "none" and (isinstance(classes, str) or len(weights) != len(classes)):
            raise DLFormatError(
                f"{type(self).__name__}: ClassWeights needs Classes with one name per weight; got "
                f"{len(weights)} weights and Classes {classes if isinstance(classes, str) else len(classes)}"
            )

    @property
    def OutputSize(self) -> int | str:
        """The number of classes: ``"auto"`` until Classes is known, as MATLAB shows it."""
        return "auto" if isinstance(self.Classes, str) else len(self.Classes)

    def forwardLoss(self, Y: Any, T: Any) -> DLArray:
        """MATLAB's ``crossentropyex``: ``−(1/N) Σₙ Σᵢ wᵢ Tₙᵢ log Yₙᵢ``, N the observations.

        Spatial positions and time steps add up within an observation; ``wᵢ`` are the
        ClassWeights (1 with ``"none"``). Targets are one-hot, in ``Y``'s format and size.
        """
        Y = self._scores(Y, "C")
        return crossentropy(Y, T, self._weights(Y), NormalizationFactor="batch-size")

    def _scores(self, Y: Any, labels: str) -> DLArray:
        """``Y``, checked: the ``labels`` it needs, and one channel per class once Classes is known."""
        scores: DLArray = require_dimensions(Y, labels, self._caller)
        classes = scores.shape[scores._fmt.index("C")]
        if self.OutputSize != "auto" and classes != self.OutputSize:
            raise DLFormatError(
                f'{self._caller()}: the predictions have {classes} channels ("C"); the layer has '
                f"{self.OutputSize} classes"
            )
        return scores

    def _weights(self, Y: DLArray) -> torch.Tensor | None:
        # the weights take the predictions' precision (MATLAB's are doubles, which never lower it)
        return None if self.ClassWeights == "none" else torch.tensor(self.ClassWeights, dtype=Y.dtype)


class ClassificationOutputLayer(_ClassificationBase):
    """MATLAB's ``classificationLayer``: cross-entropy for mutually exclusive classes.

    Predicting passes the scores (a softmax's output) through; ``forwardLoss(Y, T)`` is the
    class-weighted cross-entropy averaged over the observations. ``Classes`` names the classes
    (``classify`` reads its labels from them); ``OutputSize`` is their number.

    Examples:
        >>> layer = dlf.classificationLayer(Classes=["cat", "dog"], ClassWeights=[1, 3])
        >>> Y = dlf.dlarray(torch.tensor([[0.8, 0.4], [0.2, 0.6]]), "CB")
        >>> T = dlf.dlarray(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), "CB")
        >>> layer.OutputSize, round(float(dlf.extractdata(layer.forwardLoss(Y, T))), 4)
        (2, 0.8778)
    """

    default_name = "classoutput"
    matlab_type = "Classification Output"

    def _check_properties(self) -> None:
        super()._check_properties()
        if isinstance(self.Classes, str):
            self.Description = self.LossFunction
        else:
            others = len(self.Classes) - 1
            self.Description = f"{self.LossFunction} with '{class_names(self.Classes)[0]}'" + (
                f" and {others} other class{'es' if others > 1 else ''}" if others else ""
            )


class PixelClassificationLayer(_ClassificationBase):
    """MATLAB's ``pixelClassificationLayer``: cross-entropy per pixel (or voxel) for segmentation.

    The cross-entropy of ``"SSCB"`` or ``"SSSCB"`` scores, normalized as MathWorks' own
    implementation of the layer (``nnet.internal.cnn.layer.SpatialCrossEntropy``, R2017b-R2018b
    source) does: without ClassWeights, ``−Σ T log Y`` divided by the number of pixels of all
    the images (``H·W·N``, ``H·W·D·N``), undefined pixels included; with ClassWeights, each
    pixel weighted by its class's weight and the weights normalized to sum to 1 over the
    labelled pixels, so the loss is their weighted mean. Pixels whose target is all zeros
    (MATLAB's undefined labels) add nothing to the sums.

    Examples:
        >>> layer = dlf.pixelClassificationLayer()
        >>> layer.Name, layer.OutputSize, layer.LossFunction
        ('', 'auto', 'crossentropyex')
    """

    default_name = "classoutput"  # the prefix MATLAB gave it in a saved network, as classificationLayer's
    matlab_type = "Pixel Classification Layer"
    Description = "Cross-entropy loss"

    def forwardLoss(self, Y: Any, T: Any) -> DLArray:
        """``−(1/(H·W·N)) Σ T log Y``; with ClassWeights ``−Σ W log Y``, ``W = T·w / Σ T·w`` (see
        the class)."""
        Y = self._scores(Y, "SC")
        weights = self._weights(Y)
        if weights is None:
            return crossentropy(Y, T, NormalizationFactor="all-elements")
        # MATLAB normalizes the class weights, then the pixels' weights, each to sum to 1 (+ eps)
        eps = torch.finfo(Y.dtype).eps
        weights = weights / (weights.sum() + eps)
        summed = crossentropy(Y, T, weights, NormalizationFactor="none")
        channel = [1] * Y._data.ndim
        channel[Y._fmt.index("C")] = -1
        pixel_weights = (as_dlarray(T)._data.to(Y.dtype) * weights.reshape(channel)).sum()
        return as_dlarray(summed / (pixel_weights + eps))


def _two_or_more_classes(label: str, value: object) -> str | Categorical:
    """``"auto"`` or at least two class names: MathWorks' source of the layer refuses fewer
    (``vision:semanticseg:MultiClass``)."""
    classes = _classes(label, value)
    if not isinstance(classes, str) and len(classes) < 2:
        raise DLFormatError(f"{label} must name two or more classes; got {class_names(classes)}")
    return classes


class DicePixelClassificationLayer(ClassificationLayer):
    """Computer Vision Toolbox's ``dicePixelClassificationLayer``: the generalized Dice loss of
    segmentation scores, for ``trainNetwork`` (MATLAB marks the layer "to be removed", in favour of
    ``trainnet`` with ``generalizedDice``).

    ``forwardLoss(Y, T)`` is ``Σₙ (1 − dₙ) / N``, ``dₙ`` the generalized Dice similarity
    (:func:`dlformat.functional.generalizedDice`) of observation ``n``'s scores and one-hot
    targets and ``N`` the number of observations: MathWorks' own implementation of the layer
    (``nnet.internal.cnn.layer.GeneralizedDiceLoss``, 2019–2021). Pixels whose targets are all zero
    (undefined labels) add nothing to the class sizes and intersections, and their scores' squares
    still add to the unions, as that implementation computes them. ``Classes`` is ``"auto"``
    (set by training) or two or more names; ``OutputSize`` is their number.

    Examples:
        >>> layer = dlf.dicePixelClassificationLayer(Classes=["sky", "road"])
        >>> Y = dlf.dlarray(torch.tensor([[0.9, 0.1], [0.2, 0.8]]).reshape(2, 1, 2, 1), "SSCB")
        >>> T = dlf.dlarray(torch.tensor([[1.0, 0.0], [0.0, 1.0]]).reshape(2, 1, 2, 1), "SSCB")
        >>> layer.LossFunction, round(float(dlf.extractdata(layer.forwardLoss(Y, T))), 6)  # 1 − 3.4/3.5
        ('generalizedDiceLoss', 0.028571)
    """

    default_name = "classoutput"  # the DefaultName of MathWorks' GeneralizedDiceLoss
    matlab_type = "Dice Pixel Classification Layer"
    LossFunction = "generalizedDiceLoss"
    Description = "Generalized Dice loss"

    Classes = Property(
        _two_or_more_classes,
        default="auto",
        read_only=True,
        doc='"auto" (set by training) or two or more class names, in order.',
    )

    @property
    def OutputSize(self) -> int | str:
        """The number of classes: ``"auto"`` until Classes is known."""
        return "auto" if isinstance(self.Classes, str) else len(self.Classes)

    def forwardLoss(self, Y: Any, T: Any) -> DLArray:
        """``Σₙ (1 − generalizedDice(Y, T)ₙ) / N`` over the ``N`` observations (see the class)."""
        scores: DLArray = require_dimensions(Y, "SC", self._caller)
        classes = scores.shape[scores._fmt.index("C")]
        if self.OutputSize != "auto" and classes != self.OutputSize:
            raise DLFormatError(
                f'{self._caller()}: the predictions have {classes} channels ("C"); the layer has '
                f"{self.OutputSize} classes"
            )
        try:
            dice = generalizedDice(scores, T)
        except DLFormatError as error:
            raise DLFormatError(f"{self._caller()}: {error}") from None
        observations = scores.shape[scores._fmt.index("B")] if "B" in scores._fmt else 1
        return DLArray._wrap((1 - dice._data).sum() / observations, "")


class RegressionLayer(OutputLayer):
    """MATLAB's ``nnet.layer.RegressionLayer``: the base of custom regression output layers.

    A subclass defines ``forwardLoss(self, Y, T)``: ``Y`` the network's responses, ``T`` the
    targets in ``Y``'s format. ``ResponseNames`` names the responses (empty: none). A
    ``backwardLoss`` is never called: autograd differentiates ``forwardLoss``, as MATLAB does
    for a layer without one.

    Examples:
        >>> class MAELayer(dlf.RegressionLayer):
        ...     def forwardLoss(self, Y, T):  # mean over the responses, then over the observations
        ...         responses = dlf.size(Y, dlf.finddim(Y, "C"))
        ...         return dlf.mean(dlf.sum(abs(Y - T), 1) / responses, "all")
        >>> Y = dlf.dlarray(torch.tensor([[1.0, 3.0], [2.0, 0.0]]), "CB")
        >>> float(dlf.extractdata(MAELayer().forwardLoss(Y, torch.zeros(2, 2))))  # (3/2 + 3/2) / 2
        1.5
    """

    ResponseNames = Property(
        _response_names, default=(), read_only=True, doc="The names of the responses (empty: none)."
    )


class RegressionOutputLayer(RegressionLayer):
    """MATLAB's ``regressionLayer``: half mean squared error for regression.

    ``forwardLoss(Y, T)`` is, per observation, ``½ Σᵢ (tᵢ − yᵢ)²`` over the responses (and
    over every pixel for image-to-image regression), divided by the sequence length ``S`` for
    sequence-to-sequence data (a ``"T"`` dimension); then the mean over the observations.
    Not normalized by the number of responses (MathWorks' regressionLayer page).

    Examples:
        >>> layer = dlf.regressionLayer(ResponseNames=["y"])
        >>> Y = dlf.dlarray(torch.tensor([[1.0, 3.0]]), "CB")
        >>> float(dlf.extractdata(layer.forwardLoss(Y, torch.zeros(1, 2))))  # (1 + 9) / 2 / 2
        2.5
    """

    default_name = "regressionoutput"
    matlab_type = "Regression Output"
    LossFunction = "mean-squared-error"
    Description = "mean-squared-error"

    def forwardLoss(self, Y: Any, T: Any) -> DLArray:
        Y = require_formatted(Y, self._caller)
        loss = mse(Y, T)
        steps = Y.shape[Y._fmt.index("T")] if "T" in Y._fmt else 1
        return loss / steps if steps != 1 else loss


classificationLayer = matlab_constructor(ClassificationOutputLayer, "classificationLayer")
pixelClassificationLayer = matlab_constructor(PixelClassificationLayer, "pixelClassificationLayer")
dicePixelClassificationLayer = matlab_constructor(
    DicePixelClassificationLayer, "dicePixelClassificationLayer"
)
regressionLayer = matlab_constructor(RegressionOutputLayer, "regressionLayer")
