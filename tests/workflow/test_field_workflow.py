"""The field's methods in a real run (docs/methods.md §6.4): a tiny label-shift config (two data
sets, LR, ten samples of fifty items) with a few of the paper's methods and a few of the field's
per task writes every table with the field's columns in their own group after the paper's, and the
regime maps and the Selector take them into their pool."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.test_workflow import copy_workflow, snakemake

pytestmark = pytest.mark.workflow

METHODS = {
    "calibration": ["Platt", "EMQ", "Isotonic", "Beta"],
    "quantification": ["CC", "PACC", "HDy", "DMy", "MS"],
    "cap": ["Naive", "ATC", "AC", "COT", "CBPE"],
}
FIELD = {"Isotonic", "Beta", "HDy", "DMy", "MS", "AC", "COT", "CBPE"}


@pytest.fixture(scope="module")
def field_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("field") / "wf")
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config["label_shift"].update(classifiers=["LR"])
    config["methods"] = {"label": METHODS}
    (work / "field.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    # what the tests below read, and what those files are made from; not the site, the reliability
    # diagrams, the plots or the reproduction files, which the session's shared run checks and
    # which take no part in a method's group or the Selector's pool
    targets = [
        f"results/{stem}"
        for task in METHODS
        for stem in (
            f"tables/{task}_label.csv",
            f"tables/{task}_label.tex",
            f"cd/{task}_label.png",
            f"regimes/{task}_label.csv",
            f"regimes/{task}_label_selection.csv",
            f"regimes/{task}_label_choices.csv",
        )
    ]
    # the targets before --configfile, which takes several values
    snakemake("--cores", "2", *targets, "--configfile", "field.yaml", cwd=work)
    return work / "results"


@pytest.mark.parametrize("task", sorted(METHODS))
def test_the_field_methods_have_their_own_group_in_every_table(field_run, task):
    methods = METHODS[task]
    table = pd.read_csv(field_run / "tables" / f"{task}_label.csv")
    assert set(table["method"]) == {*methods, "Selector"}
    field = table[table["method"].isin(FIELD)]
    assert (field["group"] == "field").all() and field["mean_error"].notna().all()
    assert set(table.loc[~table["method"].isin(FIELD), "group"]) <= {
        "baseline",
        "reference",
        "adapted",
        "selection",
    }
    tex = (field_run / "tables" / f"{task}_label.tex").read_text()
    # the column groups in order: the paper's, then the field's, then the Selector
    paper = [tex.index(h) for h in ("Baselines", "Reference", "Adapted Methods") if h in tex]
    assert paper and max(paper) < tex.index("Field Methods") < tex.index("Selection")
    assert (field_run / "cd" / f"{task}_label.png").stat().st_size > 0


@pytest.mark.parametrize("task", sorted(METHODS))
def test_the_regime_maps_and_the_selector_see_the_field_methods(field_run, task):
    methods = METHODS[task]
    regimes = pd.read_csv(field_run / "regimes" / f"{task}_label.csv")
    assert set(methods) == set(regimes["method"])
    selection = pd.read_csv(field_run / "regimes" / f"{task}_label_selection.csv")
    assert set(methods) <= set(selection["method"])
    choices = pd.read_csv(field_run / "regimes" / f"{task}_label_choices.csv")
    assert set(choices.filter(like="choice").stack()) <= set(methods)
