"""The deployment fields of results/provenance.json: git commit and dirty flag, lock-file hash,
resolved hub commits, GPUs used."""

import hashlib
import json
import subprocess

from unishift.workflow.provenance import deployment, git_state, gpus_used, hub_revisions


def _git(folder, *args):
    subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def test_git_commit_and_dirty_flag(tmp_path):
    assert git_state(tmp_path)["commit"] is None  # not a checkout: recorded as unknown, with why
    assert git_state(tmp_path)["reason"]
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-qm", "first")
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert git_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "untracked.txt").write_text("not part of the code")
    assert git_state(tmp_path)["dirty"] is False
    (tmp_path / "a.txt").write_text("two")
    assert git_state(tmp_path) == {"commit": head, "dirty": True}


def test_lock_hash_hub_commits_and_gpus(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==2.4.6\n")
    records = []
    for name, kind, repo, revision, commit in (
        ("imdb", "dataset", "stanfordnlp/imdb", None, "a" * 40),
        ("BERT", "model", "google-bert/bert-base-uncased", "v1", "b" * 40),
    ):
        path = tmp_path / f"{name}.json"
        path.write_text(
            json.dumps({"kind": kind, "id": repo, "revision": revision, "commit": commit})
        )
        records.append(path)
    gpu = {"name": "NVIDIA H100", "memory_gib": 79.1, "cuda_runtime": "13.0", "driver": "580.1"}
    reports = []
    for i, entry in enumerate((gpu, gpu, None)):
        path = tmp_path / f"training{i}.json"
        path.write_text(json.dumps({"gpu": entry, "accuracy": {}}))
        reports.append(path)
    record = deployment(tmp_path, lock, records, reports)
    assert record["lock_file_sha256"] == hashlib.sha256(b"numpy==2.4.6\n").hexdigest()
    assert (
        record["hub"]
        == hub_revisions(records)
        == {
            "datasets": {"stanfordnlp/imdb": {"revision": None, "commit": "a" * 40}},
            "models": {"google-bert/bert-base-uncased": {"revision": "v1", "commit": "b" * 40}},
        }
    )
    assert record["gpus"] == gpus_used(reports) == [gpu]
    assert deployment(tmp_path, tmp_path / "missing.lock")["lock_file_sha256"] is None
