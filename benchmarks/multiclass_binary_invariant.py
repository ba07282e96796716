"""The n = 2 invariant on the binary branch's own results: rerun every multiclass method that has a
binary twin on the label-shift setups of a finished binary run and compare with its results/eval.

    python benchmarks/multiclass_binary_invariant.py --results results [--methods quantification/PACC]

For each twin and setup the setups are rebuilt exactly as workflow/scripts/evaluate.py builds them
(the persisted splits, posteriors and sample indices), the multiclass method runs on the converted
data, and its per-sample numbers are compared with the binary records: the positive prevalence for
quantifiers, the accuracy for CAP methods, the top-label ECE and the Brier score (multiclass metrics)
for calibrators. Prints the largest absolute difference per method; exits 1 if any exceeds 1e-10.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.label_shift import load_label_setup
from unishift.evaluation import _domain_draws
from unishift.io import read_npz
from unishift.methods.base import SampleContext
from unishift.metrics import multiclass as mcm
from unishift.multiclass import catalogue
from unishift.multiclass.base import from_binary_sample, from_binary_setting

# multiclass parameters that reproduce the binary label-shift table's column
# (the multiclass LasCal and Head2Tail columns read S-logits and Head2Tail takes the most frequent
# class as its head; the binary tables read P-logits and take class 0)
_P_INNER = {"inner_params": {"logits": "P"}}
_H2T = {"logits": "P", "head": "index"}
OVERRIDES = {
    ("calibration", "CPCS"): {"logits": "P"},
    ("calibration", "TransCal"): {"logits": "S"},
    ("calibration", "LasCal"): {"logits": "P"},
    ("quantification", "LasCal_c2q"): _P_INNER,
    ("cap", "LasCal_c2a"): _P_INNER,
    ("calibration", "Head2Tail"): _H2T,
    ("quantification", "Head2Tail_c2q"): {"inner_params": _H2T},
}
TOLERANCE = 1e-10
# the binary run's ece_precision (its default float32 arithmetic); --ece-precision changes it
ECE_PRECISION = "float32"
# the binary run's domain_stream (its default); --domain-stream changes it
DOMAIN_STREAM = "reference"
# binary calibration columns whose multiclass form is a different construction for k = 2 (top-label
# cells instead of bins of p_1): compared by their mean top-label ECE, not sample by sample
RELATED = {
    "PACC_q2c_5B": "PACC_q2c_3B",
    "EMQ_q2c_5B": "EMQ_q2c_3B",
    "KDEy_q2c_5B": "KDEy_q2c_3B",
    "ATC_a2c_6B": "ATC_a2c_3B",
    "DoC_a2c_6B": "DoC_a2c_3B",
    "LEAP_a2c_6B": "LEAP_a2c_3B",
    "DMCal": "DMCal",
}


def setups(results: Path, seed: int):
    for posteriors in sorted((results / "posteriors" / "label").glob("*/*.npz")):
        dataset, classifier = posteriors.parent.name, posteriors.stem
        yield load_label_setup(
            read_npz(results / "data" / "label" / dataset / "split.npz"),
            read_npz(posteriors),
            read_npz(results / "samples" / "label" / f"{dataset}.npz"),
            dataset,
            classifier,
            seed,
        )


def compare(task, name, spec, setup, binary: pd.DataFrame) -> float:
    method = spec.build("label", OVERRIDES.get((task, name))).fit(
        from_binary_setting(setup.setting)
    )
    rows = binary[(binary.dataset == setup.dataset) & (binary.classifier == setup.classifier)]
    # the binary run's domain-classifier draws (CPCS, TransCal): with domain_stream "reference" one
    # stream continued across the samples in order, as the binary driver feeds it
    draws = _domain_draws(setup, DOMAIN_STREAM)
    worst = 0.0
    for record in rows.sort_values("sample_id").itertuples():
        sample, labels = setup.sample(int(record.sample_id))
        context = SampleContext(
            setting_key=setup.setting.key,
            sample_id=int(record.sample_id),
            seed=setup.setting.seed,
            draws=draws,
        )
        output = method.apply(from_binary_sample(sample), context)
        if record.status == "error":
            continue
        if task == "quantification":
            pairs = [(float(np.asarray(output)[1]), record.estimate)]
        elif task == "cap":
            pairs = [(float(output), record.estimate)]
        else:
            pairs = [
                (mcm.ece_top_label(output, labels, arithmetic=ECE_PRECISION), record.ece),
                (mcm.brier(output, labels), record.brier),
            ]
        worst = max([worst] + [abs(a - b) for a, b in pairs])
    return worst


def related(results: Path, all_setups) -> int:
    for binary_name, name in RELATED.items():
        path = results / "eval" / "label" / "calibration" / f"{binary_name}.csv"
        if not path.is_file():
            continue
        binary = pd.read_csv(path)
        spec = catalogue.get_method("calibration", name)
        eces = []
        for setup in all_setups:
            method = spec.build("label").fit(from_binary_setting(setup.setting))
            for sample_id in range(len(setup.sample_indices)):
                sample, labels = setup.sample(sample_id)
                context = SampleContext(setup.setting.key, sample_id, seed=setup.setting.seed)
                output = method.apply(from_binary_sample(sample), context)
                eces.append(mcm.ece_top_label(output, labels, arithmetic=ECE_PRECISION))
        print(
            f"{binary_name} (binary) {binary['ece'].mean():.3f} vs {name} (multiclass form, "
            f"k = 2) {np.mean(eces):.3f} mean top-label ECE over {len(eces)} samples",
            flush=True,
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="*", default=None, help="task/name; default: all twins")
    parser.add_argument(
        "--related", action="store_true", help="compare the RELATED calibrators' mean ECE instead"
    )
    parser.add_argument("--ece-precision", choices=["float32", "float64"], default="float32")
    parser.add_argument("--domain-stream", choices=["reference", "per_sample"], default="reference")
    args = parser.parse_args()
    global ECE_PRECISION, DOMAIN_STREAM
    ECE_PRECISION, DOMAIN_STREAM = args.ece_precision, args.domain_stream
    from threadpoolctl import threadpool_limits

    # the evaluation jobs of the binary run used one BLAS thread; SLSQP (LEAP's fallback, KDEy) sees
    # the last bits of multithreaded dot products, so run the twins the same way
    threadpool_limits(limits=1)
    results = Path(args.results)
    twins = [s for s in catalogue.all_methods() if s.binary_name and "label" in s.shifts]
    if args.methods:
        twins = [s for s in twins if f"{s.task}/{s.name}" in args.methods]
    all_setups = list(setups(results, args.seed))
    if args.related:
        return related(results, all_setups)
    failures = 0
    for spec in twins:
        path = results / "eval" / "label" / spec.task / f"{spec.binary_name}.csv"
        if not path.is_file():
            print(f"{spec.task}/{spec.name}: no binary records at {path}; skipped")
            continue
        binary = pd.read_csv(path)
        worst = max(compare(spec.task, spec.name, spec, s, binary) for s in all_setups)
        verdict = "ok" if worst <= TOLERANCE else "DIFFERS"
        failures += verdict != "ok"
        print(
            f"{spec.task}/{spec.name}: max |multiclass - binary| = {worst:.3g} over "
            f"{len(binary)} records ({verdict})",
            flush=True,
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
