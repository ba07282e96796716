"""The GPU benchmark's export keeps the model exact on its texts while fitting the device's 64 MiB."""

import importlib.util
import json
import shutil
import subprocess
import sys

import numpy as np

from tests.conftest import REPO
from tests.lm.test_lm_finetune import _tiny_model

spec = importlib.util.spec_from_file_location("bench_lm_gpu", REPO / "benchmarks/bench_lm_gpu.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_pruned_vocabulary_rebuilds_the_same_model_on_its_texts(tmp_path):
    from unishift.lm.config import FinetuneSettings
    from unishift.lm.models import encode_texts, load_classifier

    original = tmp_path / "export" / "MiniLM"
    _tiny_model("bert", original, dropout=0.1)
    reference = tmp_path / "reference"
    shutil.copytree(original, reference)  # kept whole
    texts = ["a good film", "a bad film", "good good bad"]
    info = bench.prune_vocabulary(original, texts)
    assert not (original / "model.safetensors").exists()
    assert info["kept_rows"] < 30 and info["original_sha256"]
    manifest = {"model_weights": info}
    rebuilt = bench.rebuild_model(tmp_path / "export", manifest, texts, tmp_path / "rebuilt")
    outputs = []
    settings = FinetuneSettings(extract_batch_size=2, max_length=16, padding="longest")
    for folder in (reference, rebuilt):
        tokenizer, model = load_classifier(str(folder), seed=42)
        outputs.append(encode_texts(model, tokenizer, texts, settings, "cpu"))
    for key in ("hidden", "head_input", "logits"):
        assert np.array_equal(outputs[0][key], outputs[1][key]), key


def test_projection_follows_the_paper_schedule():
    rows = bench.project(train_eps=1000.0, eval_eps=2000.0, extract_eps=4000.0)
    yelp = rows["yelp"]
    assert yelp["steps"] == 5 * 8047 and yelp["evaluations"] == 1 + 40235 // 500
    assert yelp["texts_extracted"] == 5000 + 5000 + 40000 + 25000 + 1066
    expected = 5 * 515_000 / 1000 + 81 * 5000 / 2000 + 76_066 / 4000
    assert abs(yelp["hours"] - expected / 3600) < 1e-9
    assert rows["rt"]["evaluations"] == 2  # 670 steps: before training and at step 500


def test_the_script_imports_nothing_heavy_at_module_level():
    code = (
        f"import sys; sys.path.insert(0, {str(REPO / 'benchmarks')!r}); import bench_lm_gpu; "
        "import json; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'datasets', 'sklearn', 'unishift', 'pandas'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
