"""Write the stored outputs of tests/methods/test_method_regression.py from the OLD library (two method trees).

    git archive 661200d src | tar -x -C /tmp/baseline   # the old library, from this repository
    python -m tests.regression_fixture --old /tmp/baseline/src --out tests/fixtures

(the script sets the pinned kernels' variables for its subprocesses, ``PINNED``:
OPENBLAS_CORETYPE=Haswell MKL_CBWR=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
NPY_ENABLE_CPU_FEATURES=X86_V3 ARROW_USER_SIMD_LEVEL=AVX2, and one thread). The stored files were
last written so on 2026-11-29 (issue 36), when NumPy's own dispatch joined the pin: the earlier
ones had NumPy's AVX-512 loops in 91 digests, which an AVX2-only CPU could not reproduce. MKL's
branch was AVX2 then; the profile's COMPATIBLE since (docs/determinism.md) reproduces every digest.

Two subprocesses: this checkout's data layer builds the setups of ``tests/regression_cases.py``
(``setup_arrays``), then the library of main 661200d (``--old``: the last one with a binary
registry and a multiclass catalogue) runs every method of its binary registry on the two-class
setups and every method of its multiclass catalogue on the k-class ones, and writes
``two_class_outputs.json`` and ``k_class_outputs.json``. Not a test (it needs the old checkout); it
lives next to the tests because it writes their oracle, and no code outside ``tests/`` may import
from ``tests/``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
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


def old_outputs(setups_path: Path, out: Path) -> None:
    """Run in the old library: its binary registry on the two-class setups, its multiclass
    catalogue on the k-class ones."""
    sys.path.insert(0, str(REPO))
    from tests.regression_cases import overrides_of, run  # noqa: I001 (the old library)
    from unishift.methods.base import LabelledSet, Sample, SampleContext, Setting
    from unishift.multiclass import catalogue
    from unishift.multiclass.base import MulticlassLabelledSet, MulticlassSample, MulticlassSetting
    from unishift.registry import all_methods

    setups = pickle.loads(setups_path.read_bytes())
    for k, specs, containers in (
        (2, [s for _, s in sorted(all_methods().items())], (LabelledSet, Sample, Setting)),
        (
            3,
            sorted(catalogue.all_methods(), key=lambda s: (s.task, s.name)),
            (lambda *a: MulticlassLabelledSet(a[0], a[1], 3, *a[2:]), MulticlassSample,
             MulticlassSetting),
        ),
    ):  # fmt: skip
        jobs = []
        for spec in specs:
            for shift in spec.shifts:
                overrides = overrides_of(spec.params(shift), shift)
                build = lambda s=spec, h=shift, o=overrides: s.build(h, o)  # noqa: E731
                jobs.append((spec.task, spec.name, shift, build))
        results = run(jobs, setups[k], containers, SampleContext)
        name = "two_class_outputs.json" if k == 2 else "k_class_outputs.json"
        (out / name).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default="/work/baseline/src", help="the old library's src")
    parser.add_argument("--new", default=str(REPO / "src"), help="this checkout's src")
    parser.add_argument("--out", default=str(REPO / "tests" / "fixtures"), help="output folder")
    parser.add_argument("--work", help="folder for the setups file (default: a temp one)")
    parser.add_argument("--setups", help=argparse.SUPPRESS)  # the worker's input
    args = parser.parse_args()
    if args.setups:
        old_outputs(Path(args.setups), Path(args.out))
        return 0
    work = Path(args.work or tempfile.mkdtemp(prefix="fixture-"))
    setups = work / "regression_setups.pkl"
    env = {**{k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}, **PINNED}
    prepare = (
        "import pickle, sys, tempfile; sys.path.insert(0, sys.argv[1]); "
        "from tests.regression_cases import setup_arrays; home = tempfile.mkdtemp(); "
        "open(sys.argv[2], 'wb').write(pickle.dumps({k: setup_arrays(home, k) for k in (2, 3)}))"
    )
    subprocess.run(
        [sys.executable, "-c", prepare, str(REPO), str(setups)],
        env={**env, "PYTHONPATH": args.new}, check=True,
    )  # fmt: skip
    subprocess.run(
        [sys.executable, __file__, "--setups", str(setups), "--out", args.out],
        env={**env, "PYTHONPATH": args.old}, check=True,
    )  # fmt: skip
    print(f"wrote the regression outputs into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
