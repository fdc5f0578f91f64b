"""What web_fetch returns: a page's main content as Markdown, text and JSON as they are, a window of a
long page with the offset to read on, and a clear refusal for what it cannot show."""

from __future__ import annotations

import sys

import pytest

from fakes.web_pages import WebPages
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.web import read_url

LOCAL = ("localhost",)

GUIDE = """<!doctype html><html><head><title>Upgrading the frobnicator</title></head><body>
<div class="cookie">We use cookies. <button>OK</button></div>
<nav><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/blog">Blog</a></nav>
<main><article>
<h1>Upgrading the frobnicator</h1>
<p>Version 7 renames <code>frob()</code> to <code>frobnicate()</code>. Every caller changes, and the
option names change with it, so read each section below before you upgrade anything.</p>
<h2>Callers</h2>
<pre><code>import frob


def main():
    frobnicate(level=3)
</code></pre>
<p>See <a href="/docs/options">the options page</a> for the new names of every option you pass.</p>
<table><tr><th>Old</th><th>New</th></tr><tr><td>lvl</td><td>level</td></tr></table>
</article></main>
<footer>Copyright 2026. <a href="/terms">Terms</a></footer>
</body></html>"""


async def fetched(site: WebPages, path: str, **kwargs: object) -> str:
    return await read_url(site.url(path, "localhost"), redactor=Redactor(), allow_hosts=LOCAL, **kwargs)  # type: ignore[arg-type]


async def test_an_html_page_becomes_its_main_content_in_markdown(site: WebPages) -> None:
    site.page("/guide", GUIDE)
    text = await fetched(site, "/guide")
    assert text.startswith(f"URL: http://localhost:{site.port}/guide\nTitle: Upgrading the frobnicator\n")
    assert "# Upgrading the frobnicator" in text
    assert "## Callers" in text
    assert "```\nimport frob\n\n\ndef main():\n    frobnicate(level=3)\n```" in text  # code kept exactly
    assert f"[the options page](http://localhost:{site.port}/docs/options)" in text  # links made absolute
    assert "| lvl | level |" in text
    assert "Pricing" not in text and "Copyright" not in text and "cookies" not in text


async def test_json_is_shown_indented(site: WebPages) -> None:
    site.page("/api", '{"name":"frob","versions":[6,7]}', content_type="application/json")
    text = await fetched(site, "/api")
    assert '"versions": [\n    6,\n    7\n  ]' in text


async def test_plain_text_is_shown_as_it_is(site: WebPages) -> None:
    site.page("/notes.txt", "line one\n\n\n\nline five  \n", content_type="text/plain; charset=utf-8")
    assert "line one\n\n\n\nline five  " in await fetched(site, "/notes.txt")


async def test_a_page_in_another_charset_is_decoded(site: WebPages) -> None:
    site.page(
        "/latin", "<p>Caf\xe9 cr\xe8me</p>".encode("latin-1"), content_type="text/html; charset=iso-8859-1"
    )
    assert "Café crème" in await fetched(site, "/latin")


@pytest.mark.parametrize("kind", ["application/pdf", "application/octet-stream"])
async def test_other_content_is_refused_in_words(site: WebPages, kind: str) -> None:
    site.page("/file", b"%PDF-1.7\x00\x01binary", content_type=kind)
    with pytest.raises(ToolError, match=f"web_fetch reads web pages, text, JSON and images; .* is {kind}"):
        await fetched(site, "/file")


async def test_an_error_status_is_reported(site: WebPages) -> None:
    with pytest.raises(ToolError, match="answered HTTP 404 Not Found"):
        await fetched(site, "/missing")


async def test_a_long_page_is_cut_with_the_offset_to_read_on(site: WebPages) -> None:
    body = "".join(f"line {n:05d}\n" for n in range(6000))  # 66,000 characters
    site.page("/long.txt", body, content_type="text/plain")
    first = await fetched(site, "/long.txt")
    assert (
        "[Cut: characters 0 to 25,000 of 66,000. Call web_fetch with the same url and offset=25000 for more.]"
        in first
    )
    rest = await fetched(site, "/long.txt", offset=50_000)
    assert "[Characters 50,000 to 66,000 of 66,000: the end of the page.]" in rest
    assert "line 05999" in rest
    assert site.hits == ["/long.txt"]  # read on from the kept page, not fetched again
    with pytest.raises(ToolError, match="offset 70,000 is past the end"):
        await fetched(site, "/long.txt", offset=70_000)


async def test_a_body_over_the_byte_cap_is_cut_and_said(
    site: WebPages, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.modules["shiro_lsp.web.fetch"], "MAX_BYTES", 1000)
    site.page("/big.txt", "x" * 5000, content_type="text/plain")
    text = await fetched(site, "/big.txt")
    assert "\n\n" + "x" * 1000 + "\n\n" in text
    assert "[The page goes on past 1,000 bytes; only that much of it was read.]" in text


async def test_a_page_without_a_stated_charset_is_read_as_utf8_or_by_its_meta(site: WebPages) -> None:
    site.page("/plain", "<title>Guide — part 2</title><p>naïve café</p>".encode(), content_type="text/html")
    site.page(
        "/meta", '<meta charset="iso-8859-1"><p>Gr\xfc\xdfe</p>'.encode("latin-1"), content_type="text/html"
    )
    assert "Title: Guide — part 2" in await fetched(site, "/plain")
    assert "Grüße" in await fetched(site, "/meta")
