"""Tables and descriptors are each declared once (unishift.report.table_specs,
unishift.regimes.descriptors.REGISTRY): the registry's entries are the workflow's tables, a bad
declaration is refused, a kind registered in the process is rendered with its own metric and files,
and one entry added in a copy of the repository is planned by ``snakemake -n`` (a table) or reaches
the records, the regime maps and the Selector (a descriptor)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.snakemake_forks import run_snakemake
from tests.workflow.test_workflow import WORKFLOW_FILES
from unishift import results_layout
from unishift.evaluation.records import COLUMNS, TWO_CLASS
from unishift.report import table_specs
from unishift.report.table_specs import TABLE_KINDS, TableKind, register_table

REPO = Path(__file__).resolve().parents[2]

# The worked example of docs/developing.md, "Adding a table": one entry and three layout lines.
EXTRA_KIND = """
register_table(
    TableKind(
        "brier_methods_table",
        files="brier_methods",
        description="The Brier score of the configured calibrators, without the Selector.",
        metric="brier",
        tasks=("calibration",),
        shifts=("label",),
        columns="methods",
    )
)
"""
EXTRA_LAYOUT = {
    "brier_methods_cells": "tables/calibration_brier_methods_{shift}.csv",
    "brier_methods_summary": "tables/calibration_brier_methods_{shift}_summary.csv",
    "brier_methods_tex": "tables/calibration_brier_methods_{shift}.tex",
}
# One descriptor entry, inserted first: the sample's number of items, which no other descriptor
# equals.
EXTRA_DESCRIPTOR = """    Descriptor("n_items", lambda reference, s: float(len(s.posteriors))),
"""


def test_the_registry_holds_the_workflow_s_tables_with_the_layout_s_files():
    assert list(TABLE_KINDS) == ["tables", "brier_table"]
    tables, brier = TABLE_KINDS["tables"], TABLE_KINDS["brier_table"]
    assert (tables.metric, tables.cd, tables.tasks) == (
        "error",
        True,
        ("calibration", "quantification", "cap"),
    )
    assert (brier.metric, brier.cd, brier.tasks) == ("brier", False, ("calibration",))
    assert tables.paths("r", "cap", "label") == {
        "cells": "r/tables/cap_label.csv",
        "summary": "r/tables/cap_label_summary.csv",
        "tex": "r/tables/cap_label.tex",
        "cd_tex": "r/cd/cap_label.tex",
        "cd_png": "r/cd/cap_label.png",
        "cd_groups": "r/cd/cap_label_groups.csv",
    }
    # a table without {task} in its names: the task comes from the kind, the pattern keeps {shift}
    assert brier.paths("r") == {
        "cells": "r/tables/calibration_brier_{shift}.csv",
        "summary": "r/tables/calibration_brier_{shift}_summary.csv",
        "tex": "r/tables/calibration_brier_{shift}.tex",
    }
    assert brier.task_of({"shift": "label"}) == "calibration"
    assert tables.task_of({"shift": "label", "task": "cap"}) == "cap"
    assert brier.log_stem() == "calibration_brier_{shift}"
    assert brier.has("calibration", "covariate") and not brier.has("cap", "label")


def test_a_bad_declaration_is_refused_with_what_to_fix(monkeypatch):
    with pytest.raises(ValueError, match="metric 'ece'"):
        TableKind("t", files="table", description="", metric="ece")
    with pytest.raises(ValueError, match="tasks"):
        TableKind("t", files="table", description="", tasks=("regression",))
    with pytest.raises(ValueError, match="columns"):
        TableKind("t", files="table", description="", columns="all")
    with pytest.raises(ValueError, match="already declared"):
        register_table(TableKind("tables", files="table", description=""))
    with pytest.raises(ValueError, match="'nowhere_cells'.*results_layout"):
        register_table(TableKind("t", files="nowhere", description=""))
    # brier's files have no {task}: a kind of two tasks would write both tables to one file
    with pytest.raises(ValueError, match="several tasks"):
        register_table(TableKind("t", files="brier", description="", tasks=("calibration", "cap")))
    # a file with a field the rule has no wildcard for
    monkeypatch.setitem(results_layout.LAYOUT, "odd_cells", "tables/{method}_{shift}.csv")
    monkeypatch.setitem(results_layout.LAYOUT, "odd_summary", "tables/o_{shift}_summary.csv")
    monkeypatch.setitem(results_layout.LAYOUT, "odd_tex", "tables/o_{shift}.tex")
    with pytest.raises(ValueError, match="no other than"):
        register_table(TableKind("t", files="odd", description="", tasks=("cap",)))
    assert list(TABLE_KINDS) == ["tables", "brier_table"]


def _records(tmp_path, methods):
    """Per-sample calibration files of two setups whose error and brier columns differ and rank the
    methods in opposite orders, so that a table of the wrong metric has other means and ranks."""
    rng = np.random.default_rng(3)
    paths = []
    for j, method in enumerate(methods):
        rows = []
        for dataset in ("a", "b"):
            for s in range(20):
                error = 0.1 * (j + 1) + rng.uniform(0, 0.01)
                brier = 0.5 - 0.1 * j + rng.uniform(0, 0.01)
                rows.append(
                    {"shift": "label", "task": "calibration", "method": method, "classifier": "LR",
                     "dataset": dataset, "sample_id": s, "shift_intensity": 0.1, "true_value": np.nan,
                     "estimate": np.nan, "error": error, "ece": error, "ece_positive": error,
                     "brier": brier, "status": "ok", "reason": ""}
                )  # fmt: skip
        path = tmp_path / "eval" / f"{method}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows, columns=COLUMNS[TWO_CLASS]).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_a_registered_kind_is_rendered_with_its_metric_into_its_files(tmp_path, monkeypatch):
    for entry, template in EXTRA_LAYOUT.items():
        monkeypatch.setitem(results_layout.LAYOUT, entry, template)
    monkeypatch.setattr(table_specs, "TABLE_KINDS", dict(TABLE_KINDS))
    kind = table_specs.register_table(
        TableKind("brier_methods_table", files="brier_methods", description="", metric="brier",
                  tasks=("calibration",), shifts=("label",), columns="methods")
    )  # fmt: skip
    assert list(table_specs.TABLE_KINDS)[-1] == "brier_methods_table"
    methods = ["Platt", "TS", "Head2Tail"]
    files = _records(tmp_path, methods)
    outputs = kind.paths(tmp_path / "results", shift="label")
    task = kind.task_of({"shift": "label"})
    kind.render(kind, files, outputs, task, "label", methods=methods, classifiers=["LR"],
                datasets=["a", "b"], n_samples=20, alpha=0.05)  # fmt: skip
    cells = pd.read_csv(outputs["cells"])
    records = pd.concat([pd.read_csv(f) for f in files])
    expected = records.groupby(["dataset", "method"])["brier"].mean()
    got = cells.set_index(["dataset", "method"])["mean_error"]
    assert np.allclose(got.sort_index().to_numpy(), expected.sort_index().to_numpy(), atol=1e-12)
    # the brier column ranks Head2Tail first, the error column Platt
    summary = pd.read_csv(outputs["summary"]).set_index("method")
    assert summary["avg_rank"].idxmin() == "Head2Tail"
    assert Path(outputs["tex"]).read_text().count(r"\cellcolor") == 6
    assert sorted(p.name for p in (tmp_path / "results" / "tables").iterdir()) == sorted(
        Path(t).name.format(shift="label") for t in EXTRA_LAYOUT.values()
    )
    assert not (tmp_path / "results" / "cd").exists()  # no diagram unless declared


def _copy_repository(target: Path) -> Path:
    target.mkdir(parents=True)
    for name in (*WORKFLOW_FILES, "src", "pyproject.toml"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target / name)
    return target


def _add(path: Path, after: str, text: str) -> None:
    source = path.read_text()
    assert source.count(after) == 1, after
    path.write_text(source.replace(after, after + text))


@pytest.mark.workflow
def test_one_entry_in_a_copy_adds_a_planned_table_and_a_descriptor(tmp_path):
    work = _copy_repository(tmp_path / "repo")
    library = work / "src" / "unishift"
    _add(
        library / "report" / "table_specs.py",
        '        tasks=("calibration",),\n    )\n)\n',
        EXTRA_KIND,
    )
    layout = "".join(f'    "{e}": "{t}",\n' for e, t in EXTRA_LAYOUT.items())
    _add(
        library / "results_layout.py",
        '    "brier_tex": "tables/calibration_brier_{shift}.tex",\n',
        layout,
    )
    _add(
        library / "regimes" / "descriptors.py",
        "REGISTRY: tuple[Descriptor, ...] = (\n",
        EXTRA_DESCRIPTOR,
    )
    env = dict(os.environ, PYTHONPATH=str(work / "src"))  # the copy's library, not the checkout's

    plan = run_snakemake(["-n", "--configfile", ".test/config.yaml"], work, env=env)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    jobs = re.findall(r"^rule (\w+):\n(?:    .*\n)*?    output: ([^\n]*)", plan.stdout, re.M)
    extra = [outputs for rule, outputs in jobs if rule == "brier_methods_table"]
    assert len(extra) == 1, plan.stdout[-3000:]
    assert "results/tables/calibration_brier_methods_label.csv" in extra[0]
    assert "results/tables/calibration_brier_methods_label.tex" in extra[0]
    # the other tables are planned as before
    assert sum(rule == "tables" for rule, _ in jobs) == 3
    assert sum(rule == "brier_table" for rule, _ in jobs) == 1

    check = """
