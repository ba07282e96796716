"""The run's answer to "which method when", written from its files (docs/regimes.md §6).

    python -m unishift.report.findings RESULTS_DIR                      # print the block
    python -m unishift.report.findings RESULTS_DIR --write README.md    # replace the README's block
    python -m unishift.report.findings RESULTS_DIR --inputs-to docs/findings  # copy what it reads

Per task and shift it reads the selection file and the per-group gains
(``regimes/{task}_{shift}_selection.csv``, ``_gains.csv``), the regime maps
(``regimes/{task}_{shift}.csv``) and the table summary (``tables/{task}_{shift}_summary.csv``), and
says which method leads overall and at the low and high end of the measured intensity, whether the
Hybrid beats the best single method (its interval), and which pairs are degenerate. Every number of
the block is formatted from those files; what their tests do not decide is said to be undecided.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.io import write_csv, write_text
from unishift.report.names import TASK_TITLE
from unishift.results_layout import results_path

TASKS = ("calibration", "quantification", "cap")
SHIFTS = ("label", "covariate", "compound")
# the measured intensity of each shift: an unsupervised descriptor a user computes from the
# unlabelled sample (docs/regimes.md §1.2), the one that tracks the shift's true intensity
MEASURED = {
    "label": "est_prevalence_shift",
    "covariate": "domain_auc",
    "compound": "domain_auc",
}
START = "<!-- findings:start -->"
END = "<!-- findings:end -->"
COMMAND = "python -m unishift.report.findings"
# the run's copy of the block in its results folder, spelled in two parts: tests/project/
# test_doc_references.py reads a name ending in .md in src/ as a cited document
STEM = "findings" + ".md"
# a winner kept in fewer resamples than this rests on few setups (docs/regimes.md §3, point 6)
STABLE_SHARE = 0.9
# the region columns of a map that the block reads: one row per (descriptor, region) suffices
REGION_COLUMNS = (
    "descriptor",
    "bin",
    "first_bin",
    "last_bin",
    "lower",
    "upper",
    "upper_closed",
    "n_samples",
    "winner",
    "verdict",
    "tied",
    "n_tied",
    "bootstrap_share",
    "degenerate",
)
SELECTION_COLUMNS = (
    "method",
    "mean_error",
    "ci_low",
    "ci_high",
    "gain_vs_best_single",
    "gain_ci_low",
    "gain_ci_high",
    "degenerate",
    "note",
)
GAIN_COLUMNS = ("group", "method", "gain_vs_best_single", "gain_ci_low", "gain_ci_high")
SUMMARY_COLUMNS = (
    "method",
    "mean_error",
    "ci_low",
    "ci_high",
    "winner",
    "winner_significantly_better",
    "below_coverage",
    "degenerate",
)
ENTRIES = {
    "selection": "selection_csv",
    "gains": "selection_gains",
    "map": "regime_csv",
    "summary": "table_summary",
}


def _read(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"method": str})
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{path} lacks the columns {missing} (written by an older unishift?): rerun the run "
            "on the current code, then this command"
        )
    return frame


def _flag(value) -> bool | None:
    """A CSV boolean: True, False, or None where the file leaves it empty (not known)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip()
    if text in ("True", "true", "1"):
        return True
    if text in ("False", "false", "0"):
        return False
    if not text:
        return None
    raise ValueError(f"not a boolean: {value!r}")


def _number(value: float) -> str:
    """An error or edge with four significant digits ("--" where not finite)."""
    return f"{value:.4g}" if np.isfinite(value) else "--"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%" if np.isfinite(value) else "--"


def _interval(low: float, high: float, form=_number) -> str:
    if not (np.isfinite(low) and np.isfinite(high)):
        return "no interval"
    return f"[{form(low)}, {form(high)}]"


def _names(text, limit: int = 4) -> str:
    names = [n for n in str(text).split(";") if n] if isinstance(text, str) else []
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _share(value: float) -> str:
    return f"{value:.0%}" if np.isfinite(value) else "none (no bootstrap)"


