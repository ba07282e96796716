"""GPU safety of the language-model jobs, with simulated device counts: one GPU per job, no silent
weeks on the CPU, and the precision options."""

import subprocess
import sys
import textwrap

import pytest

from unishift.lm import device
from unishift.lm.device import Workload, choose_device, finetune_passes, tokens_per_text
from unishift.lm.finetune import FinetuneSettings, training_arguments

BERT_BASE = 85_000_000  # attention + feed-forward weights of BERT-base (12 x 7.1M)


def test_a_scheduler_assigned_gpu_is_kept(tmp_path):
    env = {"CUDA_VISIBLE_DEVICES": "3"}
    assert choose_device("auto", cuda_count=lambda: 1, env=env, lock_dir=tmp_path) == "cuda"
    assert env["CUDA_VISIBLE_DEVICES"] == "3" and not list(tmp_path.iterdir())


def test_a_single_gpu_needs_no_claim(tmp_path):
    env = {}
    assert choose_device("cuda", cuda_count=lambda: 1, env=env, lock_dir=tmp_path) == "cuda"
    assert "CUDA_VISIBLE_DEVICES" not in env


def test_several_visible_gpus_are_narrowed_to_one_claimed_gpu(tmp_path):
    env = {}
    assert choose_device("auto", cuda_count=lambda: 4, env=env, lock_dir=tmp_path) == "cuda"
    assert env["CUDA_VISIBLE_DEVICES"] == "0" and (tmp_path / "gpu0.lock").exists()
    # a visible subset is narrowed to one of its own ids
    subset = {"CUDA_VISIBLE_DEVICES": "2,5"}
    device.claim_gpu(2, subset, tmp_path)
    assert subset["CUDA_VISIBLE_DEVICES"] == "2"


def _claim_in_child(lock_dir, n, hold_seconds):
    code = textwrap.dedent(
        f"""
        import os, time
        from unishift.lm.device import claim_gpu
        print(claim_gpu({n}, os.environ, {str(lock_dir)!r}), flush=True)
        time.sleep({hold_seconds})
        """
    )
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def test_concurrent_jobs_claim_different_gpus_and_fail_when_none_is_free(tmp_path):
    first = _claim_in_child(tmp_path, 2, 30)
    second = _claim_in_child(tmp_path, 2, 30)
    try:
        ids = {first.stdout.readline().strip(), second.stdout.readline().strip()}
        assert ids == {"0", "1"}
        third = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import os; from unishift.lm.device import claim_gpu; claim_gpu(2, os.environ, {str(tmp_path)!r})",
            ],
            capture_output=True,
            text=True,
        )
        assert third.returncode != 0
        assert (
            "every one is held by another" in third.stderr and "--resources gpu=2" in third.stderr
        )
    finally:
        first.kill()
        second.kill()
        first.wait()
        second.wait()
    # the locks die with their processes
    env = {}
    device.claim_gpu(2, env, tmp_path)
    assert env["CUDA_VISIBLE_DEVICES"] == "0"


def test_auto_without_gpu_refuses_work_of_more_than_an_hour():
    # the paper's BERT on yelp: 5 epochs over 515,000 texts of 512 tokens
    settings = FinetuneSettings(mode="faithful", epochs=5, eval_steps=500)
    passes = finetune_passes(settings, 515_000, 5_000, 5_000 + 5_000 + 40_000 + 25_000 + 1_066)
    yelp = Workload(BERT_BASE, 512, passes)
    assert yelp.cpu_hours() > 100
    with pytest.raises(RuntimeError, match=r"device: cpu") as error:
        choose_device("auto", yelp, cuda_count=lambda: 0, env={})
    assert "h on a CPU" in str(error.value)
    # explicitly asked for, the CPU runs it; a GPU takes it whatever its size
    assert choose_device("cpu", yelp, cuda_count=lambda: 0, env={}) == "cpu"
    assert choose_device("auto", yelp, cuda_count=lambda: 1, env={}) == "cuda"
    with pytest.raises(RuntimeError, match="no CUDA device"):
        choose_device("cuda", None, cuda_count=lambda: 0, env={})


def test_auto_without_gpu_runs_small_work_on_the_cpu():
    # the embedded default: MiniLM (6 layers x 1.8M weights) over ~3,400 tweets of ~30 tokens
    tweets = Workload(6 * 1_770_000, 30, 3_400)
    assert tweets.cpu_hours() < 0.01
    assert choose_device("auto", tweets, cuda_count=lambda: 0, env={}) == "cpu"


def test_the_estimate_sits_on_the_right_side_of_the_hour():
    limit = device.CPU_HOURS_LIMIT * 3600 * device.CPU_FLOPS
    just_under = Workload(1_000_000, 100, limit / (2 * 1_000_000 * 100) * 0.99)
    just_over = Workload(1_000_000, 100, limit / (2 * 1_000_000 * 100) * 1.01)
    assert choose_device("auto", just_under, cuda_count=lambda: 0, env={}) == "cpu"
    with pytest.raises(RuntimeError):
        choose_device("auto", just_over, cuda_count=lambda: 0, env={})


def test_passes_and_tokens_count_what_the_trainer_runs():
    settings = FinetuneSettings(mode="faithful", epochs=2, batch_size=10, eval_steps=5)
    # 2 epochs x 95 texts; 20 steps -> evaluations before training and at steps 5, 10, 15, 20
    assert finetune_passes(settings, 95, 7, 11) == 2 * 95 + 5 * 7 + 11
    assert tokens_per_text(["abcd" * 100], 512, "max_length") == 512
    assert tokens_per_text(["abcd" * 10, "ab" * 10], 512, "longest") == (40 + 20) / 2 / 4 + 2
    assert tokens_per_text(["abcd" * 1000], 128, "longest") == 128


def test_precision_options_reach_the_trainer(tmp_path):
    for precision, bf16, fp16 in (("fp32", False, False), ("bf16", True, False)):
        args = training_arguments(FinetuneSettings(precision=precision), tmp_path, "cpu")
        assert (args.bf16, args.fp16) == (bf16, fp16)
    with pytest.raises(ValueError, match="precision"):
        FinetuneSettings(precision="fp8")
    assert FinetuneSettings(precision="fp16").precision == "fp16"
