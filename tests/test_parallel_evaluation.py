"""Parallel evaluation: jobs running side by side give the same bytes as jobs running one at a time.

Each job's script caps its BLAS/OpenMP pools at the rule's threads (``unishift.jobs.start_job``), so
``--cores 2`` runs two single-threaded jobs at once instead of oversubscribing the cores; neither the
scheduling order nor the thread count may change a result.
"""

import filecmp

import pytest

from tests.test_workflow import assert_identical, copy_workflow, snakemake

pytestmark = pytest.mark.workflow


def test_cores_1_and_cores_2_give_identical_results(tmp_path):
    results = {}
    for cores in ("1", "2"):
        work = copy_workflow(tmp_path / f"cores{cores}")
        output = snakemake("--cores", cores, "--configfile", ".test/config.yaml", cwd=work)
        assert f"Provided cores: {cores}" in output.stdout + output.stderr
        results[cores] = work / "results"
    for folder in ("eval", "tables"):
        assert any((results["1"] / folder).rglob("*.csv")), f"no csv under results/{folder}"
        assert_identical(filecmp.dircmp(results["1"] / folder, results["2"] / folder))
