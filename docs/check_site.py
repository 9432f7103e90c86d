"""Fail when a page of the built site would fetch anything from the network.

    python docs/check_site.py site

`make docs` runs it after ``mkdocs build``. The site must read offline: a script, style sheet, font,
image or frame that a page loads from another host (``https://``, ``http://`` or ``//host``), in an HTML
tag or a style sheet's ``url()`` and ``@import``, is printed with its file, and the exit code is 1.
Links a reader may follow (``<a href="https://...">``) are not fetches and are allowed.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

#: The attributes through which a browser loads something when it shows a page.
FETCHING_ATTRIBUTES = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
}
#: ``<link rel=...>`` kinds that only name a page (no fetch when the page is shown).
NAMING_LINKS = {"canonical", "alternate", "next", "prev", "author", "license", "help", "search"}
_REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
_CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""", re.IGNORECASE)


class _FetchFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        rel = set((values.get("rel") or "").lower().split())
        if tag == "link" and rel and rel <= NAMING_LINKS:
            return
        for attribute in FETCHING_ATTRIBUTES.get(tag, ()):
            value = values.get(attribute) or ""
            if any(_REMOTE.match(part) for part in value.split(",")):
                self.remote.append(f"<{tag} {attribute}={value!r}>")
        self.remote += [f"style url({url})" for url in _remote_css_urls(values.get("style") or "")]


def _remote_css_urls(css: str) -> list[str]:
    return [url for match in _CSS_URL.finditer(css) for url in match.groups() if url and _REMOTE.match(url)]


def remote_fetches(site: Path) -> list[str]:
    """``file: what`` for everything a page of ``site`` would load from another host."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix == ".html":
            finder = _FetchFinder()
            finder.feed(path.read_text(encoding="utf-8"))
            found += [f"{path}: {what}" for what in finder.remote]
        elif path.suffix == ".css":
            found += [f"{path}: url({url})" for url in _remote_css_urls(path.read_text(encoding="utf-8"))]
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print(__doc__, file=sys.stderr)
        return 2
    found = remote_fetches(Path(argv[0]))
    for line in found:
        print(f"fetched from the network: {line}", file=sys.stderr)
    if not found:
        print(f"{argv[0]}: no page loads anything from the network")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
