"""QuaPy without PyTorch (docs/evaluation-jobs.md, "Start-up").

QuaPy's package imports its neural quantifiers (QuaNet and its relatives), which import PyTorch:
3 CPU seconds per process, paid by every evaluation job whose method uses any QuaPy quantifier
although none of them touches PyTorch. QuaPy is written to run without PyTorch installed (it then
leaves QuaNet out), so :func:`load_quapy` imports it with PyTorch hidden from that one import. A
process that has already loaded PyTorch gets QuaPy as usual. Nothing QuaPy computes changes: its
aggregative methods and protocols use NumPy, SciPy and scikit-learn only.

Call it before the first ``from quapy... import ...`` of a code path.
"""

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
