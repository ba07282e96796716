"""Hub data sets and models at pinned revisions through the download stage, then offline jobs.

A hub stand-in on 127.0.0.1 (tests/hub_fixture.py) serves repositories laid out as the hub's, each
with two commits: the pinned one and a newer ``main``. The real loaders run: ``load_dataset`` and
``snapshot_download`` in the hub_download rule, ``load_dataset`` and ``from_pretrained`` offline in
text_domain, lm_encode and lm_finetune, after the server is gone (a compute node without internet).
The same run is the covariate-shift rules' (text.smk, lm.smk) end-to-end test: what the encoder
pass and the head's fine-tuning write, the pairs' samples, the configured PyTorch threads, and a
head-only change that re-runs the fine-tuning but not the encoder pass.
"""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from tests.hub_fixture import HubServer, add_revision
from tests.lm.test_lm_finetune import _tiny_model
from unishift.data.covariate import load_covariate_setup

pytestmark = pytest.mark.workflow
PINNED, NEWER = "1" * 40, "2" * 40
MODEL_PINNED, MODEL_NEWER = "3" * 40, "4" * 40


def _parquet(texts, labels) -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame({"text": texts, "label": labels}).to_parquet(buffer, index=False)
    return buffer.getvalue()


def _split(tag, split, n):
    words = ("good fine great", "bad awful poor")
    texts = [f"{tag} {split} {i} {words[i % 2]}" for i in range(n)]
    return _parquet(texts, [1 - i % 2 for i in range(n)])


def _fixture_hub(root, tmp_path):
    for commit, tag in ((PINNED, "pinned"), (NEWER, "newer")):
        add_revision(
            root,
            "datasets",
            "stanfordnlp/imdb",
            commit,
            {
                "README.md": b"# imdb stand-in\n",
                "plain_text/train-00000-of-00001.parquet": _split(tag, "train", 40),
                "plain_text/test-00000-of-00001.parquet": _split(tag, "test", 20),
            },
            branch="main" if tag == "newer" else None,
        )
        add_revision(
            root,
            "datasets",
            "cornell-movie-review-data/rotten_tomatoes",
            commit,
            {
                "README.md": b"# rotten tomatoes stand-in\n",
                **{
                    f"{split}.parquet": _split(tag, split, n)
                    for split, n in (("train", 30), ("validation", 10), ("test", 12))
                },
            },
            branch="main" if tag == "newer" else None,
        )
    for commit, seed_folder in ((MODEL_PINNED, "pinned"), (MODEL_NEWER, "newer")):
        folder = _tiny_model("bert", tmp_path / f"model-{seed_folder}", dropout=0.1)
        files = {p.name: p for p in (tmp_path / f"model-{seed_folder}").iterdir() if p.is_file()}
        files["tf_model.h5"] = b"weights no torch user needs"
        add_revision(
            root,
            "models",
            "fixture-org/tiny-bert",
            commit,
            files,
            branch="main" if seed_folder == "newer" else None,
        )
        assert folder


def _run(workdir, env, *args):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            "2",
            "-s",
            str(workdir / "Snakefile"),
            *args,
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout + result.stderr


