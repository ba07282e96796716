"""The field block (unishift.report.field_findings, docs/methods.md §6.5): the field's methods
against the paper's, read from a run's table summaries and regime maps, and the documents' block
equal to the one generated from the field run's files committed under docs/findings/field/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO
from unishift.report import field_findings as ff
from unishift.report import findings
from unishift.results_layout import results_path

# the heading's name of the committed field run: what `--name` was given when the block was made
FIELD_RUN_NAME = (
    "the field run (`snakemake --cores 2 --configfile config/field.yaml` at commit 0f535fc, "
    "`report_pdf=False`, MKL's COMPATIBLE branch)"
)

# (method, group, avg_rank, mean_error, below_coverage): the paper's best by rank is P2, by mean
# error P1, so a block that took the lowest mean error would name the wrong method; F0 ranks best of
# all but is below the coverage floor, so it is no candidate
ROWS = [
    ("P1", "reference", 4.0, 0.05, False),
    ("P2", "adapted", 2.0, 0.09, False),
    ("B", "baseline", 5.0, 0.2, False),
    ("F0", "field", 1.0, 0.01, True),
    ("F1", "field", 3.0, 0.08, False),
    ("F2", "field", 1.5, 0.07, False),
    ("Selector", "selection", 6.0, 0.3, False),
]


def write(results, entry, frame, task="cap", shift="label"):
    path = Path(results_path(results, entry, task=task, shift=shift))
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, lineterminator="\n")


def summary(winner, not_beaten=()):
    return pd.DataFrame(
        [
            {
                "method": m,
                "group": g,
                "avg_rank": r,
                "mean_error": e,
                "ci_low": e / 2,
                "ci_high": 2 * e,
                "below_coverage": cov,
                "winner": m == winner,
                "winner_significantly_better": pd.NA if m == winner else m not in not_beaten,
                "degenerate": False,
            }  # fmt: skip
            for m, g, r, e, cov in ROWS
        ]
    )


def regime_map(shift="label", winners=("F2", "", "P1"), degenerate=False):
    rows = []
    descriptor = findings.MEASURED[shift]
    # written out of order; another descriptor's map, won by B, must not be read
    regions = [(2, winners[2]), (0, winners[0]), (1, winners[1])]
    regions += [(b, "B") for b in range(3)]
    for i, (bin_, winner) in enumerate(regions):
        rows.append(
            {
                "descriptor": descriptor if i < 3 else "true_label_shift",
                "bin": bin_,
                "first_bin": bin_,
                "last_bin": bin_,
                "lower": bin_ / 3,
                "upper": (bin_ + 1) / 3,
                "upper_closed": bin_ == 2,
                "n_samples": 40,
                "winner": winner,
                "verdict": "winner" if winner else "no clear winner",
                "tied": winner or "P1;F1",
                "n_tied": 1 if winner else 2,
                "bootstrap_share": 0.95,
                "degenerate": degenerate,
            }  # fmt: skip
        )
    return pd.DataFrame(rows)


def make_run(results, winner="F2", not_beaten=(), task="cap", shift="label", **kw):
    write(results, "table_summary", summary(winner, not_beaten), task, shift)
    write(results, "regime_csv", regime_map(shift, **kw), task, shift)


def test_each_pool_s_best_is_by_average_rank_among_the_covered_methods(tmp_path):
    make_run(tmp_path)
    pair = ff.read_field_pair(tmp_path, "cap", "label")
    assert (pair.paper_best.method, pair.paper_best.position) == ("P2", 2)
    assert (pair.field_best.method, pair.field_best.position) == ("F2", 1)
    assert pair.n_ranked == 6 and pair.n_field == 2
    assert pair.paper_best.shown() == "`P2` (rank 2, 0.09 [0.045, 0.18])"


def test_a_field_winner_that_beats_every_paper_method(tmp_path):
    make_run(tmp_path, winner="F2", not_beaten=("F1",))
    pair = ff.read_field_pair(tmp_path, "cap", "label")
    assert pair.verdict() == "field: `F2` significantly better than every paper method"


@pytest.mark.parametrize(
    "not_beaten, expected",
    [
        # F1 is not told apart, F2 (the field's best by rank) is beaten: both are named
        (("F1",), "not told apart: `P2` (paper) ranks first, not significantly better than "
                  "`F1` (field), though significantly better than the field's best-ranked `F2`"),
        (("F1", "F2"), "not told apart: `P2` (paper) ranks first, not significantly better than "
                       "`F2` (field) and 1 more field method"),
        ((), "paper: `P2` significantly better than every field method"),
    ],
)  # fmt: skip
def test_a_paper_winner_and_the_field_methods_it_does_not_beat(tmp_path, not_beaten, expected):
    make_run(tmp_path, winner="P2", not_beaten=not_beaten)
    assert ff.read_field_pair(tmp_path, "cap", "label").verdict() == expected


def test_the_selector_ranking_first_decides_nothing_between_the_pools(tmp_path):
    make_run(tmp_path, winner="Selector")
    verdict = ff.read_field_pair(tmp_path, "cap", "label").verdict()
    assert verdict.startswith("the Selector's pool ranks first") and "not tested" in verdict


def test_regions_are_counted_by_their_winner_s_pool_on_the_measured_intensity(tmp_path):
    make_run(tmp_path, shift="covariate", winners=("F2", "", "P1"))
    pair = ff.read_field_pair(tmp_path, "cap", "covariate")
    assert pair.descriptor == "domain_auc"
    assert pair.regions == (("winner", "field"), ("no clear winner", ""), ("winner", "paper"))
    assert pair.region_counts() == {"field": 1, "paper": 1, "selection": 0, "no clear winner": 1}


def test_a_map_winner_missing_from_the_tables_is_refused(tmp_path):
    make_run(tmp_path, winners=("Ghost", "", "P1"))
    with pytest.raises(ValueError, match="'Ghost' is not in"):
        ff.read_field_pair(tmp_path, "cap", "label")


def test_a_run_without_field_methods_says_so(tmp_path):
    make_run(tmp_path, winner="P2")
    frame = pd.read_csv(results_path(tmp_path, "table_summary", task="cap", shift="label"))
    frame = frame[frame["group"] != "field"]
    write(tmp_path, "table_summary", frame)
    write(tmp_path, "regime_csv", regime_map(winners=("P1", "", "P1")))
    assert ff.read_field_pair(tmp_path, "cap", "label").verdict() == "no field method in the table"


def test_the_command_replaces_only_the_block(tmp_path):
    make_run(tmp_path / "run", winner="F2")
    make_run(tmp_path / "run", winner="P2", not_beaten=("F2",), task="calibration", shift="label")
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{ff.START}\nold\n{ff.END}\nafter\n")
    ff.main([str(tmp_path / "run"), "--write", str(doc), "--name", "x"])
    text = doc.read_text()
    block = ff.field_block_in(text)
    assert text == f"before\n{block}\nafter\n"
    # table order: calibration before cap; the summary sentence counts both
    assert block.index("| calibration | label |") < block.index("| cap | label |")
    assert "A field method ranks first in 1 of 2 pairs" in block
    assert "significantly better than every paper method in cap/label" in block


@pytest.mark.parametrize("document", ["README.md", "docs/methods.md"])
def test_the_documents_field_block_is_the_committed_field_run_s(document):
    """The field findings in the README and docs/methods.md §6.5 equal, byte for byte, the block
    generated from docs/findings/field/ (the field run's files, copied with
    `python -m unishift.report.findings RESULTS --inputs-to docs/findings/field`)."""
    text = (REPO / document).read_text(encoding="utf-8")
    expected = ff.field_block(REPO / "docs" / "findings" / "field", FIELD_RUN_NAME)
    assert ff.field_block_in(text) == expected
