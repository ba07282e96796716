"""The parser of the paper's LaTeX source that wrote the transcription ``unishift/report/paper/*.csv``
(its README) and checks it (``tests/report/test_report_paper.py``). Regenerate the files by hand with
``python -c "from tests.paper_source import write_paper_data; write_paper_data('<tex>')"``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.classifiers import classifier_display, classifier_names
from unishift.io import write_csv
from unishift.report.names import SHIFT_TITLE, TASK_TITLE
from unishift.report.names import title as make_title
from unishift.report.paper import PAPER_DATA

# Result tables of the paper (label -> task, shift). tab:calib:labelshift and both Brier tables have
# empty bodies in the source; calibration under label shift only has its CD-diagram ranks.
RESULT_TABLES = {
    "tab:calib:covshift": ("calibration", "covariate"),
    "tab:quant:covshift": ("quantification", "covariate"),
    "tab:quant:labelshift": ("quantification", "label"),
    "tab:cap:covshift": ("cap", "covariate"),
    "tab:cap:labelshift": ("cap", "label"),
}
# the CD diagrams are titled as ours are
CD_TITLES = {make_title(task, shift): (task, shift) for task in TASK_TITLE for shift in SHIFT_TITLE}
CD_FIGURES = {
    "calibration": "fig:calib:cddiagram",
    "quantification": "fig:quant:cddiagram",
    "cap": "fig:cap:cddiagram",
}
# the paper prints the classifiers by their display names (unishift.classifiers.specs)
PAPER_CLASSIFIERS = {classifier_display(name): name for name in classifier_names(None)}
_GREEK = {"rho": "q", "alpha": "a", "zeta": "c"}


def paper_method_name(display: str) -> str:
    r"""Our registry name for one of the paper's LaTeX method labels.

    ``<base>`` + ``_<qualifier>`` from the superscript (``\text{BCTS}`` -> BCTS, ``\sigma`` -> sigma,
    ``\text{PCC}`` -> PCC) + ``_<x>2<y>`` from the subscript (rho -> q, alpha -> a, zeta -> c) +
    ``_<n>B`` for the number of bins: e.g. ``DoC$_{\alpha 2 \rho}$`` -> DoC_a2q,
    ``LEAP$_{\alpha 2\zeta}^{\text{PCC}-6\text{B}}$`` -> LEAP_PCC_a2c_6B.
    """
    label = display.strip()
    if label.startswith(r"\textbf{") and label.endswith("}"):
        label = label[len(r"\textbf{") : -1]
    label = label.replace("$", "").replace(r"\;", "").strip()
    base = re.match(r"\\text\{([A-Za-z0-9]+)\}|([A-Za-z0-9]+)", label)
    if base is None:
        raise ValueError(f"cannot read a method name from {display!r}")
    name = base.group(1) or base.group(2)
    rest = label[base.end() :]
    qualifiers, bins, reduction = [], "", ""
    sup = re.search(r"\^\{((?:[^{}]|\{[^{}]*\})*)\}", rest)
    if sup:
        for digit, text, symbol in re.findall(
            r"(\d)\\text\{B\}|\\text\{([^{}]*)\}|\\(sigma)", sup.group(1)
        ):
            if digit:
                bins = f"{digit}B"
            elif text:
                qualifiers.append(text)
            else:
                qualifiers.append(symbol)
    sub = re.search(r"_\{\\(rho|alpha|zeta)\s*2\s*\\(rho|alpha|zeta)\}", rest)
    if sub:
        reduction = f"{_GREEK[sub.group(1)]}2{_GREEK[sub.group(2)]}"
    return "_".join(
        [name, *qualifiers] + ([reduction] if reduction else []) + ([bins] if bins else [])
    )


def _dataset(cell: str) -> str:
    parts = re.findall(r"\\texttt\{([^{}]*)\}", cell)
    if not parts:
        raise ValueError(f"no data set name in {cell!r}")
    return "->".join(p.replace(r"\_", "_") for p in parts)


def _sideways(cell: str) -> str:
    m = re.search(r"\\begin\{sideways\}(.*?)\\;\\end\{sideways\}", cell)
    if m is None:
        raise ValueError(f"no sideways label in {cell!r}")
    return m.group(1)


def _split_row(line: str) -> list[str]:
    line = re.sub(r"\\\\(\\(mid|bottom|top)rule)?\s*$", "", line.strip())
    return [c.strip() for c in line.split("&")]


def _table_blocks(tex: str) -> dict[str, str]:
    blocks = {}
    for m in re.finditer(r"\\begin\{table\}(.*?)\\end\{table\}", tex, flags=re.DOTALL):
        label = re.search(r"\\label\{([^{}]*)\}", m.group(1))
        if label:
            blocks[label.group(1)] = m.group(1)
    return blocks


_CELL = re.compile(r"^\$(\\textbf\{)?(-?[\d.]+)\}?\$\\cellcolor\{(green|red)!(\d+)\}$")
_WIN = re.compile(r"^\$(\\dag )?([\d.]+)\\%\$$")


def parse_result_table(block: str, label: str, task: str, shift: str):
    """(cells, wins, ranks) frames of one published result table."""
    lines = [ln for ln in block.splitlines() if "&" in ln]
    header = next(ln for ln in lines if r"\begin{sideways}" in ln and "multicolumn{2}" in ln)
    displays = [_sideways(c) for c in _split_row(header)[1:]]
    groups_line = next(ln for ln in lines if "{Baselines}" in ln)
    group_of = []
    for cell in _split_row(groups_line)[1:]:
        n, name = re.search(r"\\multicolumn\{(\d+)\}\{[^{}]*\}\{([^{}]*)\}", cell).groups()
        group = {"Baselines": "baseline", "Reference": "reference", "Adapted Methods": "adapted"}[
            name
        ]
        group_of += [group] * int(n)
    methods = [paper_method_name(d) for d in displays]
    common = {"table": label, "task": task, "shift": shift}
    cells, wins, ranks = [], [], []
    classifier = None
    for line in lines:
        if line is header or line is groups_line:
            continue
        parts = _split_row(line)
        if r"\Pr(M\succ" in line:
            i = int(re.search(r"\{(\d+)\}R", line).group(1))
            for method, display, cell in zip(methods, displays, parts[2:]):
                if cell == "---":
                    continue
                m = _WIN.match(cell)
                if m is None:
                    raise ValueError(f"{label}: unreadable win cell {cell!r}")
                wins.append(dict(common, method=method, display=display, i=i,
                                 win_rate=float(m.group(2)), dagger=bool(m.group(1))))  # fmt: skip
        elif "Ave Rank" in line:
            for method, display, cell in zip(methods, displays, parts[2:]):
                bold = cell.startswith(r"\textbf{")
                value = float(cell.replace(r"\textbf{", "").rstrip("}"))
                ranks.append(
                    dict(common, method=method, display=display, avg_rank=value, bold=bold)
                )
        elif r"\texttt{" in parts[1]:
            if r"\multirow" in parts[0]:
                classifier = PAPER_CLASSIFIERS[_sideways(parts[0])]
            dataset = _dataset(parts[1])
            if len(parts) - 2 != len(methods):
                raise ValueError(f"{label}: {len(parts) - 2} cells for {len(methods)} methods")
            for method, display, group, cell in zip(methods, displays, group_of, parts[2:]):
                m = _CELL.match(cell)
                if m is None:
                    raise ValueError(f"{label}: unreadable cell {cell!r}")
                tone = int(m.group(4))
                cells.append(dict(common, classifier=classifier, dataset=dataset, method=method,
                                  display=display, group=group, value=float(m.group(2)),
                                  bold=bool(m.group(1)), colour=f"{m.group(3)}!{tone}"))  # fmt: skip
    return pd.DataFrame(cells), pd.DataFrame(wins), pd.DataFrame(ranks)


def parse_cd_diagrams(tex: str) -> pd.DataFrame:
    """Every CD diagram: one row per method (rank, label position) and per group line."""
    rows = []
    for pic in re.findall(r"\\begin\{tikzpicture\}.*?\\end\{tikzpicture\}", tex, flags=re.DOTALL):
        title = re.search(r"title=\{([^{}]*)\}", pic)
        if title is None or title.group(1) not in CD_TITLES:
            continue
        task, shift = CD_TITLES[title.group(1)]
        k = int(re.search(r"xmax=\{(\d+)\}", pic).group(1))
        common = {"figure": CD_FIGURES[task], "task": task, "shift": shift, "k": k}
        for rank, x, y, anchor, label in re.findall(
            r"axis cs:([-\d.]+), 0\) \|- \(axis cs:([-\d.]+), ([-\d.]+)\)\n\s*node\[treatment label, "
            r"anchor=(\w+)\] \{(.*)\};",
            pic,
        ):
            rows.append(dict(common, kind="method", method=paper_method_name(label), display=label,
                             reference=label.startswith(r"\textbf{"), rank=float(rank),
                             lo=np.nan, hi=np.nan, x=float(x), y=float(y), anchor=anchor))  # fmt: skip
        for lo, y, hi in re.findall(
            r"\\draw\[group line\] \(axis cs:([-\d.]+), ([-\d.]+)\) -- \(axis cs:([-\d.]+), [-\d.]+\);",
            pic,
        ):
            rows.append(dict(common, kind="group", method="", display="", reference=False,
                             rank=np.nan, lo=float(lo), hi=float(hi), x=np.nan, y=float(y), anchor=""))  # fmt: skip
    return pd.DataFrame(rows)


def parse_accuracy_tables(tex: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(covariate: table, model, source, target, accuracy; label: table, classifier, dataset,
    accuracy)."""
    blocks = _table_blocks(tex)
    lm, model, targets = [], None, []
    for line in blocks["tab:lm:acc"].splitlines():
        parts = _split_row(line) if "&" in line else []
        if len(parts) >= 3 and parts[1] == "source":
            targets = [_dataset(c) for c in parts[2:]]
        elif len(parts) >= 3 and r"\texttt" in parts[1]:
            if r"\multirow" in parts[0]:
                model = re.search(r"\{\*\}\{([^{}]*)\}", parts[0]).group(1)
            for target, cell in zip(targets, parts[2:]):
                lm.append(
                    {
                        "table": "tab:lm:acc",
                        "model": model,
                        "source": _dataset(parts[1]),
                        "target": target,
                        "accuracy": float(cell),
                    }
                )
    uci, classifiers = [], []
    for line in blocks["tab:sklearn:acc"].splitlines():
        parts = _split_row(line) if "&" in line else []
        if parts and parts[0] == "" and "Logistic" in line:
            classifiers = [PAPER_CLASSIFIERS[c] for c in parts[1:]]
        elif parts and r"\texttt" in parts[0]:
            for clf, cell in zip(classifiers, parts[1:]):
                uci.append(
                    {
                        "table": "tab:sklearn:acc",
                        "classifier": clf,
                        "dataset": _dataset(parts[0]),
                        "accuracy": float(cell),
                    }
                )
    return pd.DataFrame(lm), pd.DataFrame(uci)


def parse_paper(tex: str) -> dict[str, pd.DataFrame]:
    """Every published number of the paper, as the frames stored in ``report/paper/``."""
    blocks = _table_blocks(tex)
    parsed = [
        parse_result_table(blocks[label], label, *table) for label, table in RESULT_TABLES.items()
    ]
    cells, wins, ranks = (pd.concat(frames, ignore_index=True) for frames in zip(*parsed))
    lm, uci = parse_accuracy_tables(tex)
    return {
        "cells": cells,
        "wins": wins,
        "ranks": ranks,
        "cd": parse_cd_diagrams(tex),
        "accuracy_covariate": lm,
        "accuracy_label": uci,
    }


def write_paper_data(tex_path: str | Path, out_dir: str | Path = PAPER_DATA) -> None:
    """(Re)create the transcription files from the paper source (run by hand; the files are
    committed so that the comparison works without the source)."""
    for name, frame in parse_paper(Path(tex_path).read_text(encoding="utf-8")).items():
        write_csv(Path(out_dir) / f"{name}.csv", frame)
