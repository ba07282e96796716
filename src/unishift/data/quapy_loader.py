"""QuaPy without PyTorch, which no method here uses (docs/evaluation-jobs.md, "Start-up"): call
:func:`load_quapy` before the first ``from quapy... import ...`` of a code path."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType


class _HidePyTorch:
    """A meta-path finder that answers "not installed" for PyTorch (without a ``None`` entry in
    ``sys.modules``, which SciPy's array-API helpers would trip over)."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def load_quapy() -> ModuleType:
    """The ``quapy`` module, imported without PyTorch unless PyTorch is loaded already."""
    if "quapy" in sys.modules or "torch" in sys.modules:
        return importlib.import_module("quapy")
    hide = _HidePyTorch()
    sys.meta_path.insert(0, hide)
    try:
        return importlib.import_module("quapy")
    finally:
        sys.meta_path.remove(hide)
