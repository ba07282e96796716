"""``results/site/``: a static site of a finished run that opens from disk, offline (docs/reporting.md,
"The results site").

Pages are jinja2 templates (``templates/site/``); tables are DataTables as ITables writes them
(sortable, searchable, with search panes on the classifier, data set and method group), figures are
plotly figures or the run's own PNGs. Neither loads anything from the network: plotly's bundle and
ITables' offline DataTables bundle are written once under ``assets/`` from the installed packages,
and every page loads them with classic ``<script src>`` tags, which a browser runs from ``file://``.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd

from unishift.evaluation.reliability import (
    BANDS,
    _target_order,
    comparable_targets,
    pool,
    read_reliability,
)
from unishift.report.plots import N_BINS, error_by_shift, shift_bins
from unishift.report.summary import run_summary

# Shown numbers: rounded to this many decimals (the test compares them with the CSVs at the same)
DECIMALS = 6
_TEMPLATES = Path(__file__).parent / "templates" / "site"
_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
    autoescape=jinja2.select_autoescape(("html", "j2")),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
# Largest width or height of a figure copied into the site, in pixels
IMAGE_WIDTH = 1400
# Columns of a table page's search panes (when present)
FILTER_COLUMNS = ("classifier", "dataset", "group", "verdict", "model", "source", "target")
# A table of more rows is paged, PAGE_LENGTH rows a page (sorting and searching still see every
# row; the length menu offers them all). A browser builds every row of an unpaged table: the
# default run's regime maps and Selector choices (600 to 2,400 rows of up to 27 columns) made a page
# take 45 s to draw at load 12 on two cores, the file list (every CSV of the run) over 120 s.
PAGED_ABOVE = 300
PAGE_LENGTH = 100


@dataclass
class TableSpec:
    """One (task, shift) table of the run: its methods (table order), name -> (display, group),
    and whether the Selector is one of its columns."""

    task: str
    shift: str
    methods: list[str]
    info: dict[str, tuple[str, str]] = field(default_factory=dict)
    selector: bool = False

    @property
    def key(self) -> str:
        return f"{self.task}_{self.shift}"


# --- building blocks -------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def method_page(task: str, shift: str, method: str) -> str:
    return f"method_{task}_{shift}_{_slug(method)}.html"


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Floats rounded to :data:`DECIMALS` (what the pages show)."""
    floats = frame.select_dtypes("float").columns
    return frame.assign(**{c: frame[c].round(DECIMALS) for c in floats})


def datatable(frame: pd.DataFrame, table_id: str, caption: str = "") -> str:
    """The frame as an ITables DataTable: every row on one page (up to :data:`PAGED_ABOVE` rows),
    sortable columns, a search box, and search panes on the columns of :data:`FILTER_COLUMNS` it
    has."""
    from itables.javascript import (
        check_table_id,
        get_itable_arguments,
        html_table_from_template,
    )
    from itables.typing import DTForITablesOptions, check_itable_arguments

    frame = _rounded(frame.reset_index(drop=True))
    panes = [i for i, c in enumerate(frame.columns) if c in FILTER_COLUMNS]
    options = {}
    if panes:
        options = {
            "layout": {"top1": "searchPanes"},
            "searchPanes": {"columns": panes, "cascadePanes": True, "initCollapsed": True},
        }
    if len(frame) > PAGED_ABOVE:
        options |= {
            "paging": True,
            "pageLength": PAGE_LENGTH,
            "lengthMenu": [
                [PAGE_LENGTH, 10 * PAGE_LENGTH, -1],
                [PAGE_LENGTH, 10 * PAGE_LENGTH, "All"],
            ],
            "deferRender": True,  # rows of the pages not shown are not built
        }
    else:
        options["paging"] = False
    options = dict(
        table_id=check_table_id(table_id, {}, df=frame),
        connected=False,
        maxBytes=0,  # never downsample: the page shows every row
        showIndex=False,
        classes="display compact",
        text_in_header_can_be_selected=False,  # a click anywhere on a header sorts
        **options,
    )
    # itables.to_html_datatable's steps, less its static copy of the table for pages that run no
    # JavaScript (with every row on one page, it would double the site's size)
    arguments = get_itable_arguments(frame, caption or None, **options)
    arguments.pop("display_logo_when_loading", None)
    dt_url, connected = arguments.pop("dt_url"), arguments.pop("connected")
    check_itable_arguments(arguments, DTForITablesOptions)
    return html_table_from_template(
        table_id=options["table_id"],
        dt_url=dt_url,
        connected=connected,
        display_logo_when_loading=False,
        kwargs=arguments,
        fallback_html="",
    )


