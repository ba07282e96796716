"""The results site of the `.test` run (rule site, docs/reporting.md "The results site"), opened
from disk in headless Chromium (Debian's chromium and chromium-driver, driven by selenium): every
page loads offline without a console error, every figure renders, sorting reorders rows, and the
numbers the pages show are the CSVs'. Set UNISHIFT_SITE_SCREENSHOTS to a folder to keep the
screenshots (docs/site/ holds a few), UNISHIFT_SITE_RESULTS to check another finished run's site."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from unishift.evaluation.reliability import pool, read_reliability
from unishift.report.site import DECIMALS

pytestmark = pytest.mark.workflow
TIMEOUT = 60


def _browser_paths():
    browser = next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip(
            "no Chromium and chromedriver on PATH: install Debian's chromium and chromium-driver "
            "(.ci/run does so where apt-get is available)"
        )
    return browser, driver


@pytest.fixture(scope="module")
def site(request):
    """The `.test` run's results folder; or a finished run's results folder named by
    UNISHIFT_SITE_RESULTS, so that the same checks open another run's site (the default run's:
    docs/reporting.md, "The results site")."""
    other = os.environ.get("UNISHIFT_SITE_RESULTS")
    if other:
        return Path(other)
    work, _ = request.getfixturevalue("finished_test_run")
    return work / "results"


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = _browser_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--no-first-run",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(TIMEOUT)
    yield driver
    driver.quit()


# every table initialised by DataTables and every plotly figure drawn
_READY = """
return Array.from(document.querySelectorAll('div.table')).every(d => d.querySelector('table.dataTable'))
    && Array.from(document.querySelectorAll('div.plotly-graph-div')).every(d => d.querySelector('svg.main-svg'))
"""


def _open(driver, path: Path):
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(path.resolve().as_uri())
    WebDriverWait(driver, TIMEOUT).until(lambda d: d.execute_script(_READY))


def _screenshot(driver, name: str, tmp_path: Path):
    folder = Path(os.environ.get("UNISHIFT_SITE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(folder / name))
    assert (folder / name).stat().st_size > 10_000  # a blank page is smaller


def _rows(driver, table_id: str) -> pd.DataFrame:
    """The rows a DataTable shows, in their order (every row: the site never pages)."""
    data = driver.execute_script(
        """
        const table = document.getElementById(arguments[0]);
        const head = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
        const rows = Array.from(table.querySelectorAll('tbody tr'))
            .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.innerText));
        return [head, rows];
        """,
        table_id,
    )
    head, rows = data
    return pd.DataFrame(rows, columns=head[: len(rows[0])] if rows else head)


def test_site_is_small_and_offline(site):
    folder = site / "site"
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 20 * 2**20
    for page in folder.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert 'src="http' not in text and 'href="http' not in text.replace(
            'href="https://itables.org', ""
        ), page.name


def test_every_page_loads_without_console_errors_and_every_figure_renders(site, browser, tmp_path):
    pages = sorted((site / "site").glob("*.html"))
    # the overview, the tables, regimes, every method of the three tables, files and provenance
    assert len(pages) >= 3 + 3 + 41 + 3
    for page in pages:
        _open(browser, page)
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, f"{page.name}: {errors}"
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth])"
        )
        assert all(width for _, width in images), f"{page.name}: {images}"
        # nothing came from outside the site (file:), ITables' bundle excepted (a blob: it made)
        sources = browser.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert all(s.split(":", 1)[0] in ("file", "blob", "data") for s in sources), sources
    for name in ("index.html", "table_calibration_label.html", "regimes_calibration_label.html",
                 "method_calibration_label_LasCal.html"):  # fmt: skip
        _open(browser, site / "site" / name)
        _screenshot(browser, name.replace(".html", ".png"), tmp_path)


def test_sorting_a_column_reorders_its_rows(site, browser):
    _open(browser, site / "site" / "table_calibration_label.html")
    before = _rows(browser, "cells_calibration_label")
    header = browser.execute_script(
        """return Array.from(document.querySelectorAll('#cells_calibration_label thead th'))
               .find(th => th.innerText.trim() === 'mean_error')""",
    )
    header.click()
    # DataTables sorts in a timeout after the click: wait for the rows to change (the default run's
    # 272 rows at a high load took longer than reading them back right away)
    after = _rows_once_changed(browser, "cells_calibration_label", before)
    values = after["mean_error"].astype(float).to_numpy()
    assert len(after) == len(before)
    assert list(after["mean_error"]) != list(before["mean_error"])
    assert np.all(np.diff(values) >= 0) or np.all(np.diff(values) <= 0)
    header.click()  # the other direction
    again = _rows_once_changed(browser, "cells_calibration_label", after)
    again = again["mean_error"].astype(float).to_numpy()
    assert list(again) == sorted(values, reverse=bool(np.all(np.diff(values) >= 0)))


def _rows_once_changed(driver, table_id: str, before: pd.DataFrame) -> pd.DataFrame:
    """The table's rows once their order differs from ``before`` (or as they are after TIMEOUT s,
    for the caller's assertions to report)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, TIMEOUT).until(lambda d: not _rows(d, table_id).equals(before))
    except TimeoutException:
        pass
    return _rows(driver, table_id)


