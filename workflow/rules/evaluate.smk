# Evaluation: one job per (shift, task, method, setup), so that a new data set, classifier, model or
# method plans only its own jobs; one aggregation per (shift, task, method) concatenates them, in
# table order, into the per-method record file that the tables read (docs/evaluation-jobs.md).
# Both rules join the group `evaluation`: on a cluster a method's jobs and its aggregation form one
# connected component, and `--group-components evaluation=N` submits N methods per batch job.
# Under `evaluation_jobs: per_method` the one job of a method writes its record files itself: an
# aggregation of one file would only copy it (and cost a job's start-up per method).


include: "weights_common.smk"


# per_setup: an evaluation job per setup, aggregated per method; per_method: one job per method
# writes the method's record files itself (the {setup} wildcard is then always `all`)
EVALUATE_PER_METHOD = config["evaluation_jobs"] == "per_method"
EVALUATE_SETUP = ALL_SETUPS if EVALUATE_PER_METHOD else "{setup}"
EVALUATE_OUTPUTS = dict(
    records=results_file("records" if EVALUATE_PER_METHOD else "setup_records"),
    runtime=results_file("runtime" if EVALUATE_PER_METHOD else "setup_runtime"),
    # the reliability diagrams' bin statistics of a calibrator's posteriors, which the records do
    # not hold (rule reliability); only a header for the other tasks, which return none
    reliability=results_file("setup_reliability", setup=EVALUATE_SETUP),
)
# an evaluated method is any method but the Selector, whose records rule selector writes: without
# the constraint Snakemake also tries evaluate for Selector.csv, and the registry's "unknown method
# 'Selector'" from that try's input functions fills the log of every run with tracebacks
EVALUATED_METHOD = rf"(?!{SELECTOR}(?![A-Za-z0-9_]))[A-Za-z0-9_]+"


rule evaluate:
    """Fit one method on one setup and apply it to every persisted sample; one row per sample."""
    input:
        unpack(evaluation_setup_inputs),
        unpack(domain_weight_inputs),
    output:
        **EVALUATE_OUTPUTS,
    log:
        f"{RESULTS}/logs/eval/{{shift}}/{{task}}/{{method}}/{EVALUATE_SETUP}.log",
    benchmark:
        f"{RESULTS}/benchmarks/eval/{{shift}}/{{task}}/{{method}}/{EVALUATE_SETUP}.tsv"
    wildcard_constraints:
        method=EVALUATED_METHOD,
    group:
        "evaluation"
    conda:
        "../../envs/evaluation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        setups=setup_fields,
        method_params=lambda wc: method_params(wc.task, wc.method),
        layout=lambda wc: layout(wc.shift),
        ece=config["ece"],
        ece_precision=config["ece_precision"],
        domain_stream=config["domain_stream"],
        sample_posteriors=config["label_shift"]["sample_posteriors"],
        seed=config["seed"],
        setup_name=job_setup,
        # per_method: the job writes the method's record files, so it also refuses a method that
        # failed on every sample (evaluation_records' check)
        allow_failed=config["allow_failed_methods"],
        code=evaluation_code_version,
    script:
        "../scripts/evaluate.py"


if not EVALUATE_PER_METHOD:

    rule evaluation_records:
        """The per-setup records and timings of one method, concatenated in table order."""
        input:
            records=setup_evaluation_files("eval"),
            runtime=setup_evaluation_files("runtime"),
        output:
            records=results_file("records"),
            runtime=results_file("runtime"),
        log:
            f"{RESULTS}/logs/eval/{{shift}}/{{task}}/{{method}}.log",
        wildcard_constraints:
            method=EVALUATED_METHOD,
        group:
            "evaluation"
        conda:
            "../../envs/core.yaml"
        threads: 1
        resources:
            mem_mb=1000,
        params:
            allow_failed=config["allow_failed_methods"],
            code=code_version("evaluation_records.py"),
        script:
            "../scripts/evaluation_records.py"
