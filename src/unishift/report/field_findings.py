"""Where the field's methods stand against the paper's, written from a run's files (docs/methods.md
§6.5).

    python -m unishift.report.field_findings RESULTS_DIR                     # print the block
    python -m unishift.report.field_findings RESULTS_DIR --write README.md   # replace its block

Per task and shift it reads the table summary (``tables/{task}_{shift}_summary.csv``: each
method's group, average rank, mean error with its interval, and the Holm-corrected Wilcoxon test of
the top-ranked method against every other) and the regime map of the measured intensity
(``regimes/{task}_{shift}.csv``). A method is of the field when the tables put it in the group
``field``, of the Selector's pool when in ``selection``, and of the paper's otherwise. The block
says which pool's method ranks first, whether the tables' test tells it from the other pool's
best, and which pool wins each region of intensity where a region has a winner. It reads the files
that :func:`unishift.report.findings.copy_inputs` copies, so the committed copy under
``docs/findings/field/`` reproduces it.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.io import write_text
from unishift.report.findings import (
    MEASURED,
    _flag,
    _interval,
    _number,
    _read,
    block_in,
    measured_regions,
    pairs_with,
    source_of,
)
from unishift.results_layout import results_path

FIELD = "field"
SELECTION = "selection"
START = "<!-- field-findings:start -->"
END = "<!-- field-findings:end -->"
COMMAND = "python -m unishift.report.field_findings"
SUMMARY_COLUMNS = (
    "method",
    "group",
    "avg_rank",
    "mean_error",
    "ci_low",
    "ci_high",
    "below_coverage",
    "winner",
    "winner_significantly_better",
)


def pool_of(group: str) -> str:
    """``field``, ``selection`` or ``paper`` (every other group: baseline, reference, adapted)."""
    return group if group in (FIELD, SELECTION) else "paper"


@dataclass(frozen=True)
class Standing:
    """One method's row of the table summary."""

    method: str
    pool: str
    avg_rank: float
    position: int  # 1 for the best average rank among the ranked methods
    mean: float
    ci: tuple[float, float]
    is_winner: bool  # the tables' top-ranked method
    beaten_by_winner: bool | None  # the Holm-corrected test; None for the winner itself

    def shown(self) -> str:
        return f"`{self.method}` (rank {self.position}, {_number(self.mean)} {_interval(*self.ci)})"


@dataclass(frozen=True)
class FieldPair:
    task: str
    shift: str
    descriptor: str
    winner: Standing | None
    field_best: Standing | None
    paper_best: Standing | None
    n_ranked: int
    n_field: int
    field_not_beaten: tuple[str, ...]  # field methods the winner is not significantly better than
    paper_not_beaten: tuple[str, ...]
    regions: tuple[tuple[str, str], ...]  # (verdict, the winner's pool or "") of each region
    degenerate: bool

    def verdict(self) -> str:
        """The tables' answer: which pool's method ranks first and whether its test tells it from
        the other pool's best."""
        if self.winner is None:
            return "no method ranked"
        if self.field_best is None:
            return "no field method in the table"
        w = self.winner
        if w.pool == SELECTION:
            return f"the Selector's pool ranks first (`{w.method}`); field against paper not tested"
        if w.pool == FIELD:
            if self.paper_best is None:
                return f"`{w.method}` (field) ranks first; no paper method in the table"
            other_pool, other_best, not_beaten = "paper", self.paper_best, self.paper_not_beaten
        else:
            other_pool, other_best, not_beaten = FIELD, self.field_best, self.field_not_beaten
        if not not_beaten:
            return f"{w.pool}: `{w.method}` significantly better than every {other_pool} method"
        # not_beaten is in rank order: the best-ranked method the test does not tell apart first
        more = len(not_beaten) - 1
        text = (
            f"not told apart: `{w.method}` ({w.pool}) ranks first, not significantly better than "
            f"`{not_beaten[0]}` ({other_pool})"
            + (f" and {more} more {other_pool} method{'s' if more > 1 else ''}" if more else "")
        )
        if not_beaten[0] != other_best.method:
            # the other pool's best-ranked method is beaten; a lower-ranked one is not
            text += f", though significantly better than the {other_pool}'s best-ranked `{other_best.method}`"
        return text

    def region_counts(self) -> dict[str, int]:
        counts = {"field": 0, "paper": 0, SELECTION: 0, "no clear winner": 0}
        for verdict, pool in self.regions:
            if verdict == "winner" and pool:
                counts[pool] += 1
            else:
                counts["no clear winner"] += 1
        return counts


