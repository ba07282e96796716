"""Compound-shift samples as the workflow draws and reads them (docs/regimes.md §5.2): the pair's
derived seed, the persisted file of rule compound_samples, and compound setups read from the
language-model caches."""

import re
import shutil

import numpy as np
import pytest
import yaml

from tests.conftest import MULTICLASS_CONFIG, REPO
from tests.workflow.test_workflow import snakemake
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


CONFIG = yaml.safe_load((REPO / MULTICLASS_CONFIG).read_text())


def test_the_samples_rule_persists_the_pairs_draws_and_the_branch_is_planned(
    multiclass_run, multiclass_plan, tmp_path
):
    """Each pair's file of rule compound_samples (in the session's run of .test/multiclass.yaml)
    equals compound_samples on the pair's test labels with the config's keys and is not planned
    again; a dry run of that config from scratch plans the compound tables, regime maps and
    Selector, and one samples job per pair."""
    work, _ = multiclass_run
    results = work / CONFIG["results"]
    domains = CONFIG["covariate_shift"]["domains"]
    pairs = [(s, t) for s in domains for t in domains if s != t]
    targets = [f"{CONFIG['results']}/samples/compound/{s}__{t}.npz" for s, t in pairs]
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
    # made once, not planned again (a copy: the shared run stays as it is)
    copy = shutil.copytree(work, tmp_path / "wf", symlinks=True)
    replan = snakemake("-n", *targets, "--configfile", MULTICLASS_CONFIG, cwd=copy)
    assert "Nothing to be done" in replan.stdout + replan.stderr, replan.stdout
    jobs = {}
    for block in multiclass_plan.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0]
        wildcards = re.search(r"wildcards: ([^\n]*)", block)
        jobs.setdefault(rule, []).append(wildcards.group(1) if wildcards else "")
    for rule in ("tables", "regime_map", "selector", "error_by_shift"):
        compound = sorted(w for w in jobs[rule] if "shift=compound" in w)
        assert len(compound) == 3, (rule, jobs[rule])
    # one samples job per ordered pair, each writing the file checked above
    assert sorted(jobs["compound_samples"]) == sorted(f"source={s}, target={t}" for s, t in pairs)
    label = len(CONFIG["label_shift"]["datasets"]) * len(CONFIG["label_shift"]["classifiers"])
    setups = len(pairs) * len(CONFIG["covariate_shift"]["models"])
    descriptors = jobs["descriptors"]
    assert len(descriptors) == label + 2 * setups
    assert sum("shift=compound" in w for w in descriptors) == setups
