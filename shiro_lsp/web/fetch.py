"""One web fetch: a URL to the bytes of its page, safely.

Every hop (the URL, then each redirect, at most :data:`MAX_REDIRECTS`) is checked before anything is
sent: http or https, no credentials in it, no secret in it (the turn's redactor finds none), and the
host RESOLVES to public addresses only (``addresses.py``) unless the user's ``allowHosts`` names it.
The connection then goes to the very address that was checked (the URL's host replaced by it, the
``Host`` header and the TLS server name kept, so the certificate is still checked for the host): a DNS
answer that changes between the check and the connection (rebinding) cannot move it. Redirects are
followed here, one hop at a time, never by the HTTP client.

The client sends no cookies, reads no proxy, ``.netrc`` or other environment (``trust_env=False``),
and keeps no connection from one hop to the next. The body is read as it streams and cut at
:data:`MAX_BYTES`.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.web.addresses import IPAddress, address_kind, host_allowed, parse_address, refusal

if TYPE_CHECKING:
    import httpx2

MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 20.0
TOTAL_TIMEOUT_S = 60.0
USER_AGENT = "Mozilla/5.0 (compatible; Shiro web_fetch)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class Page:
    url: str
    """Where the body came from (after redirects)."""
    status: int
    media_type: str
    """The Content-Type without its parameters, lowercase ('' when the server sent none)."""
    charset: str | None
    body: bytes
    cut: bool = False
    """The body went on past :data:`MAX_BYTES`; what was read is kept."""
    redirects: tuple[str, ...] = field(default=())
    """The URLs that redirected, in order."""


def checked_url(text: str, redactor: Redactor) -> httpx2.URL:
    """``text`` as a URL web_fetch may request, or a ToolError saying why not (nothing is sent)."""
    import httpx2

    try:
        url = httpx2.URL(text.strip())
    except (httpx2.InvalidURL, ValueError, TypeError) as error:
        raise ToolError(f"Not a URL web_fetch can read: {text[:200]} ({error}).") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ToolError(f"web_fetch reads http and https URLs only; got {text[:200]}.")
    if url.userinfo:
        raise ToolError(
            "Refused: the URL carries a user name or password; web_fetch never sends credentials."
        )
    found = redactor.scan(str(url))
    if found.count:
        raise ToolError(
            f"Refused: the URL holds a secret ({', '.join(found.kinds)}); web_fetch never sends one. "
            "Ask the user for a URL without it."
        )
    return url.copy_with(fragment=None)


async def resolve(url: httpx2.URL, allow_hosts: tuple[str, ...]) -> list[IPAddress]:
    """The addresses ``url``'s host resolves to, all public (else a ToolError), or allowed by the user."""
    host = url.host
    literal = parse_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                url.raw_host.decode("ascii"), url.port or _default_port(url), type=socket.SOCK_STREAM
            )
        except (socket.gaierror, UnicodeError) as error:
            raise ToolError(f"Could not find the host {host}: {error}.") from None
        addresses = list(dict.fromkeys(a for info in infos if (a := parse_address(str(info[4][0])))))
    if not addresses:
        raise ToolError(f"Could not find the host {host}.")
    if not host_allowed(host, allow_hosts):
        for address in addresses:
            kind = address_kind(address)
            if kind is not None:
                raise ToolError(refusal(host, address, kind))
    return addresses


def _default_port(url: httpx2.URL) -> int:
    return 443 if url.scheme == "https" else 80


def _pinned(url: httpx2.URL, address: IPAddress) -> tuple[httpx2.URL, dict[str, str], dict[str, str]]:
    """The request to ``address`` for ``url``: its URL, the headers and the TLS server name."""
    host = url.raw_host.decode("ascii")
    authority = host if url.port is None else f"{host}:{url.port}"
    headers = {"Host": authority, "User-Agent": USER_AGENT, "Accept": ACCEPT}
    extensions = {"sni_hostname": host} if url.scheme == "https" else {}
    return url.copy_with(host=str(address)), headers, extensions


async def fetch(
    text: str,
    *,
    redactor: Redactor,
    allow_hosts: tuple[str, ...] = (),
    max_bytes: int | None = None,
) -> Page:
    """GET ``text`` and every redirect after it, each hop checked (see the module's docstring); the
    body is cut at ``max_bytes`` (default :data:`MAX_BYTES`)."""
    try:
        async with asyncio.timeout(TOTAL_TIMEOUT_S):
            return await _fetch(text, redactor, allow_hosts, max_bytes or MAX_BYTES)
    except TimeoutError:
        raise ToolError(f"{text[:200]} did not answer within {TOTAL_TIMEOUT_S:g} s.") from None


async def _fetch(text: str, redactor: Redactor, allow_hosts: tuple[str, ...], max_bytes: int) -> Page:
    url = checked_url(text, redactor)
    redirects: list[str] = []
    while True:
        addresses = await resolve(url, allow_hosts)
        response = await _get(url, addresses, max_bytes)
        location = response.location
        if location is None:
            return Page(
                str(url),
                response.status,
                response.media_type,
                response.charset,
                response.body,
                response.cut,
                tuple(redirects),
            )
        if len(redirects) == MAX_REDIRECTS:
            raise ToolError(f"{text[:200]} redirected more than {MAX_REDIRECTS} times; not followed further.")
        redirects.append(str(url))
        url = checked_url(urljoin(str(url), location), redactor)


@dataclass(frozen=True)
class _Response:
    status: int
    media_type: str
    charset: str | None
    body: bytes
    cut: bool
    location: str | None


async def _get(url: httpx2.URL, addresses: list[IPAddress], max_bytes: int) -> _Response:
    """One hop: the first of ``addresses`` that takes the connection."""
    import httpx2

    timeout = httpx2.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    failure: Exception | None = None
    for address in addresses:
        target, headers, extensions = _pinned(url, address)
        async with httpx2.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False) as client:
            request = client.build_request("GET", target, headers=headers, extensions=extensions)
            try:
                response = await client.send(request, stream=True)
            except httpx2.ConnectError as error:
                failure = error
                continue
            except httpx2.HTTPError as error:
                raise ToolError(f"Fetching {url} failed: {_reason(error)}.") from None
            try:
                return await _read(url, response, max_bytes)
            except httpx2.HTTPError as error:
                raise ToolError(f"Fetching {url} failed while reading: {_reason(error)}.") from None
            finally:
                await response.aclose()
    raise ToolError(f"Could not connect to {url.host}: {_reason(failure)}.")


async def _read(url: httpx2.URL, response: httpx2.Response, max_bytes: int) -> _Response:
    location = response.headers.get("location") if response.status_code in _REDIRECTS else None
    if location is None and response.status_code >= 400:
        raise ToolError(f"{url} answered HTTP {response.status_code} {response.reason_phrase}.")
    media_type, _, params = response.headers.get("content-type", "").partition(";")
    charset = next(
        (
            value.strip().strip("\"'")
            for name, _, value in (p.partition("=") for p in params.split(";"))
            if name.strip().lower() == "charset"
        ),
        None,
    )
    body = bytearray()
    cut = False
    if location is None:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                del body[max_bytes:]
                cut = True
                break
    return _Response(response.status_code, media_type.strip().lower(), charset, bytes(body), cut, location)


def _reason(error: Exception | None) -> str:
    if error is None:
        return "no address"
    text = str(error).strip()
    return text or type(error).__name__
