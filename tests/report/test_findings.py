"""The README's findings block (unishift.report.findings, docs/regimes.md §6): rendered from a run's
files, and the README's block equal, byte for byte, to the one generated from the files committed
under docs/findings/."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from unishift.report import findings
from unishift.results_layout import results_path

# the heading's name of the committed run: what `--name` was given when the README's block was made
README_RUN_NAME = (
    "the default run (`snakemake --cores 2` on config/config.yaml at commit 0f535fc, the first "
    "with MKL's COMPATIBLE branch, on an AMD EPYC without pdflatex; measured by "
    "benchmarks/bench_default_run.py)"
)
METHODS = ["Alpha", "Beta", "Gamma"]


def write(results, entry, frame, task="cap", shift="label"):
    path = Path(results_path(results, entry, task=task, shift=shift))
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, lineterminator="\n")


def selection(gain=(0.2, 0.05, 0.3), degenerate=False, trivial_note="beats 1 of the 3 methods'"):
    rows = [
        ("Selector", 0.11, 0.09, 0.13, -0.1, -0.3, 0.05, ""),
        ("Hybrid", 0.08, 0.06, 0.1, *gain, "g1: Shrink(0.1)"),
        ("BestSingle", 0.1, 0.08, 0.12, None, None, None, "g1: Beta; g2: Alpha"),
        ("Trivial", 0.09, 0.07, 0.11, None, None, None, trivial_note),
        *[(m, 0.1 + i / 100, 0.05, 0.2, None, None, None, "") for i, m in enumerate(METHODS)],
    ]
    frame = pd.DataFrame(
        rows,
        columns=["method", "mean_error", "ci_low", "ci_high", "gain_vs_best_single",
                 "gain_ci_low", "gain_ci_high", "note"],
    )  # fmt: skip
    return frame.assign(degenerate=degenerate, role="r", n_finite=40)


def gains():
    return pd.DataFrame(
        [
            ("g1", "Selector", -0.1, -0.2, -0.01),
            ("g2", "Selector", 0.1, -0.2, 0.3),
            ("g1", "Hybrid", 0.3, 0.1, 0.5),
            ("g2", "Hybrid", 0.1, -0.05, 0.2),
            ("g3", "Hybrid", 0.1, 0.02, 0.2),
        ],
        columns=["group", "method", "gain_vs_best_single", "gain_ci_low", "gain_ci_high"],
    ).assign(n_samples=20, mean_error=0.1, best_single_error=0.1)


def region(descriptor, bin_, lower, upper, closed, verdict, leader, winner, tied, share):
    """A region's rows, one per method, as regime maps write them (region fields repeated)."""
    return [
        {
            "task": "cap",
            "descriptor": descriptor,
            "bin": bin_,
            "first_bin": bin_ * 2,
            "last_bin": bin_ * 2 + 1,
            "lower": lower,
            "upper": upper,
            "upper_closed": closed,
            "n_samples": 30,
            "n_setups": 4,
            "method": m,
            "mean_error": 0.1,
            "normalised_error": 1.0,
            "rank": 1,
            "p_value": 0.01,
            "p_holm": 0.02,
            "is_winner": m == winner,
            "leader": leader,
            "winner": winner,
            "verdict": verdict,
            "tied": tied,
            "n_tied": len(tied.split(";")) if tied else 0,
            "bootstrap_share": share,
            "winner_changed": False,
            "ranking_changed": False,
            "trivial_error": 0.2,
            "degenerate": False,
        }  # fmt: skip
        for m in METHODS
    ]


def regime_map(degenerate=False):
    d = findings.MEASURED["label"]
    rows = [
        # written out of order: the block must take the lowest and highest regions by their bins
        *region(d, 2, 0.5, 0.9, True, "winner", "Gamma", "Gamma", "Gamma", 0.85),
        *region(d, 0, 0.01, 0.2, False, "no clear winner", "Beta", "", "Beta;Alpha;Gamma", 0.4),
        *region(d, 1, 0.2, 0.5, False, "winner", "Alpha", "Alpha", "Alpha", 0.99),
        # another descriptor's map, whose winners the block must not read
        *region("true_label_shift", 0, 0.0, 0.3, False, "winner", "Alpha", "Alpha", "Alpha", 1.0),
        *region("true_label_shift", 1, 0.3, 1.0, True, "winner", "Alpha", "Alpha", "Alpha", 1.0),
    ]
    return pd.DataFrame(rows).assign(degenerate=degenerate)


