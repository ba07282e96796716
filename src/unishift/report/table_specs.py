"""The result tables of a run, each declared once (docs/developing.md, "Adding a table").

One :class:`TableKind` per kind of table: which tasks and shifts have one, which metric of the
per-sample records it averages, which columns it reads, whether a critical-difference diagram comes
with it, its caption in Snakemake's report and the function that writes its files. The workflow's
rules (one per kind, generated in ``workflow/rules/report.smk``), the run's target list and the PDF
report's tables derive from :data:`TABLE_KINDS`; the results site lists every table file. A kind's
files are entries of the results layout (:mod:`unishift.results_layout`): ``<files>_cells``,
``<files>_summary`` and ``<files>_tex``, their fields a subset of ``{task}`` and ``{shift}``; so a
new table is one entry here and its three lines there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from unishift.methods.base import SHIFTS, TASKS
from unishift.report.tables import METRICS
from unishift.results_layout import LAYOUT, fields_of, results_path

# The columns a table reads: the configured methods then the Selector ("table",
# docs/regimes.md §5.4), or the configured methods only ("methods").
COLUMNS = ("table", "methods")
# The PDF report's sections a table's LaTeX may go into (unishift.report.document.ReportContent).
SECTIONS = ("tables", "appendix")
# The files of the critical-difference diagram that comes with a table (``cd=True``).
CD_FILES = {"cd_tex": "cd_tex", "cd_png": "cd_png", "cd_groups": "cd_groups"}


def write_result_table(
    kind: TableKind, inputs, outputs: Mapping[str, str], task: str, shift: str, **table
) -> None:
    """The default renderer: the table's cells and summary (csv) and LaTeX table from the per-sample
    record files ``inputs`` (:func:`unishift.report.pipeline.build_table`; ``table``: its keyword
    arguments), then, for a kind with ``cd``, its critical-difference diagram."""
    # imported here: the Snakefile reads this module at parse time and needs no plotting library
    from unishift.report.pipeline import build_cd, build_table

    cells = Path(outputs["cells"])
    result = build_table(
        inputs, task, shift, out_dir=cells.parent, metric=kind.metric, name=cells.stem, **table
    )
    if kind.cd:
        build_cd(result, Path(outputs["cd_tex"]).parent, alpha=table.get("alpha", result.alpha))


@dataclass(frozen=True)
class TableKind:
    """One kind of result table.

    ``name``: its rule's name; ``files``: the prefix of its results-layout entries
    (``<files>_cells``, ``<files>_summary``, ``<files>_tex``); ``metric``: the record column it
    averages (:data:`METRICS`); ``tasks`` and ``shifts``: where it has a table (of those the run
    configures); ``columns``: :data:`COLUMNS`; ``cd``: with the task's critical-difference diagram
    (layout entries ``cd_tex``, ``cd_png``, ``cd_groups``); ``caption``: a file of
    ``workflow/report`` that shows its cells in Snakemake's report (None: not shown there);
    ``section``: the PDF report's section of its LaTeX table; ``trivial``: it reads the trivial
    answers' files and says whether its task and shift is degenerate; ``render``: what writes its files,
    called as ``render(kind, inputs, outputs, task, shift, **table)``."""

    name: str
    files: str
    description: str
    metric: str = "error"
    tasks: tuple[str, ...] = TASKS
    shifts: tuple[str, ...] = SHIFTS
    columns: str = "table"
    cd: bool = False
    caption: str | None = None
    section: str = "tables"
    trivial: bool = False
    render: Callable[..., None] = write_result_table

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"table {self.name}: metric {self.metric!r} is not one of {METRICS}")
        if self.section not in SECTIONS:
            raise ValueError(
                f"table {self.name}: section {self.section!r} is not one of {SECTIONS}"
            )
        if self.columns not in COLUMNS:
            raise ValueError(f"table {self.name}: columns {self.columns!r} is not one of {COLUMNS}")
        for what, given, known in (("task", self.tasks, TASKS), ("shift", self.shifts, SHIFTS)):
            unknown = sorted(set(given) - set(known))
            if not given or unknown:
                raise ValueError(f"table {self.name}: {what}s {list(given)} must be among {known}")

    def check_layout(self) -> None:
        """Its files are entries of the results layout with the fields a table's rule has."""
        for role, entry in self.entries().items():
            if entry not in LAYOUT:
                raise ValueError(
                    f"table {self.name}: its {role} file needs the results-layout entry {entry!r} "
                    "(add it to unishift.results_layout.LAYOUT)"
                )
            extra = sorted(set(fields_of(entry)) - {"task", "shift"})
            if extra or "shift" not in fields_of(entry):
                raise ValueError(
                    f"table {self.name}: layout entry {entry} ({LAYOUT[entry]}) must have the field "
                    f"{{shift}} and no other than {{task}}, has {list(fields_of(entry))}"
                )
        if "task" not in fields_of(self.entries()["cells"]) and len(self.tasks) != 1:
            raise ValueError(
                f"table {self.name}: a table of several tasks ({list(self.tasks)}) needs {{task}} in "
                f"its file names ({LAYOUT[self.entries()['cells']]})"
            )

    def entries(self) -> dict[str, str]:
        """Its results-layout entries by role: cells, summary, tex, and the CD diagram's files."""
        own = {role: f"{self.files}_{role}" for role in ("cells", "summary", "tex")}
        return own | (CD_FILES if self.cd else {})

    def has(self, task: str, shift: str) -> bool:
        return task in self.tasks and shift in self.shifts

    def task_of(self, fields: Mapping[str, str]) -> str:
        """The task of one of its tables from the wildcards (its only task when its files have no
        ``{task}``)."""
        return fields["task"] if "task" in fields else self.tasks[0]

    def paths(self, results: str | Path, task: str | None = None, shift: str | None = None):
        """role -> path of its files under ``results``; the fields not given stay wildcards."""
        given = {"task": task, "shift": shift}
        out = {}
        for role, entry in self.entries().items():
            fields = {f: given[f] for f in fields_of(entry) if given[f] is not None}
            out[role] = results_path(results, entry, **fields)
        return out

    def log_stem(self) -> str:
        """Its jobs' log names: the cells file's name without ``.csv`` (``{task}_{shift}``)."""
        return Path(LAYOUT[self.entries()["cells"]]).stem


TABLE_KINDS: dict[str, TableKind] = {}


def register_table(kind: TableKind) -> TableKind:
    """Add a kind of table (its name is its rule's: one kind per name), its files checked against
    the results layout."""
    if kind.name in TABLE_KINDS:
        raise ValueError(f"a table named {kind.name!r} is already declared")
    kind.check_layout()
    TABLE_KINDS[kind.name] = kind
    return kind


# The tables of the run, in the PDF report's order within a task.
register_table(
    TableKind(
        "tables",
        files="table",
        description="The paper-grade table of one task and shift: cells, colours, bold, win "
        "rates, average ranks (csv + LaTeX), and its CD diagram, all from one computed result; the "
        "Selector is a column like the methods.",
        cd=True,
        caption="tables.rst",
        trivial=True,
    )
)
register_table(
    TableKind(
        "brier_table",
        files="brier",
        description="The appendix Brier-score table of the calibration methods.",
        metric="brier",
        tasks=("calibration",),
    )
)
