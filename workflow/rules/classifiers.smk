rule train_classifier:
    """Train one classifier on the classifier-training half; cache its posteriors on the three parts
    and on each test sample (predicted as one batch, as the reference code does)."""
    input:
        splits=results_file("split"),
        samples=results_file("label_samples"),
    output:
        model=results_file("classifier"),
        posteriors=results_file("posteriors"),
    log:
        f"{RESULTS}/logs/classifiers/label/{{dataset}}/{{classifier}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/classifiers/label/{{dataset}}/{{classifier}}.tsv"
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        seed=config["seed"],
        code=code_version("train_classifier.py"),
    script:
        "../scripts/train_classifier.py"


rule classifier_accuracy_label:
    """Accuracy of each classifier on the whole test pool (the paper's appendix table)."""
    input:
        posteriors=label_posterior_files(),
        splits=expand(results_file("split"), dataset=label_datasets()),
    output:
        report(
            results_file("accuracy_cells", shift="label"),
            caption="../report/classifier_accuracy.rst",
            category="classifiers",
        ),
    log:
        f"{RESULTS}/logs/tables/classifier_accuracy_label.log",
    conda:
        "../../envs/core.yaml"
    params:
        datasets=label_datasets(),
        classifiers=label_classifiers(),
        code=code_version("classifier_accuracy.py"),
    script:
        "../scripts/classifier_accuracy.py"
