import os
from pathlib import Path

import pytest
from hypothesis import settings

# The mutation check (tests/mutation) runs with HYPOTHESIS_PROFILE=derandomized so that property
# tests draw the same examples every time and its score is reproducible.
settings.register_profile("derandomized", derandomize=True)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])

REPO = Path(__file__).resolve().parents[1]


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


@pytest.fixture(scope="session")
def finished_test_run(tmp_path_factory):
    """One finished run of .test/config.yaml in a copy of the workflow, shared by the workflow tests
    that check its values or start from it (copy it before changing anything): (folder, output)."""
    from tests.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path_factory.mktemp("finished") / "wf")
    output = snakemake("--cores", "2", "--configfile", ".test/config.yaml", cwd=work)
    return work, output


@pytest.fixture(autouse=True)
def _plugin_variable_does_not_leak():
    """UNISHIFT_PLUGINS reaches every snakemake process a later test starts: a test that changes it
    must restore it (a leaked plugin name once broke every later workflow test)."""
    before = os.environ.get("UNISHIFT_PLUGINS")
    yield
    assert os.environ.get("UNISHIFT_PLUGINS") == before, "a test left UNISHIFT_PLUGINS changed"
