# The multiclass branch (docs/multiclass.md): its rules. Schema, checks and helpers are in
# multiclass_common.smk; the Snakefile includes this file for `regime: multiclass` configs.


include: "multiclass_common.smk"


rule multiclass_uci_dataset:
    """One UCI multiclass data set through QuaPy's loader (offline copies pre-seed its cache), classes
    below the minimum support dropped, split 70/30, standardised, the 70 % split 50/50.
    """
    output:
        f"{RESULTS}/data/label/{{dataset}}/split.npz",
    log:
        f"{RESULTS}/logs/data/label/{{dataset}}.log",
    conda:
        "../envs/core.yaml"
    params:
        data_home=config["quapy_home"],
        seed=config["seed"],
        min_class_support=config["label_shift"]["min_class_support"],
        code=code_version("multiclass_uci_dataset.py"),
    script:
        "../scripts/multiclass_uci_dataset.py"


rule multiclass_label_samples:
    """UPP test samples over k classes (indices into the test pool), shared by every method."""
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
        code=code_version("multiclass_label_samples.py"),
    script:
        "../scripts/multiclass_label_samples.py"


rule multiclass_train_classifier:
    """Train one classifier on the classifier-training half; n x k posteriors of the three parts (a
    classifier that does not output one column per class fails here, before any evaluation).
    """
    input:
        splits=f"{RESULTS}/data/label/{{dataset}}/split.npz",
    output:
        model=f"{RESULTS}/classifiers/label/{{dataset}}/{{classifier}}.pkl",
        posteriors=f"{RESULTS}/posteriors/label/{{dataset}}/{{classifier}}.npz",
    log:
        f"{RESULTS}/logs/classifiers/label/{{dataset}}/{{classifier}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/classifiers/label/{{dataset}}/{{classifier}}.tsv"
    conda:
        "../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        seed=config["seed"],
        code=code_version("multiclass_train_classifier.py"),
    script:
        "../scripts/multiclass_train_classifier.py"


rule multiclass_text_domain:
    """One tweet domain with its three classes (negative, neutral, positive), balanced and split."""
    output:
        train=f"{RESULTS}/text/{{domain}}/train.parquet",
        validation=f"{RESULTS}/text/{{domain}}/validation.parquet",
        test=f"{RESULTS}/text/{{domain}}/test.parquet",
        summary=f"{RESULTS}/text/{{domain}}/summary.json",
    log:
        f"{RESULTS}/logs/text/{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/text/{{domain}}.tsv"
    conda:
        "../envs/text.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        options=COVARIATE["tweets"],
        seed=config["seed"],
        code=code_version("multiclass_text_domain.py"),
    script:
        "../scripts/multiclass_text_domain.py"


rule multiclass_covariate_samples:
    """Mixture samples of one source->target pair (the binary protocol; it only indexes the pools)."""
    input:
        source=f"{RESULTS}/text/{{source}}/test.parquet",
        target=f"{RESULTS}/text/{{target}}/test.parquet",
    output:
        f"{RESULTS}/samples/covariate/{{source}}__{{target}}.npz",
    log:
        f"{RESULTS}/logs/samples/covariate/{{source}}__{{target}}.log",
    conda:
        "../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
    params:
        sample_size=COVARIATE["mixture"]["sample_size"],
        n_samples=COVARIATE["mixture"]["n_samples"],
        counts=COVARIATE["mixture"]["counts"],
        allow_larger=COVARIATE["mixture"]["allow_sample_larger_than_pool"],
        seed=config["seed"],
        code=code_version("covariate_samples.py"),
    script:
        "../scripts/covariate_samples.py"


rule multiclass_lm_encode:
    """cached mode: one eval-mode encoder pass over every split of a 3-class domain."""
    input:
        unpack(lm_hub_input),
        train=f"{RESULTS}/text/{{domain}}/train.parquet",
        validation=f"{RESULTS}/text/{{domain}}/validation.parquet",
        test=f"{RESULTS}/text/{{domain}}/test.parquet",
    output:
        f"{RESULTS}/lm/{{model}}/encoded/{{domain}}.npz",
    log:
        f"{RESULTS}/logs/lm/{{model}}/encode_{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/lm/{{model}}/encode_{{domain}}.tsv"
    conda:
        "../envs/lm.yaml"
    threads: COVARIATE["lm"]["cpu_threads"]
    resources:
        gpu=1,
        mem_mb=16000,
    params:
        model_path=lm_model_path,
        cache=hub_cache(),
        settings=lm_encode_settings(),
        code=code_version("lm_encode.py"),
    script:
        "../scripts/lm_encode.py"


rule multiclass_lm_finetune:
    """Head-only fine-tuning with one output per class (three for the tweets), then the cache of
    k-column logits, hidden states and labels of every set."""
    input:
        unpack(lm_finetune_inputs),
    output:
        outputs=f"{RESULTS}/lm/{{model}}/{{source}}/outputs.npz",
        report=f"{RESULTS}/lm/{{model}}/{{source}}/training.json",
        head=f"{RESULTS}/lm/{{model}}/{{source}}/head.safetensors",
    log:
        f"{RESULTS}/logs/lm/{{model}}/finetune_{{source}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/lm/{{model}}/finetune_{{source}}.tsv"
    conda:
        "../envs/lm.yaml"
    threads: COVARIATE["lm"]["cpu_threads"]
    resources:
        gpu=1 if COVARIATE["lm"]["mode"] == "faithful" else 0,
        mem_mb=16000,
    params:
        model_path=lm_model_path,
        cache=hub_cache(),
        settings=lm_settings(),
        targets=lm_targets,
        num_labels=N_CLASSES_COVARIATE,
        code=code_version("lm_finetune.py"),
    script:
        "../scripts/lm_finetune.py"


