# Language-model stage: head-only fine-tuning per (model, source) and extraction of logits and
# first-token hidden states (protocols.md §3.3-3.6). Include after text.smk.


def lm_settings():
    return dict(COVARIATE["lm"])


def lm_encode_settings():
    """Only the settings that change the encoder's output, so head-training changes reuse the pass."""
    return {key: COVARIATE["lm"][key] for key in ENCODE_KEYS}


def lm_model_path(wildcards):
    return COVARIATE["models"][wildcards.model]


def lm_targets(wildcards):
    return [d for d in covariate_domains() if d != wildcards.source]


def lm_finetune_inputs(wildcards):
    """cached mode reads the encoder pass of each domain; faithful mode reads the texts."""
    targets = lm_targets(wildcards)
    if COVARIATE["lm"]["mode"] == "cached":
        return {
            "source": f"{RESULTS}/lm/{wildcards.model}/encoded/{wildcards.source}.npz",
            "targets": [f"{RESULTS}/lm/{wildcards.model}/encoded/{t}.npz" for t in targets],
        }
    return {
        **{s: f"{RESULTS}/text/{wildcards.source}/{s}.parquet" for s in ("train", "validation", "test")},
        "targets": [f"{RESULTS}/text/{t}/test.parquet" for t in targets],
    }


def lm_outputs(model, source):
    return f"{RESULTS}/lm/{model}/{source}/outputs.npz"


def covariate_setups():
    """(model, source, target) of every covariate-shift setup, in table order (model-major)."""
    return [(m, s, t) for m in covariate_models() for s, t in covariate_pairs()]


def covariate_setup_inputs():
    """Per setup, in covariate_setups() order: the (model, source) cache and the pair's samples."""
    setups = covariate_setups()
    return {
        "lm_outputs": [lm_outputs(m, s) for m, s, _ in setups],
        "samples": [f"{RESULTS}/samples/covariate/{s}__{t}.npz" for _, s, t in setups],
    }


rule lm_encode:
    """cached mode: one eval-mode encoder pass over every split of a domain (head inputs, first-token
    vectors); the frozen backbone is shared by every source, so each domain is encoded once."""
    input:
        train=f"{RESULTS}/text/{{domain}}/train.parquet",
        validation=f"{RESULTS}/text/{{domain}}/validation.parquet",
        test=f"{RESULTS}/text/{{domain}}/test.parquet",
    output:
        f"{RESULTS}/lm/{{model}}/encoded/{{domain}}.npz",
    params:
        model_path=lm_model_path,
        settings=lm_encode_settings(),
    log:
        f"{RESULTS}/logs/lm/{{model}}/encode_{{domain}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/lm/{{model}}/encode_{{domain}}.tsv"
    threads: 2
    resources:
        gpu=1,
        mem_mb=16000,
    script:
        "../scripts/lm_encode.py"


rule lm_finetune:
    """Head-only fine-tuning of one model on one source domain (faithful: Trainer through the whole
    model; cached: the same Trainer on the encoded head inputs), then the cache of logits, hidden states
    and labels of the training subset, validation, source test and every target test."""
    input:
        unpack(lm_finetune_inputs),
    output:
        outputs=f"{RESULTS}/lm/{{model}}/{{source}}/outputs.npz",
        report=f"{RESULTS}/lm/{{model}}/{{source}}/training.json",
        head=f"{RESULTS}/lm/{{model}}/{{source}}/head.safetensors",
    params:
        model_path=lm_model_path,
        settings=lm_settings(),
        targets=lm_targets,
    log:
        f"{RESULTS}/logs/lm/{{model}}/finetune_{{source}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/lm/{{model}}/finetune_{{source}}.tsv"
    threads: 2
    resources:
        gpu=1 if COVARIATE["lm"]["mode"] == "faithful" else 0,
        mem_mb=16000,
    script:
        "../scripts/lm_finetune.py"


rule classifier_accuracy_covariate:
    """Accuracy of each fine-tuned model on its source test set and on every target test set."""
    input:
        [lm_outputs(m, s) for m in covariate_models() for s in covariate_domains()],
    output:
        f"{RESULTS}/tables/classifier_accuracy_covariate.csv",
    params:
        pairs=[[m, s] for m in covariate_models() for s in covariate_domains()],
        domains=covariate_domains(),
    log:
        f"{RESULTS}/logs/tables/classifier_accuracy_covariate.log",
    threads: 1
    resources:
        mem_mb=4000,
    script:
        "../scripts/lm_accuracy.py"
