"""web_fetch refuses loopback, private and link-local targets, and redirects to them: judged on the
address a host resolves to, before anything is sent. The site on 127.0.0.1 is reached only where the
user's allowHosts names it."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from fakes.web_pages import WebPages
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.web import read_url

REDACTOR = Redactor()


async def refused(url: str, allow_hosts: tuple[str, ...] = ()) -> str:
    with pytest.raises(ToolError) as raised:
        await read_url(url, redactor=REDACTOR, allow_hosts=allow_hosts)
    return raised.value.message


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "[::1]", "[::ffff:127.0.0.1]", "2130706433", "127.1"],
)
async def test_web_fetch_refuses_loopback(site: WebPages, host: str) -> None:
    site.page("/", "<p>local</p>")
    message = await refused(f"http://{host}:{site.port}/")
    assert "loopback address" in message
    assert "shiro.webFetch.allowHosts" in message
    assert site.hits == []  # refused before connecting


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.0.10", "172.16.5.4", "[fd12::1]", "[::ffff:10.1.1.1]"])
async def test_web_fetch_refuses_private(host: str) -> None:
    assert "private address" in await refused(f"http://{host}/")


@pytest.mark.parametrize("host", ["169.254.169.254", "[fe80::1]", "[::ffff:169.254.169.254]"])
async def test_web_fetch_refuses_link_local(host: str) -> None:
    assert "link-local address" in await refused(f"http://{host}/latest/meta-data/")


@pytest.mark.parametrize("host", ["0.0.0.0", "[::]"])
async def test_web_fetch_refuses_unspecified(site: WebPages, host: str) -> None:
    assert "unspecified address" in await refused(f"http://{host}:{site.port}/")
    assert site.hits == []


async def test_web_fetch_reaches_a_local_host_the_user_allows(site: WebPages) -> None:
    site.page(
        "/guide", "<html><head><title>Local guide</title></head><body><p>Served here.</p></body></html>"
    )
    text = await read_url(site.url("/guide", "localhost"), redactor=REDACTOR, allow_hosts=("localhost",))
    assert "Served here." in text
    assert site.hits == ["/guide"]


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("http://127.0.0.1:{port}/inner", "loopback"),
        ("http://10.0.0.1/inner", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::ffff:127.0.0.1]:{port}/inner", "loopback"),
    ],
)
async def test_web_fetch_refuses_redirects_to_loopback_private_and_link_local(
    site: WebPages, target: str, kind: str
) -> None:
    site.page("/inner", "<p>secret internal page</p>")
    site.redirect("/hop", target.format(port=site.port))
    message = await refused(site.url("/hop", "localhost"), allow_hosts=("localhost",))
    assert f"{kind} address" in message
    assert site.hits == ["/hop"]  # the redirect target was never requested


async def test_a_redirect_within_the_allowed_host_is_followed(site: WebPages) -> None:
    site.page("/new", "<p>moved here</p>")
    site.redirect("/old", "/new", status=301)
    text = await read_url(site.url("/old", "localhost"), redactor=REDACTOR, allow_hosts=("localhost",))
    assert "moved here" in text
    assert "(redirected from http://localhost:" in text
    assert site.hits == ["/old", "/new"]


async def test_redirects_end_after_five_hops(site: WebPages) -> None:
    site.redirect("/loop", "/loop")
    message = await refused(site.url("/loop", "localhost"), allow_hosts=("localhost",))
    assert "redirected more than 5 times" in message
    assert len(site.hits) == 6


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:{port}/?token=abcdef0123456789",
        "http://localhost:{port}/?api_key=abcdef0123456789",
        "http://localhost:{port}/ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "http://localhost:{port}/sk-configuredvalue12345",
    ],
)
async def test_a_url_holding_a_secret_is_refused_and_never_sent(site: WebPages, url: str) -> None:
    redactor = Redactor.of(["sk-configuredvalue12345"])
    with pytest.raises(ToolError, match="holds a secret"):
        await read_url(url.format(port=site.port), redactor=redactor, allow_hosts=("localhost",))
    assert site.hits == []


async def test_a_redirect_to_a_url_holding_a_secret_is_not_followed(site: WebPages) -> None:
    site.redirect("/hop", "/next?access_token=abcdef0123456789")
    message = await refused(site.url("/hop", "localhost"), allow_hosts=("localhost",))
    assert "holds a secret" in message
    assert site.hits == ["/hop"]


async def test_credentials_in_the_url_are_refused(site: WebPages) -> None:
    assert "user name or password" in await refused(f"http://me:pw@localhost:{site.port}/", ("localhost",))
    assert site.hits == []


async def test_the_connection_goes_to_the_address_that_was_checked(
    site: WebPages, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name is resolved once per hop, by the check, and the connection is made to
    that address (the name below exists nowhere: a second lookup by the HTTP client would fail)."""
    site.page("/", "<p>pinned</p>")
    lookups: list[str] = []
    loop = asyncio.get_running_loop()

    async def fake_getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(loop, "getaddrinfo", fake_getaddrinfo)
    text = await read_url(
        f"http://rebind.invalid:{site.port}/", redactor=REDACTOR, allow_hosts=("rebind.invalid",)
    )
    assert "pinned" in text
    assert lookups == ["rebind.invalid"]
    assert site.headers_seen[0]["host"] == f"rebind.invalid:{site.port}"


async def test_a_name_that_resolves_to_a_private_address_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()

    async def fake_getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port)),
        ]

    monkeypatch.setattr(loop, "getaddrinfo", fake_getaddrinfo)
    message = await refused("https://mixed.invalid/")
    assert "mixed.invalid resolves to 10.0.0.7, which is a private address" in message


@pytest.mark.parametrize("url", ["ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)"])
async def test_other_schemes_are_refused(url: str) -> None:
    assert "http and https" in await refused(url)
