"""A fetched page as text a model reads well: HTML to its main content in Markdown, text as it is.

First the page's navigation, header, footer, asides, forms and scripts are dropped. Then the content:
the element the page marks as such (``<main>``, ``role="main"``, its largest ``<article>``: what
documentation sites and blogs mark), else what readability-lxml finds (Mozilla Readability's
algorithm), else, when that lost most of the page (a short listing), the rest of the ``<body>``. Then
markdownify turns it into Markdown. readability-lxml and markdownify were chosen over trafilatura
because code blocks stay byte for byte (trafilatura dropped the blank lines inside a ``<pre>``, which
a migration guide's Python code needs) and they bring half the dependencies; readability runs only
on pages that mark no content, since its clean-up drops small tables.

CPU work on a document of up to a few MB: run it in a thread.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any

MIN_ARTICLE_SHARE = 0.25
"""Below this share of the page's text (without its navigation, header, footer and asides), the
readability pass lost the content (a short listing: it keeps the heading and drops the list), and
that body is converted instead."""
_CHROME = (
    "script",
    "style",
    "noscript",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "iframe",
    "svg",
    "button",
)
_CHROME_ROLES = "//*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='complementary']"


@dataclass(frozen=True)
class Readable:
    text: str
    title: str = ""


def html_to_markdown(document: bytes | str, url: str) -> Readable:
    """The page's main content as Markdown, links made absolute against ``url``."""
    import lxml.html

    try:
        root = lxml.html.document_fromstring(document)
    except ValueError:  # a str with an XML encoding declaration (XHTML), or a page with no content
        if not isinstance(document, str) or not document.strip():
            return Readable("")
        root = lxml.html.document_fromstring(document.encode("utf-8"))
    title = (root.findtext(".//title") or "").strip()
    root.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    for element in [*root.iter(*_CHROME), *root.xpath(_CHROME_ROLES)]:
        if element.getparent() is not None:
            element.drop_tree()
    marked = _marked_content(root)
    if marked is not None:
        return Readable(_tidy(_markdown(lxml.html.tostring(marked, encoding="unicode"))), title)
    body = root.find("body")
    whole = _markdown(lxml.html.tostring(body if body is not None else root, encoding="unicode"))
    article = _article(lxml.html.tostring(root, encoding="unicode"), url)
    chosen = article if len(article.strip()) >= MIN_ARTICLE_SHARE * len(whole.strip()) else whole
    return Readable(_tidy(chosen), title)


def _marked_content(root: Any) -> Any | None:
    """The element the page itself marks as its content: ``<main>`` (or ``role="main"``), else its
    largest ``<article>``; None when it marks none."""
    main = root.xpath("//main | //*[@role='main']")
    if main:
        return main[0]
    articles = root.xpath("//article")
    return max(articles, key=lambda a: len(a.text_content())) if articles else None


def _article(html: str, url: str) -> str:
    from readability import Document  # ~0.2 s to import with its parts: paid on the first such page

    warnings.filterwarnings("ignore", category=FutureWarning, module="readability")  # its own lxml use
    return _markdown(Document(html, url=url).summary(html_partial=True))


def _markdown(html: str) -> str:
    from markdownify import markdownify

    return markdownify(html, heading_style="ATX", bullets="-", strip=["img"])


def _tidy(markdown: str) -> str:
    """Trailing spaces and runs of blank lines dropped, outside code blocks (code stays as it was)."""
    out: list[str] = []
    fenced = False
    for line in markdown.strip("\n").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = line.rstrip()
            if not line and (not out or not out[-1]):
                continue
        out.append(line)
    return "\n".join(out).strip()


def json_text(text: str) -> str:
    """JSON indented for reading (as it came when it does not parse)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text
