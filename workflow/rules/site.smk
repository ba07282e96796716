# The results site (docs/reporting.md, "The results site"): every table and figure of the run as
# pages that open from disk, offline; on unless `site: false`.


rule site:
    """The static results site: tables (sortable, filterable), CD diagrams, regime maps and the
    Selector, error-by-shift plots, per-method pages with reliability diagrams, provenance.
    """
    input:
        unpack(site_inputs),
    output:
        index=results_file("site_index"),
    log:
        f"{RESULTS}/logs/site.log",
    benchmark:
        f"{RESULTS}/benchmarks/site.tsv"
    conda:
        "../../envs/core.yaml"
    params:
        tables=site_tables(),
        code=code_version("site.py", registry=True),
    script:
        "../scripts/site.py"
