"""Where ``web_fetch`` may connect: public addresses only, unless the user's own settings allow a host.

Judged on the address a host name RESOLVES to (a name such as ``localhost``, ``2130706433`` or a DNS
record pointing at ``10.0.0.5`` is caught the same as the literal), before connecting and at every
redirect. IPv6 forms that carry an IPv4 address (``::ffff:127.0.0.1``, NAT64 ``64:ff9b::/96``, 6to4)
are judged by the IPv4 address inside; Teredo is refused whole. Anything Python's ``ipaddress`` does
not call global is refused: loopback, private, link-local (the cloud metadata address
``169.254.169.254`` among them), unspecified (``0.0.0.0``), shared (``100.64.0.0/10``), multicast,
reserved and documentation ranges.

The user's exception is ``shiro.webFetch.allowHosts`` (a user-only setting, never a workspace's):
hosts listed there may resolve to any address. An entry is a host name (``intranet.example``), a
wildcard for its subdomains (``*.corp.example``) or an IP address (``127.0.0.1``, ``::1``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from fnmatch import fnmatchcase

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
ALLOW_HINT = "The user can allow such a host in the setting shiro.webFetch.allowHosts."


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_kind(address: IPAddress) -> str | None:
    """Why ``address`` is not a public one (``"loopback"``, ``"private"``...), or None when it is."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.teredo is not None:
            return "Teredo tunnel"
        inner = _embedded_ipv4(address)
        if inner is not None:
            return address_kind(inner)
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "non-public"
    return None


def parse_address(text: str) -> IPAddress | None:
    """An IP address written as a host (``[::1]`` included; a zone id is dropped), else None."""
    host = text.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def host_allowed(host: str, allow_hosts: Iterable[str]) -> bool:
    """Whether the user's setting lets ``host`` (lowercase, as in the URL) reach a non-public address."""
    literal = parse_address(host)
    for entry in allow_hosts:
        pattern = entry.strip().lower()
        if not pattern:
            continue
        allowed = parse_address(pattern)
        if literal is not None and allowed is not None:
            if literal == allowed:
                return True
        elif fnmatchcase(host, pattern) or (pattern.startswith("*.") and host == pattern[2:]):
            return True
    return False


def refusal(host: str, address: IPAddress, kind: str) -> str:
    """What the model reads for a host that resolves to a non-public address."""
    what = host if parse_address(host) == address else f"{host} resolves to {address}, which"
    return f"Refused: {what} is a {kind} address; web_fetch reaches public addresses only. {ALLOW_HINT}"
