"""Compound-shift samples as the workflow draws and reads them (docs/regimes.md §5.2): the pair's
derived seed, the persisted file of rule compound_samples, and compound setups read from the
language-model caches."""

import re

import numpy as np
import pytest
import yaml

from tests.conftest import REPO
from tests.workflow.test_workflow import copy_workflow, snakemake
from unishift.data.containers import derive_seed
from unishift.data.covariate import compound_samples, compound_seed, load_covariate_setup
from unishift.data.text_files import read_split
from unishift.io import read_npz
from unishift.protocols.compound import compound_indices


def _labels(seed, n, k=3):
    return np.random.default_rng(seed).integers(0, k, n)


def test_each_pair_draws_with_its_own_seed_and_the_intensity_is_the_target_share():
    source, target = _labels(0, 80), _labels(1, 70)
    samples = compound_samples(source, target, 3, "a", "b", seed=5, sample_size=30, n_samples=6)
    expected = compound_indices(
        source, target, 3, sample_size=30, repeats=6, seed=derive_seed(5, "compound", "a->b")
    )
    assert compound_seed(5, "a", "b") == derive_seed(5, "compound", "a->b")
    for key, value in expected.items():
        assert np.array_equal(samples[key], value), key
    assert np.array_equal(samples["shift_intensity"], samples["realised_mixture"])
    # the intensity is the share of indices in the target part of [source ; target]
    share = (samples["indices"] >= len(source)).mean(axis=1)
    assert np.allclose(samples["shift_intensity"], share)
    other = compound_samples(source, target, 3, "b", "a", seed=5, sample_size=30, n_samples=6)
    assert not np.array_equal(other["prevalence"], samples["prevalence"])


def _cache(rng, k=3):
    def part(n):
        return {
            "logits": rng.normal(size=(n, k)).astype(np.float32),
            "hidden": rng.normal(size=(n, 4)).astype(np.float32),
            "labels": rng.integers(0, k, n),
        }

    return {"train": part(50), "validation": part(40), "test": part(60), "target_b": part(50)}


def test_a_compound_setup_is_read_from_the_cache_with_its_shift():
    rng = np.random.default_rng(0)
    cache = _cache(rng)
    samples = compound_samples(
        cache["test"]["labels"], cache["target_b"]["labels"], 3, "a", "b", 0, 20, 4
    )
    setup = load_covariate_setup(cache, samples, "M", "a", "b", seed=0, shift="compound")
    assert setup.shift == setup.setting.shift == "compound"
    assert setup.dataset == "a->b" and setup.n_classes == 3
    _, labels = setup.sample(2)
    pool = np.r_[cache["test"]["labels"], cache["target_b"]["labels"]]
    assert np.array_equal(labels, pool[samples["indices"][2]])
    assert np.allclose(
        np.bincount(labels, minlength=3) / 20, samples["realised_prevalence"][2], atol=1e-12
    )
    with pytest.raises(ValueError, match="language-model setup"):
        load_covariate_setup(cache, samples, "M", "a", "b", seed=0, shift="label")


CONFIG_FILE = ".test/multiclass.yaml"
CONFIG = yaml.safe_load((REPO / CONFIG_FILE).read_text())


@pytest.mark.workflow
def test_the_samples_rule_persists_the_pairs_draws_and_the_branch_is_planned(tmp_path):
    """Only the text stage and the samples run (no language model): each pair's file equals
    compound_samples on the pair's test labels with the config's keys, and a dry run plans the
    compound tables, regime maps and Selector on those files."""
    work = copy_workflow(tmp_path / "wf")
    results = work / CONFIG["results"]
    domains = CONFIG["covariate_shift"]["domains"]
    pairs = [(s, t) for s in domains for t in domains if s != t]
    targets = [f"{CONFIG['results']}/samples/compound/{s}__{t}.npz" for s, t in pairs]
    snakemake(*targets, "--cores", "2", "--configfile", CONFIG_FILE, cwd=work)
    keys = CONFIG["covariate_shift"]["compound"]
    for (source, target), path in zip(pairs, targets, strict=True):
        stored = read_npz(work / path)
        labels = [read_split(results / f"text/{d}/test.parquet")["label"].to_numpy() for d in (source, target)]  # fmt: skip
        expected = compound_samples(
            *labels,
            CONFIG["covariate_shift"]["tweets"]["classes"],
            source,
            target,
            CONFIG["seed"],
            sample_size=keys["sample_size"],
            n_samples=keys["n_samples"],
            mixture=keys["mixture"],
            replace=keys["replace"],
        )
        assert set(stored) == set(expected)
        for key, value in expected.items():
            assert np.array_equal(stored[key], value), (path, key)
        assert stored["indices"].shape == (keys["n_samples"], keys["sample_size"])
    plan = snakemake("-n", "--cores", "1", "--configfile", CONFIG_FILE, cwd=work).stdout
    jobs = {}
    for block in plan.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0]
        wildcards = re.search(r"wildcards: ([^\n]*)", block)
        jobs.setdefault(rule, []).append(wildcards.group(1) if wildcards else "")
    for rule in ("tables", "regime_map", "selector", "error_by_shift"):
        compound = sorted(w for w in jobs[rule] if "shift=compound" in w)
        assert len(compound) == 3, (rule, jobs[rule])
    assert "compound_samples" not in jobs  # made above, not planned again
    label = len(CONFIG["label_shift"]["datasets"]) * len(CONFIG["label_shift"]["classifiers"])
    setups = len(pairs) * len(CONFIG["covariate_shift"]["models"])
    descriptors = jobs["descriptors"]
    assert len(descriptors) == label + 2 * setups
    assert sum("shift=compound" in w for w in descriptors) == setups
