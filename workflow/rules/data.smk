rule uci_dataset:
    """One UCI data set through QuaPy's loader (offline copies pre-seed its cache), split 70/30,
    standardised, and the 70 % split 50/50 into classifier-training and validation halves."""
    output:
        f"{RESULTS}/data/label/{{dataset}}/split.npz",
    params:
        data_home=quapy_home(),
        data_root=config["data_root"],
        seed=config["seed"],
    conda:
        "../../envs/core.yaml"
    log:
        f"{RESULTS}/logs/data/label/{{dataset}}.log",
    script:
        "../scripts/uci_dataset.py"
