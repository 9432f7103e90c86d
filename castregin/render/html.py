"""The Jinja2 environment of castregin's HTML pages (the report, the judging pages, the MTurk HIT): the templates
of ``render/templates``, escaped, strict about undefined variables. jinja2 is imported on first use."""

from __future__ import annotations

import functools


@functools.cache
def environment():
    """The one environment, made once."""
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
                              keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
