"""What the six adaptations share: building the inner method, prediction partitions and part contexts."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from unishift.methods.base import Method, Sample, SampleContext, Setting
from unishift.methods.domain_weights import (
    PREDICTED_CLASSES,
    SAMPLE,
    UNSHARED,
    domain_weight_plan,
)

# Tags of the two prediction partitions; they name both the fit-time setting and the part context.
PARTS = {1: "pred=1", 0: "pred=0"}


def build_inner(task: str, inner: Any, inner_params: dict | None = None) -> Method:
    """A fresh, unfitted inner method.

    ``inner`` is a registry name of ``task`` (built from its registry defaults plus ``inner_params``,
    without the registry's per-shift defaults: each adapted entry states the inner parameters it needs),
    a factory called with ``inner_params`` (a Method class, or a test oracle), or a Method instance,
    which is deep-copied so that the two partitions never share state.
    """
    inner_params = dict(inner_params or {})
    if isinstance(inner, str):
        from unishift.registry import get_method

        spec = get_method(task, inner)
        method = spec.factory(**{**spec.defaults, **inner_params})
    elif isinstance(inner, Method):
        if inner_params:
            raise ValueError(
                "inner_params cannot be applied to an already constructed inner method"
            )
        method = copy.deepcopy(inner)
    elif callable(inner):
        method = inner(**inner_params)
    else:
        raise TypeError(f"inner={inner!r} is neither a method name, a factory nor a method")
    if getattr(method, "task", None) != task:
        raise TypeError(f"inner method {inner!r} is not a {task} method")
    return method


def inner_domain_weight_plan(adapter) -> str | None:
    """The domain-weight plan of an adapter's inner method (built unfitted, as the adapter would)."""
    return domain_weight_plan(build_inner(adapter.inner_task, adapter.inner, adapter.inner_params))


def fit_notes_of(method: Method, tag: str = "") -> list[tuple[str, str]]:
    prefix = f"{tag}: " if tag else ""
    return [(status, prefix + reason) for status, reason in getattr(method, "fit_notes", []) or []]


def part_context(context: SampleContext, tag: str) -> SampleContext:
    """The child context of one part of the sample, created once per sample and tag.

    Keeping it in the parent's store lets every method of a job that works on the same part (the
    predicted positives, one bin) reuse the part's artifacts, e.g. domain-classifier weights.
    """
    return context.cached(("part", tag), lambda: context.child(tag))


def predicted_masks(sample_or_set) -> dict[int, np.ndarray]:
    predictions = sample_or_set.predictions
    return {1: predictions == 1, 0: predictions == 0}


class PartitionedFit:
    """Mixin: one inner method per predicted class, fitted on that part of the validation set.

    Both parts are always fitted, also when empty or single-class: whether that is possible is the inner
    method's business (it either handles it, recording a fallback, or raises and fails the setup).
    """

    inner_task: str

    def domain_weight_plan(self):
        # each part's inner method makes its calls on its part with its restricted setting
        plan = inner_domain_weight_plan(self)
        return {None: None, SAMPLE: PREDICTED_CLASSES}.get(plan, UNSHARED)

    def fit(self, setting: Setting):
        self.fit_notes = []
        self.inner_ = {}
        masks = predicted_masks(setting.validation)
        for cls, tag in PARTS.items():
            part = setting.restrict_validation(masks[cls], tag)
            self.inner_[cls] = build_inner(self.inner_task, self.inner, self.inner_params).fit(part)
            self.fit_notes.extend(fit_notes_of(self.inner_[cls], tag))
        return self

    def _parts(self, sample: Sample, context: SampleContext):
        """(class, test part, part context) for each non-empty prediction partition of the sample."""
        masks = context.cached(("part-masks",), lambda: predicted_masks(sample))
        for cls, tag in PARTS.items():
            if masks[cls].any():
                yield cls, sample.subset(masks[cls]), part_context(context, tag)
