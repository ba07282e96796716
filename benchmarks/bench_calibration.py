"""Per-sample cost of the shared calibration work (issue 3), straightforward vs fast, side by side.

Synthetic stand-in for the covariate-shift setting: 768-d hidden states, a 5,000-row classifier-
training subset, a 5,000-row validation set and a 250-item test sample.

* LasCal's temperature search: REF's procedure (label-shift ECE loop + one cvxpy RLLS per grid
  temperature) against the vectorised estimator + closed-form RLLS, for the P and S conventions;
* the domain classifier (B5): one fit, and what CPCS + TransCal + EMQ^TransCal cost on one sample
  when each fits its own (REF) versus sharing one fit through the SampleContext.

Run: ``python benchmarks/bench_calibration.py [--repeats N]``. It is a script, not a test.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.base import SampleContext
from unishift.methods.calibration.cpcs import CPCS
from unishift.methods.calibration.emq_transcal import EMQTransCal
from unishift.methods.calibration.lascal import lascal_temperature
from unishift.methods.calibration.transcal import TransCal
from unishift.methods.domain_weights import fit_domain_weights


def synthetic(seed=0, d=768, n_train=5000, n_val=5000, n_test=250):
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d) / np.sqrt(d)

    def draw(n, prevalence, offset=0.0):
        y = (rng.random(n) < prevalence).astype(int)
        x = rng.normal(size=(n, d)) + np.outer(2 * y - 1, direction) + offset
        score = x @ direction * 2
        logits = np.column_stack([-score / 2, score / 2])
        p = 1 / (1 + np.exp(-score))
        return LabelledSet(np.column_stack([1 - p, p]), y, x, logits)

    training, validation, test = draw(n_train, 0.5), draw(n_val, 0.5), draw(n_test, 0.8, 0.05)
    setting = Setting(validation, training, "covariate", key="bench", seed=seed)
    return setting, Sample(test.posteriors, test.features, test.logits)


def timed(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fast paths: best of N")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    setting, sample = synthetic()
    validation = setting.validation
    print(
        f"validation {len(validation)} x {validation.features.shape[1]}, test sample {len(sample)}"
    )

    print("\nLasCal temperature search, seconds per sample")
    print(f"{'logits':>6} {'straightforward':>16} {'fast':>10} {'speed-up':>9}  same T")
    for convention in ("P", "S"):
        z_src = validation.posteriors if convention == "P" else np.log(validation.posteriors)
        z_tgt = sample.posteriors if convention == "P" else np.log(sample.posteriors)
        slow_s, (slow_T, _) = timed(
            lambda z_src=z_src, z_tgt=z_tgt: lascal_temperature(
                z_src, validation.labels, z_tgt, "loop", "cvxpy"
            ),
            1,
        )
        lascal_temperature(z_src, validation.labels, z_tgt)  # warm-up
        fast_s, (fast_T, _) = timed(
            lambda z_src=z_src, z_tgt=z_tgt: lascal_temperature(z_src, validation.labels, z_tgt),
            args.repeats,
        )
        print(
            f"{convention:>6} {slow_s:>16.3f} {fast_s:>10.4f} {slow_s / fast_s:>8.0f}x  "
            f"{slow_T == fast_T} (T={fast_T:.4f})"
        )

    print("\nDomain classifier (B5), seconds per sample")
    fit_s, _ = timed(
        lambda: fit_domain_weights(
            setting.training.features, sample.features, validation.features, seed=0
        ),
        1,
    )
    print(f"one fit (LogisticRegression on 2 x 5000 rows x 768): {fit_s:.3f}")
    methods = [m.fit(setting) for m in (CPCS("L"), TransCal("L"), EMQTransCal("L"))]

    def run(shared: bool):
        context = SampleContext("bench", 0, seed=0)
        for method in methods:
            method.calibrate(sample, context if shared else SampleContext("bench", 0, seed=0))
        return context

    separate_s, _ = timed(lambda: run(False), 1)
    shared_s, context = timed(lambda: run(True), 1)
    fits = sum(context.computations.values())
    print(f"CPCS + TransCal + EMQ^TransCal, one fit each (REF): {separate_s:.3f}")
    print(f"CPCS + TransCal + EMQ^TransCal, shared context ({fits} fit): {shared_s:.3f}")


if __name__ == "__main__":
    main()
