"""The environment a command gets: the server's, minus the provider's keys and anything secret-shaped.

Rules, in order (documented in README "Security"):

1. Names in :data:`ALWAYS_KEPT` (PATH, HOME, LANG, LC_*, TERM, ...) are kept.
2. Names matching :data:`DENIED_NAMES` (``OPENAI_API_KEY``, ``*_API_KEY``, ``*_TOKEN``,
   ``*SECRET*``, ``*PASSWORD*``, ``AWS_SECRET_ACCESS_KEY``...) are dropped.
3. Any variable whose value contains one of the configured keys (the ``apiKey`` given through
   ``initializationOptions`` or settings) is dropped, whatever its name.
4. URL-valued variables (``OPENAI_BASE_URL``, ``HTTPS_PROXY``...) keep the URL without its
   ``user:password@`` part.

Everything else passes: build tools need ``JAVA_HOME``, ``VIRTUAL_ENV``, ``GOPATH`` and the like.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

ALWAYS_KEPT: frozenset[str] = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "TMPDIR",
        "PWD",
        "HOSTNAME",
        "DISPLAY",
        "COLORTERM",
        "EDITOR",
        "VISUAL",
        "XDG_RUNTIME_DIR",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "SSH_AUTH_SOCK",
    }
)
"""Kept whatever the deny list says (``LC_*`` too)."""

DENIED_NAMES: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "SHIRO_API_KEY",
    "ANTHROPIC_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "*_API_KEY",
    "*_APIKEY",
    "*_ACCESS_KEY",
    "*_PRIVATE_KEY",
    "*_TOKEN",
    "*_TOKEN_*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_CREDENTIALS",
    "*_AUTH",
    "NPM_CONFIG__AUTH*",
    "NPM_CONFIG_//*",
)
"""Upper-cased name globs that are never passed to a command."""

_URL_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")


def _denied(name: str) -> bool:
    upper = name.upper()
    return any(fnmatchcase(upper, pattern) for pattern in DENIED_NAMES)


def command_env(
    base: Mapping[str, str], secret_values: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``base`` filtered by the rules above, then ``extra`` (PAGER=cat ...) on top."""
    values = [v for v in secret_values if v]
    env: dict[str, str] = {}
    for name, value in base.items():
        kept = name in ALWAYS_KEPT or name.startswith("LC_")
        if not kept and _denied(name):
            continue
        if any(v in value for v in values):
            continue
        if "://" in value and "@" in value:
            value = _URL_USERINFO.sub("", value)
        env[name] = value
    env.update(extra or {})
    return env
