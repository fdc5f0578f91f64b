"""web_fetch: a URL to readable text (the work is in ``shiro_lsp/web/``).

Its permission subject is the URL's host, so a rule or an ``always`` answer names a domain
(``docs.python.org``, ``*.github.com``): the user is asked once per new domain. A URL that holds a
secret is refused before anyone is asked (``screen``), and again in the tool itself.
"""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from shiro_lsp.errors import ShiroError, ToolError
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.tools.base import JsonObject, ToolContext, ToolInput, ToolSpec, typed_tool
from shiro_lsp.web import PAGE_CHARS, load, shown
from shiro_lsp.web.fetch import checked_url


class WebFetchInput(ToolInput):
    url: str
    offset: int = Field(0, ge=0)  # a cut page's closing note gives the offset to read on

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        host_of(value)  # a URL with no host or another scheme is a bad input, never a question
        return value


def host_of(url: str) -> str:
    """The URL's host as it is connected to: lowercase, an international name in its ASCII form."""
    import httpx2

    try:
        parsed = httpx2.URL(url.strip())
    except (httpx2.InvalidURL, ValueError, TypeError) as error:
        raise ValueError(f"not a URL ({error})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError("an http or https URL is needed")
    return parsed.raw_host.decode("ascii").lower()


def host_subject(input: JsonObject) -> list[str]:
    url = input.get("url")
    if not isinstance(url, str):
        return []
    try:
        return [host_of(url)]
    except ValueError:
        return []


def host_grant(input: JsonObject) -> str:
    """An ``always`` answer covers the domain of the call, nothing wider."""
    return next(iter(host_subject(input)), "*")


def secret_in_url(input: JsonObject, redactor: Redactor) -> str | None:
    url = input.get("url")
    if not isinstance(url, str):
        return None
    try:
        checked_url(url, redactor)
    except ToolError as error:
        return error.message
    return None


async def web_fetch(input: WebFetchInput, ctx: ToolContext) -> str:
    document = await load(input.url, redactor=ctx.redactor, allow_hosts=ctx.web_allow_hosts)
    if document.image is None:
        return shown(document, input.offset, PAGE_CHARS)
    if ctx.images is None:
        raise ToolError(f"{document.url} is an image ({document.media_type}); this model cannot see images.")
    name = PurePosixPath(urlsplit(document.url).path).name or "image"
    try:
        kept = await asyncio.to_thread(ctx.images.add, document.image, name)
    except ShiroError as error:
        raise ToolError(error.message) from None
    ctx.shown_images.append(kept)
    return f"URL: {document.url}\n\nAn image ({kept.width}x{kept.height}), shown to you after this result."


WEB_FETCH = typed_tool(
    ToolSpec(
        name="web_fetch",
        description="Read a web page as Markdown. A long page ends with the offset to read on.",
        input_model=WebFetchInput,
        subject=host_subject,
        plan_safe=True,
        grant=host_grant,
        screen=secret_in_url,
        prompt_hint="read a web page.",
    ),
    WebFetchInput,
    web_fetch,
)