@dataclass(frozen=True)
class Region:
    """One end of a map's measured intensity: its range and verdict."""

    lower: float
    upper: float
    upper_closed: bool
    verdict: str
    winner: str
    tied: str
    n_tied: int
    share: float
    n_samples: int

    def cell(self) -> str:
        """The table's short form."""
        if self.verdict == "winner":
            return f"`{self.winner}` ({_share(self.share)})"
        if self.verdict == "no clear winner":
            return f"no clear winner ({self.n_tied} tied)"
        return self.verdict

    def sentence(self) -> str:
        close = "]" if self.upper_closed else ")"
        where = f"[{_number(self.lower)}, {_number(self.upper)}{close}, {self.n_samples} samples"
        if self.verdict == "winner":
            kept = f"kept in {_share(self.share)} of the resamples"
            if self.share < STABLE_SHARE:
                kept += ", so it rests on few setups"
            return f"`{self.winner}` wins on {where} ({kept})"
        if self.verdict == "no clear winner":
            return f"no clear winner on {where}: {_names(self.tied)} are not told apart"
        return f"{self.verdict} on {where}"


def _region(row) -> Region:
    return Region(
        lower=float(row["lower"]),
        upper=float(row["upper"]),
        upper_closed=bool(_flag(row["upper_closed"])),
        verdict=str(row["verdict"]),
        winner=row["winner"] if isinstance(row["winner"], str) else "",
        tied=row["tied"] if isinstance(row["tied"], str) else "",
        n_tied=int(row["n_tied"]),
        share=float(row["bootstrap_share"]),
        n_samples=int(row["n_samples"]),
    )


@dataclass(frozen=True)
class Pair:
    """What the block says about one task and shift, read from its files."""

    task: str
    shift: str
    descriptor: str
    low: Region
    high: Region
    n_regions: int
    best: str  # the table's top-ranked method, its ``winner`` ("" without one)
    best_mean: float
    best_ci: tuple[float, float]
    best_not_beaten: tuple[str, ...]  # methods the winner is not significantly better than
    gains: dict  # name -> (gain, low, high) of the Selector and the Hybrid
    group_gains: dict  # name -> how many held-out groups are (better, worse, undecided, same)
    best_single: str  # BestSingle's note: the method of each held-out group
    degenerate: bool
    trivial: tuple[float, float, float] | None  # mean, ci_low, ci_high
    trivial_note: str
    disagreement: str  # the files that disagree on the degenerate flag ("" when none)
    gap_closed: float = float("nan")  # the Hybrid's share of BestSingle's gap to SetupOracle


def gap_closed(selection: pd.DataFrame) -> float:
    """The share of BestSingle's gap to the per-setup oracle that the Hybrid closes, from a
    selection file's mean errors (indexed by method): (BestSingle - Hybrid) / (BestSingle -
    SetupOracle); NaN where a row is missing or BestSingle has no gap (it is best on every setup)."""
    names = ("Hybrid", "BestSingle", "SetupOracle")
    if any(n not in selection.index for n in names):
        return float("nan")
    hybrid, best, oracle = (float(selection.loc[n, "mean_error"]) for n in names)
    gap = best - oracle
    return (best - hybrid) / gap if gap > 0 else float("nan")


def decision(gain: float, low: float, high: float) -> str:
    """The verdict on a gain over BestSingle: "better" or "worse" where its interval excludes 0,
    "same" where gain and interval are all 0 (BestSingle's choice on every sample), else "not
    decidable"."""
    if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(gain)):
        return "not decidable"
    if gain == low == high == 0:
        return "same"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "not decidable"


def measured_regions(path: Path, shift: str) -> pd.DataFrame:
    """The regions of a regime map's CSV along the shift's measured intensity (:data:`MEASURED`),
    one row each, in bin order; a ValueError where the file has no map of it."""
    regions = _read(path, REGION_COLUMNS)
    descriptor = MEASURED[shift]
    regions = regions[regions["descriptor"] == descriptor]
    if regions.empty:
        raise ValueError(f"{path} has no map of the measured intensity {descriptor!r}")
    return regions.drop_duplicates("bin").sort_values("first_bin")


