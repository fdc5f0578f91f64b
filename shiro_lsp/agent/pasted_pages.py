"""Web pages the user pastes, for a model whose window cannot take web_fetch's results.

A small window is not offered web_fetch (one result would fill it). There, the URLs in the user's
message are fetched once, when the turn starts, as calls Shiro makes for the user (the same domain
approval, refusals and tool card as the model's own call), and each page is shown with the turn's
workspace view like a file the message names: the URL, then the page in a fence, cut to a share of
the window.
"""

from __future__ import annotations

import json
import re
import uuid

from shiro_lsp.agent.tool_calls import ToolCallRunner, succeeded
from shiro_lsp.providers.types import ToolCallReady
from shiro_lsp.providers.wire import tool_output_text

MAX_PASTED_PAGES = 2
_URL = re.compile(r"https?://[^\s<>\"'`]+")
_TRAILING = ".,;:!?)]}'\""
_READ_ON = re.compile(r"\n\n\[(?:Cut|Characters|The page goes on)[^\n]*\](?:\n\[[^\n]*\])*\Z")
CUT_NOTE = "(cut here; the rest of the page is not shown)"


def pasted_urls(text: str) -> list[str]:
    """The http(s) URLs in ``text``, in order, without the punctuation that ends a sentence."""
    found: list[str] = []
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(_TRAILING)
        if url not in found:
            found.append(url)
    return found[:MAX_PASTED_PAGES]


def pages_budget(context_window: int) -> int:
    """Characters of pasted pages a window shows, all pages together: a quarter of the window's
    tokens (a 16k window: 4,096 characters, about 1,200 tokens)."""
    return max(1_000, context_window // 4)


async def pasted_pages(runner: ToolCallRunner, text: str, budget: int) -> str:
    """The pages of the URLs in ``text``, fetched through ``runner`` (approvals and all), as blocks
    for the workspace view ('' when there are none or none could be read)."""
    urls = pasted_urls(text)
    blocks: list[str] = []
    for position, url in enumerate(urls):
        call = ToolCallReady(f"call_shiro_{uuid.uuid4().hex[:16]}", "web_fetch", json.dumps({"url": url}))
        runner.made_for_the_user(call.call_id)
        results = await runner.run([call])
        if results and succeeded(results[0]):
            share = (budget - sum(map(len, blocks))) // (len(urls) - position)
            blocks.append(page_block(url, tool_output_text(results[0]), share))
    return "\n\n".join(blocks)


def page_block(url: str, page: str, budget: int) -> str:
    """A page as the view shows it: the URL, the page in a fence (cut at ``budget`` characters)."""
    body = _READ_ON.sub("", page)
    cut = body != page or len(body) > budget
    if len(body) > budget:
        body = body[: body.rfind("\n", 0, budget) + 1 or budget]
    fence = "````" if "```" in body else "```"
    note = f"\n{CUT_NOTE}" if cut else ""
    return f"{url}\n{fence}markdown\n{body.rstrip()}\n{fence}{note}"