def _standings(summary: pd.DataFrame) -> list[Standing]:
    """The ranked methods (those above the coverage floor, the tables' eligible methods) by average
    rank, ties broken by the table's order."""
    covered = summary[~summary["below_coverage"].map(_flag).fillna(False).astype(bool)]
    covered = covered[np.isfinite(covered["avg_rank"].astype(float))]
    order = covered.assign(_row=range(len(covered))).sort_values(
        ["avg_rank", "_row"], kind="stable"
    )
    out = []
    for position, (_, row) in enumerate(order.iterrows(), start=1):
        flag = row["winner_significantly_better"]
        out.append(
            Standing(
                method=str(row["method"]),
                pool=pool_of(str(row["group"])),
                avg_rank=float(row["avg_rank"]),
                position=position,
                mean=float(row["mean_error"]),
                ci=(float(row["ci_low"]), float(row["ci_high"])),
                is_winner=bool(_flag(row["winner"])),
                beaten_by_winner=None if _flag(row["winner"]) else _flag(flag),
            )
        )
    return out


def read_field_pair(results: str | Path, task: str, shift: str) -> FieldPair:
    summary_path = Path(results_path(results, "table_summary", task=task, shift=shift))
    map_path = Path(results_path(results, "regime_csv", task=task, shift=shift))
    absent = [str(p) for p in (summary_path, map_path) if not p.is_file()]
    if absent:
        raise FileNotFoundError(f"{task} under {shift} shift: missing {absent}")
    summary = _read(summary_path, SUMMARY_COLUMNS)
    standings = _standings(summary)
    winners = [s for s in standings if s.is_winner]
    if len(winners) > 1:
        raise ValueError(f"{summary_path} declares {len(winners)} winners")
    winner = winners[0] if winners else None
    by_pool = {pool: [s for s in standings if s.pool == pool] for pool in (FIELD, "paper")}
    not_beaten = {
        pool: tuple(s.method for s in members if s.beaten_by_winner is False)
        for pool, members in by_pool.items()
    }
    pool_by_method = {str(m): pool_of(str(g)) for m, g in zip(summary["method"], summary["group"])}

    regions_frame = measured_regions(map_path, shift)
    regions = []
    for _, row in regions_frame.iterrows():
        name = row["winner"] if isinstance(row["winner"], str) else ""
        if name and name not in pool_by_method:
            raise ValueError(f"{map_path}: the winner {name!r} is not in {summary_path}")
        regions.append((str(row["verdict"]), pool_by_method.get(name, "")))
    return FieldPair(
        task=task,
        shift=shift,
        descriptor=MEASURED[shift],
        winner=winner,
        field_best=by_pool[FIELD][0] if by_pool[FIELD] else None,
        paper_best=by_pool["paper"][0] if by_pool["paper"] else None,
        n_ranked=len(standings),
        n_field=len(by_pool[FIELD]),
        field_not_beaten=not_beaten[FIELD],
        paper_not_beaten=not_beaten["paper"],
        regions=tuple(regions),
        # the map's flag, as the findings block reads it (unishift.report.findings.read_pair)
        degenerate=bool(_flag(regions_frame["degenerate"].iloc[0])),
    )


