# One rule per kind of result table, declared once in unishift.report.table_specs (its name, files,
# metric, tasks and shifts, columns, caption): a new kind of table gets its rule from there.
for kind in TABLE_KINDS.values():

    rule:
        name:
            kind.name
        input:
            unpack(table_inputs(kind)),
        output:
            **table_outputs(kind),
        log:
            f"{RESULTS}/logs/tables/{kind.log_stem()}.log",
        conda:
            "../../envs/core.yaml"
        params:
            table=kind.name,
            task=table_param(kind, lambda shift, task, kind: task),
            methods=table_param(kind, table_columns),
            classifiers=table_param(
                kind, lambda shift, task, kind: row_orders(shift)[0]
            ),
            datasets=table_param(kind, lambda shift, task, kind: row_orders(shift)[1]),
            n_samples=table_param(
                kind, lambda shift, task, kind: samples_per_setup(shift)
            ),
            method_info=table_param(
                kind, lambda shift, task, kind: method_info(shift, task)
            ),
            alpha=config["alpha"],
            seed=config["seed"],
            n_bootstrap=config["regimes"]["n_bootstrap"],
            code=code_version("tables.py", registry=True),
        script:
            "../scripts/tables.py"


rule error_by_shift:
    """Mean error per shift-intensity bin for the paper's selection of methods."""
    input:
        lambda wc: eval_files(wc.shift, wc.task),
    output:
        pdf=results_file("error_by_shift_pdf"),
        png=report(
            results_file("error_by_shift_png"),
            caption="../report/err_by_shift.rst",
            category="{task}",
            subcategory="{shift} shift",
        ),
    log:
        f"{RESULTS}/logs/plots/{{task}}_{{shift}}_err_by_shift.log",
    conda:
        "../../envs/core.yaml"
    params:
        methods=lambda wc: methods_of(wc.shift, wc.task),
        classifiers=lambda wc: row_orders(wc.shift)[0],
        datasets=lambda wc: row_orders(wc.shift)[1],
        n_samples=lambda wc: samples_per_setup(wc.shift),
        method_info=lambda wc: method_info(wc.shift, wc.task),
        code=code_version("error_by_shift.py", registry=True),
    script:
        "../scripts/error_by_shift.py"


if RELIABILITY_DIAGRAMS:

    rule reliability:
        """Every calibrator's reliability diagrams: the bin statistics of its evaluation jobs,
        pooled over the task's setups, per shift-intensity band (docs/reporting.md, "Reliability
        diagrams"). One job draws them all: a job per diagram cost more to start than to draw.
        """
        input:
            [file for diagram in RELIABILITY_DIAGRAMS for file in diagram["inputs"]],
        output:
            csv=[diagram["csv"] for diagram in RELIABILITY_DIAGRAMS],
            png=[diagram["png"] for diagram in RELIABILITY_DIAGRAMS],
        log:
            f"{RESULTS}/logs/plots/calibration_reliability.log",
        conda:
            "../../envs/core.yaml"
        params:
            diagrams=RELIABILITY_DIAGRAMS,
            code=code_version("reliability.py", registry=True),
        script:
            "../scripts/reliability.py"


rule reproduction:
    """Our cells, ranks and win rates beside the paper's, with a verdict per cell."""
    input:
        cells=results_file("table_cells"),
        summary=results_file("table_summary"),
    output:
        csv=results_file("reproduction_csv"),
        md=report(
            results_file("reproduction_md"),
            caption="../report/reproduction.rst",
            category="reproduction",
        ),
    log:
        f"{RESULTS}/logs/reproduction/{{task}}_{{shift}}.log",
    conda:
        "../../envs/core.yaml"
    params:
        caveat=lambda wc: reproduction_caveat(config, PAPER_CONFIG, wc.shift),
        code=code_version("reproduction.py", registry=True),
    script:
        "../scripts/reproduction.py"


rule accuracy_appendix:
    """The classifier-accuracy appendix table and its comparison with the paper's."""
    input:
        results_file("accuracy_cells"),
    output:
        tex=results_file("accuracy_tex"),
        csv=results_file("accuracy_reproduction"),
    log:
        f"{RESULTS}/logs/tables/classifier_accuracy_{{shift}}_tex.log",
    conda:
        "../../envs/core.yaml"
    params:
        code=code_version("accuracy_appendix.py"),
    script:
        "../scripts/accuracy_appendix.py"


rule report_pdf:
    """Every table, CD diagram and figure in one document (needs pdflatex)."""
    input:
        tables=report_pdf_inputs("tables"),
        cd=report_pdf_inputs("cd"),
        figures=report_pdf_inputs("figures"),
        regimes=report_pdf_inputs("regimes"),
        regime_figures=report_pdf_inputs("regime_figures"),
        appendix=report_pdf_inputs("appendix"),
        reliability=report_pdf_inputs("reliability"),
    output:
        results_file("report_pdf"),
    log:
        f"{RESULTS}/logs/report_pdf.log",
    conda:
        "../../envs/core.yaml"
    params:
        code=code_version("report_pdf.py", registry=True),
    script:
        "../scripts/report_pdf.py"


rule provenance:
    """The config (and its hash), seeds, package versions, git commit, lock file, resolved hub
    commits and GPUs that produced these results."""
    input:
        unpack(provenance_inputs),
    output:
        report(
            results_file("provenance"),
            caption="../report/provenance.rst",
            category="provenance",
        ),
    log:
        f"{RESULTS}/logs/provenance.log",
    conda:
        "../../envs/core.yaml"
    params:
        # the hash, not the config: a changed config re-runs the job without printing itself
        config_sha256=config_hash(config),
        code=library_version(),
        # relative to the working directory, so that a moved or copied run is not re-planned
        repository=os.path.relpath(REPOSITORY),
        lock_file=os.path.relpath(f"{REPOSITORY}/requirements.lock"),
    script:
        "../scripts/provenance.py"
