"""``python -m unishift.catalogue``: every registered method, its parameters and per-shift defaults.

This is the reference for the ``method_params`` config key: any constructor argument listed here can
be overridden per method, e.g. ``method_params: {"calibration/DMCal": {"n_bins": 10}}``.
"""

from __future__ import annotations

import inspect

from unishift.registry import all_methods


def catalogue_markdown() -> str:
    lines = ["| task | method | group | shifts | parameters (defaults) | per-shift defaults |"]
    lines.append("|---|---|---|---|---|---|")
    for (task, name), spec in sorted(all_methods().items()):
        signature = inspect.signature(spec.factory)
        params = ", ".join(
            f"{p.name}={spec.defaults.get(p.name, p.default)!r}"
            for p in signature.parameters.values()
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"
        )
        per_shift = "; ".join(f"{s}: {d}" for s, d in spec.shift_defaults.items())
        lines.append(
            f"| {task} | {name} | {spec.group} | {', '.join(spec.shifts)} | {params} | {per_shift} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(catalogue_markdown(), end="")
