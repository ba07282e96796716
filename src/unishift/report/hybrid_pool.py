"""How much the Hybrid owes to its pool of variants (docs/regimes.md §4.6, "Sensitivity to the
pool"), from a run's files.

    python -m unishift.report.hybrid_pool RESULTS_DIR --out docs/findings/hybrid_pool.csv
    python -m unishift.report.hybrid_pool --from docs/findings/hybrid_pool.csv --write docs/regimes.md

The first form reruns the Hybrid of every task and shift of the run under each pool of
:data:`POOLS` (the pool as built; without each variant; each variant alone; with one wider
combination) on the run's records and setup facts, exactly as the selector rule runs it (the same
seeds, folds and bootstrap: the config's ``seed``, ``alpha`` and ``regimes.n_bootstrap``, read from
the run's ``provenance.json``), and writes one row per pool, task and shift: the Hybrid's mean error,
BestSingle's and the per-setup oracle's, the gain over BestSingle with its cluster-bootstrap
interval and verdict, and the share of BestSingle's gap to the oracle it closes. The pool as built
must give the run's own selection files' figures: the command stops where it does not (files of
another checkout's code). The second form writes the summary per pool (the issue's
yardsticks: pairs better with the interval above 0, the worst gain, CAP's gains, the gap closed)
between the block's markers of each file named.

Started without the workflow's CPU kernel profile (``docs/determinism.md``), it warns that its last
digits may differ from the selector jobs' (which the check above then may refuse). It takes about
24 CPU s per pool on the default run's files (the Shrink variants fit one regressor
per method and fold); it is not a workflow rule, so that the default run does not pay for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.cpu_kernels import warn_if_unpinned
from unishift.io import write_csv, write_text
from unishift.methods.base import SHIFTS, TASKS
from unishift.regimes.hybrid import (
    COMBINATIONS,
    VARIANTS,
    check_variants,
    combinable,
    parse_variant,
)
from unishift.regimes.references import N_BOOTSTRAP, bootstrap_interval, relative_gain
from unishift.regimes.selector import best_single_records
from unishift.report.findings import block_in, decision
from unishift.report.regimes import SAMPLE, hybrid_of, selection_inputs
from unishift.results_layout import results_path

BLOCK = "hybrid-pool"
START = f"<!-- {BLOCK}:start -->"
END = f"<!-- {BLOCK}:end -->"
COMMAND = "python -m unishift.report.hybrid_pool"
AS_BUILT = "as built"
# fixed before any pool was run: the pool as built, each variant's share (left out, and alone) and
# the wider combinations (the median and the trimmed mean of the five best)
POOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (AS_BUILT, VARIANTS),
    *((f"without {v}", tuple(w for w in VARIANTS if w != v)) for v in VARIANTS),
    *((f"{v} alone", (v,)) for v in VARIANTS if v != "BestSingle"),
    ("with Top5Median", (*VARIANTS, "Top5Median")),
    ("with Top5TrimmedMean", (*VARIANTS, "Top5TrimmedMean")),
)
COLUMNS = (
    "pool",
    "variants",
    "task",
    "shift",
    "n_samples",
    "hybrid_error",
    "best_single_error",
    "setup_oracle_error",
    "gain",
    "gain_ci_low",
    "gain_ci_high",
    "verdict",
    "gap_closed",
    "group_variants",
)
NOT_APPLICABLE = "not applicable: no estimates to combine"
SELECTION_COLUMNS = ("gain_vs_best_single", "gain_ci_low", "gain_ci_high")


def pairs_of(results: str | Path) -> list[tuple[str, str]]:
    """Every (task, shift) whose selection file the run wrote, in table order."""
    return [
        (task, shift)
        for shift in SHIFTS
        for task in TASKS
        if Path(results_path(results, "selection_csv", task=task, shift=shift)).is_file()
    ]


def _pair_inputs(results: Path, task: str, shift: str):
    selection = pd.read_csv(results_path(results, "selection_csv", task=task, shift=shift))
    selection = selection.set_index("method")
    methods = [m for m in selection.index if selection.loc[m, "role"] == "method"]
    files = [results_path(results, "records", shift=shift, task=task, method=m) for m in methods]
    trivial_dir = Path(results_path(results, "trivial", shift=shift, setup="_")).parent
    trivial_files = sorted(str(p) for p in trivial_dir.rglob("*.csv"))
    records, features, _, facts = selection_inputs(files, task, shift, methods, trivial_files)
    return selection, methods, records, features, facts


def run_settings(results: str | Path) -> dict:
    """The config values the selector rule drew with (``seed``, ``n_bootstrap``, ``alpha``), from
    the run's ``provenance.json``; the config schema's defaults for a run without one."""
    settings = {"seed": 0, "n_bootstrap": N_BOOTSTRAP, "alpha": 0.05}
    path = Path(results_path(results, "provenance"))
    if path.is_file():
        config = json.loads(path.read_text(encoding="utf-8")).get("config") or {}
        settings["seed"] = int(config.get("seed", settings["seed"]))
        settings["alpha"] = float(config.get("alpha", settings["alpha"]))
        regimes = config.get("regimes") or {}
        settings["n_bootstrap"] = int(regimes.get("n_bootstrap", settings["n_bootstrap"]))
    return settings


def pool_rows(results: str | Path, pools=POOLS) -> pd.DataFrame:
    """The rows of :data:`COLUMNS` for each pool of ``pools`` ((name, variants) pairs) and each
    task and shift of the run under ``results``."""
    results = Path(results)
    settings = run_settings(results)
    seed, n_bootstrap, alpha = settings["seed"], settings["n_bootstrap"], settings["alpha"]
    pairs = pairs_of(results)
    if not pairs:
        raise FileNotFoundError(f"no selection files under {results}/regimes: not a run's results?")
    rows = []
    for task, shift in pairs:
        selection, methods, records, features, facts = _pair_inputs(results, task, shift)
        best = best_single_records(records, methods)
        oracle_error = float(selection.loc["SetupOracle", "mean_error"])
        can_combine = combinable(records)
        for name, variants in pools:
            variants = check_variants(variants)
            if not can_combine and all(parse_variant(v)[0] in COMBINATIONS for v in variants):
                rows.append(_not_applicable(name, variants, task, shift, len(best), oracle_error))
                continue
            hybrid = hybrid_of(records, facts, features, methods, seed, task, shift, variants)
            # in the Hybrid's row order (that of build_selection's bootstrap), setups as clusters
            both = hybrid[[*SAMPLE, "group", "error"]].merge(
                best[[*SAMPLE, "error"]], on=SAMPLE, how="left", suffixes=("", "_best")
            )
            pairs_ = both[["error", "error_best"]].to_numpy(dtype=float)
            clusters = (
                both["classifier"].astype(str) + "\x00" + both["dataset"].astype(str)
            ).to_numpy()
            gain = relative_gain(pairs_)
            low, high = bootstrap_interval(
                pairs_, clusters, relative_gain, n_resamples=n_bootstrap, seed=seed, alpha=alpha
            )
            hybrid_error = float(np.nanmean(pairs_[:, 0]))
            best_error = float(np.nanmean(pairs_[:, 1]))
            gap = best_error - oracle_error
            chosen = hybrid.groupby("group", sort=True)["variant"].first()
            rows.append(
                {
                    "pool": name,
                    "variants": " ".join(variants),
                    "task": task,
                    "shift": shift,
                    "n_samples": len(both),
                    "hybrid_error": hybrid_error,
                    "best_single_error": best_error,
                    "setup_oracle_error": oracle_error,
                    "gain": gain,
                    "gain_ci_low": low,
                    "gain_ci_high": high,
                    "verdict": decision(gain, low, high),
                    "gap_closed": (best_error - hybrid_error) / gap if gap > 0 else float("nan"),
                    "group_variants": "; ".join(f"{g}: {v}" for g, v in chosen.items()),
                }
            )
            if name == AS_BUILT:
                _check_as_built(rows[-1], selection, task, shift)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _not_applicable(name, variants, task, shift, n_samples, oracle_error) -> dict:
    """The row of a pool of combinations only where the records hold no estimate a combination
    could be scored on (calibration: its records keep no posteriors)."""
    return {
        "pool": name,
        "variants": " ".join(variants),
        "task": task,
        "shift": shift,
        "n_samples": n_samples,
        "hybrid_error": float("nan"),
        "best_single_error": float("nan"),
        "setup_oracle_error": oracle_error,
        "gain": float("nan"),
        "gain_ci_low": float("nan"),
        "gain_ci_high": float("nan"),
        "verdict": NOT_APPLICABLE,
        "gap_closed": float("nan"),
        "group_variants": "",
    }


def _check_as_built(row: dict, selection: pd.DataFrame, task: str, shift: str) -> None:
    """The pool as built must give the run's own Hybrid row (same gain and interval to 1e-12)."""
    ours = np.array([row["gain"], row["gain_ci_low"], row["gain_ci_high"]], dtype=float)
    theirs = selection.loc["Hybrid", list(SELECTION_COLUMNS)].to_numpy(dtype=float)
    if not np.allclose(ours, theirs, rtol=0, atol=1e-12, equal_nan=True):
        raise ValueError(
            f"{task}/{shift}: the pool as built gives the gain {ours.tolist()}, the run's "
            f"selection file {theirs.tolist()}: the run's files come from other code than this "
            "checkout's (rerun snakemake with it), or its provenance.json is not its own"
        )