rule multiclass_evaluate:
    """Fit one multiclass method per setup and apply it to every persisted sample; one row per
    sample (the multiclass record columns)."""
    input:
        unpack(evaluation_inputs),
    output:
        records=f"{RESULTS}/eval/{{shift}}/{{task}}/{{method}}.csv",
        runtime=f"{RESULTS}/runtime/{{shift}}/{{task}}/{{method}}.csv",
    log:
        f"{RESULTS}/logs/eval/{{shift}}/{{task}}/{{method}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/eval/{{shift}}/{{task}}/{{method}}.tsv"
    # the multiclass CPCS / TransCal wrap the binary classes, whose REF arithmetic calls torch
    conda:
        "../envs/evaluation.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        method_params=lambda wc: method_params(wc.task, wc.method),
        setups=lambda wc: evaluation_setups(wc.shift),
        n_classes=N_CLASSES_COVARIATE,
        ece=config["ece"],
        ece_precision=config["ece_precision"],
        seed=config["seed"],
        code=multiclass_code_version("multiclass_evaluate.py"),
    script:
        "../scripts/multiclass_evaluate.py"


rule multiclass_tables:
    """One multiclass table and its CD diagram, by the binary branch's reporting code."""
    input:
        lambda wc: eval_files(wc.shift, wc.task),
    output:
        cells=f"{RESULTS}/tables/{{task}}_{{shift}}.csv",
        summary=f"{RESULTS}/tables/{{task}}_{{shift}}_summary.csv",
        tex=f"{RESULTS}/tables/{{task}}_{{shift}}.tex",
        cd_tex=f"{RESULTS}/cd/{{task}}_{{shift}}.tex",
        cd_png=f"{RESULTS}/cd/{{task}}_{{shift}}.png",
        cd_groups=f"{RESULTS}/cd/{{task}}_{{shift}}_groups.csv",
    log:
        f"{RESULTS}/logs/tables/{{task}}_{{shift}}.log",
    conda:
        "../envs/core.yaml"
    params:
        methods=lambda wc: methods_of(wc.shift, wc.task),
        classifiers=lambda wc: row_orders(wc.shift)[0],
        datasets=lambda wc: row_orders(wc.shift)[1],
        n_samples=lambda wc: samples_per_setup(wc.shift),
        method_info=lambda wc: display_info(wc.task, methods_of(wc.shift, wc.task)),
        alpha=config["alpha"],
        code=multiclass_code_version("multiclass_tables.py"),
    script:
        "../scripts/multiclass_tables.py"


rule multiclass_error_by_shift:
    """Mean error per shift-intensity bin of a selection of multiclass methods."""
    input:
        lambda wc: eval_files(wc.shift, wc.task),
    output:
        pdf=f"{RESULTS}/plots/{{task}}_{{shift}}_err_by_shift.pdf",
        png=f"{RESULTS}/plots/{{task}}_{{shift}}_err_by_shift.png",
    log:
        f"{RESULTS}/logs/plots/{{task}}_{{shift}}_err_by_shift.log",
    conda:
        "../envs/core.yaml"
    params:
        methods=lambda wc: methods_of(wc.shift, wc.task),
        classifiers=lambda wc: row_orders(wc.shift)[0],
        datasets=lambda wc: row_orders(wc.shift)[1],
        n_samples=lambda wc: samples_per_setup(wc.shift),
        method_info=lambda wc: display_info(wc.task, methods_of(wc.shift, wc.task)),
        code=multiclass_code_version("multiclass_error_by_shift.py"),
    script:
        "../scripts/multiclass_error_by_shift.py"


rule multiclass_accuracy:
    """The accuracy appendix of one shift: test-pool accuracy of each classifier (label shift), or
    of each 3-class head on its source and every target test set (covariate shift)."""
    input:
        accuracy_inputs,
    output:
        csv=f"{RESULTS}/tables/classifier_accuracy_{{shift}}.csv",
        tex=f"{RESULTS}/tables/classifier_accuracy_{{shift}}.tex",
    log:
        f"{RESULTS}/logs/tables/classifier_accuracy_{{shift}}.log",
    conda:
        "../envs/core.yaml"
    params:
        datasets=label_datasets(),
        classifiers=label_classifiers(),
        pairs=[[m, s] for m in covariate_models() for s in covariate_domains()],
        domains=covariate_domains(),
        code=code_version("multiclass_accuracy.py"),
    script:
        "../scripts/multiclass_accuracy.py"


rule multiclass_provenance:
    """The config (and its hash), seeds, package versions, git commit, lock file and fine-tuning
    reports of the run."""
    input:
        hub=[],
        lm_reports=[
            f"{RESULTS}/lm/{m}/{s}/training.json"
            for m in covariate_models()
            for s in covariate_domains()
            if "covariate" in config["shifts"]
        ],
    output:
        f"{RESULTS}/provenance.json",
    log:
        f"{RESULTS}/logs/provenance.log",
    conda:
        "../envs/core.yaml"
    params:
        config=config,
        code=library_version(),
        repository=str(Path(workflow.basedir).parent),
        lock_file=f"{Path(workflow.basedir).parent}/requirements.lock",
    script:
        "../scripts/provenance.py"