def pairs_with(results: str | Path, entry: str) -> list[tuple[str, str]]:
    """Every (task, shift) of ``results`` whose file ``entry`` (a results_layout entry) exists,
    in table order."""
    return [
        (task, shift)
        for shift in SHIFTS
        for task in TASKS
        if Path(results_path(results, entry, task=task, shift=shift)).is_file()
    ]


def read_pair(results: str | Path, task: str, shift: str) -> Pair:
    """The block's facts of one task and shift under ``results``."""
    paths = {
        k: Path(results_path(results, entry, task=task, shift=shift))
        for k, entry in ENTRIES.items()
    }
    absent = [str(p) for p in paths.values() if not p.is_file()]
    if absent:
        raise FileNotFoundError(f"{task} under {shift} shift: missing {absent}")
    selection = _read(paths["selection"], SELECTION_COLUMNS).set_index("method")
    gains_file = _read(paths["gains"], GAIN_COLUMNS)
    summary = _read(paths["summary"], SUMMARY_COLUMNS)
    descriptor = MEASURED[shift]
    regions = measured_regions(paths["map"], shift)

    winners = summary[summary["winner"].map(_flag).fillna(False).astype(bool)]
    if len(winners) > 1:
        raise ValueError(f"{paths['summary']} declares {len(winners)} winners")
    best, best_mean, best_ci, not_beaten = "", np.nan, (np.nan, np.nan), ()
    if len(winners):
        row = winners.iloc[0]
        best, best_mean = row["method"], float(row["mean_error"])
        best_ci = (float(row["ci_low"]), float(row["ci_high"]))
        others = summary[(summary["method"] != best)]
        others = others[~others["below_coverage"].map(_flag).fillna(False).astype(bool)]
        not_beaten = tuple(
            m
            for m, f in zip(others["method"], others["winner_significantly_better"], strict=True)
            if _flag(f) is False
        )

    gains, group_gains = {}, {}
    for name in ("Selector", "Hybrid"):
        if name not in selection.index:
            continue
        row = selection.loc[name]
        gains[name] = tuple(
            float(row[c]) for c in ("gain_vs_best_single", "gain_ci_low", "gain_ci_high")
        )
        part = gains_file[gains_file["method"] == name]
        verdicts = [
            decision(*map(float, r))
            for r in part[["gain_vs_best_single", "gain_ci_low", "gain_ci_high"]].to_numpy()
        ]
        group_gains[name] = tuple(
            verdicts.count(v) for v in ("better", "worse", "not decidable", "same")
        )

    flags = {
        "selection": _flag(selection["degenerate"].iloc[0]),
        "map": _flag(regions["degenerate"].iloc[0]),
        "table": _flag(summary["degenerate"].iloc[0]),
    }
    degenerate = bool(flags["selection"])
    known = {k: v for k, v in flags.items() if v is not None}
    disagreement = ""
    if len(set(known.values())) > 1:
        disagreement = "; ".join(f"{k}: {v}" for k, v in known.items())
    trivial, trivial_note = None, ""
    if "Trivial" in selection.index:
        row = selection.loc["Trivial"]
        trivial = (float(row["mean_error"]), float(row["ci_low"]), float(row["ci_high"]))
        trivial_note = str(row["note"]) if isinstance(row["note"], str) else ""
    best_single = ""
    if "BestSingle" in selection.index and isinstance(selection.loc["BestSingle", "note"], str):
        best_single = selection.loc["BestSingle", "note"]
    return Pair(
        task=task,
        shift=shift,
        descriptor=descriptor,
        low=_region(regions.iloc[0]),
        high=_region(regions.iloc[-1]),
        n_regions=len(regions),
        best=best,
        best_mean=best_mean,
        best_ci=best_ci,
        best_not_beaten=not_beaten,
        gains=gains,
        group_gains=group_gains,
        best_single=best_single,
        degenerate=degenerate,
        trivial=trivial,
        trivial_note=trivial_note,
        disagreement=disagreement,
        gap_closed=gap_closed(selection),
    )