def _figure_html(figure: dict, div_id: str) -> str:
    """A plotly figure given as its JSON form (data and layout), written without plotly's
    validation and templates: what plotly.js draws, at a fraction of graph_objects' cost."""
    import plotly.io

    return plotly.io.to_html(
        figure,
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        validate=False,
        config={"displaylogo": False, "responsive": True},
    )


def _numbers(values) -> list[float]:
    return [round(float(v), DECIMALS) for v in values]


_AXIS = {"gridcolor": "#e5e5e5", "zeroline": False, "showline": True, "linecolor": "#888"}


def _layout(title: str, height: int = 460, **extra) -> dict:
    return {
        "title": {"text": title},
        "height": height,
        "margin": {"t": 70, "l": 60, "r": 20, "b": 50},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        **extra,
    }


def error_by_shift_figure(records: pd.DataFrame, methods: list[str], task: str, div_id: str):
    """Mean error per shift-intensity bin, one line per method (plots.error_by_shift's points)."""
    points = error_by_shift(records, methods)
    data = []
    for method in methods:
        sel = points[points["method"] == method]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": method,
                "x": _numbers(sel["shift"]),
                "y": _numbers(sel["error"]),
                "customdata": [int(n) for n in sel["n"]],
                "hovertemplate": method + ": %{y:.4g} at %{x:.3f} (%{customdata} samples)",
            }
        )
    layout = _layout(
        "Mean error by level of shift",
        xaxis={**_AXIS, "title": {"text": "level of shift"}, "range": [0, 1]},
        yaxis={**_AXIS, "title": {"text": "ECE" if task == "calibration" else "AE"}},
    )
    return _figure_html({"data": data, "layout": layout}, div_id)


def error_distribution(records: pd.DataFrame, n_bins: int = N_BINS) -> pd.DataFrame:
    """Per shift-intensity bin (plots.shift_bins) of one method's finite errors: count, quartiles,
    whiskers (the most extreme errors within 1.5 IQR of the quartiles), min and max."""
    finite = records[np.isfinite(records["error"].astype(float))]
    bins = shift_bins(finite["shift_intensity"].to_numpy(dtype=float), n_bins)
    rows = []
    for b in range(n_bins):
        errors = np.sort(finite["error"].to_numpy(dtype=float)[bins == b])
        if not len(errors):
            continue
        q1, median, q3 = np.percentile(errors, [25, 50, 75])
        iqr = q3 - q1
        inside = errors[(errors >= q1 - 1.5 * iqr) & (errors <= q3 + 1.5 * iqr)]
        rows.append(
            {
                "bin": b,
                "shift_from": b / n_bins,
                "shift_to": (b + 1) / n_bins,
                "n": len(errors),
                "mean": float(errors.mean()),
                "min": float(errors[0]),
                "lower_whisker": float(inside[0]),
                "q1": float(q1),
                "median": float(median),
                "q3": float(q3),
                "upper_whisker": float(inside[-1]),
                "max": float(errors[-1]),
            }
        )
    return pd.DataFrame(rows)


def error_distribution_figure(stats: pd.DataFrame, task: str, div_id: str) -> str:
    """Box plots of the per-sample errors per bin, drawn from precomputed quartiles (the page
    carries a few numbers per bin, not every sample)."""
    labels = [f"{a:.1f}-{b:.1f}" for a, b in zip(stats["shift_from"], stats["shift_to"])]
    box = {
        "type": "box",
        "name": "per-sample error",
        "x": labels,
        "q1": _numbers(stats["q1"]),
        "median": _numbers(stats["median"]),
        "q3": _numbers(stats["q3"]),
        "lowerfence": _numbers(stats["lower_whisker"]),
        "upperfence": _numbers(stats["upper_whisker"]),
        "mean": _numbers(stats["mean"]),
        "boxpoints": False,
    }
    layout = _layout(
        "Distribution of the per-sample errors by level of shift",
        xaxis={**_AXIS, "title": {"text": "level of shift"}, "type": "category"},
        yaxis={**_AXIS, "title": {"text": "ECE" if task == "calibration" else "AE"}},
    )
    return _figure_html({"data": [box], "layout": layout}, div_id)