def summary(winner="Beta", not_beaten=(), degenerate=False):
    rows = []
    for i, m in enumerate(METHODS):
        rows.append(
            {
                "method": m,
                "group": "adapted",
                "avg_rank": 2.0,
                "mean_error": 0.1 + i / 1000,
                "ci_low": 0.05,
                "ci_high": 0.2,
                "coverage": 1.0,
                "below_coverage": False,
                "winner": m == winner,
                "winner_significantly_better": (pd.NA if m == winner else m not in not_beaten),
                "trivial_error": 0.09,
                "degenerate": degenerate,
            }  # fmt: skip
        )
    return pd.DataFrame(rows)


def make_run(results, task="cap", shift="label", **kw):
    degenerate = kw.get("degenerate", False)
    write(results, "selection_csv", selection(kw.get("gain", (0.2, 0.05, 0.3)), degenerate,
          kw.get("trivial_note", "beats 1 of the 3 methods'")), task, shift)  # fmt: skip
    write(results, "selection_gains", gains(), task, shift)
    frame = kw.get("map", regime_map(degenerate))
    write(results, "regime_csv", frame.assign(descriptor=frame["descriptor"].replace(
        findings.MEASURED["label"], findings.MEASURED[shift])), task, shift)  # fmt: skip
    write(results, "table_summary", summary(kw.get("winner", "Beta"), kw.get("not_beaten", ()),
          degenerate), task, shift)  # fmt: skip


def test_the_lowest_and_highest_regions_of_the_measured_intensity(tmp_path):
    make_run(tmp_path)
    pair = findings.read_pair(tmp_path, "cap", "label")
    # the first and last region by their bins, not the file's first and last rows, and of the
    # measured descriptor's map, not true_label_shift's (where Alpha wins everywhere)
    assert (pair.low.verdict, pair.low.tied) == ("no clear winner", "Beta;Alpha;Gamma")
    assert (pair.high.verdict, pair.high.winner, pair.high.share) == ("winner", "Gamma", 0.85)
    assert pair.n_regions == 3
    text = findings.pair_text(pair)
    # no clear winner: the tied set named, and not the leader (Beta) called a winner
    assert "no clear winner on [0.01, 0.2), 30 samples: `Beta`, `Alpha`, `Gamma`" in text
    assert "`Beta` wins" not in text
    # the high end: its closed interval and a share under 90% said to rest on few setups
    assert "`Gamma` wins on [0.5, 0.9], 30 samples (kept in 85% of the resamples, so it" in text
    row = findings.render([pair], "x").splitlines()[5]
    assert "| no clear winner (3 tied) | `Gamma` (85%) |" in row


@pytest.mark.parametrize(
    ("gain", "cell", "sentence"),
    [
        ((0.2, 0.05, 0.3), "20.0% [5.0%, 30.0%] |", "The Hybrid removes 20.0% of BestSingle"),
        # an interval that touches or includes 0 decides nothing, whatever the point estimate
        (
            (0.2, 0.0, 0.3),
            "20.0% [0.0%, 30.0%], not decidable |",
            "is not decidable (gain 20.0% [0.0%, 30.0%], the",
        ),
        (
            (0.1, -0.05, 0.3),
            "10.0% [-5.0%, 30.0%], not decidable |",
            "is not decidable (gain 10.0%",
        ),
        (
            (-0.2, -0.3, -0.1),
            "-20.0% [-30.0%, -10.0%] |",
            "The Hybrid adds 20.0% to BestSingle's error [10.0%, 30.0%]",
        ),
        # a Hybrid that chose BestSingle everywhere: no difference, which is decided
        ((0.0, 0.0, 0.0), "0.0% [0.0%, 0.0%], BestSingle's choices |", "makes BestSingle's"),
    ],
)
def test_the_hybrid_gain_and_whether_its_interval_decides(tmp_path, gain, cell, sentence):
    make_run(tmp_path, gain=gain)
    pair = findings.read_pair(tmp_path, "cap", "label")
    block = findings.render([pair], "x")
    assert cell in block and sentence in block
    if gain[1] > 0:
        assert "Use the Hybrid. `Beta` is top-ranked in the tables" in block
        assert "on no pair" in block
    else:
        # without a decided Hybrid, the table's winner when it beats every other method
        assert "Use `Beta`: top-ranked in the tables (mean error 0.101 [0.05, 0.2]), " \
            "significantly better than every other method." in block  # fmt: skip
        undecided = gain[1] <= 0 <= gain[2] and gain != (0.0, 0.0, 0.0)
        assert ("BestSingle on cap/label;" in block) == undecided


