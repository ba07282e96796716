"""Figures drawn the same way in every process: matplotlib on the Agg backend, each figure inside its
own settings, saved without the metadata that would embed a version or a date (shared by the
report and the regime maps)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# Every figure's own settings, on top of matplotlib's defaults: whatever the process imported
# before (QuaPy's quapy.plot changes the global dpi, size and font when imported, and the job server
# imports QuaPy), a plain process, the job server, conda and SLURM jobs write the same bytes.
FIGURE_SETTINGS = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "figure.figsize": (6.4, 4.8),
    "font.family": ["DejaVu Sans"],  # shipped with matplotlib: the same glyphs everywhere
    "font.size": 10.0,
    "mathtext.fontset": "dejavusans",
}


@contextmanager
def figure_settings():
    """A context in which figures are drawn and saved with :data:`FIGURE_SETTINGS` only; the global
    settings are restored after it."""
    import matplotlib

    pyplot()
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(FIGURE_SETTINGS)
        yield


def save_figure(fig, *paths: str | Path, **options) -> None:
    """Save ``fig`` to each path (format by suffix), then close it. The metadata that would embed a
    version or a date are dropped: Agg output is deterministic for fixed content."""
    for path in map(Path, paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        fixed = ("Software",) if path.suffix == ".png" else ("Creator", "Producer", "CreationDate")
        fig.savefig(path, metadata=dict.fromkeys(fixed), **options)
    pyplot().close(fig)
