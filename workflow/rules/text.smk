# Covariate-shift text domains and mixture samples (docs/protocols.md §3.1, §3.2, §3.7).
# Needs config (seed, data_root, covariate) and RESULTS.


include: "covariate_common.smk"


rule hub_download:
    """Download one hub data set or model at its configured revision into the Hugging Face cache and
    record the commit it resolved to. Runs on the submitting machine (a cluster's login node, which
    has internet); every job that reads hub files runs offline afterwards."""
    output:
        hub_manifest("{kind}", "{name}"),
    log:
        f"{RESULTS}/logs/hub/{{kind}}/{{name}}.log",
    localrule: True
    conda:
        "../../envs/text.yaml"
    params:
        entry=hub_download_entry,
        cache=hub_cache(),
    script:
        "../scripts/hub_download.py"


rule text_domain:
    """One sentiment domain as train/validation/test tables (text, label) from the configured source."""
    input:
        unpack(text_hub_input),
    output:
        train=results_file("text_split", split="train"),
        validation=results_file("text_split", split="validation"),
        test=results_file("text_split", split="test"),
        summary=results_file("text_summary"),
    log:
        f"{RESULTS}/logs/text/{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/text/{{domain}}.tsv"
    conda:
        "../../envs/text.yaml"
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
        cache=hub_cache(),
    script:
        "../scripts/text_domain.py"


rule covariate_samples:
    """Mixture samples of one source->target pair: indices into [source test ; target test]."""
    input:
        source=results_file("text_split", domain="{source}", split="test"),
        target=results_file("text_split", domain="{target}", split="test"),
    output:
        results_file("pair_samples", shift="covariate"),
    log:
        f"{RESULTS}/logs/samples/covariate/{{source}}__{{target}}.log",
    conda:
        "../../envs/core.yaml"
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


rule compound_samples:
    """Compound-shift samples of one source->target pair: a source/target mixture with a drawn
    class prevalence, indices into [source test ; target test] (docs/regimes.md §2)."""
    input:
        source=results_file("text_split", domain="{source}", split="test"),
        target=results_file("text_split", domain="{target}", split="test"),
    output:
        results_file("pair_samples", shift="compound"),
    log:
        f"{RESULTS}/logs/samples/compound/{{source}}__{{target}}.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
    params:
        n_classes=covariate_n_classes(),
        sample_size=COVARIATE["compound"]["sample_size"],
        n_samples=COVARIATE["compound"]["n_samples"],
        mixture=COVARIATE["compound"]["mixture"],
        replace=COVARIATE["compound"]["replace"],
        seed=config["seed"],
        code=code_version("compound_samples.py"),
    script:
        "../scripts/compound_samples.py"