def test_per_group_gains_are_counted_by_their_intervals(tmp_path):
    make_run(tmp_path)
    pair = findings.read_pair(tmp_path, "cap", "label")
    # Hybrid: g1 and g3 above 0, g2 includes 0; Selector: g1 below 0, g2 includes 0
    assert pair.group_gains == {"Selector": (0, 1, 1, 0), "Hybrid": (2, 0, 1, 0)}
    assert "per held-out group better in 2, undecided in 1 of 3." in findings.pair_text(pair)


def test_a_leader_not_significantly_better_is_no_recommendation(tmp_path):
    make_run(tmp_path, gain=(0.1, -0.1, 0.2), not_beaten=("Gamma",))
    text = findings.pair_text(findings.read_pair(tmp_path, "cap", "label"))
    assert "No single method is decided: `Beta` is top-ranked in the tables (mean error 0.101 " \
        "[0.05, 0.2]) but not significantly better than `Gamma`." in text  # fmt: skip
    assert "Use `Beta`" not in text


def test_a_degenerate_pair_is_named_and_gets_no_recommendation(tmp_path):
    make_run(tmp_path, "quantification", "covariate", degenerate=True,
             trivial_note="beats 2 of the 3 methods' overall mean error; more than half: a degenerate")  # fmt: skip
    # a pair whose files say False (a string that is truthy in Python) must stay not degenerate
    make_run(tmp_path, "cap", "covariate")
    pairs = findings.pairs_of(tmp_path)
    assert [(p.task, p.degenerate) for p in pairs] == [("quantification", True), ("cap", False)]
    block = findings.render(pairs, "x")
    assert "| quantification | covariate | `Beta` 0.101 |" in block
    assert block.count("**degenerate**") == 1
    degenerate = findings.pair_text(pairs[0])
    assert (
        "Degenerate: the trivial answer (0.09 [0.07, 0.11]) beats 2 of the 3 methods' overall "
        "mean error, so" in degenerate
    )
    assert "Use " not in degenerate and "Along `domain_auc`" in degenerate
    assert "Degenerate pairs: quantification/covariate." in block


def test_files_that_disagree_on_the_degenerate_flag_are_said_to(tmp_path):
    make_run(tmp_path, map=regime_map(degenerate=True))
    text = findings.pair_text(findings.read_pair(tmp_path, "cap", "label"))
    assert "disagree on the degenerate flag (selection: False; map: True; table: False)" in text


def test_pairs_in_table_order_and_a_missing_file_named(tmp_path):
    make_run(tmp_path, "cap", "compound")
    make_run(tmp_path, "calibration", "compound")
    make_run(tmp_path, "cap", "label")
    assert [(p.task, p.shift) for p in findings.pairs_of(tmp_path)] == [
        ("cap", "label"), ("calibration", "compound"), ("cap", "compound")]  # fmt: skip
    (tmp_path / "tables" / "cap_label_summary.csv").unlink()
    with pytest.raises(FileNotFoundError, match="cap_label_summary.csv"):
        findings.pairs_of(tmp_path)
    with pytest.raises(FileNotFoundError, match="no selection file"):
        findings.pairs_of(tmp_path / "empty")


def test_files_of_an_older_run_are_refused_by_name(tmp_path):
    make_run(tmp_path)
    old = regime_map().drop(columns=["verdict", "tied", "bootstrap_share"])
    write(tmp_path, "regime_csv", old)
    with pytest.raises(ValueError, match=r"lacks the columns \['verdict', 'tied'"):
        findings.read_pair(tmp_path, "cap", "label")


def test_the_copied_inputs_give_the_same_block(tmp_path):
    make_run(tmp_path / "run", "cap", "label")
    make_run(tmp_path / "run", "quantification", "compound", degenerate=True)
    provenance = '{"code_version": "abc", "config": {"alpha": 0.1, "regimes": {"n_bootstrap": 50}}}'
    (tmp_path / "run" / "provenance.json").write_text(provenance)
    findings.copy_inputs(tmp_path / "run", tmp_path / "copy")
    maps = pd.read_csv(tmp_path / "copy" / "regimes" / "cap_label.csv")
    assert len(maps) == 5  # one row per region of each descriptor
    full = findings.findings_block(tmp_path / "run", "a run")
    assert findings.findings_block(tmp_path / "copy", "a run") == full
    assert "from a run; code version `abc`." in full
    # the level and resamples from the run's config, not typed in
    assert "Intervals: 90% cluster-bootstrap intervals of 50 resamples (setups" in full


