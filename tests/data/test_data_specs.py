"""Data sets and classifiers described once (unishift.data.datasets, unishift.classifiers.specs):
an added entry is a valid name with its order and class count everywhere, a wrong
checksum is refused, a name is looked up in its collection; and the data layer stays below the
methods."""

from __future__ import annotations

import ast
import copy
import subprocess
import sys

import numpy as np
import pytest

from unishift.classifiers import specs as classifiers
from unishift.data import datasets, uci
from unishift.data.datasets import DatasetSpec, register_dataset
from unishift.data.label_shift import prepare_splits, train_and_predict
from unishift.report import names
from unishift.workflow.code_version import ROOT

# collection_sha256 of QuaPy's cmc.2 (contraceptive method 2, "long-term", against the rest)
CMC_2_SHA256 = "0973fddb5d4c81aa91e07a388cbdf3c121f9b6ad9a8ea37103db04cde59e4b25"


@pytest.fixture
def registries(monkeypatch):
    """The registries as they are, restored after the test."""
    monkeypatch.setattr(datasets, "_REGISTRY", copy.deepcopy(datasets._REGISTRY))
    monkeypatch.setattr(classifiers, "_REGISTRY", dict(classifiers._REGISTRY))


def test_the_paper_benchmark_in_its_table_order():
    assert datasets.dataset_names("uci_binary") == (
        "cmc.3", "yeast", "semeion", "wine-q-red", "ctg.1", "ctg.2", "ctg.3", "spambase",
        "wine-q-white", "pageblocks.5",
    )  # fmt: skip
    assert names.order_datasets(["pageblocks.5", "imdb->rt", "cmc.3", "yeast"]) == [
        "cmc.3",
        "yeast",
        "pageblocks.5",
        "imdb->rt",
    ]
    assert names.order_datasets(["rt->imdb", "imdb->yelp", "imdb->rt"]) == [
        "imdb->rt",
        "imdb->yelp",
        "rt->imdb",
    ]


def test_every_multiclass_name_of_quapy_and_no_other():
    from quapy.data.datasets import UCI_BINARY_DATASETS, UCI_MULTICLASS_DATASETS

    assert sorted(datasets.dataset_names("uci_multiclass")) == sorted(UCI_MULTICLASS_DATASETS)
    assert set(datasets.dataset_names("uci_binary")) <= set(UCI_BINARY_DATASETS)
    offline = [
        n
        for n in datasets.dataset_names("uci_multiclass")
        if datasets.dataset_spec("uci_multiclass", n).content_sha256
    ]
    assert offline == ["cmc", "yeast", "page_block", "wine-quality"]


def test_a_name_is_looked_up_in_its_collection():
    binary = datasets.dataset_spec("uci_binary", "yeast")
    multi = datasets.dataset_spec("uci_multiclass", "yeast")
    assert binary.group == multi.group == "yeast"
    assert binary.content_sha256 != multi.content_sha256
    with pytest.raises(ValueError, match="unknown uci_binary data set 'cmc'; valid ones are"):
        datasets.dataset_spec("uci_binary", "cmc")
    with pytest.raises(ValueError, match="unknown uci_multiclass data set 'cmc.3'"):
        datasets.dataset_spec("uci_multiclass", "cmc.3")
    with pytest.raises(ValueError, match="label_shift.datasets: unknown uci_multiclass"):
        datasets.check_dataset_names(
            "uci_multiclass", ["cmc", "wine-q-red"], "label_shift.datasets"
        )
    datasets.check_dataset_names("uci_binary", ["wine-q-red", "yeast"], "label_shift.datasets")
    assert datasets.order_datasets(["wine-quality", "yeast", "cmc"], "uci_multiclass") == [
        "cmc",
        "yeast",
        "wine-quality",
    ]
    with pytest.raises(ValueError, match="unknown collection 'uci'"):
        datasets.dataset_names("uci")


def test_the_number_of_classes_comes_from_the_collection():
    assert datasets.n_classes("uci_binary") == 2 and datasets.two_class("uci_binary")
    assert datasets.n_classes("uci_multiclass") is None
    assert not datasets.two_class("uci_multiclass")
    assert datasets.COLLECTIONS["uci_multiclass"].min_classes == 3
    assert datasets.two_class("hf") and datasets.two_class("data_root")
    assert datasets.two_class("tweets") and datasets.two_class("tweets", {"classes": 2})
    assert datasets.n_classes("tweets", {"classes": 3}) == 3
    assert not datasets.two_class("tweets", {"classes": 3})
    with pytest.raises(ValueError, match=r"covariate_shift.tweets.classes=4"):
        datasets.n_classes("tweets", {"classes": 4})
    assert datasets.LABEL_BENCHMARKS == ("uci_binary", "uci_multiclass")
    assert datasets.TEXT_SOURCES == ("hf", "data_root", "tweets")


def test_an_added_data_set_is_one_entry_and_its_checksum(registries, tmp_path):
    register_dataset(DatasetSpec("cmc.2", "uci_binary", 1473, "cmc", CMC_2_SHA256))
    assert datasets.dataset_names("uci_binary")[-1] == "cmc.2"
    assert names.order_datasets(["cmc.2", "yeast"]) == ["yeast", "cmc.2"]
    assert datasets.two_class("uci_binary")
    splits, source = prepare_splits("cmc.2", tmp_path)
    assert source.startswith("offline copy")
    # method 2 ("long-term") of the raw collection's 629 / 333 / 511 is the positive class
    y = np.concatenate([splits["y_h"], splits["y_val"], splits["y_test"]])
    assert len(y) == 1473 and int(y.sum()) == 333
    assert train_and_predict(splits, "LR", 0)[1]["P_test"].shape == (len(splits["y_test"]), 2)