def _percent(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{100 * value:+.1f}%"


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per pool (in :data:`COLUMNS` order of first appearance): pairs better and worse (interval
    above / below 0), the worst gain, CAP's gain under each shift and the mean gap closed over the
    pairs where BestSingle has a gap."""
    out = []
    for pool, part in rows.groupby("pool", sort=False):
        part = part[part["verdict"] != NOT_APPLICABLE]
        cap = part[part["task"] == "cap"].set_index("shift")["gain"]
        out.append(
            {
                "pool": pool,
                "n_pairs": len(part),
                "better": int((part["verdict"] == "better").sum()),
                "worse": int((part["verdict"] == "worse").sum()),
                "worst_gain": float(part["gain"].min()),
                **{f"cap_{s}": float(cap.get(s, np.nan)) for s in SHIFTS},
                "gap_closed": float(part["gap_closed"].mean()),
                "n_gap_pairs": int(part["gap_closed"].notna().sum()),
            }
        )
    return pd.DataFrame(out)


def markers(block: str = BLOCK) -> tuple[str, str]:
    """The lines that open and close the block named ``block`` (one document may hold several:
    the default run's and the multiclass config's)."""
    return f"<!-- {block}:start -->", f"<!-- {block}:end -->"


def render(rows: pd.DataFrame, source: str, block: str = BLOCK) -> str:
    """The block: one line per pool of ``rows``."""
    table = summary(rows)
    start, end = markers(block)
    lines = [
        start,
        f"<!-- written by `{COMMAND}` from {source}; edit the command, not this block -->",
        "",
        "| pool | better (interval > 0) | worse | worst gain | CAP gain: label / "
        "covariate / compound | gap closed |",
        "|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        cap = " / ".join(_percent(getattr(r, f"cap_{s}")) for s in SHIFTS)
        lines.append(
            f"| {r.pool} | {r.better} of {r.n_pairs} | {r.worse} | {_percent(r.worst_gain)} | {cap} | "
            f"{_percent(r.gap_closed)} over {r.n_gap_pairs} |"
        )
    lines += ["", end]
    return "\n".join(lines)


def read_rows(path: str | Path) -> pd.DataFrame:
    """A file :func:`pool_rows` wrote, its columns checked."""
    rows = pd.read_csv(path)
    absent = [c for c in COLUMNS if c not in rows.columns]
    if absent:
        raise ValueError(
            f"{path} lacks the columns {absent}: rewrite it with `{COMMAND} RESULTS --out`"
        )
    return rows


def pool_block_in(text: str, block: str = BLOCK) -> str:
    """The pool block named ``block`` of a document's text."""
    return block_in(text, *markers(block), COMMAND)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", help="a run's results directory")
    parser.add_argument("--from", dest="source", help="a CSV this command wrote, instead of a run")
    parser.add_argument("--out", help="write the rows to this CSV")
    parser.add_argument("--write", action="append", default=[], help="replace the block in a file")
    parser.add_argument("--block", default=BLOCK, help=f"the block's name (default {BLOCK})")
    args = parser.parse_args(argv)
    if (args.results is None) == (args.source is None):
        parser.error("give a results directory or --from CSV, not both")
    if args.source:
        rows, source = read_rows(args.source), f"`{args.source}`"
    else:
        # the rows recompute what the selector jobs computed under the kernel profile
        warn_if_unpinned()
        rows = pool_rows(args.results)
        source = f"a run's results ({args.results})"
        if args.out:
            write_csv(args.out, rows)
            source = f"`{args.out}`"
    block = render(rows, source, args.block)
    for path in args.write:
        text = Path(path).read_text()
        old = pool_block_in(text, args.block)
        write_text(path, text.replace(old, block))
    if not args.write:
        sys.stdout.write(block + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
