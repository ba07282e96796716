"""Appendix tables of classifier accuracies (docs/reporting.md §5.1-§5.2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from unishift.io import write_text
from unishift.report.names import classifier_display, latex_escape, order_classifiers


def _fmt(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.3f}"


def render_accuracy_label_tex(frame: pd.DataFrame) -> str:
    """UCI accuracy table from columns (classifier, dataset, accuracy): data sets alphabetically, one
    column per classifier sorted by display name (as the paper's tab:sklearn:acc)."""
    _require(frame, ("classifier", "dataset", "accuracy"))
    wide = frame.pivot(index="dataset", columns="classifier", values="accuracy")
    codes = sorted(wide.columns, key=classifier_display)
    lines = [
        r"\begin{tabular}{l" + "c" * len(codes) + "}",
        r"\toprule",
        " & " + " & ".join(classifier_display(c) for c in codes) + r" \\",
        r"\midrule",
    ]
    for dataset in sorted(wide.index):
        cells = [_fmt(wide.loc[dataset, c]) for c in codes]
        lines.append(rf"\texttt{{{latex_escape(dataset)}}} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def render_accuracy_covariate_tex(frame: pd.DataFrame) -> str:
    """Language-model accuracy table from columns (model, source, target, accuracy): one block of rows
    per model (paper order), one row per source, one column per target (as the paper's tab:lm:acc)."""
    _require(frame, ("model", "source", "target", "accuracy"))
    models = order_classifiers(frame["model"])
    targets = sorted(frame["target"].unique())
    lines = [
        r"\begin{tabular}{ll" + "r" * len(targets) + "}",
        r"\toprule",
        rf" &  & \multicolumn{{{len(targets)}}}{{c}}{{target}}  \\",
        r" & source & " + " & ".join(rf"\texttt{{{latex_escape(t)}}}" for t in targets) + r" \\",
        r"\midrule",
    ]
    for b, model in enumerate(models):
        block = frame[frame["model"] == model]
        wide = block.pivot(index="source", columns="target", values="accuracy")
        sources = sorted(wide.index)
        for i, source in enumerate(sources):
            head = rf"\multirow{{{len(sources)}}}{{*}}{{{latex_escape(model)}}}" if i == 0 else ""
            cells = [_fmt(wide.loc[source, t]) if t in wide.columns else "n/a" for t in targets]
            lines.append(
                f"{head} & \\texttt{{{latex_escape(source)}}} & " + " & ".join(cells) + r" \\"
            )
        if b < len(models) - 1:
            lines.append(rf"\cline{{1-{len(targets) + 2}}}")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def _require(frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"accuracy table lacks columns {missing}")


def write_accuracy_tex(csv_path: str | Path, tex_path: str | Path, shift: str) -> pd.DataFrame:
    """Render ``classifier_accuracy_{shift}.csv`` to its appendix .tex table; returns the frame."""
    frame = pd.read_csv(
        csv_path,
        dtype={"classifier": str, "dataset": str, "model": str, "source": str, "target": str},
    )
    render = render_accuracy_label_tex if shift == "label" else render_accuracy_covariate_tex
    write_text(tex_path, render(frame))
    return frame
