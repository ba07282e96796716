"""unishift: calibration, quantification and classifier accuracy prediction under dataset shift.

The Python API (:mod:`unishift.api`, docs/api.md) is importable from the package itself:
``from unishift import load_setups, evaluate, table, from_quapy``.
"""

import importlib

__version__ = "0.1.0"

API = (
    "adapt",
    "cd_diagram",
    "evaluate",
    "from_quapy",
    "load_records",
    "load_setups",
    "table",
    "table_tex",
)


def __getattr__(name):
    # Imported on first use, by name, so that the workflow's steps (which import submodules) neither
    # load nor depend on the API's modules (docs/code-version.md).
    if name in API:
        return getattr(importlib.import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*API, "__version__"]