def test_a_wrong_checksum_is_refused(registries, tmp_path):
    with pytest.raises(ValueError, match="is not a sha256"):
        register_dataset(DatasetSpec("cmc.2", "uci_binary", 1473, "cmc", CMC_2_SHA256[:-1]))
    wrong = CMC_2_SHA256[:-1] + ("0" if CMC_2_SHA256[-1] != "0" else "1")
    register_dataset(DatasetSpec("cmc.2", "uci_binary", 1473, "cmc", wrong))
    with pytest.raises(uci.ChecksumError, match=rf"cmc.2: .*content sha256 {CMC_2_SHA256}"):
        prepare_splits("cmc.2", tmp_path)


def test_malformed_specs_are_refused(registries):
    with pytest.raises(ValueError, match="unknown collection"):
        register_dataset(DatasetSpec("x", "uci_ternary", content_sha256=CMC_2_SHA256))
    with pytest.raises(ValueError, match="has this name already"):
        register_dataset(DatasetSpec("yeast", "uci_binary", 1484, "yeast", CMC_2_SHA256))
    with pytest.raises(ValueError, match="or a note saying why"):
        register_dataset(DatasetSpec("cmc.1", "uci_binary", 1473, "cmc"))
    with pytest.raises(ValueError, match="group 'iris' has no OFFLINE_FILES entry"):
        register_dataset(DatasetSpec("iris.1", "uci_binary", 150, "iris", CMC_2_SHA256))
    register_dataset(DatasetSpec("cmc.1", "uci_binary", 1473, "cmc", note="not measured yet"))
    assert "cmc.1" in datasets.dataset_names("uci_binary")


def test_an_added_classifier_is_one_entry(registries):
    from sklearn.tree import DecisionTreeClassifier

    assert classifiers.classifier_names() == ("LR", "NB", "kNN", "MLP")
    assert classifiers.classifier_names(None)[4:] == ("BERT", "DistilBERT", "RoBERTa")
    classifiers.register_classifier(
        classifiers.ClassifierSpec(
            "DT", "Decision Tree", factory=lambda seed: DecisionTreeClassifier(random_state=seed)
        )
    )
    assert classifiers.classifier_names()[-1] == "DT"
    assert names.classifier_display("DT") == "Decision Tree"
    assert names.order_classifiers(["MiniLM", "DT", "BERT", "LR"]) == ["LR", "DT", "BERT", "MiniLM"]
    model = classifiers.make_classifier("DT", 3)
    assert isinstance(model, DecisionTreeClassifier) and model.random_state == 3
    with pytest.raises(ValueError, match="needs a factory"):
        classifiers.register_classifier(classifiers.ClassifierSpec("SVM", "SVM"))
    with pytest.raises(ValueError, match="registered already"):
        classifiers.register_classifier(classifiers.ClassifierSpec("LR", "LR", factory=print))
    with pytest.raises(ValueError, match=r"unknown classifier 'BERT'; valid ones are \['LR'"):
        classifiers.make_classifier("BERT", 0)


def test_the_paper_classifiers_and_their_display_names():
    assert [names.classifier_display(c) for c in ("LR", "NB", "kNN", "MLP", "MiniLM")] == [
        "Logistic Regression",
        "Naïve Bayes",
        "k Nearest Neighbor",
        "Multi-layer Perceptron",
        "MiniLM",
    ]
    assert classifiers.make_classifier("MLP", 7).random_state == 7
    assert classifiers.make_classifier("kNN", 0).n_neighbors == 10


def test_the_specs_load_nothing_heavy():
    """The workflow reads them when it plans."""
    probe = (
        "import sys, unishift.data.datasets, unishift.classifiers.specs; "
        "print([m for m in ('numpy', 'pandas', 'sklearn', 'quapy') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# The data layer is below the methods (docs/developing.md, "Layers": ... classifiers, protocols ->
# data -> methods -> registry -> evaluation -> report). data/domain_weights.py still reads the methods'
# domain-weight memo until the domain weights are one module under methods/.
LOWER = ("unishift.data", "unishift.classifiers", "unishift.protocols")
UPPER = (
    "unishift.methods",
    "unishift.multiclass",
    "unishift.evaluation.evaluate",
    "unishift.report",
    "unishift.methods.registry",
    "unishift.api",
)
PENDING = {("unishift.workflow.domain_weight_artifacts", "unishift.methods.domain_weights")}


def _imports(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("unishift"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("unishift"))
    return found


def test_the_data_layer_imports_nothing_above_it():
    offending = set()
    for path in ROOT.rglob("*.py"):
        module = ".".join(("unishift", *path.relative_to(ROOT).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        if not module.startswith(LOWER):
            continue
        for imported in _imports(path):
            if imported.startswith(UPPER) and (module, imported) not in PENDING:
                offending.add((module, imported))
    assert offending == set()


def test_the_layer_scan_sees_an_upward_import(monkeypatch, tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from unishift.methods.registry import get_method\n")
    assert _imports(module) == {"unishift.methods.registry"}
