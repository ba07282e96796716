from pathlib import Path

import jsonschema
import yaml

from unishift.lm.config import COVARIATE_DEFAULTS, ENCODE_KEYS, PAPER_LM
from unishift.lm.finetune import FinetuneSettings

REPO = Path(__file__).resolve().parents[2]


def test_embedded_config_schema_and_defaults_agree():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    embedded = yaml.safe_load((REPO / "config/config.yaml").read_text())
    jsonschema.validate(embedded, schema)
    assert embedded["covariate_shift"] == COVARIATE_DEFAULTS
    fragment = {"covariate_shift": schema["properties"]["covariate_shift"]}
    properties = fragment["covariate_shift"]["properties"]
    for key, value in COVARIATE_DEFAULTS.items():
        if isinstance(value, dict) and key != "models":
            assert {k: properties[key]["properties"][k]["default"] for k in value} == value, key
        else:
            assert properties[key]["default"] == value, key
    bad = {"covariate_shift": {**COVARIATE_DEFAULTS, "lm": {"mode": "half"}}}
    try:
        jsonschema.validate(
            bad, {"type": "object", "properties": fragment, "$defs": schema["$defs"]}
        )
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("an unknown lm.mode passed the schema")


def test_settings_accept_the_config_sections():
    assert FinetuneSettings.from_config(COVARIATE_DEFAULTS["lm"]).mode == "cached"
    paper = FinetuneSettings.from_config(PAPER_LM)
    assert paper == FinetuneSettings(mode="faithful", precision="bf16", device="auto")
    assert set(ENCODE_KEYS) <= set(PAPER_LM)


def test_a_language_model_job_starts_without_scikit_learn():
    """What the language-model jobs import before PyTorch (their start, the split reader, the
    writers) needs no scikit-learn: importing it cost each such job about 1.8 CPU s
    (docs/testing.md, "The warm snakemake process")."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import unishift.workflow.lm_jobs, unishift.data.text_files, unishift.io\n"
        "print(sorted(m for m in ('sklearn', 'scipy.stats', 'quapy') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    for script in ("lm_encode.py", "lm_finetune.py"):
        # unishift.data.text imports scikit-learn's splitter; the scripts read splits only
        text = (REPO / "workflow" / "scripts" / script).read_text()
        assert "from unishift.data.text import" not in text, script
