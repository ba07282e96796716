import atexit
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from unishift import cpu_kernels

# The CPU kernels every number of the suite is computed with (docs/determinism.md): set before
# NumPy loads, inherited by every snakemake process a test starts. A CPU that cannot run them (not
# x86-64, or without AVX2) runs the suite with its own kernels; the tests that compare last digits
# with stored values then skip (``pinned_kernels``).
if "numpy" in sys.modules:
    raise RuntimeError("NumPy was imported before tests/conftest.py could pin the CPU kernels")
try:
    cpu_kernels.pin(cpu_kernels.DEFAULT_PROFILE)
    KERNELS_PINNED = True
except cpu_kernels.KernelError as error:
    print(f"tests/conftest.py: {error}; running with this machine's own kernels", file=sys.stderr)
    KERNELS_PINNED = False

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# The mutation check (tests/mutation) runs with HYPOTHESIS_PROFILE=derandomized so that property
# tests draw the same examples every time and its score is reproducible.
settings.register_profile("derandomized", derandomize=True)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])

REPO = Path(__file__).resolve().parents[1]

# The code-version analyses (docs/code-version.md, "The analysis cache") of this session's processes,
# the snakemake runs included, go to a folder of the session's own: nothing read from a user's cache.
if not os.environ.get("UNISHIFT_CACHE_DIR"):
    os.environ["UNISHIFT_CACHE_DIR"] = tempfile.mkdtemp(prefix="unishift-test-cache-")
    atexit.register(shutil.rmtree, os.environ["UNISHIFT_CACHE_DIR"], ignore_errors=True)
# PyTorch's compiler cache in a folder of the session's own too: PyTorch sets the variable to its
# default folder (under /tmp) the first time a test reaches it, which would change the session's
# environment and restart the tests' warm snakemake process (tests/snakemake_forks.py) halfway
if not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="unishift-test-torchinductor-")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)


# The CPU flags that decide which kernels the libraries may pick (names as /proc/cpuinfo spells them).
VECTOR_FLAG_PREFIXES = ("sse", "ssse3", "avx", "fma", "f16c", "amx")


def pytest_report_header(config):
    """The CPU's vector extensions and the kernels this session computes with, so that a last-digit
    failure on a new machine points at its cause (docs/determinism.md)."""
    import platform

    import numpy

    flags = cpu_kernels.cpu_flags()
    vector = sorted(f for f in flags or () if f.startswith(VECTOR_FLAG_PREFIXES))
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")), platform.processor() or platform.machine(),
    ) if Path("/proc/cpuinfo").exists() else platform.machine()  # fmt: skip
    from numpy._core import _multiarray_umath as umath

    profile = cpu_kernels.DEFAULT_PROFILE if KERNELS_PINNED else "native (not pinned)"
    return [
        f"CPU: {cpu}; vector extensions: {' '.join(vector) if flags else 'unknown'}",
        f"CPU kernels: {profile}; OpenBLAS {cpu_kernels.openblas_architecture()}; NumPy "
        f"{numpy.__version__} dispatch {' '.join(cpu_kernels.numpy_dispatch()) or 'baseline only'} "
        f"(compiled for {' '.join(umath.__cpu_dispatch__)}, baseline "
        f"{' '.join(umath.__cpu_baseline__)})",
    ]


@pytest.fixture
def pinned_kernels():
    """For tests that compare last digits with stored values (they hold for the pinned kernels)."""
    if not KERNELS_PINNED:
        pytest.skip("this CPU cannot run the pinned AVX2 kernels (docs/determinism.md)")


def shared_data_root() -> Path | None:
    """The offline data copies (../shared/data on build machines and CI), or None when absent."""
    root = Path(os.environ.get("UNISHIFT_DATA_ROOT", REPO.parent / "shared" / "data"))
    return root if (root / "uci").is_dir() else None


@pytest.fixture
def data_root():
    root = shared_data_root()
    if root is None:
        pytest.skip(
            "offline data copies not found (set UNISHIFT_DATA_ROOT or provide ../shared/data)"
        )
    return root


# when the snakemake process of a shared run exited (its folder -> seconds since the epoch)
SNAKEMAKE_EXITS: dict[Path, float] = {}


@pytest.fixture(scope="session")
def finished_test_run(tmp_path_factory):
    """One finished run of .test/config.yaml in a copy of the workflow, shared by the workflow tests
    that check its values or start from it (copy it before changing anything): (folder, output)."""
    from tests.workflow.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path_factory.mktemp("finished") / "wf")
    output = snakemake("--cores", "2", "--configfile", ".test/config.yaml", cwd=work)
    SNAKEMAKE_EXITS[work] = time.time()
    return work, output