def pairs_of(results: str | Path) -> list[Pair]:
    """Every task and shift of ``results`` that has a selection file, in table order."""
    found = pairs_with(results, "selection_csv")
    if not found:
        raise FileNotFoundError(
            f"no selection file under {results}/regimes/: run the workflow (rule selector) first"
        )
    return [read_pair(results, task, shift) for task, shift in found]


def _gain_cell(gain) -> str:
    if gain is None:
        return "no Hybrid"
    value, low, high = gain
    verdict = decision(value, low, high)
    shown = f"{_percent(value)} {_interval(low, high, _percent)}"
    if verdict == "same":
        return f"{shown}, BestSingle's choices"
    return shown if verdict != "not decidable" else f"{shown}, not decidable"


def _gain_sentence(name: str, gain, groups) -> str:
    value, low, high = gain
    verdict = decision(value, low, high)
    interval = _interval(low, high, _percent)
    if verdict == "same":
        text = f"the {name} makes BestSingle's choices (gain {_percent(value)} {interval})"
    elif verdict == "better":
        text = f"the {name} removes {_percent(value)} of BestSingle's error {interval}"
    elif verdict == "worse":
        # the error it adds, and the interval of that (the gain's, negated)
        added = _interval(-high, -low, _percent)
        text = f"the {name} adds {_percent(-value)} to BestSingle's error {added}"
    else:
        text = (
            f"the {name} against BestSingle is not decidable (gain {_percent(value)} {interval}, "
            "the interval includes 0)"
        )
    total = sum(groups)
    counts = [
        f"{word} in {n}"
        for word, n in zip(("better", "worse", "undecided", "the same"), groups, strict=True)
        if n
    ]
    if total:
        text += f"; per held-out group {', '.join(counts)} of {total}"
    return text


def _top(pair: Pair) -> str:
    """The table's top-ranked method with its mean error and interval, and whether it beats the
    rest: "top-ranked in the tables (...), significantly better than every other method"."""
    shown = (
        f"top-ranked in the tables (mean error {_number(pair.best_mean)} "
        f"{_interval(*pair.best_ci)})"
    )
    if pair.best_not_beaten:
        return f"{shown} but not significantly better than {_names(';'.join(pair.best_not_beaten))}"
    return f"{shown}, significantly better than every other method"


def _use(pair: Pair) -> str:
    """The recommendation of a pair that is not degenerate, with the table's top-ranked method."""
    hybrid = pair.gains.get("Hybrid")
    if hybrid is not None and decision(*hybrid) == "better":
        return "Use the Hybrid." + (f" `{pair.best}` is {_top(pair)}." if pair.best else "")
    if pair.best and not pair.best_not_beaten:
        return f"Use `{pair.best}`: {_top(pair)}."
    if pair.best:
        return f"No single method is decided: `{pair.best}` is {_top(pair)}."
    return "No method is decided."


def pair_text(pair: Pair) -> str:
    """One bullet of the block: the pair's answer in plain sentences."""
    head = f"- **{TASK_TITLE.get(pair.task, pair.task)} under {pair.shift} shift.** "
    parts = []
    if pair.degenerate:
        mean, low, high = pair.trivial if pair.trivial else (np.nan, np.nan, np.nan)
        beats = pair.trivial_note.split(";")[0] or "beats more than half of the methods"
        parts.append(
            f"Degenerate: the trivial answer ({_number(mean)} {_interval(low, high)}) {beats}, "
            "so the ranking says which method stays nearest the trivial answer, not which to use."
        )
        if pair.best:
            parts.append(f"`{pair.best}` is {_top(pair)}.")
    else:
        parts.append(_use(pair))
    if pair.n_regions == 1:
        parts.append(f"Along `{pair.descriptor}`, one region: {pair.low.sentence()}.")
    else:
        parts.append(
            f"Along `{pair.descriptor}` ({pair.n_regions} regions): at low values "
            f"{pair.low.sentence()}; at high values {pair.high.sentence()}."
        )
    for name in ("Hybrid", "Selector"):
        if name in pair.gains:
            sentence = _gain_sentence(name, pair.gains[name], pair.group_gains[name])
            parts.append(sentence[0].upper() + sentence[1:] + ".")
    if pair.best_single:
        parts.append(f"BestSingle per held-out group: {pair.best_single}.")
    if pair.disagreement:
        parts.append(f"The files disagree on the degenerate flag ({pair.disagreement}).")
    return head + " ".join(parts)