def reliability_figure(frame: pd.DataFrame, target: str, div_id: str) -> str:
    """One column per shift band: accuracy per confidence bin (bars) against the diagonal, the
    bins' mean confidence (markers), and below the share of predictions per bin. Band i's diagram
    is on axes 2i+1, its histogram on axes 2i+2."""
    from unishift.evaluation.reliability import N_CONFIDENCE_BINS

    points = pool(frame)
    points = points[points["target"] == target]
    bands = [b for b in BANDS if b in set(points["band"])]
    width = 1 / N_CONFIDENCE_BINS
    data, layout = [], _layout(f"Reliability ({target.replace('_', ' ')})", height=540)
    layout["bargap"] = 0
    layout["annotations"] = []
    for i, band in enumerate(bands):
        sel = points[points["band"] == band]
        top, bottom = 2 * i + 1, 2 * i + 2
        first = i == 0
        centres = _numbers((sel["bin"] + 0.5) * width)
        common = {"showlegend": first}
        data += [
            {
                "type": "bar", "name": "accuracy", "x": centres, "y": _numbers(sel["accuracy"]),
                "width": width, "marker": {"color": "#1f77b4", "line": {"color": "black", "width": 0.5}},
                "xaxis": f"x{top}", "yaxis": f"y{top}", "legendgroup": "accuracy", **common,
            },
            {
                "type": "scatter", "mode": "markers", "name": "mean confidence",
                "x": _numbers(sel["confidence"]), "y": _numbers(sel["accuracy"]),
                "marker": {"color": "#d62728"}, "xaxis": f"x{top}", "yaxis": f"y{top}",
                "legendgroup": "confidence", **common,
            },
            {
                "type": "scatter", "mode": "lines", "name": "perfect calibration", "x": [0, 1],
                "y": [0, 1], "line": {"dash": "dash", "color": "gray"}, "xaxis": f"x{top}",
                "yaxis": f"y{top}", "legendgroup": "diagonal", **common,
            },
            {
                "type": "bar", "name": "share of predictions", "x": centres,
                "y": _numbers(sel["n"] / sel["n"].sum()), "width": width,
                "marker": {"color": "gray"}, "xaxis": f"x{bottom}", "yaxis": f"y{bottom}",
                "legendgroup": "share", **common,
            },
        ]  # fmt: skip
        left, right = i / len(bands) + 0.03, (i + 1) / len(bands) - 0.03
        suffix = "" if top == 1 else str(top)
        layout[f"xaxis{suffix}"] = {**_AXIS, "domain": [left, right], "range": [0, 1],
                                    "anchor": f"y{top}", "matches": f"x{bottom}", "showticklabels": False}  # fmt: skip
        layout[f"yaxis{suffix}"] = {
            **_AXIS,
            "domain": [0.3, 1],
            "range": [0, 1],
            "anchor": f"x{top}",
        }
        layout[f"xaxis{bottom}"] = {**_AXIS, "domain": [left, right], "range": [0, 1],
                                    "anchor": f"y{bottom}", "title": {"text": "confidence"}}  # fmt: skip
        layout[f"yaxis{bottom}"] = {**_AXIS, "domain": [0, 0.22], "anchor": f"x{bottom}"}
        ece = float(sel["ece"].iloc[0])
        layout["annotations"].append(
            {
                "text": f"{band} shift: pooled ECE {ece:.2f}",
                "x": (left + right) / 2,
                "y": 1.02,
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
                "xanchor": "center",
                "yanchor": "bottom",
            }  # fmt: skip
        )
    layout["yaxis"]["title"] = {"text": "accuracy"}
    layout["yaxis2"]["title"] = {"text": "share"}
    return _figure_html({"data": data, "layout": layout}, div_id)


# --- the site --------------------------------------------------------------------------------------


