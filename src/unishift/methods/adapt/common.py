"""What the adaptations share: building the inner method, the predicted-class parts D_j (tagged
"pred=j", for two classes the binary tables' tags, so derived seeds and shared artifacts are
theirs) and part contexts."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import clone

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Method, SampleContext
from unishift.methods.domain_weights import (
    PREDICTED_CLASSES,
    SAMPLE,
    UNSHARED,
    domain_weight_plan,
)


def part_tag(cls: int) -> str:
    return f"pred={cls}"


def build_inner(task: str, inner: Any, inner_params: dict | None = None) -> Method:
    """A fresh, unfitted inner method of ``task`` from a factory (called with ``inner_params``: a
    class, a test oracle) or an instance (cloned: parts never share state)."""
    inner_params = dict(inner_params or {})
    if isinstance(inner, str):
        raise TypeError(
            f"inner={inner!r} names a method: build the adaptation through the registry "
            f"(registry.get_method(...).build(shift, n_classes)), which resolves the name, or "
            f"pass the method class or an instance"
        )
    if isinstance(inner, Method):
        if inner_params:
            raise ValueError(
                "inner_params cannot be applied to an already constructed inner method"
            )
        method = clone(inner)
    elif inner is None:
        raise TypeError(f"an adaptation needs its inner {task} method: pass inner=")
    elif callable(inner):
        method = inner(**inner_params)
    else:
        raise TypeError(f"inner={inner!r} is neither a method factory nor a method")
    if getattr(method, "task", None) != task:
        raise TypeError(f"inner method {inner!r} is not a {task} method")
    return method


def fit_notes_of(method: Method, tag: str = "") -> list[tuple[str, str]]:
    prefix = f"{tag}: " if tag else ""
    return [(status, prefix + reason) for status, reason in method.fit_notes]


def part_context(context: SampleContext, tag: str) -> SampleContext:
    """The child context of one part of the sample, kept in the parent's store so that every
    method of a job that works on the same part shares the part's artifacts."""
    return context.cached(("part", tag), lambda: context.child(tag))


class Adapter:
    """Base of the adapters: by default one inner method (:func:`build_inner`) fitted on the whole
    validation set and applied to the whole sample. ``inner`` is a method (cloned for each fit, its
    parameters nested as ``inner__<name>``) or a factory called with ``inner_params``."""

    group = "adapted"
    inner_task: ClassVar[str]

    def __init__(self, inner: Any = None, inner_params: dict | None = None):
        self.inner = inner
        self.inner_params = inner_params

    def _new_inner(self) -> Method:
        return build_inner(self.inner_task, self.inner, self.inner_params)

    def check_params(self):
        self._new_inner().check_params()

    def skip(self, setting: Setting) -> str | None:
        return super().skip(setting) or self._new_inner().skip(setting)

    def domain_weight_plan(self):
        # the inner method sees the whole sample and setting: its calls are the adapter's
        return domain_weight_plan(self._new_inner())

    def _fit(self, setting: Setting) -> None:
        self.inner_ = self._new_inner().fit(setting)
        self.fit_notes.extend(fit_notes_of(self.inner_))

    def _fit_part(self, setting: Setting, mask: np.ndarray, tag: str) -> Method:
        """An inner method fitted on the validation items ``mask``; its fit notes tagged ``tag``."""
        method = self._new_inner().fit(setting.restrict_validation(mask, tag))
        self.fit_notes.extend(fit_notes_of(method, tag))
        return method


def predicted_masks(data) -> dict[int, np.ndarray]:
    predictions = data.predictions
    return {cls: predictions == cls for cls in range(data.n_classes)}


def class_share(prevalence, cls: int) -> float:
    """The share of class ``cls`` in a prevalence vector; for two classes the positive share and
    its complement, as the binary tables computed them (QuaPy's entry 0 can differ from 1 - p_1 in
    the last bit)."""
    prevalence = np.asarray(prevalence, dtype=float)
    if len(prevalence) == 2:
        return float(prevalence[1]) if cls == 1 else 1.0 - float(prevalence[1])
    return float(prevalence[cls])


class PartitionedFit(Adapter):
    """One inner method per predicted class, fitted on that part of the validation set; an empty
    part is answered, recorded, by one fitted on the whole set (docs/multiclass.md §2). Parts are
    applied highest class first and fitted in class order, for two classes highest first too (the
    binary tables' orders of a continued random stream and of fit notes)."""

    def domain_weight_plan(self):
        # each part's inner method makes its calls on its part with its restricted setting
        return {None: None, SAMPLE: PREDICTED_CLASSES}.get(super().domain_weight_plan(), UNSHARED)

    def _fit(self, setting: Setting) -> None:
        self.inner_ = {}
        self.whole_ = None
        k = self.n_classes_ = setting.n_classes
        masks = predicted_masks(setting.validation)
        for cls in reversed(range(k)) if k == 2 else range(k):
            if masks[cls].any():
                self.inner_[cls] = self._fit_part(setting, masks[cls], part_tag(cls))
        self.empty_parts_ = [cls for cls in range(k) if cls not in self.inner_]
        if self.empty_parts_:
            self.whole_ = self._new_inner().fit(setting)

    def _parts(self, sample: Sample, context: SampleContext):
        """(class, inner method, test part, part context) for each non-empty prediction part."""
        masks = context.cached(("part-masks",), lambda: predicted_masks(sample))
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
