"""Covariate-shift evaluation of the methods that need domain-classifier weights, before and after the
weights are shared across jobs (issue 12, item 5; docs/domain-weights.md), side by side in one run.

Per setup (the paper's shape: a synthetic stand-in of a fine-tuned language model with 768-d hidden
states, 5,000 classifier-training rows, 1,000 validation rows, ``--samples`` samples of 250 items; see
``bench_methods.covariate_setup``):

* BEFORE (as main did): every weight-consuming method of the paper's covariate tables (derived from
  the methods' declared plans: CPCS, TransCal, EMQ^TransCal, CPCS/TransCal ζ2ρ and ζ2α) is evaluated
  with :func:`unishift.evaluation.evaluate.evaluate_setup` and fits its own domain classifiers;
* AFTER: the upstream step (:func:`compute_domain_weights`, one call per plan) computes the weights
  once, then the same methods are evaluated reading them.

The records of the two are asserted equal. BLAS/OpenMP pools are capped at one thread, as in the
workflow's single-threaded jobs; the process CPU time is reported next to the wall time (other
processes share the cores). Writes ``benchmarks/output/domain_weights.csv`` and prints a Markdown
table with the totals and their extrapolation to ``--extrapolate`` setups.

Run: ``python benchmarks/bench_domain_weights.py [--setups 1] [--samples 100] [--extrapolate 18]``.
It is a script, not a test.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

import pandas as pd
import yaml
from bench_methods import covariate_setup
from threadpoolctl import threadpool_limits

from unishift.evaluation.evaluate import evaluate_setup
from unishift.methods.domain_weights import MEMO_KEY, SHARED_PLANS, DomainWeightMemo
from unishift.methods.registry import get_method
from unishift.workflow.domain_weight_artifacts import (
    compute_domain_weights,
    method_domain_weight_plan,
)

ROOT = Path(__file__).resolve().parent
OUTPUT = ROOT / "output"
SHIFT = "covariate"


def consumers() -> list[tuple[str, str, str]]:
    """(task, method, plan) of every method of the paper's covariate tables that shares weights."""
    config = yaml.safe_load((ROOT.parent / "config" / "paper.yaml").read_text())
    found = []
    for task, names in config["methods"][SHIFT].items():
        for name in names:
            plan = method_domain_weight_plan(task, name, SHIFT)
            if plan in SHARED_PLANS:
                found.append((task, name, plan))
    return found


def timed(action, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = action(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def evaluate(task, name, setup, domain_stream):
    spec = get_method(task, name, SHIFT)
    return evaluate_setup(
        task, name, lambda: spec.build(SHIFT, 2), setup, domain_stream=domain_stream
    )[0]


def bench_setup(index: int, n_samples: int, domain_stream: str) -> list[dict]:
    setup = covariate_setup(n_samples, seed=index)
    rows, before = [], {}
    methods = consumers()
    for task, name, _ in methods:
        before[name], wall, cpu = timed(evaluate, task, name, replace(setup), domain_stream)
        rows.append(
            dict(setup=index, phase="before", step=f"{task}/{name}", wall_s=wall, cpu_s=cpu)
        )
    memos = {}
    for plan in sorted({plan for _, _, plan in methods}):
        (memos[plan], errors), wall, cpu = timed(compute_domain_weights, setup, plan, domain_stream)
        assert not errors, errors
        rows.append(
            dict(setup=index, phase="after", step=f"weights/{plan}", wall_s=wall, cpu_s=cpu)
        )
    for task, name, plan in methods:
        reading = DomainWeightMemo(entries=memos[plan].entries)
        shared = replace(setup, sample_artifacts=lambda sample_id, m=reading: {MEMO_KEY: m})
        records, wall, cpu = timed(evaluate, task, name, shared, domain_stream)
        assert records == before[name], f"{name}: records differ with the shared weights"
        assert reading.hits == len(reading.entries), f"{name}: {reading.hits} hits"
        rows.append(dict(setup=index, phase="after", step=f"{task}/{name}", wall_s=wall, cpu_s=cpu))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setups", type=int, default=1)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--extrapolate", type=int, default=18, help="setups of the paper's grid")
    parser.add_argument("--domain-stream", default="reference", choices=["reference", "per_sample"])
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    rows = []
    with threadpool_limits(1):
        for index in range(args.setups):
            rows += bench_setup(index, args.samples, args.domain_stream)
            frame = pd.DataFrame(rows)
            OUTPUT.mkdir(exist_ok=True)
            frame.to_csv(OUTPUT / "domain_weights.csv", index=False)  # after each setup
            print(f"setup {index} done", flush=True)
    per_step = frame.groupby(["phase", "step"], sort=False)[["wall_s", "cpu_s"]].mean()
    print(per_step.round(1).to_markdown())
    totals = frame.groupby("phase")[["wall_s", "cpu_s"]].sum() / args.setups
    totals["cpu_s_x_setups"] = totals["cpu_s"] * args.extrapolate
    print()
    print(f"per setup (mean of {args.setups}), CPU x {args.extrapolate} setups:")
    print(totals.round(1).to_markdown())


if __name__ == "__main__":
    main()
