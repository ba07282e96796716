"""Screenshots of a finished run's results site for docs/site/ (docs/reporting.md, "The results
site"): the overview, a table page, a regimes and Selector page, and a calibrator's reliability
diagrams, each opened from disk in headless Chromium (Debian's chromium and chromium-driver, as
tests/report/test_site.py) and scrolled to the part shown, saved in 128 colours to stay small.

    .venv/bin/python tools/site_screenshots.py RESULTS_DIR docs/site

RESULTS_DIR is the run's results folder (its site/ is read). The docs' screenshots are of the default
run (config/config.yaml).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

# (file name, page, id of the element scrolled to the top or None, what it shows)
SHOTS = (
    ("index.png", "index.html", None, "the overview"),
    ("table.png", "table_calibration_label.html", None, "the cells with the search panes"),
    (
        "error_by_shift.png",
        "table_calibration_label.html",
        "shift_calibration_label",
        "error by shift",
    ),
    ("regimes.png", "regimes_calibration_label.html", None, "the regime map"),
    (
        "selector.png",
        "regimes_calibration_label.html",
        "selection_calibration_label",
        "the Selector against BestSingle and the Oracle",
    ),
    (
        "reliability.png",
        "method_calibration_label_LasCal.html",
        "reliability_calibration_label_LasCal_top_label",
        "a calibrator's reliability diagrams",
    ),
)
WINDOW = (1400, 900)
TIMEOUT = 120
_READY = """
return Array.from(document.querySelectorAll('div.table')).every(d => d.querySelector('table.dataTable'))
    && Array.from(document.querySelectorAll('div.plotly-graph-div')).every(d => d.querySelector('svg.main-svg'))
"""


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser = next(
        (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
    )
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        raise SystemExit(
            "needs chromium and chromedriver on PATH (Debian: chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WINDOW[0]},{WINDOW[1]}", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(argument)
    chrome = webdriver.Chrome(options=options, service=Service(driver))
    chrome.set_page_load_timeout(TIMEOUT)
    return chrome


def take(site: Path, out: Path) -> list[Path]:
    from PIL import Image
    from selenium.webdriver.support.ui import WebDriverWait

    out.mkdir(parents=True, exist_ok=True)
    chrome, written = _driver(), []
    try:
        for name, page, anchor, _ in SHOTS:
            chrome.get((site / page).resolve().as_uri())
            WebDriverWait(chrome, TIMEOUT).until(lambda d: d.execute_script(_READY))
            if anchor:
                chrome.execute_script(
                    "document.getElementById(arguments[0]).closest('section').scrollIntoView()",
                    anchor,
                )
            with tempfile.TemporaryDirectory() as tmp:
                raw = Path(tmp) / name
                chrome.save_screenshot(str(raw))
                with Image.open(raw) as image:
                    image.convert("RGB").quantize(128).save(out / name, optimize=True)
            written.append(out / name)
    finally:
        chrome.quit()
    return written


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a finished run's results folder")
    parser.add_argument("out", type=Path, help="where the PNGs go (docs/site)")
    args = parser.parse_args(argv)
    for path in take(args.results / "site", args.out):
        print(f"{path} {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