def test_pinned_revisions_download_once_and_the_jobs_run_offline(tmp_path):
    hub_root, cache = tmp_path / "hub", tmp_path / "hf-home"
    _fixture_hub(hub_root, tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    config = {
        "seed": 0,
        "data_root": None,
        "covariate_shift": {
            "text_source": "hf",
            "domains": ["imdb", "rt"],
            "hf": {
                "validation_size": 8,
                "datasets": {
                    "imdb": {"id": "stanfordnlp/imdb", "revision": PINNED},
                    "rt": {"id": "cornell-movie-review-data/rotten_tomatoes", "revision": None},
                },
            },
            "hub_cache": str(cache),
            "models": {"Tiny": {"id": "fixture-org/tiny-bert", "revision": MODEL_PINNED}},
            # three threads although --cores 2 leaves each job at most two
            "lm": {"device": "cpu", "epochs": 1, "eval_steps": 5, "max_length": 32,
                   "cpu_threads": 3, "extract_batch_size": 64},
            "mixture": {"sample_size": 10, "n_samples": 3},
        },
    }  # fmt: skip
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    (run / "Snakefile").write_text(
        f'configfile: "{run / "config.yaml"}"\n\nRESULTS = "results"\n\n'
        f'include: "{REPO / "workflow/rules/text.smk"}"\n'
        f'include: "{REPO / "workflow/rules/lm.smk"}"\n\n'
        "rule all:\n    input:\n"
        '        f"{RESULTS}/tables/classifier_accuracy_covariate.csv",\n'
        '        covariate_setup_inputs()["samples"],\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    with HubServer(hub_root) as hub:
        online = dict(env, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "elsewhere"))
        # the planned DAG: the download stage feeds the hf text domains and the hub model's jobs
        plan = _run(run, online, "-n")
        assert plan.count("rule hub_download:") == 3
        # stage 1, on the "login node": only the downloads
        _run(run, online, "--until", "hub_download")
        requests = list(hub.folder.requests)
    results = run / "results"
    manifests = {p.stem: json.loads(p.read_text()) for p in (results / "hub").glob("*/*.json")}
    assert manifests["imdb"]["commit"] == PINNED  # a pinned commit
    assert manifests["rt"]["commit"] == NEWER  # revision null: the default branch, resolved
    assert manifests["Tiny"]["commit"] == MODEL_PINNED
    assert "tf_model.h5" not in manifests["Tiny"]["files"]
    assert "model.safetensors" in manifests["Tiny"]["files"]
    assert not any(MODEL_NEWER in r for r in requests)
    # into the configured cache, not the environment's HF_HOME
    snapshots = cache / "hub" / "models--fixture-org--tiny-bert" / "snapshots"
    assert [p.name for p in snapshots.iterdir()] == [MODEL_PINNED]
    assert not (tmp_path / "elsewhere").exists()

    # stage 2, on a "compute node": the server is gone; the jobs read the cache offline
    offline = dict(env, HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "elsewhere"))
    _run(run, offline)
    train = pd.read_parquet(results / "text/imdb/train.parquet")
    assert train["text"].str.startswith("pinned train").all()
    assert pd.read_parquet(results / "text/rt/test.parquet")["text"].str.startswith("newer").all()
    summary = json.loads((results / "text/imdb/summary.json").read_text())
    assert summary["hub_commit"] == PINNED
    report = json.loads((results / "lm/Tiny/imdb/training.json").read_text())
    assert report["revision"] == MODEL_PINNED and report["model"] == "fixture-org/tiny-bert"
    table = pd.read_csv(results / "tables/classifier_accuracy_covariate.csv")
    assert table[["model", "source", "target"]].values.tolist() == [
        ["Tiny", "imdb", "imdb"],
        ["Tiny", "imdb", "rt"],
        ["Tiny", "rt", "imdb"],
        ["Tiny", "rt", "rt"],
    ]
    assert table["accuracy"].between(0, 1).all()

    # what the language-model rules write
    tests = {d: len(pd.read_parquet(results / f"text/{d}/test.parquet")) for d in ("imdb", "rt")}
    assert report["settings"]["mode"] == "cached" and report["sizes"]["test"] == tests["imdb"]
    assert report["frozen"]["trained_modules"] == ["classifier"]  # BERT's head
    assert (results / "lm/Tiny/imdb/head.safetensors").stat().st_size > 0
    for name in ("encode_imdb", "finetune_imdb"):
        assert (results / f"benchmarks/lm/Tiny/{name}.tsv").exists()
        log = (results / f"logs/lm/Tiny/{name}.log").read_text()
        # the branch MKL took, not the variable: MKL runs AUTO where it cannot run the one asked for
        assert (
            "PyTorch CPU threads: 3 (covariate_shift.lm.cpu_threads), MKL branch COMPATIBLE" in log
        )
    setup = load_covariate_setup(
        results / "lm/Tiny/imdb/outputs.npz",
        results / "samples/covariate/imdb__rt.npz",
        "Tiny",
        "imdb",
        "rt",
        seed=0,
    )
    assert setup.sample_indices.shape == (3, 10) and len(setup.pool) == tests["imdb"] + tests["rt"]
    assert np.array_equal(setup.shift_intensity, [0, 0.5, 1.0])

    # a head-only setting re-runs the fine-tuning but not the encoder pass
    config["covariate_shift"]["lm"]["learning_rate"] = 1e-2
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    plan = _run(run, offline, "-n", "--rerun-triggers", "params", "mtime", "input")
    assert "lm_finetune" in plan and "lm_encode" not in plan


def test_offline_loading_refuses_a_commit_the_cache_does_not_hold(tmp_path):
    """datasets offline serves 'the latest cached version' whatever revision is asked for; the
    loader turns that into an error instead of silently reading other data."""
    hub_root, cache = tmp_path / "hub", tmp_path / "hf-home"
    _fixture_hub(hub_root, tmp_path)
    code = (
        "from unishift.data.hub_access import use_offline_hub, download_dataset\n"
        "import sys, os\n"
        "if sys.argv[1] == 'download':\n"
        f"    os.environ['HF_HOME'] = {str(cache)!r}\n"
        f"    print(download_dataset('stanfordnlp/imdb', {PINNED!r})['commit'])\n"
        "else:\n"
        f"    use_offline_hub({str(cache)!r})\n"
        "    from unishift.data.text import load_hf_domain\n"
        "    load_hf_domain('imdb', 0, validation_size=8, commit=sys.argv[2])\n"
        "    print('loaded')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    with HubServer(hub_root) as hub:
        done = subprocess.run(
            [sys.executable, "-c", code, "download"],
            env=dict(env, HF_ENDPOINT=hub.url),
            capture_output=True,
            text=True,
        )
    assert done.stdout.strip() == PINNED, done.stderr[-2000:]
    same = subprocess.run(
        [sys.executable, "-c", code, "load", PINNED], env=env, capture_output=True, text=True
    )
    assert same.stdout.strip() == "loaded", same.stderr[-2000:]
    other = subprocess.run(
        [sys.executable, "-c", code, "load", NEWER], env=env, capture_output=True, text=True
    )
    assert other.returncode != 0 and f"not commit {NEWER}" in other.stderr