import numpy as np
from unishift.evaluation.records import COLUMNS, DESCRIPTOR_COLUMNS
from unishift.regimes.descriptors import UNSUPERVISED_DESCRIPTORS
from unishift.regimes.setups import describe_setup
from unishift.report.regimes import map_descriptors
from tests.regimes.test_descriptor_records import _setup
assert DESCRIPTOR_COLUMNS[0] == "n_items" and COLUMNS["two_class"][-len(DESCRIPTOR_COLUMNS)] == "n_items"
assert UNSUPERVISED_DESCRIPTORS[0] == "n_items"  # a feature of the Selector
assert map_descriptors("label")[:2] == ("true_label_shift", "n_items")
assert map_descriptors("covariate")[:2] == ("true_mixture", "n_items")
setup, n_source = _setup(size=37)
frame, _ = describe_setup(setup, seed=0, n_source=n_source)
assert frame.columns[4] == "n_items" and (frame["n_items"] == 37).all(), frame
assert frame["true_mixture"].between(0, 1).all() and frame["domain_auc"].notna().all()
print("descriptor ok")
"""
    env["PYTHONPATH"] = os.pathsep.join([str(work / "src"), str(REPO)])
    result = subprocess.run(
        [sys.executable, "-c", check],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "descriptor ok" in result.stdout
