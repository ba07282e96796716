"""What the multiclass adaptations share: building inner methods and predicted-class partitions.

The binary adapters cut the data into the predicted positives and negatives; here into the k parts
D_j = {x : argmax h(x) = j}. The parts carry the same tags as the binary ones ("pred=j"), so that for
k = 2 every derived seed and shared per-sample artifact is the binary adapters' own.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from unishift.methods.adapt.common import part_context
from unishift.multiclass.base import MulticlassMethod, MulticlassSetting

TASK_BASES = {
    "calibration": "MulticlassCalibrator",
    "quantification": "MulticlassQuantifier",
    "cap": "MulticlassAccuracyPredictor",
}


def part_tag(cls: int) -> str:
    return f"pred={cls}"


def build_inner(task: str, inner: Any, inner_params: dict | None = None) -> MulticlassMethod:
    """A fresh, unfitted inner method of ``task``.

    ``inner`` is a catalogue name (:mod:`unishift.multiclass.catalogue`), a factory called with
    ``inner_params`` (a method class, or a test oracle), or a method instance (deep-copied so that the
    parts never share state).
    """
    inner_params = dict(inner_params or {})
    if isinstance(inner, str):
        from unishift.multiclass.catalogue import get_method

        spec = get_method(task, inner)
        method = spec.factory(**{**spec.defaults, **inner_params})
    elif isinstance(inner, MulticlassMethod):
        if inner_params:
            raise ValueError(
                "inner_params cannot be applied to an already constructed inner method"
            )
        method = copy.deepcopy(inner)
    elif callable(inner):
        method = inner(**inner_params)
    else:
        raise TypeError(f"inner={inner!r} is neither a method name, a factory nor a method")
    if getattr(method, "task", None) != task or getattr(method, "regime", None) != "multiclass":
        raise TypeError(f"inner method {inner!r} is not a multiclass {task} method")
    return method


def fit_notes_of(method, tag: str = "") -> list[tuple[str, str]]:
    prefix = f"{tag}: " if tag else ""
    return [(status, prefix + reason) for status, reason in getattr(method, "fit_notes", []) or []]


def predicted_masks(data) -> dict[int, np.ndarray]:
    predictions = data.predictions
    n_classes = data.n_classes
    return {cls: predictions == cls for cls in range(n_classes)}


class PartitionedFit:
    """Mixin: one inner method per predicted class, fitted on that part of the validation set.

    Every non-empty part is fitted, also when it lacks classes: whether that is possible is the inner
    method's business (it handles it, recording a fallback, or raises and fails the setup). A class
    the classifier never predicts on the validation set (common for rare classes when k > 2) leaves
    an empty part that nothing can be fitted on: test items predicted as that class are then answered
    by one inner method fitted on the whole validation set, recorded per sample. (The binary adapters
    pass the empty part to the inner method; with two classes this never happened in the tables.)
    """

    inner_task: str

    def fit(self, setting: MulticlassSetting):
        self.fit_notes = []
        self.inner_ = {}
        self.whole_ = None
        self.n_classes_ = setting.n_classes
        masks = predicted_masks(setting.validation)
        for cls in range(setting.n_classes):
            if not masks[cls].any():
                continue
            part = setting.restrict_validation(masks[cls], part_tag(cls))
            method = build_inner(self.inner_task, self.inner, self.inner_params).fit(part)
            self.inner_[cls] = method
            self.fit_notes.extend(fit_notes_of(method, part_tag(cls)))
        self.empty_parts_ = [cls for cls in range(setting.n_classes) if cls not in self.inner_]
        if self.empty_parts_:
            self.whole_ = build_inner(self.inner_task, self.inner, self.inner_params).fit(setting)
        self._fit_extra(setting)
        return self

    def _fit_extra(self, setting: MulticlassSetting) -> None:
        """Hook for what an adapter learns besides its inner methods."""

    def _parts(self, sample, context):
        """(class, inner method, test part, part context) for each non-empty prediction part."""
        masks = context.cached(("part-masks",), lambda: predicted_masks(sample))
        # highest class first: for k = 2 the binary adaptations' order (predicted positives, then
        # negatives), so that a random stream continued across parts (the binary branch's
        # domain_stream "reference") is consumed in the same order
        for cls in reversed(range(self.n_classes_)):
            if masks[cls].any():
                method = self.inner_.get(cls)
                if method is None:
                    context.note(
                        "fallback",
                        f"{part_tag(cls)}: no validation item is predicted {cls}; the inner method "
                        "fitted on the whole validation set answers for this part",
                    )
                    method = self.whole_
                yield cls, method, sample.subset(masks[cls]), part_context(context, part_tag(cls))


__all__ = ["PartitionedFit", "build_inner", "fit_notes_of", "part_context", "predicted_masks"]
