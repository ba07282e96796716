# Shared helpers of the covariate-shift rules (text.smk, lm.smk); included by common.smk, text.smk
# and lm.smk (a second include is ignored, so the rule files can be included in any order).
# Needs config (seed, data_root, covariate) and RESULTS from the including Snakefile.
import re

from unishift.data.datasets import n_classes as collection_classes
from unishift.data.hub_access import hub_entry, is_hub_model
from unishift.lm.config import ENCODE_KEYS, covariate_options, domain_pairs


include: "code_version.smk"
include: "results_layout.smk"


COVARIATE = covariate_options(config)


def covariate_domains():
    return list(COVARIATE["domains"])


def covariate_n_classes():
    """The classes of the text domains (the heads' outputs): 2, or the tweets' configured 3."""
    source = COVARIATE["text_source"]
    return collection_classes(source, COVARIATE.get(source))


def covariate_models():
    return list(COVARIATE["models"])


def covariate_pairs():
    return domain_pairs(covariate_domains())


def text_options():
    """Only the chosen source's options, so unrelated config changes do not rebuild the texts."""
    section = {"hf": "hf", "data_root": "offline", "tweets": "tweets"}[
        COVARIATE["text_source"]
    ]
    return {section: COVARIATE[section]}


def lm_settings():
    return dict(COVARIATE["lm"])


def lm_encode_settings():
    """Only the settings that change the encoder's output, so head-training changes reuse the pass."""
    return {key: COVARIATE["lm"][key] for key in ENCODE_KEYS}


def model_entry(model):
    return hub_entry(COVARIATE["models"][model])


def lm_model_path(wildcards):
    return model_entry(wildcards.model)["id"]


def hub_cache():
    return COVARIATE["hub_cache"]


def hub_manifest(kind, name):
    return results_file("hub_manifest", kind=kind, name=name)


def hub_download_entry(wildcards):
    """The {id, revision} the hub_download rule fetches for one data set or model."""
    if wildcards.kind == "models":
        return model_entry(wildcards.name)
    return hub_entry(COVARIATE["hf"]["datasets"][wildcards.name])


def text_hub_input(wildcards):
    """hf domains read the commit the download stage resolved; other sources need no hub."""
    if COVARIATE["text_source"] != "hf":
        return {}
    return {"hub": hub_manifest("datasets", wildcards.domain)}


def lm_hub_input(wildcards):
    if not is_hub_model(model_entry(wildcards.model)["id"]):
        return {}
    return {"hub": hub_manifest("models", wildcards.model)}


def lm_targets(wildcards):
    return [d for d in covariate_domains() if d != wildcards.source]


def lm_finetune_inputs(wildcards):
    """cached mode reads the encoder pass of each domain; faithful mode reads the texts."""
    targets = lm_targets(wildcards)
    if COVARIATE["lm"]["mode"] == "cached":
        return {
            **lm_hub_input(wildcards),
            "source": results_file(
                "lm_encoded", model=wildcards.model, domain=wildcards.source
            ),
            "targets": [
                results_file("lm_encoded", model=wildcards.model, domain=t)
                for t in targets
            ],
        }
    return {
        **lm_hub_input(wildcards),
        **{
            s: results_file("text_split", domain=wildcards.source, split=s)
            for s in ("train", "validation", "test")
        },
        "targets": [
            results_file("text_split", domain=t, split="test") for t in targets
        ],
    }


def lm_outputs(model, source):
    return results_file("lm_outputs", model=model, source=source)


def covariate_setups():
    """(model, source, target) of every covariate-shift setup, in table order (model-major)."""
    return [(m, s, t) for m in covariate_models() for s, t in covariate_pairs()]


def covariate_setup_inputs():
    """Per setup, in covariate_setups() order: the (model, source) cache and the pair's samples."""
    setups = covariate_setups()
    return {
        "lm_outputs": [lm_outputs(m, s) for m, s, _ in setups],
        "samples": [
            results_file("pair_samples", shift="covariate", source=s, target=t)
            for _, s, t in setups
        ],
    }


wildcard_constraints:
    kind="datasets|models",
    domain="|".join(map(re.escape, covariate_domains())) or "^$",
    source="|".join(map(re.escape, covariate_domains())) or "^$",
    target="|".join(map(re.escape, covariate_domains())) or "^$",
    model=r"[A-Za-z0-9_]+",
