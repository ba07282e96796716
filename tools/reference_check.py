"""Run the reference implementation's label-shift scripts offline and compare them per sample.

Two steps, two environments (docs/reproduction.md, "How the numbers were checked"):

1. ``run`` -- with the *reference's* Python environment (QuaPy 0.1.9, scikit-learn 1.6.1, scipy
   1.15.3, torch, cvxpy, abstention; not this project's), from a checkout of
   AlexMoreo/UnifyingProblems, restricted to some data sets and classifiers::

       HOME=<dir whose quapy_data/ holds the UCI cache> <ref-python> tools/reference_check.py run \\
           --ref <checkout> --out <dir> --script calibration --datasets cmc.3,yeast --classifiers lr,nb,knn

   The scripts run unchanged. Two loader problems of the published code are worked around without
   changing a computation (the vendored ``lascal`` package imports its parts in a circular order;
   the CAP script uses ``TransCalCalibrator`` and ``PACC`` without importing them), and abstention's
   RLLS solve is memoised on its inputs (it is a deterministic function of them; ``--as-published``
   leaves it as REF has it, for timing REF: ``benchmarks/bench_reference.py``). ``--skip COLUMNS``
   leaves REF columns out through REF's own resume (it skips a column whose CSV exists: an empty
   one is written first; ``compare`` ignores it). Build the QuaPy
   cache with this project's environment first::

       .venv/bin/python -c "from unishift.data.datasets import dataset_names; \\
           from unishift.data.uci import seed_quapy_cache as s; \\
           [s(d, '<dir>/quapy_data', '<data_root>') for d in dataset_names('uci_binary')]"

2. ``compare`` -- with this project's environment: our per-sample records of the same setups
   (computed through the library as the workflow does) against the reference's CSVs::

       .venv/bin/python tools/reference_check.py compare --out <dir> --script calibration \\
           --datasets cmc.3,yeast --classifiers LR,NB,kNN --data-root ../shared/data

Nothing of the reference is stored in this repository; ``--ref`` points at a checkout.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import os
import runpy
import sys
import types

SCRIPTS = {
    "calibration": ("calibration_experiments_label_shift.py", "calibration"),
    "quantification": ("quantification_experiments_label_shift.py", "quantification"),
    "cap": ("cap_experiments_label_shift.py", "classifier_accuracy_prediction"),
}

# Reference column name -> our registry name, per script.
NAMES = {
    "calibration": {
        "Platt": "Platt", "Head2Tail-P": "Head2Tail", "CPCS-P": "CPCS", "TransCal-S": "TransCal",
        "LasCal-P": "LasCal", "EM": "EMQ", "EM-BCTS": "EMQ_BCTS", "EMLasCal": "EMQ_LasCal",
        "HDcal8-sm-mono": "DMCal", "PACC-cal(soft)": "PacCal_sigma", "Bin6-PACC5": "PACC_q2c_5B",
        "Bin6-EM5": "EMQ_q2c_5B", "Bin6-KDEy5": "KDEy_q2c_5B", "Bin2-ATC6": "ATC_a2c_6B",
        "Bin2-DoC6": "DoC_a2c_6B", "Bin2-LEAP6": "LEAP_a2c_6B",
    },
    "quantification": {
        "CC": "CC", "PACC": "PACC", "EMQ": "EMQ", "EMQ-BCTS": "EMQ_BCTS", "KDEy": "KDEy",
        "ATC-q": "ATC_a2q", "DoC-q": "DoC_a2q", "LEAP-q": "LEAP_a2q", "Cpcs-q-P": "CPCS_c2q",
        "TransCal-q-P": "TransCal_c2q", "LasCal-q-P": "LasCal_c2q", "Head2Tail-q-P": "Head2Tail_c2q",
        "EMQ(LasCal)2-S": "EMQ_LasCal",
    },
    "cap": {
        "Naive": "Naive", "ATC": "ATC", "DoC": "DoC", "LEAP": "LEAP", "Cpcs-a-S": "CPCS_c2a",
        "TransCal-a-S": "TransCal_c2a", "LasCal-a-P": "LasCal_c2a", "HDc-a-sm-mono": "DMCal_c2a",
        "PACC-a": "PACC_q2a", "EMQ-a": "EMQ_q2a", "KDEy-a": "KDEy_q2a",
    },
}  # fmt: skip


def _prepare_reference(ref: str, memoise_rlls: bool = True) -> None:
    """Make the reference checkout importable despite its two loader problems (and memoise the RLLS
    solve unless ``memoise_rlls`` is false)."""
    sys.path[:0] = [ref]
    lascal = types.ModuleType("lascal")
    lascal.__path__ = [os.path.join(ref, "lascal")]
    sys.modules["lascal"] = lascal
    from lascal.calibration_error import Ece, EceLabelShift

    lascal.Ece, lascal.EceLabelShift = Ece, EceLabelShift
    from lascal.importance_weights import compute_true_w, get_importance_weights

    lascal.compute_true_w, lascal.get_importance_weights = compute_true_w, get_importance_weights
    from lascal.post_hoc_calibration import Calibrator

    lascal.Calibrator = Calibrator

    import model.classifier_accuracy_predictors as cap
    from model.classifier_calibrators import TransCalCalibrator
    from quapy.method.aggregative import PACC

    cap.TransCalCalibrator, cap.PACC = TransCalCalibrator, PACC
    if not memoise_rlls:
        return

    from abstention.label_shift import RLLSImbalanceAdapter

    solve, memo = RLLSImbalanceAdapter.compute_w_opt, {}

    def memoised(self, C_yy, mu_y, mu_train_y, rho):
        key = (C_yy.tobytes(), C_yy.shape, mu_y.tobytes(), mu_train_y.tobytes(), float(rho))
        if key not in memo:
            memo[key] = solve(self, C_yy, mu_y, mu_train_y, rho)
        return memo[key].copy()

    RLLSImbalanceAdapter.compute_w_opt = memoised


def run(args) -> None:
    ref = os.path.abspath(args.ref)
    os.makedirs(args.out, exist_ok=True)
    os.chdir(args.out)  # the scripts write results/<task>/label_shift/... below the working dir
    _prepare_reference(ref, memoise_rlls=not args.as_published)
    import commons

    datasets, classifiers = args.datasets.split(","), args.classifiers.split(",")
    original = commons.classifiers
    commons.uci_datasets = lambda top_length_k=10: list(datasets)
    commons.classifiers = lambda: ((n, c) for n, c in original() if n in classifiers)
    script = SCRIPTS[args.script][0]
    # REF skips a column whose CSV exists (its resume): an empty one leaves that column out
    folder = os.path.join(
        "results", SCRIPTS[args.script][1], "label_shift", commons.EXPERIMENT_FOLDER
    )
    os.makedirs(folder, exist_ok=True)
    for column in filter(None, args.skip.split(",")):
        for dataset, classifier in itertools.product(datasets, classifiers):
            with open(os.path.join(folder, f"{column}_{dataset}_{classifier}.csv"), "w") as out:
                out.write("id\n")
    sys.argv = [script]
    runpy.run_path(os.path.join(ref, script), run_name="__main__")


def _reference_values(frame, script):
    if script == "calibration":
        return frame["ece"].to_numpy(), frame["brier"].to_numpy()
    column = "ae" if script == "quantification" else "err"
    return frame[column].to_numpy(), None


def compare(args) -> None:
    import tempfile

    import numpy as np
    import pandas as pd

    from unishift.report.paper_cells import sample_records

    folder = SCRIPTS[args.script][1]
    data_home = args.data_home or tempfile.mkdtemp(prefix="quapy_home")
    rows = []
    for dataset in args.datasets.split(","):
        for classifier in args.classifiers.split(","):
            for ref_name, ours in NAMES[args.script].items():
                pattern = f"{args.out}/results/{folder}/label_shift/*/{ref_name}_{dataset}_{classifier.lower()}.csv"
                found = glob.glob(pattern)
                if not found:
                    continue
                reference = pd.read_csv(found[0]).sort_values("id")
                if reference.empty:  # a column left out with run --skip
                    continue
                records = sample_records(
                    args.script, ours, dataset, classifier, data_home, args.data_root
                )
                value, brier = _reference_values(reference, args.script)
                mine = records["ece" if args.script == "calibration" else "error"].to_numpy()
                diff = np.abs(mine - value)
                row = dict(dataset=dataset, classifier=classifier, method=ours, samples=len(diff),
                           equal=int(np.sum(diff <= args.tolerance)), largest=float(diff.max()))  # fmt: skip
                if brier is not None:
                    row["brier_equal"] = int(
                        np.sum(np.abs(records["brier"].to_numpy() - brier) <= args.tolerance)
                    )
                rows.append(row)
                print(row, flush=True)
    table = pd.DataFrame(rows)
    total, equal = int(table["samples"].sum()), int(table["equal"].sum())
    print(f"{args.script}: {equal} of {total} samples equal to {args.tolerance} "
          f"({100 * equal / total:.2f}%)")  # fmt: skip
    if args.csv:
        table.to_csv(args.csv, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "compare"):
        p = sub.add_parser(name)
        p.add_argument("--out", required=True, help="folder of the reference's results/")
        p.add_argument("--script", required=True, choices=sorted(SCRIPTS))
        p.add_argument("--datasets", required=True, help="comma-separated QuaPy names")
        p.add_argument("--classifiers", required=True, help="run: lr,nb,knn; compare: LR,NB,kNN")
    sub.choices["run"].add_argument("--ref", required=True, help="reference checkout")
    sub.choices["run"].add_argument(
        "--as-published",
        action="store_true",
        help="no memo of the RLLS solve: REF's own cost (benchmarks/bench_reference.py)",
    )
    sub.choices["run"].add_argument(
        "--skip", default="", help="REF columns left out (comma-separated; an empty CSV each)"
    )
    cmp = sub.choices["compare"]
    cmp.add_argument(
        "--data-root", default=None, help="offline copies (data sets no package ships)"
    )
    cmp.add_argument("--data-home", default=None, help="QuaPy data home (default: a temporary one)")
    cmp.add_argument("--tolerance", type=float, default=1e-5)
    cmp.add_argument("--csv", default=None, help="write the per-(setup, method) counts here")
    args = parser.parse_args()
    run(args) if args.command == "run" else compare(args)


if __name__ == "__main__":
    main()