def render(pairs: list[Pair], source: str, level: str = "") -> str:
    """The block between :data:`START` and :data:`END` (both included); ``level``: the intervals'
    level and resamples, as :func:`source_of` reads them."""
    lines = [
        START,
        f"Generated by `{COMMAND} RESULTS --write README.md` from {source}. "
        "`docs/regimes.md` §6 says how. "
        f"Intervals: {level or 'cluster-bootstrap intervals'} (setups, then samples "
        "within them); a map's winner is significant after Holm's correction, its share the "
        "resamples that keep it; the gain is the share of BestSingle's error the Hybrid "
        "removes, not decidable when its interval includes 0.",
        "",
        "| task | shift | top-ranked (mean error) | low intensity | high intensity "
        "| Hybrid vs BestSingle | gap closed | degenerate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for pair in pairs:
        best = f"`{pair.best}` {_number(pair.best_mean)}" if pair.best else "--"
        lines.append(
            f"| {pair.task} | {pair.shift} | {best} | {pair.low.cell()} | "
            f"{pair.high.cell() if pair.n_regions > 1 else 'one region'} | "
            f"{_gain_cell(pair.gains.get('Hybrid'))} | "
            f"{_percent(pair.gap_closed)} | "
            f"{'**degenerate**' if pair.degenerate else 'no'} |"
        )
    lines.append("")
    lines += [pair_text(pair) for pair in pairs]
    undecided = [f"{p.task}/{p.shift}" for p in pairs if "Hybrid" in p.gains
                 and decision(*p.gains["Hybrid"]) == "not decidable"]  # fmt: skip
    same = [f"{p.task}/{p.shift}" for p in pairs if "Hybrid" in p.gains
            and decision(*p.gains["Hybrid"]) == "same"]  # fmt: skip
    degenerate = [f"{p.task}/{p.shift}" for p in pairs if p.degenerate]
    closed = [p.gap_closed for p in pairs if np.isfinite(p.gap_closed)]
    lines += [
        "",
        f"Gap closed: the share of BestSingle's gap to the best method per setup in hindsight "
        f"(SetupOracle) that the Hybrid closes, (BestSingle - Hybrid) / (BestSingle - "
        f"SetupOracle) of the mean errors; averaged over the {len(closed)} pairs with a gap: "
        + (f"{_percent(float(np.mean(closed)))}." if closed else "none.")
        + " A pair without a gap (BestSingle best on every setup) shows --.",
        "",
        f"Not decidable from this run: the Hybrid against BestSingle on "
        f"{', '.join(undecided) or 'no pair'}; every region with no clear winner above. "
        + (f"The Hybrid makes BestSingle's choices on {', '.join(same)}. " if same else "")
        + f"Degenerate pairs: {', '.join(degenerate) or 'none'}.",
        END,
    ]
    return "\n".join(lines)


def source_of(results: str | Path, name: str) -> tuple[str, str]:
    """The heading's account of the run from its provenance: ``name`` with the code version, and
    the intervals' level and number of resamples (config ``alpha``, ``regimes.n_bootstrap``)."""
    provenance = Path(results_path(results, "provenance"))
    if not provenance.is_file():
        return name, ""
    facts = json.loads(provenance.read_text(encoding="utf-8"))
    config = facts.get("config") or {}
    level = ""
    if "alpha" in config:
        level = f"{1 - float(config['alpha']):.0%} cluster-bootstrap intervals"
        resamples = (config.get("regimes") or {}).get("n_bootstrap")
        level += f" of {resamples} resamples" if resamples else ""
    return f"{name}; code version `{facts.get('code_version', 'unknown')}`", level


def findings_block(results: str | Path, name: str) -> str:
    return render(pairs_of(results), *source_of(results, name))


def block_in(text: str, start: str = START, end: str = END, command: str = COMMAND) -> str:
    """The block of a document's text, markers included: from the first line that is exactly
    ``start`` to the next line that is exactly ``end`` (a marker quoted inside a line of prose is
    no marker); a ValueError without them."""
    found = re.search(
        rf"^{re.escape(start)}$.*?^{re.escape(end)}$", text, flags=re.MULTILINE | re.DOTALL
    )
    if found is None:
        raise ValueError(
            f"no findings block: the document needs the lines {start!r} and {end!r}, each on a "
            f"line of its own ({command} RESULTS_DIR --write FILE fills what lies between them)"
        )
    return found.group(0)


def copy_inputs(results: str | Path, target: str | Path) -> list[Path]:
    """Copy what the block reads from ``results`` to ``target`` in the same layout: the selection,
    gains and summary files whole, the maps cut to one row per region (the block reads only the
    region columns), and ``provenance.json``; the block from ``target`` equals the block from
    ``results``. Returns the written paths."""
    written = []
    for pair in pairs_of(results):
        for key, entry in ENTRIES.items():
            source = Path(results_path(results, entry, task=pair.task, shift=pair.shift))
            dest = Path(results_path(target, entry, task=pair.task, shift=pair.shift))
            frame = pd.read_csv(source, keep_default_na=False, na_values=[""], dtype=str)
            if key == "map":
                frame = frame.drop_duplicates(["descriptor", "bin"])[list(REGION_COLUMNS)]
            write_csv(dest, frame)
            written.append(dest)
    provenance = Path(results_path(results, "provenance"))
    if provenance.is_file():
        dest = Path(results_path(target, "provenance"))
        facts = json.loads(provenance.read_text(encoding="utf-8"))
        config = facts.get("config") or {}
        kept = {
            "code_version": facts.get("code_version"),
            "config": {
                "alpha": config.get("alpha"),
                "regimes": {"n_bootstrap": (config.get("regimes") or {}).get("n_bootstrap")},
            },
        }
        write_text(dest, json.dumps(kept, indent=1, sort_keys=True) + "\n")
        written.append(dest)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a finished run's results folder")
    parser.add_argument("--name", default="the run", help="what the heading calls the run")
    parser.add_argument(
        "--write", metavar="FILE", action="append", default=[],
        help="replace the block in this file (repeatable: README.md, docs/regimes.md)",
    )  # fmt: skip
    parser.add_argument(
        "--check", metavar="FILE", action="append", default=[],
        help="exit 1 when this file's block differs (repeatable)",
    )  # fmt: skip
    parser.add_argument("--inputs-to", metavar="DIR", help="copy the files the block reads to DIR")
    parser.add_argument(
        "--out", help=f"also write the block here (default: {STEM} in RESULTS; '-' for none)"
    )
    args = parser.parse_args(argv)
    if args.inputs_to:
        for path in copy_inputs(args.results, args.inputs_to):
            print(path)
        return 0
    block = findings_block(args.results, args.name)
    out = args.out or str(Path(args.results) / STEM)
    if out != "-":
        write_text(out, block + "\n")
    # every file's markers are found before any file is written
    texts = {f: Path(f).read_text(encoding="utf-8") for f in [*args.write, *args.check]}
    fresh = {f: text.replace(block_in(text), block) for f, text in texts.items()}
    for name in args.write:
        if fresh[name] != texts[name]:
            Path(name).write_text(fresh[name], encoding="utf-8")
    stale = [name for name in args.check if fresh[name] != texts[name]]
    for name in stale:
        print(f"{name}: the findings block differs from {args.results}'s")
    if stale:
        return 1
    if not (args.write or args.check):
        print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
