# Domain-classifier weights computed once per (setup, plan) and read by every evaluation job whose
# method needs them (docs/domain-weights.md); evaluate.smk takes them through domain_weight_inputs.


include: "weights_common.smk"


rule domain_weights_label:
    """Every domain-classifier call of one plan on every sample of one label-shift setup."""
    input:
        splits=results_file("split"),
        samples=results_file("label_samples"),
        posteriors=results_file("posteriors"),
    output:
        results_file("label_weights"),
    log:
        f"{RESULTS}/logs/weights/label/{{dataset}}/{{classifier}}/{{plan}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/weights/label/{{dataset}}/{{classifier}}/{{plan}}.tsv"
    conda:
        "../../envs/evaluation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        domain_stream=config["domain_stream"],
        sample_posteriors=config["label_shift"]["sample_posteriors"],
        seed=config["seed"],
        code=code_version("domain_weights.py"),
    script:
        "../scripts/domain_weights.py"


rule domain_weights_covariate:
    """Every domain-classifier call of one plan on every sample of one covariate- or compound-shift
    setup (the same language-model cache, the shift's own samples)."""
    input:
        lm_outputs=lambda wc: lm_outputs(wc.model, wc.source),
        samples=lambda wc: samples_file(wc.shift, wc.source, wc.target),
    output:
        results_file("pair_weights"),
    log:
        f"{RESULTS}/logs/weights/{{shift}}/{{model}}/{{source}}__{{target}}/{{plan}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/weights/{{shift}}/{{model}}/{{source}}__{{target}}/{{plan}}.tsv"
    wildcard_constraints:
        shift="covariate|compound",
    conda:
        "../../envs/evaluation.yaml"
    threads: 1
    resources:
        mem_mb=8000,
    params:
        domain_stream=config["domain_stream"],
        seed=config["seed"],
        code=code_version("domain_weights.py"),
    script:
        "../scripts/domain_weights.py"