def test_the_command_replaces_only_the_block(tmp_path):
    make_run(tmp_path / "run")
    readme, doc = tmp_path / "README.md", tmp_path / "regimes.md"
    # the markers quoted in prose are no markers: only the lines that are exactly them
    quoted = f"Between `{findings.START}` and `{findings.END}`.\n"
    readme.write_text(f"{quoted}before\n{findings.START}\nstale\n{findings.END}\nafter\n")
    doc.write_text(f"# doc\n{findings.START}\n{findings.END}\n")
    run = str(tmp_path / "run")
    assert findings.main([run, "--check", str(readme)]) == 1
    assert findings.main([run, "--write", str(readme), "--write", str(doc), "--name", "r"]) == 0
    block = findings.findings_block(tmp_path / "run", "r")
    assert readme.read_text() == f"{quoted}before\n{block}\nafter\n"
    assert doc.read_text() == f"# doc\n{block}\n"
    assert (tmp_path / "run" / findings.STEM).read_text() == block + "\n"
    assert findings.main([run, "--check", str(readme), "--check", str(doc), "--name", "r"]) == 0
    assert findings.main([run, "--check", str(readme), "--name", "other"]) == 1
    # a file without the markers stops the command before any file is written
    unmarked = tmp_path / "plain.md"
    unmarked.write_text("no markers\n")
    with pytest.raises(ValueError, match="findings:start"):
        findings.main([run, "--write", str(readme), "--write", str(unmarked), "--name", "x"])
    assert readme.read_text() == f"{quoted}before\n{block}\nafter\n"


@pytest.mark.parametrize("document", ["README.md", "docs/regimes.md"])
def test_the_documents_block_is_the_committed_run_s(document):
    """The findings in the README and in docs/regimes.md §6 equal, byte for byte, the block
    generated from docs/findings/ (the files copied from the run with --inputs-to): no figure in
    them is typed by hand."""
    text = (REPO / document).read_text(encoding="utf-8")
    expected = findings.findings_block(REPO / "docs" / "findings", README_RUN_NAME)
    assert findings.block_in(text) == expected


def test_the_gap_closed_is_the_hybrid_s_share_of_best_single_s_gap_to_the_setup_oracle(tmp_path):
    from unishift.report.findings import gap_closed

    frame = selection().set_index("method")
    assert np.isnan(gap_closed(frame))  # no SetupOracle row
    oracle = pd.DataFrame({"mean_error": [0.06]}, index=pd.Index(["SetupOracle"], name="method"))
    frame = pd.concat([frame, oracle])
    # (BestSingle 0.1 - Hybrid 0.08) / (0.1 - 0.06): a swapped pair or the Selector's row differs
    assert gap_closed(frame) == pytest.approx(0.5)
    frame.loc["SetupOracle", "mean_error"] = 0.1  # BestSingle best on every setup: no gap
    assert np.isnan(gap_closed(frame))


# the runs whose findings benchmarks/RESULTS.md reports beside the README's: folder under
# docs/findings/ (copied with --inputs-to) -> the name their block's heading gives the run
OTHER_RUNS = {
    "paper_label": (
        "the paper's label-shift grid (`snakemake --cores 2 --configfile config/paper.yaml "
        "--config shifts=[label] data_root=../shared/data report_pdf=False`, measured by "
        "benchmarks/bench_default_run.py)"
    ),
    "multiclass": (
        "the multiclass run (`snakemake --cores 2 --configfile config/multiclass.yaml`, "
        "measured by benchmarks/bench_default_run.py)"
    ),
}


@pytest.mark.parametrize("folder", sorted(OTHER_RUNS))
def test_the_other_runs_findings_are_their_files(folder):
    """docs/findings/<run>/findings.md, which benchmarks/RESULTS.md cites for the paper grid and
    the multiclass config, equals byte for byte the block generated from the files copied beside
    it (python -m unishift.report.findings docs/findings/<run> --name NAME --out FILE)."""
    inputs = REPO / "docs" / "findings" / folder
    expected = findings.findings_block(inputs, OTHER_RUNS[folder])
    assert (inputs / "findings.md").read_text(encoding="utf-8") == expected + "\n"
