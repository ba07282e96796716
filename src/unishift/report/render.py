"""Jinja2 environment for LaTeX templates; delimiters that cannot collide with TeX's braces and %."""

from __future__ import annotations

from pathlib import Path

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
    block_start_string="<%",
    block_end_string="%>",
    variable_start_string="<<",
    variable_end_string=">>",
    comment_start_string="<#",
    comment_end_string="#>",
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
    autoescape=False,
)


def render_template(name: str, **context) -> str:
    return _ENV.get_template(name).render(**context)
