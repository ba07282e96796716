# Covariate-shift text domains and mixture samples (protocols.md §3.1, §3.2, §3.7).
# Needs from common.smk: config (seed, data_root, covariate) and RESULTS.
import re

from unishift.lm.config import ENCODE_KEYS, covariate_options, domain_pairs

COVARIATE = covariate_options(config)


def covariate_domains():
    return list(COVARIATE["domains"])


def covariate_models():
    return list(COVARIATE["models"])


def covariate_pairs():
    return domain_pairs(covariate_domains())


wildcard_constraints:
    domain="|".join(map(re.escape, covariate_domains())) or "^$",
    source="|".join(map(re.escape, covariate_domains())) or "^$",
    target="|".join(map(re.escape, covariate_domains())) or "^$",
    model=r"[A-Za-z0-9_]+",


rule text_domain:
    """One sentiment domain as train/validation/test tables (text, label) from the configured source."""
    output:
        train=f"{RESULTS}/text/{{domain}}/train.parquet",
        validation=f"{RESULTS}/text/{{domain}}/validation.parquet",
        test=f"{RESULTS}/text/{{domain}}/test.parquet",
        summary=f"{RESULTS}/text/{{domain}}/summary.json",
    params:
        text_source=COVARIATE["text_source"],
        options=COVARIATE,
        data_root=config["data_root"],
        seed=config["seed"],
    log:
        f"{RESULTS}/logs/text/{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/text/{{domain}}.tsv"
    threads: 1
    resources:
        mem_mb=8000,
    script:
        "../scripts/text_domain.py"


rule covariate_samples:
    """Mixture samples of one source->target pair: indices into [source test ; target test]."""
    input:
        source=f"{RESULTS}/text/{{source}}/test.parquet",
        target=f"{RESULTS}/text/{{target}}/test.parquet",
    output:
        f"{RESULTS}/samples/covariate/{{source}}__{{target}}.npz",
    params:
        sample_size=COVARIATE["mixture"]["sample_size"],
        n_samples=COVARIATE["mixture"]["n_samples"],
        counts=COVARIATE["mixture"]["counts"],
        seed=config["seed"],
    log:
        f"{RESULTS}/logs/samples/covariate/{{source}}__{{target}}.log",
    threads: 1
    resources:
        mem_mb=1000,
    script:
        "../scripts/covariate_samples.py"
