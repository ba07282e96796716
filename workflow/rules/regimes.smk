# Which method when (docs/regimes.md §5): the shift descriptors of every sample, computed once per
# setup and joined into every method's records by the evaluation jobs; the regime maps of each task
# and shift; the Selector, a column of every table, with its references (trivial answers, oracles,
# the best single method) and the Hybrid beside it.


rule descriptors:
    """The shift descriptors of every sample of one setup (the same for every method), and the
    trivial answers' errors of the same samples, scored as the methods are (the training
    prevalence, the validation accuracy, the uncalibrated posteriors)."""
    input:
        unpack(descriptor_inputs),
    output:
        descriptors=results_file("descriptors"),
        trivial=results_file("trivial"),
    log:
        f"{RESULTS}/logs/descriptors/{{shift}}/{{setup}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/descriptors/{{shift}}/{{setup}}.tsv"
    conda:
        "../../envs/evaluation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        setup=lambda wc: setup_by_name(wc.shift, wc.setup),
        sample_posteriors=lambda wc: (
            config["label_shift"]["sample_posteriors"] if wc.shift == "label" else None
        ),
        layout=lambda wc: layout(wc.shift),
        ece=config["ece"],
        ece_precision=config["ece_precision"],
        seed=config["seed"],
        code=code_version("descriptors.py"),
    script:
        "../scripts/descriptors.py"


# Selector.csv lies beside the evaluated methods' record files, which evaluation_records writes
# (evaluate itself under `evaluation_jobs: per_method`).
ruleorder: selector > evaluate


if not EVALUATE_PER_METHOD:

    ruleorder: selector > evaluation_records


rule selector:
    """The Selector's per-sample records (a column of the tables), its choices, and the summary
    beside the per-sample oracle and the best single method."""
    input:
        records=lambda wc: eval_files(wc.shift, wc.task),
        trivial=lambda wc: trivial_files(wc.shift),
    output:
        records=results_file("records", method=SELECTOR),
        summary=results_file("selection_csv"),
        choices=results_file("selection_choices"),
        tex=results_file("selection_tex"),
        gains=results_file("selection_gains"),
    log:
        f"{RESULTS}/logs/regimes/{{task}}_{{shift}}_selector.log",
    benchmark:
        f"{RESULTS}/benchmarks/regimes/{{task}}_{{shift}}_selector.tsv"
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        methods=lambda wc: methods_of(wc.shift, wc.task),
        layout=lambda wc: layout(wc.shift),
        seed=config["seed"],
        n_bootstrap=config["regimes"]["n_bootstrap"],
        alpha=config["alpha"],
        code=code_version("selector.py"),
    script:
        "../scripts/selector.py"


rule regime_map:
    """Each method's mean error per bin of each shift descriptor, the winner per bin (or merged
    bins) with its tests and bootstrap share, or the tied set, and the degenerate flag.
    """
    input:
        records=lambda wc: eval_files(wc.shift, wc.task),
        trivial=lambda wc: trivial_files(wc.shift),
    output:
        csv=results_file("regime_csv"),
        png=report(
            results_file("regime_png"),
            caption="../report/regimes.rst",
            category="{task}",
            subcategory="{shift} shift",
        ),
        tex=results_file("regime_tex"),
    log:
        f"{RESULTS}/logs/regimes/{{task}}_{{shift}}.log",
    conda:
        "../../envs/core.yaml"
    params:
        methods=lambda wc: methods_of(wc.shift, wc.task),
        n_bins=config["regimes"]["n_bins"],
        scheme=config["regimes"]["scheme"],
        seed=config["seed"],
        n_bootstrap=config["regimes"]["n_bootstrap"],
        alpha=config["alpha"],
        code=code_version("regime_map.py"),
    script:
        "../scripts/regime_map.py"


rule regime_map_2d:
    """Under compound shift, the winner (or the tied set) per cell of label-shift intensity x
    mixture (docs/regimes.md §3.1)."""
    input:
        records=lambda wc: eval_files("compound", wc.task),
        trivial=lambda wc: trivial_files("compound"),
    output:
        csv=results_file("regime_2d_csv"),
        png=report(
            results_file("regime_2d_png"),
            caption="../report/regimes_2d.rst",
            category="{task}",
            subcategory="compound shift",
        ),
    log:
        f"{RESULTS}/logs/regimes/{{task}}_compound_2d.log",
    conda:
        "../../envs/core.yaml"
    params:
        methods=lambda wc: methods_of("compound", wc.task),
        n_bins=config["regimes"]["n_bins_2d"],
        scheme=config["regimes"]["scheme"],
        seed=config["seed"],
        n_bootstrap=config["regimes"]["n_bootstrap"],
        alpha=config["alpha"],
        code=code_version("regime_map_2d.py"),
    script:
        "../scripts/regime_map_2d.py"
