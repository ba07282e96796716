"""Reliability diagrams' statistics (unishift.evaluation.reliability) against literal loops and the
tables' ECE, and the evaluation hook that feeds them."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from unishift.evaluation.metrics import ece_top_label
from unishift.evaluation.reliability import (
    BANDS,
    ReliabilityCollector,
    band_of,
    confidence_bins,
    pool,
)
from unishift.report.reliability import plot_reliability


def _setup(intensities, classifier="LR", dataset="yeast"):
    return SimpleNamespace(
        classifier=classifier, dataset=dataset, shift_intensity=np.asarray(intensities, float)
    )


def _posteriors(rng, n, k):
    p = rng.dirichlet(np.ones(k), size=n)
    return p, rng.integers(0, k, n)


def test_confidence_bins_are_right_closed_as_the_tables_ece():
    # a bin edge belongs to the bin below it; 0 to the first bin, 1 to the last
    assert list(confidence_bins(np.array([0.0, 0.1, 0.1 + 1e-9, 0.55, 0.9, 1.0]), 10)) == [
        0, 0, 1, 5, 8, 9,
    ]  # fmt: skip


def test_bands_are_right_open_and_clip_outside_levels():
    assert [band_of(x) for x in (-0.1, 0.0, 1 / 3 - 1e-9, 1 / 3, 0.5, 2 / 3, 1.0, 1.2)] == [
        "low", "low", "low", "medium", "medium", "high", "high", "high",
    ]  # fmt: skip


def test_collector_sums_equal_a_literal_loop():
    """Per (band, target, bin): count, confidence sum and the number right, counted one item at a
    time; three classes, so the class-wise targets are there too (a swapped class would show)."""
    rng = np.random.default_rng(3)
    intensities = [0.1, 0.5, 0.9, 0.2]
    setup = _setup(intensities)
    collector = ReliabilityCollector(n_bins=5)
    expected = {}
    for sample_id in range(len(intensities)):
        p, y = _posteriors(rng, 30, 3)
        collector(setup, sample_id, p, y)
        band = band_of(intensities[sample_id])
        for i in range(len(y)):
            top = int(np.argmax(p[i]))
            pairs = [("top_label", p[i, top], top == y[i])]
            pairs += [(f"class_{c}", p[i, c], y[i] == c) for c in range(3)]
            for target, conf, right in pairs:
                b = min(max(int(np.ceil(conf * 5)) - 1, 0), 4)
                n, s, r = expected.get((band, target, b), (0, 0.0, 0))
                expected[(band, target, b)] = (n + 1, s + conf, r + int(right))
    frame = collector.frame()
    got = {
        (row.band, row.target, row.bin): (row.n, row.sum_confidence, row.n_correct)
        for row in frame.itertuples()
    }
    assert got.keys() == expected.keys()
    for key, (n, s, r) in expected.items():
        assert got[key][0] == n and got[key][2] == r
        assert got[key][1] == pytest.approx(s, rel=1e-12)


def test_two_classes_have_only_the_top_label_target():
    rng = np.random.default_rng(0)
    collector = ReliabilityCollector()
    p, y = _posteriors(rng, 20, 2)
    collector(_setup([0.4]), 0, p, y)
    assert set(collector.frame()["target"]) == {"top_label"}


def test_pooled_ece_of_one_sample_is_the_tables_ece():
    """One sample alone: the pooled ECE is the tables' top-label ECE (float64 arithmetic, which
    rounds the gap to 4 decimals before x 100)."""
    rng = np.random.default_rng(7)
    for k in (2, 4):
        p, y = _posteriors(rng, 200, k)
        collector = ReliabilityCollector()
        collector(_setup([0.5]), 0, p, y)
        points = pool(collector.frame())
        ece = points.loc[points["target"] == "top_label", "ece"].iloc[0]
        assert ece == pytest.approx(ece_top_label(p, y, precision="float64"), abs=0.005 + 1e-9)


def test_pool_sums_setups_before_dividing():
    """Pooling two setups weighs bins by their counts (a mean of per-setup accuracies would not)."""
    frame = pd.DataFrame(
        {
            "classifier": ["LR", "kNN"],
            "dataset": ["yeast", "yeast"],
            "band": ["low", "low"],
            "target": ["top_label", "top_label"],
            "bin": [12, 12],
            "n": [1, 3],
            "sum_confidence": [0.8, 2.7],
            "n_correct": [1, 0],
        }
    )
    row = pool(frame).iloc[0]
    assert (row["n"], row["accuracy"]) == (4, 0.25)
    assert row["confidence"] == pytest.approx(3.5 / 4)
    assert row["ece"] == pytest.approx(100 * (3.5 / 4 - 0.25) ** 2)


def test_frame_keeps_setup_order_then_band(tmp_path):
    rng = np.random.default_rng(1)
    collector = ReliabilityCollector()
    for clf in ("kNN", "LR"):
        setup = _setup([0.9, 0.1], classifier=clf)
        for sample_id in (0, 1):
            collector(setup, sample_id, *_posteriors(rng, 10, 2))
    frame = collector.frame()
    assert list(dict.fromkeys(frame["classifier"])) == ["kNN", "LR"]
    bands = list(dict.fromkeys(frame.loc[frame["classifier"] == "kNN", "band"]))
    assert bands == [b for b in BANDS if b in bands] == ["low", "high"]
    png = tmp_path / "r.png"
    plot_reliability(frame, "M", "M", [png])
    first = png.read_bytes()
    plot_reliability(frame, "M", "M", [png])
    assert png.read_bytes() == first and first[:4] == b"\x89PNG"


def test_evaluation_observes_each_scored_calibration_sample():
    """The hook sees the calibrated posteriors the record's ECE was computed from: the collector's
    pooled ECE of each one-sample setup equals that sample's recorded ECE (float64)."""
    from unishift.evaluation.evaluate import evaluate_setup
    from unishift.methods.base import Method

    rng = np.random.default_rng(5)
    samples = [_posteriors(rng, 60, 2) for _ in range(3)]

    class Halve(Method):
        def fit(self, setting):
            return self

        def apply(self, sample, context):
            return 0.5 * sample.posteriors + 0.25

    setup = SimpleNamespace(
        shift="label",
        classifier="LR",
        dataset="yeast",
        n_classes=2,
        key="k",
        setting=SimpleNamespace(seed=0, n_classes=2),
        sample_indices=[0, 1, 2],
        shift_intensity=np.array([0.1, 0.5, 0.9]),
        stream_state=None,
        sample_artifacts=None,
        sample=lambda i: (SimpleNamespace(posteriors=samples[i][0], n_classes=2), samples[i][1]),
    )
    seen = []
    records, _ = evaluate_setup(
        "calibration",
        "Halve",
        Halve,
        setup,
        ece_precision="float64",
        domain_stream="per_sample",
        observe=lambda s, i, p, y: seen.append((i, p, y)),
    )
    assert [i for i, _, _ in seen] == [0, 1, 2]
    for (i, p, y), record in zip(seen, records):
        np.testing.assert_allclose(p, 0.5 * samples[i][0] + 0.25)
        assert record["ece"] == ece_top_label(p, y, precision="float64")


