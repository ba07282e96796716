rule label_samples:
    """UPP test samples (indices into the test pool), generated once and shared by every method."""
    input:
        splits=results_file("split"),
    output:
        results_file("label_samples"),
    log:
        f"{RESULTS}/logs/samples/label/{{dataset}}.log",
    conda:
        "../../envs/core.yaml"
    params:
        sample_size=config["label_shift"]["sample_size"],
        n_samples=config["label_shift"]["n_samples"],
        allow_larger=config["label_shift"]["allow_sample_larger_than_pool"],
        seed=config["seed"],
        code=code_version("label_samples.py"),
    script:
        "../scripts/label_samples.py"
