"""Display names and canonical orders of methods, classifiers and data sets in the paper's outputs
(those of classifiers and data sets re-exported from where they are described)."""

from __future__ import annotations

from dataclasses import dataclass

from unishift.classifiers.specs import classifier_display, order_classifiers  # noqa: F401
from unishift.data.datasets import order_datasets  # noqa: F401
from unishift.methods.registry import GROUPS, get_method

TASK_TITLE = {
    "calibration": "Calibration",
    "quantification": "Quantification",
    "cap": "Classifier Accuracy Prediction",
}
SHIFT_TITLE = {"label": "Label Shift", "covariate": "Covariate Shift", "compound": "Compound Shift"}
# The column groups of a table, in column order: the registry's method groups, then "selection"
# (the Selector, built from the other columns' records; docs/regimes.md §5.4).
TABLE_GROUPS = (*GROUPS, "selection")


@dataclass(frozen=True)
class MethodColumn:
    name: str
    display: str
    group: str


def resolve_methods(
    task: str,
    names: list[str] | tuple[str, ...],
    shift: str | None = None,
    info: dict[str, tuple[str, str]] | None = None,
) -> list[MethodColumn]:
    """Columns for ``names`` grouped in :data:`TABLE_GROUPS` order (``names``' order within a group),
    with display name and group from ``info`` (name -> (display, group)) where it names the method,
    else from the registry."""
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate method names in {list(names)}")
    columns = []
    for name in names:
        if info and name in info:
            display, group = info[name]
        else:
            spec = get_method(task, name, shift)
            display, group = spec.display, spec.group
        if group not in TABLE_GROUPS:
            raise ValueError(f"method {name!r} has group {group!r}, not one of {TABLE_GROUPS}")
        columns.append(MethodColumn(name, display, group))
    return sorted(columns, key=lambda c: TABLE_GROUPS.index(c.group))


_LATEX = str.maketrans({"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#"})


def latex_escape(text: str) -> str:
    return text.translate(_LATEX)


def title(task: str, shift: str) -> str:
    return f"{TASK_TITLE.get(task, task.title())} under {SHIFT_TITLE.get(shift, shift.title())}"