def field_pairs_of(results: str | Path) -> list[FieldPair]:
    found = pairs_with(results, "table_summary")
    if not found:
        raise FileNotFoundError(f"no table summary under {results}/tables/: run the workflow first")
    return [read_field_pair(results, task, shift) for task, shift in found]


def _regions_cell(pair: FieldPair) -> str:
    c = pair.region_counts()
    parts = [f"field {c['field']}", f"paper {c['paper']}"]
    if c[SELECTION]:
        parts.append(f"Selector {c[SELECTION]}")
    parts.append(f"no clear winner {c['no clear winner']}")
    return f"{', '.join(parts)} (of {len(pair.regions)})"


def render(pairs: list[FieldPair], source: str, level: str = "") -> str:
    lines = [
        START,
        f"Generated by `{COMMAND} RESULTS --write FILE` from {source}. The paper's pool is every "
        "method of the groups baseline, reference and adapted; the field's, the group field "
        "(docs/methods.md §6). Rank: the position by the tables' average rank among the "
        f"ranked methods; error: mean error with its {level or 'cluster-bootstrap interval'}; "
        "the verdict is the tables' two-sided Wilcoxon test of the top-ranked method against "
        "each other (per-setup ranks, Holm-corrected); regions: the winners of the regime map "
        "of the measured intensity (`est_prevalence_shift` under label shift, `domain_auc` "
        "otherwise) by pool.",
        "",
        "| task | shift | best paper method | best field method | verdict | regions won | "
        "degenerate |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in pairs:
        lines.append(
            f"| {p.task} | {p.shift} | {p.paper_best.shown() if p.paper_best else '--'} | "
            f"{p.field_best.shown() if p.field_best else '--'} | {p.verdict()} | "
            f"{_regions_cell(p)} | {'**degenerate**' if p.degenerate else 'no'} |"
        )
    with_field = [p for p in pairs if p.field_best is not None]
    decided = {
        pool: [f"{p.task}/{p.shift}" for p in with_field if p.winner and p.winner.pool == pool
               and not (p.paper_not_beaten if pool == FIELD else p.field_not_beaten)]
        for pool in (FIELD, "paper")
    }  # fmt: skip
    won = {pool: sum(p.region_counts()[pool] for p in with_field) for pool in (FIELD, "paper")}
    total = sum(len(p.regions) for p in with_field)
    lines += [
        "",
        f"A field method ranks first in {sum(1 for p in with_field if p.winner and p.winner.pool == FIELD)} "
        f"of {len(with_field)} pairs; it is significantly better than every paper method in "
        f"{', '.join(decided[FIELD]) or 'none'}, and a paper method than every field method in "
        f"{', '.join(decided['paper']) or 'none'}. Over the regions of intensity, a field method "
        f"wins {won[FIELD]} and a paper method {won['paper']} of {total}. Degenerate pairs (the "
        "trivial answer beats most methods, docs/regimes.md §6): "
        f"{', '.join(f'{p.task}/{p.shift}' for p in pairs if p.degenerate) or 'none'}.",
        END,
    ]
    return "\n".join(lines)


def field_block(results: str | Path, name: str) -> str:
    return render(field_pairs_of(results), *source_of(results, name))


def field_block_in(text: str) -> str:
    """The field block of a document's text, markers included (:func:`findings.block_in`)."""
    return block_in(text, START, END, COMMAND)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a finished run's results folder")
    parser.add_argument("--name", default="the run", help="what the heading calls the run")
    parser.add_argument("--write", metavar="FILE", action="append", default=[],
                        help="replace the block in this file (repeatable)")  # fmt: skip
    args = parser.parse_args(argv)
    block = field_block(args.results, args.name)
    # every file's markers are found before any file is written
    texts = {f: Path(f).read_text(encoding="utf-8") for f in args.write}
    fresh = {f: text.replace(field_block_in(text), block) for f, text in texts.items()}
    for name in args.write:
        if fresh[name] != texts[name]:
            write_text(name, fresh[name])
    if not args.write:
        print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
