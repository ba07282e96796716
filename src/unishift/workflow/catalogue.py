"""``python -m unishift.workflow.catalogue``: every registered method, its parameters and their defaults per
shift and for two classes (what ``method_params`` can override; docs/methods.md).
"""

from __future__ import annotations

from unishift.methods.registry import all_methods


def _per_shift(values: dict) -> str:
    return "; ".join(f"{shift}: {params}" for shift, params in values.items())


def catalogue_markdown() -> str:
    lines = [
        "| task | method | group | shifts | parameters (defaults) | per-shift defaults "
        "| two classes (binary tables) | binary-only |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (task, name), spec in sorted(all_methods().items()):
        params = ", ".join(f"{key}={value!r}" for key, value in spec.defaults.items())
        lines.append(
            f"| {task} | {name} | {spec.group} | {', '.join(spec.shifts)} | {params} "
            f"| {_per_shift(spec.shift_defaults)} | {_per_shift(spec.binary_defaults)} "
            f"| {spec.binary_only} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(catalogue_markdown(), end="")
