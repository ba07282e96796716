# Covariate-shift text domains and mixture samples (protocols.md §3.1, §3.2, §3.7).
# Needs config (seed, data_root, covariate) and RESULTS; include before lm.smk.


include: "covariate_common.smk"


rule text_domain:
    """One sentiment domain as train/validation/test tables (text, label) from the configured source."""
    output:
        train=f"{RESULTS}/text/{{domain}}/train.parquet",
        validation=f"{RESULTS}/text/{{domain}}/validation.parquet",
        test=f"{RESULTS}/text/{{domain}}/test.parquet",
        summary=f"{RESULTS}/text/{{domain}}/summary.json",
    log:
        f"{RESULTS}/logs/text/{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/text/{{domain}}.tsv"
    conda:
        "../../envs/lm.yaml"
    threads: 1
    resources:
        mem_mb=8000,
    params:
        text_source=COVARIATE["text_source"],
        options=text_options(),
        data_root=(
            config["data_root"] if COVARIATE["text_source"] == "data_root" else None
        ),
        seed=config["seed"],
        code=code_version("text_domain.py"),
    script:
        "../scripts/text_domain.py"


rule covariate_samples:
    """Mixture samples of one source->target pair: indices into [source test ; target test]."""
    input:
        source=f"{RESULTS}/text/{{source}}/test.parquet",
        target=f"{RESULTS}/text/{{target}}/test.parquet",
    output:
        f"{RESULTS}/samples/covariate/{{source}}__{{target}}.npz",
    log:
        f"{RESULTS}/logs/samples/covariate/{{source}}__{{target}}.log",
    conda:
        "../../envs/lm.yaml"
    threads: 1
    resources:
        mem_mb=1000,
    params:
        sample_size=COVARIATE["mixture"]["sample_size"],
        n_samples=COVARIATE["mixture"]["n_samples"],
        counts=COVARIATE["mixture"]["counts"],
        allow_larger=COVARIATE["mixture"]["allow_sample_larger_than_pool"],
        seed=config["seed"],
        code=code_version("covariate_samples.py"),
    script:
        "../scripts/covariate_samples.py"
