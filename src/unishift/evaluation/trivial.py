"""Trivial answers of one setup, scored through the methods' own metrics (docs/regimes.md §4.4):
the training prevalence for quantification, the validation accuracy for CAP, the uncalibrated
posteriors for calibration. A method that does not beat them has learnt nothing from the sample.
"""

from __future__ import annotations

import pandas as pd

from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import score
from unishift.evaluation.metrics import accuracy
from unishift.evaluation.records import TWO_CLASS
from unishift.regimes.references import COLUMNS, TASK_COLUMNS


def trivial_errors(
    setup: SetupData,
    layout: str = TWO_CLASS,
    ece: str = "top_label",
    ece_precision: str = "float32",
) -> pd.DataFrame:
    """One row per sample of ``setup`` (columns :data:`COLUMNS`, in id order): each task's error of
    its trivial answer, scored by :func:`unishift.evaluation.evaluate.score` as every method's output is."""
    setting = setup.setting
    validation_accuracy = accuracy(setting.validation.posteriors, setting.validation.labels)
    answers = {
        "quantification": lambda sample: setting.train_prevalence,
        "cap": lambda sample: validation_accuracy,
        "calibration": lambda sample: sample.posteriors,
    }
    rows = []
    for sample_id in range(len(setup.sample_indices)):
        sample, labels = setup.sample(sample_id)
        errors = [
            score(task, answers[task](sample), sample, labels, layout, ece, ece_precision)["error"]
            for task in TASK_COLUMNS
        ]
        rows.append(
            [setup.shift, setup.classifier, setup.dataset, sample_id, *errors, validation_accuracy]
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))
