"""The documentation site's hooks (mkdocs.yml, ``hooks:``), run by ``mkdocs build``.

- The navigation lists every page of docs/reference/metrics/ (``make docs`` writes one per
  metric file) under its index.
- ``<!-- include: NAME -->`` in a page becomes a table written from the code when the site is
  built (``sqlmetrics.cli.pages.INCLUDES``), so it cannot drift from it.
- A link to a file of the repository outside docs/ (``../bench/README.md``) has no page on the
  site: it becomes the path in code, so that the strict build does not fail on it and the reader
  still knows where to look.
- The maths (``$...$``, ``$$...$$``, which pymdownx.arithmatex marks) becomes MathML when the
  site is built: browsers draw it with no script and nothing fetched.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from latex2mathml.converter import convert

from sqlmetrics.cli.pages import INCLUDES

METRICS = "reference/metrics"
_INCLUDE = re.compile(r"^<!-- include: (?P<name>[a-z-]+) -->$", re.MULTILINE)
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+)\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r'<span class="arithmatex">\\\((?P<tex>.+?)\\\)</span>', re.DOTALL)
_BLOCK = re.compile(r'<div class="arithmatex">\\\[(?P<tex>.+?)\\\]</div>', re.DOTALL)


def on_config(config: Any) -> Any:
    """The navigation's metrics entry becomes the index of the metric pages followed by every
    page of docs/reference/metrics/, so that a new metric needs no line in mkdocs.yml."""
    docs = Path(config["docs_dir"])
    pages = sorted(p.name for p in (docs / METRICS).glob("*.md") if p.name != "index.md")
    config["nav"] = _with_metrics(config["nav"], [f"{METRICS}/{name}" for name in pages])
    return config


def _with_metrics(nav: Any, pages: list[str]) -> Any:
    if isinstance(nav, list):
        return [_with_metrics(entry, pages) for entry in nav]
    if isinstance(nav, dict):
        return {
            title: [f"{METRICS}/index.md", *pages]
            if value == f"{METRICS}/index.md"
            else _with_metrics(value, pages)
            for title, value in nav.items()
        }
    return nav


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    markdown = _INCLUDE.sub(lambda match: _include(match.group("name")), markdown)
    docs = Path(config["docs_dir"]).resolve()
    here = (docs / page.file.src_path).parent
    lines = []
    fenced = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced:
            line = _LINK.sub(lambda match: _outside(match, docs, here), line)
        lines.append(line)
    return "\n".join(lines)


def on_page_content(content: str, page: Any, config: Any, files: Any) -> str:
    content = _BLOCK.sub(lambda match: _mathml(match.group("tex"), "block"), content)
    return _INLINE.sub(lambda match: _mathml(match.group("tex"), "inline"), content)


def _include(name: str) -> str:
    if name not in INCLUDES:
        raise ValueError(f"<!-- include: {name} -->: no such table ({', '.join(INCLUDES)})")
    return INCLUDES[name]()


def _outside(match: re.Match[str], docs: Path, here: Path) -> str:
    """A link whose target is a file of the repository outside docs/, as the path in code."""
    target = match.group("target")
    if re.match(r"^[a-z]+:|^#|^/", target):
        return match.group(0)
    path = (here / target.split("#")[0]).resolve()
    if path.is_relative_to(docs):
        return match.group(0)
    relative = path.relative_to(docs.parent).as_posix()
    text = match.group("text")
    if text.strip("`") in (relative, target, path.name):
        return f"`{relative}`"
    return f"{text} (`{relative}`)"


def _mathml(tex: str, display: str) -> str:
    return str(convert(html.unescape(tex).strip(), display=display))
