rule label_samples:
    """UPP test samples (indices into the test pool), generated once and shared by every method."""
    input:
        splits=f"{RESULTS}/data/label/{{dataset}}/split.npz",
    output:
        f"{RESULTS}/samples/label/{{dataset}}.npz",
    log:
        f"{RESULTS}/logs/samples/label/{{dataset}}.log",
    conda:
        "../envs/core.yaml"
    params:
        sample_size=config["label_shift"]["sample_size"],
        n_samples=config["label_shift"]["n_samples"],
        seed=config["seed"],
    script:
        "../scripts/label_samples.py"
