"""Critical-difference diagrams: TikZ/pgfplots code with the geometry of the paper's figures
(docs/reporting.md §3.3) and a matplotlib rendering of the same geometry."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.evaluation.stats import ALPHA, CDResult, cd_analysis
from unishift.figures import figure_settings, pyplot, save_figure
from unishift.io import write_text
from unishift.report.names import title as make_title
from unishift.report.tables import TableResult

_PREAMBLE = r"""\begin{tikzpicture}[
  treatment line/.style={rounded corners=1.5pt, line cap=round, shorten >=1pt},
  treatment label/.style={font=\small},
  group line/.style={ultra thick},
]

\begin{axis}[
  clip={false},
  axis x line={center},
  axis y line={none},
  axis line style={-},
  xmin={1},
  ymax={0},
  scale only axis={true},
  width={\axisdefaultwidth},
  ticklabel style={anchor=south, yshift=1.3*\pgfkeysvalueof{/pgfplots/major tick length}, font=\small},
  every tick/.style={draw=black},
  major tick style={yshift=.5*\pgfkeysvalueof{/pgfplots/major tick length}},
  minor tick style={yshift=.5*\pgfkeysvalueof{/pgfplots/minor tick length}},
  title style={yshift=\baselineskip},
"""


@dataclass(frozen=True)
class Treatment:
    name: str
    label: str  # LaTeX, bold for reference methods
    rank: float
    y: float
    label_x: float
    left: bool


@dataclass(frozen=True)
class GroupLine:
    members: tuple[str, ...]
    lo: float
    hi: float
    y: float


@dataclass(frozen=True)
class CDLayout:
    k: int
    title: str
    treatments: list[Treatment]
    groups: list[GroupLine]
    xtick: list[float] | None
    minor_ticks: int | None

    @property
    def ymin(self) -> float:
        return -(self.k // 2 + 1.5)

    @property
    def height(self) -> int:
        return self.k // 2 + 2


def xticks(k: int) -> tuple[list[float] | None, int | None]:
    """Explicit ticks for the rank axis; None means pgfplots' defaults (critdd's rules)."""
    if k <= 8:
        return list(range(1, k + 1)), 3 if k <= 6 else 1
    if k == 10:
        return [1 + 1.5 * i for i in range(7)], 1
    if (k - 1) % 3 == 0:
        return list(range(1, k + 1, 3)), 1
    if k % 2 == 1:
        return list(range(1, k + 1, 2)), 1
    return None, None


def cd_layout(
    result: CDResult, labels: dict[str, str], bold: set[str] | frozenset[str], title: str
) -> CDLayout:
    """Positions of every method label and group line (docs/reporting.md §3.3)."""
    k = len(result.methods)
    order = sorted(range(k), key=lambda i: (result.avg_ranks[i], i))
    half = k // 2
    ranks = [float(result.avg_ranks[i]) for i in order]
    offset = 0.5 if k % 2 else 0.0
    treatments = []
    for pos, i in enumerate(order):
        name = result.methods[i]
        label = labels.get(name, name)
        label = rf"\textbf{{{label}}}" if name in bold else label
        left = pos < half
        if left:
            y, x = 2.0 + pos + offset, ranks[0] - k / 12
        else:
            y, x = float((k - half) + 1 - (pos - half)), ranks[-1] + k / 12
        treatments.append(Treatment(name, label, float(result.avg_ranks[i]), y, x, left))
    by_name = {t.name: t for t in treatments}
    groups: list[GroupLine] = []
    levels = [(min(by_name[m].y for m in members) * 2 / 3, members) for members in result.groups]
    for y, members in sorted(levels, key=lambda level: level[0]):
        # Stacked groups that share a method are pulled apart so that their bars do not overlap.
        if groups and set(members) & set(groups[-1].members):
            y = max(y, groups[-1].y + 0.2)
        member_ranks = [by_name[m].rank for m in members]
        groups.append(GroupLine(tuple(members), min(member_ranks), max(member_ranks), y))
    return CDLayout(k, title, treatments, groups, *xticks(k))


def _num(x: float) -> str:
    return repr(float(x))


def render_cd_tikz(layout: CDLayout) -> str:
    lines = [_PREAMBLE.rstrip("\n")]
    lines.append(f"  xmax={{{layout.k}}},")
    lines.append(f"  ymin={{{_num(layout.ymin)}}},")
    lines.append(f"  height={{{layout.height}\\baselineskip}},")
    if layout.xtick is not None:
        lines.append("  xtick={" + ",".join(f"{t:g}" for t in layout.xtick) + "},")
        lines.append(f"  minor x tick num={{{layout.minor_ticks}}},")
    lines += [f"  title={{{layout.title}}},", "]", ""]
    for t in layout.treatments:
        anchor = "east" if t.left else "west"
        lines.append(
            rf"\draw[treatment line] ([yshift=-2pt] axis cs:{_num(t.rank)}, 0) |- "
            rf"(axis cs:{_num(t.label_x)}, {_num(-t.y)})"
        )
        lines.append(f"  node[treatment label, anchor={anchor}] {{{t.label}}};")
    for g in layout.groups:
        lines.append(
            rf"\draw[group line] (axis cs:{_num(g.lo)}, {_num(-g.y)}) -- (axis cs:{_num(g.hi)}, {_num(-g.y)});"
        )
    lines += ["", r"\end{axis}", r"\end{tikzpicture}", ""]
    return "\n".join(lines)


_TEXT = re.compile(r"\\text(?:bf|rm)?\{([^{}]*)\}")


def latex_to_mathtext(label: str) -> tuple[str, bool]:
    r"""Matplotlib-renderable form of a LaTeX display name (\text{} -> \mathrm{}), and whether it was
    wrapped in \textbf{}."""
    bold = label.startswith(r"\textbf{") and label.endswith("}")
    if bold:
        label = label[len(r"\textbf{") : -1]
    label = label.replace(r"\;", "").replace(r"\,", "")
    parts = label.split("$")
    for i in range(1, len(parts), 2):
        parts[i] = _TEXT.sub(r"\\mathrm{\1}", parts[i])
    return "$".join(parts), bold


def plot_cd_png(layout: CDLayout, path: str | Path) -> None:
    """Draw the layout with matplotlib, one y unit per label line as in the TikZ version."""
    with figure_settings():
        _draw_cd_png(layout, path)


def _draw_cd_png(layout: CDLayout, path: str | Path) -> None:
    k = layout.k
    fig, ax = pyplot().subplots(figsize=(7.0, 0.35 * (layout.height + 2)))
    ax.set_xlim(1 - k / 6, k + k / 6)
    # pgfplots draws outside the axis (clip=false); here the limits must hold every label.
    lowest = min([layout.ymin] + [-t.y for t in layout.treatments])
    ax.set_ylim(lowest - 0.5, 1.2)
    ax.axis("off")
    ax.plot([1, k], [0, 0], color="black", lw=1)
    ticks = layout.xtick if layout.xtick is not None else list(range(1, k + 1))
    for t in ticks:
        ax.plot([t, t], [0, 0.2], color="black", lw=1)
        ax.text(t, 0.3, f"{t:g}", ha="center", va="bottom", fontsize=9)
    ax.set_title(layout.title, fontsize=11, pad=4)
    for t in layout.treatments:
        ax.plot([t.rank, t.rank, t.label_x], [0, -t.y, -t.y], color="black", lw=1)
        text, bold = latex_to_mathtext(t.label)
        ax.text(
            t.label_x + (-0.1 if t.left else 0.1),
            -t.y,
            text,
            ha="right" if t.left else "left",
            va="center",
            fontsize=9,
            fontweight="bold" if bold else "normal",
        )
    for g in layout.groups:
        ax.plot([g.lo, g.hi], [-g.y, -g.y], color="black", lw=3, solid_capstyle="butt")
    save_figure(fig, path, dpi=150, bbox_inches="tight")


def write_cd(
    result: TableResult, tex_path: str | Path, png_path: str | Path, alpha: float = ALPHA
) -> CDResult:
    """Write ``results/cd/{task}_{shift}.tex`` (the tikzpicture, to \\input inside a figure) and the
    matching .png of a computed table's CD analysis (its experiments, references in bold)."""
    cd = cd_analysis(np.vstack(result.values), result.names, alpha)
    labels = {m.name: m.display for m in result.methods}
    if result.covered_methods is not None:
        # scored on too few experiments: its failures rank last, and its label is flagged as in
        # the table (docs/reporting.md §2.1.1)
        for m, ok in zip(result.methods, result.covered_methods, strict=True):
            labels[m.name] += "" if ok else r"${}^{\ast}$"
    layout = cd_layout(cd, labels, set(result.references), make_title(result.task, result.shift))
    write_text(tex_path, render_cd_tikz(layout))
    plot_cd_png(layout, png_path)
    return cd


def cd_groups_frame(cd: CDResult):
    """Machine-readable CD result: one row per method with its rank and the groups it belongs to."""
    rows = []
    for i, m in enumerate(cd.methods):
        member = [str(g) for g, members in enumerate(cd.groups) if m in members]
        rows.append({"method": m, "avg_rank": float(cd.avg_ranks[i]), "groups": ";".join(member)})
    frame = pd.DataFrame(rows)
    frame["friedman_pvalue"] = cd.friedman.pvalue
    return frame.sort_values(["avg_rank", "method"], kind="stable").reset_index(drop=True)