# The setup of the per-setup run: the config's last data set and classifier, so that a record that
# depended on what a per-method job ran before it (another setup's state) would differ.
ONE_SETUP = ("yeast", "kNN")
ONE_SETUP_CONFIG = "one_setup.yaml"
# Its methods: one of each kind whose records could carry a setup's state into the next one's in a
# per-method job, every task and both shared domain-weight plans (docs/domain-weights.md): the
# whole-sample plan and the reference domain stream (CPCS; TransCal_c2q, in PyTorch's float32), the
# per-predicted-class plan (CPCS_c2a), LasCal's search, QuaPy's EM, a PCA seeded from the setting
# (Head2Tail), a binary-only binned adaptation (PACC_q2c_5B) and a CAP-to-quantification one
# (ATC_a2q). None falls back on this setup: kNN's zero posteriors make TransCal, TransCal_c2a and
# EMQ_BCTS fall back on yeast, whatever their weights (test_workflow.py checks the statuses).
ONE_SETUP_METHODS = {
    "calibration": ["Head2Tail", "CPCS", "LasCal", "PACC_q2c_5B"],
    "quantification": ["EMQ", "TransCal_c2q", "ATC_a2q"],
    "cap": ["CPCS_c2a"],
}


@pytest.fixture(scope="session")
def one_setup_run(tmp_path_factory):
    """A second run from scratch, cut `per_setup` and one job at a time, of .test/config.yaml reduced
    to one setup and ONE_SETUP_METHODS, its records only: the per-setup cut's own run, shared by the
    tests of that cut (copy it before changing anything): (folder, config, output). The config is
    written to the folder as ONE_SETUP_CONFIG."""
    import yaml

    from tests.workflow.test_workflow import copy_workflow, snakemake

    dataset, classifier = ONE_SETUP
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config["label_shift"].update(datasets=[dataset], classifiers=[classifier])
    every_method = config["methods"]["label"]
    assert all(set(ONE_SETUP_METHODS[task]) <= set(every_method[task]) for task in every_method)
    config["methods"]["label"] = {task: list(names) for task, names in ONE_SETUP_METHODS.items()}
    config["evaluation_jobs"] = "per_setup"
    config["selector"] = False  # trained leave one data set out, it needs two (records only here)
    work = copy_workflow(tmp_path_factory.mktemp("one_setup") / "wf")
    (work / ONE_SETUP_CONFIG).write_text(yaml.safe_dump(config))
    targets = [
        f"results/eval/label/{task}/{method}.csv"
        for task, methods in config["methods"]["label"].items()
        for method in methods
    ]  # the records only: the tables' rank statistics need more than one setup
    # the targets before --configfile, which takes several values; in a fresh interpreter, whose
    # job server the library starts itself (the shared run's is a fork of the tests' warm process:
    # tests/snakemake_forks.py), so that the bytes compared below come from both kinds of server
    output = snakemake(
        "--cores", "1", *targets, "--configfile", ONE_SETUP_CONFIG, cwd=work, fresh=True
    )
    return work, config, output


MULTICLASS_CONFIG = ".test/multiclass.yaml"


@pytest.fixture(scope="session")
def multiclass_run(tmp_path_factory):
    """One finished run of .test/multiclass.yaml (k-class UCI data, three-class tweets, covariate and
    compound shift) in a copy of the workflow, shared by the tests that read its files (copy it
    before changing anything): (folder, output)."""
    from tests.workflow.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path_factory.mktemp("multiclass") / "wf")
    output = snakemake("--cores", "2", "--configfile", MULTICLASS_CONFIG, cwd=work)
    return work, output


@pytest.fixture(scope="session")
def multiclass_plan(tmp_path_factory):
    """The dry run of .test/multiclass.yaml from scratch, in a fresh copy of the workflow: its
    output, shared by the tests that read what the compound branch plans (one planning, several
    CPU seconds, instead of one per test)."""
    from tests.workflow.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path_factory.mktemp("multiclass_plan") / "wf")
    return snakemake("-n", "--cores", "1", "--configfile", MULTICLASS_CONFIG, cwd=work).stdout


@pytest.fixture(autouse=True)
def _plugin_variable_does_not_leak():
    """UNISHIFT_PLUGINS reaches every snakemake process a later test starts: a test that changes it
    must restore it (a leaked plugin name once broke every later workflow test)."""
    before = os.environ.get("UNISHIFT_PLUGINS")
    yield
    assert os.environ.get("UNISHIFT_PLUGINS") == before, "a test left UNISHIFT_PLUGINS changed"


# the session fixtures that start snakemake
SNAKEMAKE_FIXTURES = {"finished_test_run", "one_setup_run", "multiclass_run", "multiclass_plan"}


def pytest_collection_modifyitems(config, items):
    """A test that uses a finished workflow run starts snakemake (through the session fixture), so
    it is a workflow test whatever its module says: `-m "not workflow"` stays a fast loop."""
    for item in items:
        if SNAKEMAKE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.workflow)