def test_the_pages_numbers_are_the_csvs(site, browser):
    tables, n_compared = site / "tables", 0
    for task in ("calibration", "quantification", "cap"):
        key = f"{task}_label"
        _open(browser, site / "site" / f"table_{key}.html")
        shown = _rows(browser, f"cells_{key}").set_index(["classifier", "dataset", "method"])
        cells = pd.read_csv(tables / f"{key}.csv").set_index(["classifier", "dataset", "method"])
        assert set(shown.index) == set(cells.index)
        for index, row in cells.iterrows():
            assert float(shown.loc[index, "mean_error"]) == round(row["mean_error"], DECIMALS)
            assert int(shown.loc[index, "n_errors"]) == row["n_errors"]
        paper = pd.read_csv(site / "reproduction" / f"{key}.csv")
        paper = paper.set_index(["classifier", "dataset", "method"])
        compared = paper.index.intersection(shown.index)
        n_compared += len(compared)
        for index in compared:
            assert float(shown.loc[index, "paper"]) == round(paper.loc[index, "paper"], DECIMALS)
            assert shown.loc[index, "verdict"] == paper.loc[index, "verdict"]
        # a cell the paper does not print shows no paper value
        for index in shown.index.difference(compared):
            assert shown.loc[index, "paper"] == "", shown.loc[index, "paper"]
    assert n_compared, "no cell of the paper beside ours"


def test_reliability_figures_show_the_pooled_statistics(site, browser):
    """The plotly diagram's bars are the accuracies pooled from results/reliability, and that file
    counts every item of every scored sample (the run's label_shift.sample_size items a sample, as
    its provenance records the config: 50 in .test, 250 in the default run)."""
    config = json.loads((site / "provenance.json").read_text())["config"]
    sample_size = config["label_shift"]["sample_size"]
    records = pd.read_csv(site / "eval" / "label" / "calibration" / "LasCal.csv")
    frame = read_reliability([site / "reliability" / "label" / "LasCal.csv"])
    scored = records["status"] != "error"
    assert frame.loc[frame["target"] == "top_label", "n"].sum() == sample_size * scored.sum()
    _open(browser, site / "site" / "method_calibration_label_LasCal.html")
    traces = browser.execute_script(
        "return JSON.parse(JSON.stringify("
        "document.getElementById('reliability_calibration_label_LasCal_top_label').data))"
    )
    bars = [t for t in traces if t.get("name") == "accuracy"]
    points = pool(frame)
    bands = [b for b in ("low", "medium", "high") if b in set(points["band"])]
    assert len(bars) == len(bands)
    for trace, band in zip(bars, bands):
        expected = points[(points["band"] == band) & (points["target"] == "top_label")]
        np.testing.assert_allclose(_plotly_values(trace["y"]), expected["accuracy"], atol=1e-6)


def _plotly_values(values):
    """A plotly trace's numbers, whether a list or plotly's typed-array form ({dtype, bdata})."""
    if isinstance(values, dict):
        import base64

        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
    return np.asarray(values, dtype=float)


def test_provenance_page_shows_the_provenance(site, browser):
    record = json.loads((site / "provenance.json").read_text())
    _open(browser, site / "site" / "provenance.html")
    text = browser.find_element("tag name", "main").text
    for key in record:
        assert key in text


def test_site_false_plans_no_site(finished_test_run, tmp_path):
    """The session's run (no targets, `site` at its default) made the site with rule site; the same
    config with ``site: false`` plans everything but the site (one dry run from scratch: the plan
    with the site would only repeat what the shared run did)."""
    from tests.workflow.test_workflow import copy_workflow, snakemake

    made = json.loads(
        (finished_test_run[0] / "results" / "site" / ".index.html.made.json").read_text()
    )
    assert made["rule"] == "site"
    work = copy_workflow(tmp_path / "wf")
    plan = snakemake("-n", "--configfile", ".test/config.yaml", "--config", "site=False", cwd=work)
    assert "rule site:" not in plan.stdout
    assert "rule tables:" in plan.stdout and "rule selector:" in plan.stdout  # a whole plan
