# The results site (docs/reporting.md, "The results site"): every table and figure of the run as
# pages that open from disk, offline; on unless `site: false`.


def site_tables():
    """[task, shift, methods, method_info, selector] of every table of the run (the site's pages)."""
    return [
        [
            task,
            shift,
            table_methods(shift, task),
            method_info(shift, task),
            selector_on(shift, task),
        ]
        for shift in enabled_shifts()
        for task in TASKS
        if methods_of(shift, task)
    ]


def site_inputs(wildcards):
    """Every file the pages read: the tables' and figures' targets, the per-sample records and
    the reliability statistics, the CD and regime PNGs, and the provenance."""
    files = {"provenance": f"{RESULTS}/provenance.json", "targets": [], "records": []}
    for shift in enabled_shifts():
        for paths in table_targets(shift).values():
            files["targets"] += paths
        for task in TASKS:
            if not methods_of(shift, task):
                continue
            files["records"] += expand(
                f"{RESULTS}/eval/{shift}/{task}/{{method}}.csv",
                method=table_methods(shift, task),
            )
            files["targets"] += [
                f"{RESULTS}/tables/{task}_{shift}_summary.csv",
                f"{RESULTS}/cd/{task}_{shift}.png",
            ]
            if layout(shift) == TWO_CLASS and shift in PAPER_SHIFTS:
                files["targets"].append(f"{RESULTS}/reproduction/{task}_{shift}.csv")
            if task == "calibration":
                files["targets"] += expand(
                    f"{RESULTS}/reliability/{shift}/{{method}}.csv",
                    method=methods_of(shift, task),
                )
    return files


rule site:
    """The static results site: tables (sortable, filterable), CD diagrams, regime maps and the
    Selector, error-by-shift plots, per-method pages with reliability diagrams, provenance.
    """
    input:
        unpack(site_inputs),
    output:
        index=f"{RESULTS}/site/index.html",
    log:
        f"{RESULTS}/logs/site.log",
    conda:
        "../../envs/core.yaml"
    params:
        results=RESULTS,
        tables=site_tables(),
        code=code_version("site.py", registry=True),
    script:
        "../scripts/site.py"
