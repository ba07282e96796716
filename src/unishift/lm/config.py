"""Defaults of the ``covariate_shift:`` config section (docs/protocols.md §3.3), in step with
config/config.yaml and workflow/schemas/config.schema.yaml (a test checks). No heavy imports: the
workflow reads this at parse time.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from itertools import permutations

from unishift.option_checks import check_choice, check_positive_int


@dataclass(frozen=True)
class FinetuneSettings:
    """The ``covariate_shift.lm`` settings (field order: the config's key order)."""

    mode: str = "cached"
    device: str = "auto"
    precision: str = "fp32"
    max_length: int = 512
    padding: str = "max_length"
    epochs: float = 5
    learning_rate: float = 5e-4
    batch_size: int = 64
    eval_batch_size: int = 256
    eval_steps: int = 500
    early_stopping_patience: int = 5
    warmup_ratio: float = 0.1
    seed: int = 42
    extract_batch_size: int = 512
    logging_steps: int = 50
    train_subset: int = 5000
    cpu_threads: int = 2

    def __post_init__(self):
        check_choice("covariate_shift.lm.mode", self.mode, ("faithful", "cached"))
        # bf16 needs an Ampere or newer GPU, fp16 is the mixed precision of older ones
        check_choice("covariate_shift.lm.precision", self.precision, ("fp32", "bf16", "fp16"))
        check_choice("covariate_shift.lm.padding", self.padding, ("longest", "max_length"))
        check_positive_int("covariate_shift.lm.cpu_threads", self.cpu_threads)

    @classmethod
    def from_config(cls, options: dict) -> FinetuneSettings:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown covariate_shift.lm keys {unknown}; valid: {sorted(known)}")
        return cls(**options)


# The paper's language-model settings (docs/protocols.md §3.3), for the paper config.
PAPER_LM = {
    **{f.name: f.default for f in fields(FinetuneSettings)},
    "mode": "faithful",
    "precision": "bf16",
}
COVARIATE_DEFAULTS = {
    "text_source": "tweets",
    "domains": ["airline", "apple", "coachella"],
    "hf": {
        "validation_size": 5000,
        "check_paper_sizes": False,
        "datasets": {
            "imdb": {"id": "stanfordnlp/imdb", "revision": None},
            "rt": {"id": "cornell-movie-review-data/rotten_tomatoes", "revision": None},
            "yelp": {"id": "Yelp/yelp_review_full", "revision": None},
        },
    },
    "hub_cache": None,
    "offline": {"validation_fraction": 0.2, "test_fraction": 0.3},
    "tweets": {"validation_fraction": 0.2, "test_fraction": 0.3, "classes": 2},
    "models": {"MiniLM": "all-MiniLM-L6-v2"},
    # the paper's schedule with the departures of the embedded default
    "lm": {
        **PAPER_LM,
        "mode": "cached",
        "precision": "fp32",
        "max_length": 128,
        "padding": "longest",
        "epochs": 20,
        "learning_rate": 5.0e-3,
        "eval_steps": 20,
        "extract_batch_size": 128,
        "logging_steps": 10,
    },
    "mixture": {
        "sample_size": 250,
        "n_samples": 100,
        "counts": "round",
        "allow_sample_larger_than_pool": False,
    },
    "compound": {
        "sample_size": 250,
        "n_samples": 100,
        "mixture": "round",
        "replace": "as_needed",
    },
}
# Settings that change what the encoder pass computes (the rest only affect the head's training).
ENCODE_KEYS = ("max_length", "padding", "extract_batch_size", "device", "seed", "cpu_threads")
DOMAINS_BY_SOURCE = {
    "hf": ("imdb", "rt", "yelp"),
    "data_root": ("imdb", "rt", "yelp", "amazon"),
    "tweets": ("airline", "apple", "coachella", "self-driving", "claritin"),
}


def _merge(defaults: dict, given: dict) -> dict:
    merged = copy.deepcopy(defaults)
    for key, value in (given or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key != "models":
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def covariate_options(config: dict) -> dict:
    """The ``covariate_shift`` section with defaults filled in, checked for consistency."""
    options = _merge(COVARIATE_DEFAULTS, config.get("covariate_shift") or {})
    source = options["text_source"]
    check_choice("covariate_shift.text_source", source, DOMAINS_BY_SOURCE)
    unknown = [d for d in options["domains"] if d not in DOMAINS_BY_SOURCE[source]]
    if unknown or len(options["domains"]) < 2:
        raise ValueError(
            f"covariate_shift.domains {options['domains']} must name at least two of {DOMAINS_BY_SOURCE[source]} "
            f"(text_source {source})"
        )
    if source == "data_root" and not config.get("data_root"):
        raise ValueError("covariate_shift.text_source 'data_root' needs the config key data_root")
    return options


def domain_pairs(domains: list[str]) -> list[tuple[str, str]]:
    """Ordered (source, target) pairs, source-major, targets in domain order (the paper's row order)."""
    return list(permutations(domains, 2))