class _Site:
    def __init__(self, results: Path, out: Path, title: str):
        self.results, self.out, self.title = results, out, title
        self.nav: list[tuple[str, str]] = []
        self.pages: dict[str, str] = {}
        # every CSV of the run a page shows whole: the page (the file list links there)
        self.shown: dict[Path, str] = {}

    def csv_table(self, path: Path, table_id: str, page: str) -> str:
        """The whole CSV file as a DataTable on ``page``."""
        self.shown[path] = page
        return datatable(_read_csv(path), table_id)

    def image(self, path: Path) -> str:
        """A figure of the run (results/<folder>/<name>.png) in img/<folder>_<name>.png, at most
        :data:`IMAGE_WIDTH` pixels wide in 256 colours (a regime map's print resolution would
        weigh a megabyte); its path relative to the pages."""
        from PIL import Image

        name = f"{path.parent.name}_{path.name}"
        target = self.out / "img" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with Image.open(path) as image:
            image = image.convert("RGB")
            image.thumbnail((IMAGE_WIDTH, IMAGE_WIDTH), Image.Resampling.LANCZOS, reducing_gap=2.0)
            image.quantize(256).save(target, "PNG", optimize=True)
        return f"img/{name}"

    def page(self, name: str, heading: str, sections: list[dict], intro: str = "") -> None:
        parts = ("text", "links", "image", "figure", "table", "pre")
        sections = [{part: None for part in parts} | section for section in sections]
        self.pages[name] = _ENV.get_template("page.html.j2").render(
            site_title=self.title,
            heading=heading,
            intro=intro,
            sections=sections,
            nav=self.nav,
            has_tables=any(s.get("table") for s in sections),
            has_figures=any(s.get("figure") for s in sections),
        )


def _read_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"method": str, "classifier": str, "dataset": str})


def cells_with_paper(results: Path, spec: TableSpec) -> pd.DataFrame:
    """The cells of a table (tables/<task>_<shift>.csv) with the paper's value and the verdict
    beside each cell the reproduction compares (reproduction/<task>_<shift>.csv), else empty."""
    cells = _read_csv(results / "tables" / f"{spec.key}.csv")
    columns = ["classifier", "dataset", "method", "group", "mean_error", "ci_low", "ci_high"]
    columns += ["n_samples", "n_fallbacks", "n_errors", "below_coverage", "bold"]
    columns += ["best_significantly_better", "degenerate"]
    # the interval and flags of docs/reporting.md §2.7, where the tables job wrote them
    cells = cells[[c for c in columns if c in cells.columns]]
    reproduction = results / "reproduction" / f"{spec.key}.csv"
    if reproduction.is_file():
        paper = _read_csv(reproduction)[["classifier", "dataset", "method", "paper", "verdict"]]
        cells = cells.merge(paper, on=["classifier", "dataset", "method"], how="left")
        cells["verdict"] = cells["verdict"].fillna("")
        # blank, not NaN, where the paper has no such cell
        paper_value = cells["paper"].round(DECIMALS)
        cells["paper"] = paper_value.astype(object).where(paper_value.notna(), "")
    return cells


def _load_eval(results: Path, spec: TableSpec, method: str) -> pd.DataFrame:
    return _read_csv(results / "eval" / spec.shift / spec.task / f"{method}.csv")


def _status_table(records: pd.DataFrame) -> pd.DataFrame:
    counts = (
        records.assign(reason=records["reason"].fillna(""))
        .groupby(["classifier", "dataset", "status", "reason"], sort=False)
        .size()
        .reset_index(name="n_samples")
    )
    return counts


