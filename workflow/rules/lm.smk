# Language-model stage: head-only fine-tuning per (model, source) and extraction of logits and
# first-token hidden states (docs/protocols.md §3.3-3.6). Needs config and RESULTS.


include: "covariate_common.smk"


rule lm_encode:
    """cached mode: one eval-mode encoder pass over every split of a domain (head inputs, first-token
    vectors); the frozen backbone is shared by every source, so each domain is encoded once.
    """
    input:
        unpack(lm_hub_input),
        train=results_file("text_split", split="train"),
        validation=results_file("text_split", split="validation"),
        test=results_file("text_split", split="test"),
    output:
        results_file("lm_encoded"),
    log:
        f"{RESULTS}/logs/lm/{{model}}/encode_{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/lm/{{model}}/encode_{{domain}}.tsv"
    conda:
        "../../envs/lm.yaml"
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


rule lm_finetune:
    """Head-only fine-tuning of one model on one source domain (faithful: Trainer through the whole
    model; cached: the same Trainer on the encoded head inputs), then the cache of logits, hidden states
    and labels of the training subset, validation, source test and every target test."""
    input:
        unpack(lm_finetune_inputs),
    output:
        outputs=results_file("lm_outputs"),
        report=results_file("lm_training"),
        head=results_file("lm_head"),
    log:
        f"{RESULTS}/logs/lm/{{model}}/finetune_{{source}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/lm/{{model}}/finetune_{{source}}.tsv"
    conda:
        "../../envs/lm.yaml"
    threads: COVARIATE["lm"]["cpu_threads"]
    resources:
        gpu=1 if COVARIATE["lm"]["mode"] == "faithful" else 0,
        mem_mb=16000,
    params:
        model_path=lm_model_path,
        cache=hub_cache(),
        settings=lm_settings(),
        targets=lm_targets,
        num_labels=covariate_n_classes(),
        code=code_version("lm_finetune.py"),
    script:
        "../scripts/lm_finetune.py"


rule classifier_accuracy_covariate:
    """Accuracy of each fine-tuned model on its source test set and on every target test set."""
    input:
        [lm_outputs(m, s) for m in covariate_models() for s in covariate_domains()],
    output:
        results_file("accuracy_cells", shift="covariate"),
    log:
        f"{RESULTS}/logs/tables/classifier_accuracy_covariate.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=4000,
    params:
        pairs=[[m, s] for m in covariate_models() for s in covariate_domains()],
        domains=covariate_domains(),
        code=code_version("lm_accuracy.py"),
    script:
        "../scripts/lm_accuracy.py"
