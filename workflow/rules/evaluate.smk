rule evaluate:
    """Fit one method per setup and apply it to every persisted sample; one row per sample."""
    input:
        unpack(evaluation_inputs),
        unpack(domain_weight_inputs),
    output:
        records=f"{RESULTS}/eval/{{shift}}/{{task}}/{{method}}.csv",
        runtime=f"{RESULTS}/runtime/{{shift}}/{{task}}/{{method}}.csv",
    log:
        f"{RESULTS}/logs/eval/{{shift}}/{{task}}/{{method}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/eval/{{shift}}/{{task}}/{{method}}.tsv"
    conda:
        "../envs/evaluation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        method_params=lambda wc: method_params(wc.task, wc.method),
        setups=lambda wc: evaluation_setups(wc.shift),
        ece=config["ece"],
        ece_precision=config["ece_precision"],
        domain_stream=config["domain_stream"],
        sample_posteriors=config["label_shift"]["sample_posteriors"],
        seed=config["seed"],
        code=evaluation_code_version,
    script:
        "../scripts/evaluate.py"
