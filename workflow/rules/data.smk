rule uci_dataset:
    """One UCI data set of the configured benchmark through QuaPy's loader (offline copies pre-seed
    its cache; multiclass: classes below min_class_support dropped), split 70/30, standardised, and
    the 70 % split 50/50 into classifier-training and validation halves.
    """
    output:
        results_file("split"),
    log:
        f"{RESULTS}/logs/data/label/{{dataset}}.log",
    conda:
        "../../envs/core.yaml"
    params:
        data_home=quapy_home(),
        collection=config["label_shift"]["benchmark"],
        min_class_support=config["label_shift"]["min_class_support"],
        seed=config["seed"],
        code=code_version("uci_dataset.py"),
    script:
        "../scripts/uci_dataset.py"
