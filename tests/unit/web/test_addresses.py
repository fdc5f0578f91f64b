"""Which addresses web_fetch may connect to, and the user's allowHosts exception."""

from __future__ import annotations

import ipaddress

import pytest

from shiro_lsp.web.addresses import address_kind, host_allowed, parse_address


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.5.6.7", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped: judged by the IPv4 address inside
        ("64:ff9b::7f00:1", "loopback"),  # NAT64
        ("2002:7f00:1::", "loopback"),  # 6to4
        ("10.1.2.3", "private"),
        ("172.16.0.9", "private"),
        ("192.168.1.1", "private"),
        ("::ffff:10.0.0.1", "private"),
        ("fd00::5", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata
        ("fe80::1", "link-local"),
        ("::ffff:169.254.169.254", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "non-public"),  # shared address space (carrier-grade NAT)
        ("224.0.0.1", "multicast"),
        ("2001::1", "Teredo tunnel"),
    ],
)
def test_non_public_addresses_are_named(text: str, kind: str) -> None:
    assert address_kind(ipaddress.ip_address(text)) == kind


@pytest.mark.parametrize("text", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8"])
def test_public_addresses_pass(text: str) -> None:
    assert address_kind(ipaddress.ip_address(text)) is None


def test_a_bracketed_ipv6_host_with_a_zone_is_read() -> None:
    assert parse_address("[fe80::1%eth0]") == ipaddress.ip_address("fe80::1")
    assert parse_address("example.com") is None


@pytest.mark.parametrize(
    ("host", "entries", "allowed"),
    [
        ("localhost", ["localhost"], True),
        ("127.0.0.1", ["localhost"], False),  # a name allows that name, not the address it has
        ("127.0.0.1", ["127.0.0.1"], True),
        ("::1", ["[::1]"], True),
        ("wiki.corp.example", ["*.corp.example"], True),
        ("corp.example", ["*.corp.example"], True),
        ("corp.example.evil", ["*.corp.example"], False),
        ("intranet", [" Intranet "], True),
        ("intranet", [], False),
    ],
)
def test_allow_hosts(host: str, entries: list[str], allowed: bool) -> None:
    assert host_allowed(host, entries) is allowed
