"""Reading the web for the model: ``web_fetch``'s work, apart from the tool framework.

``fetch.py`` gets a page's bytes (public addresses only, every redirect checked, the connection
pinned to the checked address), ``readable.py`` turns them into text (HTML to Markdown), and
:func:`read_url` puts them together: one page as the model reads it, a window of it at a time, with
a header saying where it came from and a note when there is more. A page is kept for
:data:`CACHE_SECONDS`, so reading on at an offset does not fetch it again.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from dataclasses import dataclass

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.web.fetch import Page, checked_url, fetch
from shiro_lsp.web.readable import Readable, html_to_markdown, json_text

PAGE_CHARS = 25_000
"""Characters of a page one call returns (a tool result carries at most 30,000)."""
CACHE_SECONDS = 15 * 60
CACHE_ENTRIES = 16
_HTML = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_APPLICATIONS = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-yaml"}
)


@dataclass(frozen=True)
class Document:
    url: str
    text: str
    media_type: str
    title: str = ""
    cut: int = 0
    """The bytes read of a page that went on past the limit (0: read whole)."""
    redirects: tuple[str, ...] = ()
    image: bytes | None = None
    """The body of an image URL (``text`` is then empty): shown to a model that takes images."""


_cache: OrderedDict[str, tuple[float, Document]] = OrderedDict()


async def read_url(
    url: str,
    *,
    redactor: Redactor,
    allow_hosts: tuple[str, ...] = (),
    offset: int = 0,
    limit: int = PAGE_CHARS,
) -> str:
    """The page at ``url`` as the model reads it: a header, up to ``limit`` characters from ``offset``,
    and a note saying how to read on when the page is longer."""
    document = await load(url, redactor=redactor, allow_hosts=allow_hosts)
    if document.image is not None:
        raise ToolError(f"{document.url} is an image ({document.media_type}), not text.")
    return shown(document, offset, limit)


async def load(url: str, *, redactor: Redactor, allow_hosts: tuple[str, ...] = ()) -> Document:
    key = str(checked_url(url, redactor))  # a URL with a secret is refused, cached or not
    hit = _cache.get(key)
    if hit is not None and time.monotonic() - hit[0] < CACHE_SECONDS:
        _cache.move_to_end(key)
        return hit[1]
    page = await fetch(url, redactor=redactor, allow_hosts=allow_hosts)
    document = await asyncio.to_thread(readable, page)
    if document.image is not None:
        return document  # not kept: the image store keeps what is shown
    _cache[key] = (time.monotonic(), document)
    while len(_cache) > CACHE_ENTRIES:
        _cache.popitem(last=False)
    return document


def readable(page: Page) -> Document:
    """A fetched page as text; a ToolError for a kind of content web_fetch does not read."""
    kind = page.media_type or _sniffed(page.body)
    if kind.startswith("image/") and not page.cut:
        return Document(page.url, "", kind, "", 0, page.redirects, image=page.body)
    if kind in _HTML:
        found: Readable = html_to_markdown(
            _decoded(page.body, page.charset or _meta_charset(page.body)), page.url
        )
        return Document(page.url, found.text, kind, found.title, _cut(page), page.redirects)
    if kind.startswith("text/") or kind in _TEXT_APPLICATIONS or kind.endswith(("+json", "+xml")):
        text = _decoded(page.body, page.charset)
        if kind == "application/json" or kind.endswith("+json"):
            text = json_text(text)
        return Document(page.url, text, kind, "", _cut(page), page.redirects)
    raise ToolError(
        f"web_fetch reads web pages, text, JSON and images; {page.url} is {kind or 'of no stated type'}"
        f"{' over the size limit' if kind.startswith('image/') else ''}, which it cannot show."
    )


def _cut(page: Page) -> int:
    return len(page.body) if page.cut else 0


def _decoded(body: bytes, charset: str | None) -> str:
    """The body in the charset named, else UTF-8 (the web's default), else Windows-1252."""
    if charset:
        try:
            return body.decode(charset, "replace")
        except LookupError:
            pass
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", "replace")


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _meta_charset(body: bytes) -> str | None:
    found = _META_CHARSET.search(body[:4096])
    return found.group(1).decode("ascii") if found else None


def _sniffed(body: bytes) -> str:
    """The content type of a body sent without one: HTML, text, or unknown ('')."""
    head = body[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if b"\x00" in body[:8192]:
        return ""
    try:
        body[:8192].decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "text/plain"


def shown(document: Document, offset: int, limit: int) -> str:
    """``document`` from ``offset``: where it came from, the text, and how to read on."""
    total = len(document.text)
    if offset and offset >= total:
        raise ToolError(f"{document.url} has {total:,} characters; offset {offset:,} is past the end.")
    end = min(total, offset + limit)
    header = [f"URL: {document.url}"]
    if document.redirects:
        header.append(f"(redirected from {document.redirects[0]})")
    if document.title:
        header.append(f"Title: {document.title}")
    notes = []
    if end < total:
        notes.append(
            f"[Cut: characters {offset:,} to {end:,} of {total:,}. "
            f"Call web_fetch with the same url and offset={end} for more.]"
        )
    elif offset:
        notes.append(f"[Characters {offset:,} to {end:,} of {total:,}: the end of the page.]")
    if document.cut:
        notes.append(f"[The page goes on past {document.cut:,} bytes; only that much of it was read.]")
    body = document.text[offset:end] or "(the page has no text)"
    return "\n".join(header) + "\n\n" + body + ("\n\n" + "\n".join(notes) if notes else "")
