"""web_fetch through the language server: asked once per domain, the page reaches the model as Markdown,
and a loopback target is refused before anything is sent (the site runs on 127.0.0.1; the user's
allowHosts names "localhost" only)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from fakes.fake_openai import FakeOpenAI, Step, Text, ToolCall
from fakes.fixtures import options
from fakes.web_pages import WebPages
from lsp_client import ShiroClient, start_server

pytest_plugins = ["fakes.fixtures"]

GUIDE = (
    "<html><head><title>Release notes</title></head><body><nav>Home | Blog</nav><main>"
    "<h1>Release notes</h1><p>The <code>--fast</code> flag is now the default.</p>"
    "<pre><code>tool run --slow\n</code></pre></main></body></html>"
)


@pytest.fixture
def site() -> Iterator[WebPages]:
    pages = WebPages().start()
    pages.page("/notes", GUIDE).page("/more", "<main><p>Second page.</p></main>")
    yield pages
    pages.stop()


@pytest.fixture
def init_options(home: Path, fake: FakeOpenAI) -> dict[str, object]:
    return options(home, fake, approvalTimeoutMs=5000, webFetchAllowHosts=["localhost"])


def tool_messages(fake: FakeOpenAI) -> list[str]:
    return [m["content"] for m in fake.requests[-1]["body"]["messages"] if m["role"] == "tool"]


async def test_a_page_is_read_after_the_domain_is_allowed_once_for_the_session(
    client: ShiroClient, fake: FakeOpenAI, site: WebPages
) -> None:
    client.decisions = ["always"]
    fake.script += [
        Step(ToolCall("web_fetch", {"url": site.url("/notes", "localhost")}, call_id="w1")),
        Step(ToolCall("web_fetch", {"url": site.url("/more", "localhost")}, call_id="w2")),
        Step(Text("The fast flag is the default now.")),
    ]
    result = await client.call("shiro/chat", {"text": "what changed in the release?"})
    assert result["stopReason"] == "done"
    assert len(client.approvals) == 1  # the second page of the same domain did not ask
    approval = client.approvals[0]
    assert approval["toolName"] == "web_fetch" and approval["suggestedPattern"] == "localhost"
    first, second = tool_messages(fake)
    assert "Title: Release notes" in first
    assert "The `--fast` flag is now the default." in first and "```\ntool run --slow\n```" in first
    assert "Home | Blog" not in first
    assert "Second page." in second
    grants = await client.call("shiro/grants")
    assert grants["grants"] == [{"toolName": "web_fetch", "pattern": "localhost", "origin": "native"}]


async def test_a_denied_domain_is_not_fetched(client: ShiroClient, fake: FakeOpenAI, site: WebPages) -> None:
    client.decisions = ["deny"]
    fake.script += [
        Step(ToolCall("web_fetch", {"url": site.url("/notes", "localhost")}, call_id="w1")),
        Step(Text("I could not read it.")),
    ]
    await client.call("shiro/chat", {"text": "read the notes"})
    assert site.hits == []
    assert tool_messages(fake) == ["User denied this tool call."]


async def test_web_fetch_refuses_a_loopback_address_the_user_did_not_allow(
    client: ShiroClient, fake: FakeOpenAI, site: WebPages
) -> None:
    client.decisions = ["once"]
    fake.script += [
        Step(ToolCall("web_fetch", {"url": site.url("/notes", "127.0.0.1")}, call_id="w1")),
        Step(Text("Refused.")),
    ]
    await client.call("shiro/chat", {"text": "read the notes"})
    assert site.hits == []
    (refusal,) = tool_messages(fake)
    assert refusal.startswith("Refused: 127.0.0.1 is a loopback address")
    failed = [e for e in client.events() if e["type"] == "tool-error"]
    assert failed and "loopback" in failed[0]["error"]


async def test_a_url_with_a_secret_is_refused_without_asking(
    client: ShiroClient, fake: FakeOpenAI, site: WebPages
) -> None:
    url = site.url("/notes?token=0123456789abcdef", "localhost")
    fake.script += [Step(ToolCall("web_fetch", {"url": url}, call_id="w1")), Step(Text("ok"))]
    await client.call("shiro/chat", {"text": "read the notes"})
    assert client.approvals == [] and site.hits == []
    (refusal,) = tool_messages(fake)
    assert "holds a secret (URL query secret)" in refusal


async def test_in_a_small_window_a_pasted_url_is_fetched_once_and_shown_like_a_named_file(
    home: Path, fake: FakeOpenAI, site: WebPages, workspace: Path
) -> None:
    small = options(home, fake, approvalTimeoutMs=5000, webFetchAllowHosts=["localhost"], contextWindow=16384)
    client = await start_server(workspace, **small)
    try:
        client.decisions = ["once"]
        fake.script += [Step(Text("The fast flag is the default."))]
        url = site.url("/notes", "localhost")
        await client.call("shiro/chat", {"text": f"Summarise {url}."})
    finally:
        await client.shutdown_session()
    assert [a["toolName"] for a in client.approvals] == ["web_fetch"]
    # the card says Shiro made the call, for the user (issue 34's labels)
    assert client.approvals[0]["input"] == {"url": url} and client.approvals[0]["origin"] == "shiro"
    body = fake.requests[-1]["body"]
    assert "web_fetch" not in [t["function"]["name"] for t in body.get("tools", [])]
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    assert f"{url}\n````markdown\nURL: {url}\nTitle: Release notes" in user  # the page has a fence
    assert "The `--fast` flag is now the default." in user
    assert user.rstrip().endswith(f"Summarise {url}.")
    assert site.hits == ["/notes"]


async def test_an_image_url_is_shown_to_a_model_that_takes_images(
    client: ShiroClient, fake: FakeOpenAI, site: WebPages
) -> None:
    picture = io.BytesIO()
    Image.new("RGB", (24, 12), (0, 0, 255)).save(picture, "PNG")
    site.page("/diagram.png", picture.getvalue(), content_type="image/png")
    client.decisions = ["once"]
    fake.script += [
        Step(ToolCall("web_fetch", {"url": site.url("/diagram.png", "localhost")}, call_id="w1")),
        Step(Text("A blue bar.")),
    ]
    await client.call("shiro/chat", {"text": "what does the diagram show?"})
    messages = fake.requests[-1]["body"]["messages"]
    (result,) = tool_messages(fake)
    assert result.endswith("An image (24x12), shown to you after this result.")
    after = messages[[m["role"] for m in messages].index("tool") + 1]
    assert after["role"] == "user" and after["content"][1]["type"] == "image_url"