def build_site(
    results: str | Path,
    out: str | Path,
    specs: list[TableSpec],
    title: str = "unishift results",
) -> list[str]:
    """Write the site of the finished run under ``results`` into ``out`` (emptied first); returns
    its pages' names. Every input is a file of the run; nothing is recomputed but the
    per-bin summaries of the per-sample records."""
    from itables.javascript import generate_init_offline_itables_html
    from itables.options import dt_bundle
    from plotly.offline import get_plotlyjs

    results, out = Path(results), Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "assets").mkdir(parents=True)
    (out / "assets" / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")
    # ITables' own offline loader (its first <script>: the DataTables bundle it imports), as a file
    loader = generate_init_offline_itables_html(dt_bundle)
    script = re.search(r"<script>(.*?)</script>", loader, re.S)
    if script is None:
        raise RuntimeError(
            "ITables' offline loader has no <script>: an ITables release this code does not know"
        )
    (out / "assets" / "itables.js").write_text(script.group(1), encoding="utf-8")

    site = _Site(results, out, title)
    site.nav = [("index.html", "Overview")]
    site.nav += [(f"table_{s.key}.html", f"{s.task} / {s.shift}") for s in specs]
    site.nav += [("files.html", "All tables"), ("provenance.html", "Provenance")]

    for spec in specs:
        _table_pages(site, spec)
    _files_page(site)
    _provenance_page(site)
    _index_page(site, specs)
    for name, text in site.pages.items():
        (out / name).write_text(text, encoding="utf-8")
    return sorted(site.pages)


def _table_pages(site: _Site, spec: TableSpec) -> None:
    results, key = site.results, spec.key
    sections = [
        {
            "heading": "Cells: mean error per classifier, data set and method",
            "text": "Sort by a column's header; filter with the search box or the panes. "
            "Where the paper prints a cell, its value and the verdict stand beside ours.",
            "table": datatable(cells_with_paper(results, spec), f"cells_{key}"),
        },
        {
            "heading": "Average ranks and win rates",
            "table": site.csv_table(
                results / "tables" / f"{key}_summary.csv", f"summary_{key}", f"table_{key}.html"
            ),
        },
    ]
    cd = results / "cd" / f"{key}.png"
    if cd.is_file():
        sections.append({"heading": "Critical-difference diagram", "image": site.image(cd)})
    records = pd.concat([_load_eval(results, spec, m) for m in spec.methods], ignore_index=True)
    sections.append(
        {
            "heading": "Error by level of shift",
            "figure": error_by_shift_figure(records, spec.methods, spec.task, f"shift_{key}"),
        }
    )
    regimes = results / "regimes" / f"{key}.png"
    if regimes.is_file():
        sections.append(
            {
                "heading": "Regime map and the Selector",
                "links": [
                    (f"regimes_{key}.html", "which method wins where, and what the Selector chose")
                ],
            }
        )
        _regimes_page(site, spec)
    sections.append(
        {
            "heading": "Methods",
            "links": [(method_page(spec.task, spec.shift, m), m) for m in spec.methods],
        }
    )
    site.page(f"table_{key}.html", f"{spec.task} under {spec.shift} shift", sections)
    for method in spec.methods:
        _method_page(site, spec, method, records[records["method"] == method])


def _regimes_page(site: _Site, spec: TableSpec) -> None:
    results, key = site.results, spec.key
    page = f"regimes_{key}.html"
    sections = [
        {"heading": "Regime map", "image": site.image(results / "regimes" / f"{key}.png")},
        {
            "heading": "Winner per bin of each shift descriptor",
            "table": site.csv_table(results / "regimes" / f"{key}.csv", f"regimes_{key}", page),
        },
    ]
    # compound shift's two-dimensional map (docs/regimes.md §3.1), where the run wrote one
    grid = results / "regimes" / f"{spec.task}_compound_2d"
    if spec.shift == "compound" and grid.with_suffix(".png").is_file():
        sections += [
            {
                "heading": "Label-shift intensity x mixture: the winner per cell",
                "image": site.image(grid.with_suffix(".png")),
            },
            {
                "heading": "Each cell's methods, tests and verdict",
                "table": site.csv_table(grid.with_suffix(".csv"), f"regimes_2d_{key}", page),
            },
        ]
    selection = results / "regimes" / f"{key}_selection.csv"
    if spec.selector and selection.is_file():
        sections.append(
            {
                "heading": "The Selector against BestSingle and the Oracle",
                "text": "BestSingle: the best single method of the other groups; Oracle: the "
                "per-sample best method, an upper bound.",
                "table": site.csv_table(selection, f"selection_{key}", page),
            }
        )
        choices = results / "regimes" / f"{key}_choices.csv"
        if choices.is_file():
            sections.append(
                {
                    "heading": "Which method the Selector chose where",
                    "table": site.csv_table(choices, f"choices_{key}", page),
                }
            )
    site.page(page, f"Regimes: {spec.task} under {spec.shift} shift", sections)


def _method_page(site: _Site, spec: TableSpec, method: str, records: pd.DataFrame) -> None:
    name = method_page(spec.task, spec.shift, method)
    display, group = spec.info.get(method, (method, ""))
    stats = error_distribution(records)
    div = _slug(f"{spec.key}_{method}")
    sections = []
    if len(stats):
        sections.append(
            {
                "heading": "Per-sample errors by level of shift",
                "figure": error_distribution_figure(stats, spec.task, f"errors_{div}"),
                "table": datatable(stats, f"errorbins_{div}"),
            }
        )
    sections.append(
        {
            "heading": "Status of the samples (fallbacks and failures)",
            "table": datatable(_status_table(records), f"status_{div}"),
        }
    )
    reliability = site.results / "reliability" / spec.shift / f"{method}.csv"
    if spec.task == "calibration" and reliability.is_file():
        frame = comparable_targets(read_reliability([reliability]), spec.shift)
        for target in sorted(set(frame["target"]), key=_target_order):
            sections.append(
                {
                    "heading": f"Reliability diagram ({target.replace('_', ' ')}), pooled over the setups",
                    "figure": reliability_figure(frame, target, f"reliability_{div}_{target}"),
                }
            )
        png = site.results / "plots" / f"calibration_{spec.shift}_reliability_{method}.png"
        if png.is_file():
            sections.append(
                {"heading": "Reliability diagrams (PNG of results/plots)", "image": site.image(png)}
            )
    site.page(
        name,
        f"{method} ({spec.task}, {spec.shift} shift)",
        sections,
        intro=f"Group: {group}. Display name in the tables: {display}.",
    )


def _files_page(site: _Site) -> None:
    """Every CSV of the run, linked to the page that shows it whole (a table or regimes page) or to
    a page of its own. One page of every CSV (4.9 MB and some fifty tables for the default run)
    took a browser minutes to draw and doubled the tables the other pages already hold."""
    sections = []
    for folder in ("tables", "reproduction", "regimes", "cd"):
        links = []
        for path in sorted((site.results / folder).glob("*.csv")):
            page = site.shown.get(path)
            if page is None:
                page = _slug(f"file_{folder}_{path.stem}") + ".html"
                site.page(
                    page,
                    f"{folder}/{path.name}",
                    [
                        {
                            "heading": f"results/{folder}/{path.name}",
                            "table": datatable(_read_csv(path), _slug(f"file_{path.stem}")),
                        }
                    ],
                )
            links.append((page, f"{folder}/{path.name}"))
        if links:
            sections.append({"heading": f"{folder}/", "links": links})
    site.page("files.html", "Every table of the run", sections)


def _provenance_page(site: _Site) -> None:
    path = site.results / "provenance.json"
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    sections = []
    for key, value in record.items():
        if (
            isinstance(value, dict)
            and value
            and all(not isinstance(v, (dict, list)) for v in value.values())
        ):
            frame = pd.DataFrame({"name": list(value), "value": [str(v) for v in value.values()]})
            sections.append({"heading": key, "table": datatable(frame, _slug(f"prov_{key}"))})
        else:
            sections.append({"heading": key, "pre": json.dumps(value, indent=2, sort_keys=True)})
    site.page("provenance.html", "Provenance", sections, intro=f"From {path.name}.")


def _index_page(site: _Site, specs: list[TableSpec]) -> None:
    failures = []
    for spec in specs:
        cells = _read_csv(site.results / "tables" / f"{spec.key}.csv")
        totals = cells.groupby("method", sort=False)[["n_samples", "n_fallbacks", "n_errors"]].sum()
        totals = totals[(totals["n_fallbacks"] > 0) | (totals["n_errors"] > 0)].reset_index()
        failures.append(totals.assign(task=spec.task, shift=spec.shift))
    failures = pd.concat(failures, ignore_index=True) if failures else pd.DataFrame()
    summary = run_summary(site.results, [(s.task, s.shift) for s in specs])
    sections = [
        {
            "heading": "Tables",
            "links": [(f"table_{s.key}.html", f"{s.task} under {s.shift} shift") for s in specs],
        },
        {"heading": "Run summary", "pre": summary},
    ]
    if len(failures):
        columns = ["task", "shift", "method", "n_samples", "n_fallbacks", "n_errors"]
        sections.append(
            {
                "heading": "Methods that fell back or failed",
                "table": datatable(failures[columns], "failures"),
            }
        )
    sections.append(
        {
            "heading": "More",
            "links": [
                ("files.html", "every table of the run (CSV files)"),
                ("provenance.html", "provenance: config, versions, code version, CPU kernels"),
            ],
        }
    )
    site.page("index.html", site.title, sections)
