"""The Hybrid's pool sensitivity (unishift.report.hybrid_pool, docs/regimes.md §4.6): the summary
per pool against hand-counted rows, the as-built check, and the committed rows tied to the committed
findings (their pool as built is the README's Hybrid) and to docs/regimes.md's block."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from unishift.regimes.hybrid import VARIANTS
from unishift.report import hybrid_pool as P


def _row(pool, task, shift, gain, low, high, gap):
    return {
        "pool": pool,
        "variants": "BestSingle",
        "task": task,
        "shift": shift,
        "n_samples": 10,
        "hybrid_error": 1 - gain,
        "best_single_error": 1.0,
        "setup_oracle_error": 0.5,
        "gain": gain,
        "gain_ci_low": low,
        "gain_ci_high": high,
        "verdict": P.decision(gain, low, high),
        "gap_closed": gap,
        "group_variants": "",
    }


def test_the_summary_counts_verdicts_and_takes_cap_s_gains_by_shift():
    rows = pd.DataFrame(
        [
            _row("b", "cap", "compound", 0.3, 0.1, 0.5, 0.6),
            _row("b", "cap", "label", 0.2, -0.1, 0.4, 0.4),
            _row("b", "quantification", "label", -0.05, -0.09, -0.01, np.nan),
            _row("a", "cap", "label", 0.1, 0.01, 0.2, 0.2),
            _row("a", "calibration", "label", 0.0, 0.0, 0.0, 0.0),
            dict(_row("a", "calibration", "covariate", np.nan, np.nan, np.nan, np.nan),
                 verdict=P.NOT_APPLICABLE),
        ]
    )  # fmt: skip
    table = P.summary(rows).set_index("pool")
    assert list(table.index) == ["b", "a"]  # first appearance, not sorted
    assert table.loc["b", ["better", "worse", "n_pairs", "n_gap_pairs"]].tolist() == [1, 1, 3, 2]
    assert table.loc["b", "worst_gain"] == -0.05
    assert table.loc["b", "cap_label"] == 0.2 and table.loc["b", "cap_compound"] == 0.3
    assert np.isnan(table.loc["b", "cap_covariate"])
    assert table.loc["b", "gap_closed"] == pytest.approx(0.5)
    assert table.loc["a", ["better", "worse", "n_pairs"]].tolist() == [1, 0, 2]
    block = P.render(rows, "`x.csv`")
    assert "| b | 1 of 3 | 1 | -5.0% | +20.0% / n/a / +30.0% | +50.0% over 2 |" in block
    assert block.startswith(P.START) and block.endswith(P.END)


def test_the_pool_as_built_must_give_the_run_s_own_figures():
    selection = pd.DataFrame(
        {"gain_vs_best_single": [0.2], "gain_ci_low": [0.1], "gain_ci_high": [0.3]},
        index=["Hybrid"],
    )
    row = _row(P.AS_BUILT, "cap", "label", 0.2, 0.1, 0.3, 0.5)
    P._check_as_built(row, selection, "cap", "label")
    with pytest.raises(ValueError, match="other code than this checkout"):
        P._check_as_built(dict(row, gain_ci_low=0.1000001), selection, "cap", "label")


def test_the_pools_were_fixed_around_the_pool_as_built():
    pools = dict(P.POOLS)
    assert pools[P.AS_BUILT] == VARIANTS
    assert len(pools) == len(P.POOLS)  # no name twice
    for v in VARIANTS:
        assert v not in pools[f"without {v}"] and len(pools[f"without {v}"]) == len(VARIANTS) - 1


@pytest.mark.parametrize(
    ("folder", "block"), [("", P.BLOCK), ("multiclass", "hybrid-pool-multiclass")]
)
def test_the_committed_rows_are_the_committed_run_s_and_the_doc_block_is_theirs(folder, block):
    findings = REPO / "docs" / "findings" / folder
    rows = P.read_rows(findings / "hybrid_pool.csv")
    assert list(dict.fromkeys(rows["pool"])) == [name for name, _ in P.POOLS]
    built = rows[rows["pool"] == P.AS_BUILT]
    assert len(built) == 9
    for r in built.itertuples():
        selection = pd.read_csv(
            findings / "regimes" / f"{r.task}_{r.shift}_selection.csv", index_col="method"
        )
        hybrid, best = selection.loc["Hybrid"], selection.loc["BestSingle"]
        assert [r.gain, r.gain_ci_low, r.gain_ci_high] == pytest.approx(
            hybrid[list(P.SELECTION_COLUMNS)].tolist(), abs=1e-12
        )
        assert r.hybrid_error == pytest.approx(hybrid["mean_error"], abs=1e-12)
        assert r.best_single_error == pytest.approx(best["mean_error"], abs=1e-12)
        assert r.setup_oracle_error == pytest.approx(
            selection.loc["SetupOracle", "mean_error"], abs=1e-12
        )
    # every pool's BestSingle is the same: only the Hybrid's pool changes
    assert rows.groupby(["task", "shift"])["best_single_error"].nunique().eq(1).all()
    doc = (REPO / "docs" / "regimes.md").read_text()
    source = f"`{(findings / 'hybrid_pool.csv').relative_to(REPO)}`"
    assert P.pool_block_in(doc, block) == P.render(rows, source, block), (
        f"docs/regimes.md's {block} block is stale: python -m unishift.report.hybrid_pool --from "
        f"{source.strip('`')} --write docs/regimes.md --block {block}"
    )
