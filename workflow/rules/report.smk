rule tables:
    """Mean error per (classifier, data set, method) for one task and shift: csv and plain LaTeX."""
    input:
        lambda wc: expand(
            f"{RESULTS}/eval/{{shift}}/{{task}}/{{method}}.csv",
            shift=wc.shift,
            task=wc.task,
            method=methods_of(wc.shift, wc.task),
        ),
    output:
        csv=f"{RESULTS}/tables/{{task}}_{{shift}}.csv",
        tex=f"{RESULTS}/tables/{{task}}_{{shift}}.tex",
    params:
        methods=lambda wc: methods_of(wc.shift, wc.task),
        datasets=label_datasets(),
        classifiers=label_classifiers(),
    conda:
        "../../envs/core.yaml"
    log:
        f"{RESULTS}/logs/tables/{{task}}_{{shift}}.log",
    script:
        "../scripts/tables.py"
