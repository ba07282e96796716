"""Pages of the results site a browser draws in seconds whatever the run's size (unishift.report.site;
the browser itself is tests/report/test_site.py's): long tables are paged, and the file list links
to the tables instead of holding them all."""

import json
import re

import pandas as pd

from unishift.report.site import PAGED_ABOVE, _files_page, _Site, datatable


def _options(html: str) -> dict:
    """The DataTable's paging options as the page passes them."""
    return {
        key: json.loads(value)
        for key, value in re.findall(r'"(paging|deferRender|pageLength)": ([^,\n]+)', html)
    }


def test_a_table_longer_than_the_limit_is_paged_and_a_short_one_is_not():
    """The default run's regime and Selector tables (600 to 2,400 rows) were unpaged: the browser
    built every row and a page took 45 s at load 12. A limit off by one (>=) would page the
    limit's own length."""
    frame = pd.DataFrame({"method": "M", "error": range(PAGED_ABOVE + 1)})
    assert _options(datatable(frame, "long")) == {
        "paging": True,
        "pageLength": 100,
        "deferRender": True,
    }
    assert _options(datatable(frame.head(PAGED_ABOVE), "short")) == {"paging": False}


def test_the_file_list_links_each_csv_to_the_page_that_shows_it(tmp_path):
    """files.html held every CSV of the run as a table (4.9 MB, some fifty tables: the browser gave
    up after 120 s); now it links to the page that already shows a file whole, or to the file's own
    page."""
    results = tmp_path / "results"
    for folder, name in (
        ("regimes", "cap_label.csv"),
        ("tables", "cap_label.csv"),
        ("cd", "g.csv"),
    ):
        (results / folder).mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"method": ["A", "B"], "x": [1.5, 2.5]}).to_csv(
            results / folder / name, index=False
        )
    site = _Site(results, tmp_path / "site", "t")
    site.csv_table(
        results / "regimes" / "cap_label.csv", "regimes_cap_label", "regimes_cap_label.html"
    )
    _files_page(site)
    listing = site.pages["files.html"]
    assert 'href="regimes_cap_label.html"' in listing
    assert 'href="file_tables_cap_label.html"' in listing and 'href="file_cd_g.html"' in listing
    assert "<table" not in listing  # the list holds links, not tables
    assert "file_regimes_cap_label.html" not in site.pages  # shown whole elsewhere: no second copy
    assert "2.5" in site.pages["file_tables_cap_label.html"]
