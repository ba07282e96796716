"""Display names and canonical orders of methods, classifiers and data sets in the paper's outputs."""

from __future__ import annotations

from dataclasses import dataclass

from unishift.registry import GROUPS, get_method

# REF's classifier order (lr, nb, knn, mlp) and the paper's language-model order.
CLASSIFIER_ORDER = ("LR", "NB", "kNN", "MLP", "BERT", "DistilBERT", "RoBERTa")
CLASSIFIER_DISPLAY = {
    "LR": "Logistic Regression",
    "NB": "Naïve Bayes",
    "kNN": "k Nearest Neighbor",
    "MLP": "Multi-layer Perceptron",
}
# Label-shift data sets by size (docs/protocols.md §2.1); covariate pairs are ordered source-major.
DATASET_ORDER = (
    "cmc.3",
    "yeast",
    "semeion",
    "wine-q-red",
    "ctg.1",
    "ctg.2",
    "ctg.3",
    "spambase",
    "wine-q-white",
    "pageblocks.5",
)
TASK_TITLE = {
    "calibration": "Calibration",
    "quantification": "Quantification",
    "cap": "Classifier Accuracy Prediction",
}
SHIFT_TITLE = {"label": "Label Shift", "covariate": "Covariate Shift"}


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
    """Columns for the given methods: baselines, then references, then adapted methods, each group
    keeping the order in which ``names`` lists them.

    Display name and group come from the registry; ``info`` (name -> (display, group)) overrides or
    supplies them for methods the registry does not know (e.g. in tests).
    """
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate method names in {list(names)}")
    columns = []
    for name in names:
        if info and name in info:
            display, group = info[name]
        else:
            spec = get_method(task, name, shift)
            display, group = spec.display, spec.group
        if group not in GROUPS:
            raise ValueError(f"method {name!r} has group {group!r}, not one of {GROUPS}")
        columns.append(MethodColumn(name, display, group))
    return sorted(columns, key=lambda c: GROUPS.index(c.group))


def classifier_display(code: str) -> str:
    return CLASSIFIER_DISPLAY.get(code, code)


def order_classifiers(codes) -> list[str]:
    codes = list(dict.fromkeys(codes))
    known = [c for c in CLASSIFIER_ORDER if c in codes]
    return known + sorted(c for c in codes if c not in CLASSIFIER_ORDER)


def order_datasets(names) -> list[str]:
    """Label-shift names in the paper's size order, then unknown ones and source->target pairs sorted
    (sorting pairs as strings gives the source-major order of the paper)."""
    names = list(dict.fromkeys(names))
    known = [d for d in DATASET_ORDER if d in names]
    return known + sorted(d for d in names if d not in DATASET_ORDER)


def latex_escape(text: str) -> str:
    for char, repl in (
        ("\\", r"\textbackslash{}"),
        ("_", r"\_"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("#", r"\#"),
    ):
        text = text.replace(char, repl)
    return text


def dataset_latex(name: str) -> str:
    """``\\texttt{a}$\\rightarrow$\\texttt{b}`` for a covariate pair, ``\\texttt{name}`` otherwise."""
    return r"$\rightarrow$".join(rf"\texttt{{{latex_escape(part)}}}" for part in name.split("->"))


def title(task: str, shift: str) -> str:
    return f"{TASK_TITLE.get(task, task.title())} under {SHIFT_TITLE.get(shift, shift.title())}"
