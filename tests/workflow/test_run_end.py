"""The end of a run cancels Snakemake's pending scheduler wake-ups (``end_run``, called by
``onsuccess`` and ``onerror``): with the profiles' job-rate limit each wake-up is armed one timespan
(100 s) ahead on a thread that is no daemon, which held every finished snakemake process that long."""

import threading

import yaml
from snakemake.scheduling.job_scheduler import JobScheduler

from tests.conftest import REPO
from unishift.workflow.prepare import end_run


class _Scheduler:
    """What Snakemake's wake-up touches of its JobScheduler: the semaphore it releases."""

    def __init__(self):
        self._open_jobs = threading.Semaphore(0)


def _new_threads(before):
    return [t for t in threading.enumerate() if t not in before]


def test_end_run_cancels_the_wakeup_snakemake_arms_and_no_other_timer():
    scheduler = _Scheduler()
    before = set(threading.enumerate())
    JobScheduler._schedule_reevalutation(scheduler, 100)  # Snakemake's own code arms it
    (wakeup,) = _new_threads(before)
    other = threading.Timer(100, lambda: None)
    other.start()
    try:
        end_run()
        wakeup.join(10)
        assert not wakeup.is_alive()
        assert not scheduler._open_jobs.acquire(blocking=False), "cancelled, not fired"
        assert other.is_alive(), "a timer that is not the scheduler's is left alone"
    finally:
        other.cancel()
        wakeup.cancel()


def test_the_profiles_rate_limit_is_the_long_timespan_end_run_exists_for():
    """A shorter timespan would make end_run unnecessary; a longer one (or none) would need a look
    at what the scheduler's rounds cost again (benchmarks/RESULTS.md)."""
    profile = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    assert profile["max-jobs-per-timespan"] == "10000/100s"
    rules = (REPO / "workflow" / "rules" / "common.smk").read_text()
    for handler in ("onsuccess:\n    end_run()", "onerror:\n    end_run()"):
        assert handler in rules