def test_the_report_has_a_reliability_section_when_given_diagrams(tmp_path):
    from PIL import Image

    from unishift.report.document import ReportContent, report_tex

    png = tmp_path / "calibration_label_reliability_Platt.png"
    Image.new("RGB", (90, 40), "white").save(png)  # the report reads its size (a page's share)
    tex = report_tex(ReportContent(reliability=[("Platt reliability", png)]))
    assert r"\section{Reliability diagrams}" in tex
    assert png.resolve().as_posix() in tex and "Platt reliability" in tex
    assert "Reliability diagrams" not in report_tex(ReportContent())


def _drawn_titles(monkeypatch, frame):
    """The first title line of each diagram plot_reliability draws, by (row, column) of the grid
    (the figure is caught before it is saved)."""
    import unishift.figures

    caught = []
    monkeypatch.setattr(unishift.figures, "save_figure", lambda fig, *paths: caught.append(fig))
    plot_reliability(frame, "M", "M: reliability", ["unused.png"])
    (fig,) = caught
    grid = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        if ax.get_title():
            grid[(spec.rowspan.start // 2, spec.colspan.start)] = ax.get_title().split("\n")[0]
    return grid


def test_k_classes_draw_one_diagram_per_band_and_class(monkeypatch):
    """Four classes, samples in two bands: the top label and each class's diagram in every band, a
    band per row, the targets in class order across; two classes: the top label alone, a band per
    column. A class the collector or the plot dropped (k - 1 diagrams), or classes out of order,
    would show."""
    rng = np.random.default_rng(5)
    collector = ReliabilityCollector()
    setup = _setup([0.1, 0.8])
    for sample_id in range(2):
        p, y = _posteriors(rng, 200, 4)
        collector(setup, sample_id, p, y)
    grid = _drawn_titles(monkeypatch, collector.frame())
    targets = ["top label", "class 0", "class 1", "class 2", "class 3"]
    assert grid == {
        (row, col): f"{band} shift, {target}"
        for row, band in enumerate(["low", "high"])
        for col, target in enumerate(targets)
    }
    binary = ReliabilityCollector()
    for sample_id in range(2):
        p, y = _posteriors(rng, 50, 2)
        binary(setup, sample_id, p, y)
    assert _drawn_titles(monkeypatch, binary.frame()) == {
        (0, 0): "low shift, top label",
        (0, 1): "high shift, top label",
    }


def test_classes_of_different_data_sets_are_not_pooled_as_one_class(monkeypatch):
    """Label shift, two data sets of three classes each: class 0 of cmc is not class 0 of yeast, so
    their class-wise statistics pool over every class (every_class: its counts are all the
    class-wise rows'), never class by class across the data sets; one data set, or covariate
    shift's domain pairs of one text source, keep a diagram per class."""
    from unishift.evaluation.reliability import EVERY_CLASS, comparable_targets

    rng = np.random.default_rng(11)
    collector = ReliabilityCollector()
    for dataset in ("cmc", "yeast"):
        setup = _setup([0.1], dataset=dataset)
        p, y = _posteriors(rng, 60, 3)
        collector(setup, 0, p, y)
    frame = collector.frame()
    pooled = comparable_targets(frame, "label")
    assert sorted(set(pooled["target"])) == [EVERY_CLASS, "top_label"]
    classwise = frame["target"] != "top_label"
    every = pool(pooled).query("target == @EVERY_CLASS")
    assert every["n"].sum() == frame.loc[classwise, "n"].sum() == 2 * 60 * 3
    assert every["accuracy"].mul(every["n"]).sum() == pytest.approx(
        frame.loc[classwise, "n_correct"].sum()
    )
    assert set(_drawn_titles(monkeypatch, frame).values()) == {
        "low shift, top label",
        "low shift, every class",
    }
    # one data set, or domains of one text source: the classes are the same, one diagram each
    one = frame[frame["dataset"] == "cmc"]
    assert set(comparable_targets(one, "label")["target"]) == {
        "top_label",
        "class_0",
        "class_1",
        "class_2",
    }
    assert comparable_targets(frame, "covariate").equals(frame)
