"""The one secrets policy: which files never reach the model, and what is cut out of tool output.

Two halves, one home:

- **Secrets files** (:func:`is_secret_path`): judged on the path a tool actually touches (the
  resolved, workspace-relative path) and on the path the model gave, case-insensitively and after
  Unicode NFKC folding, by basename and by trailing components (``.aws/credentials``). Reading
  tools refuse them in words (:func:`refusal`), ``grep`` skips them and says how many, ``glob``
  lists their names flagged, never their contents.
- **Secret values in text** (:class:`Redactor`): tool output (bash, git, MCP results, anything) is
  scanned for known key formats and for the exact values of the configured provider keys, and each
  hit is replaced by ``[redacted <kind>]`` before the output reaches the model, the saved session
  file or an export.

What this cannot do: ``bash`` runs arbitrary programs, so a command can transform a secret (base64,
reverse it, split it) before printing it; only formats and exact values are recognised. The bash
environment is scrubbed of provider keys (:mod:`shiro_lsp.tools.environment`) and commands
that visibly name a secrets file ask first (:func:`command_reads_secrets`).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

SECRET_NAME_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.env.*",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*_rsa",
    "*_ed25519",
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    "credentials.json",
    "client_secret*.json",
    "service-account*.json",
    "secrets.yaml",
    "secrets.yml",
    "secrets.json",
    "secrets.toml",
    ".secrets",
    "*.tfvars",
    "terraform.tfstate",
    "terraform.tfstate.*",
)
"""Basename globs (matched case-insensitively after NFKC folding)."""

SECRET_PATH_SUFFIXES: tuple[str, ...] = (
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    ".ssh/*",
    ".gnupg/*",
    ".config/gh/hosts.yml",
    ".config/gcloud/*",
    ".azure/*",
)
"""Trailing path components (``.ssh/*`` = anything directly in a ``.ssh`` directory)."""

NOT_SECRET_PATTERNS: tuple[str, ...] = (
    "*.env.example",
    "*.env.sample",
    "*.env.template",
    ".env.example",
    ".env.sample",
    ".env.template",
    "*.pub",
    "known_hosts",
    "authorized_keys",
)
"""Basenames that look like secrets but are meant to be shared (public keys, templates)."""


SECRET_FILE_PATTERNS: tuple[str, ...] = (
    "*.env",
    "*.env.*",
    "*.envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*id_rsa",
    "*id_dsa",
    "*id_ecdsa",
    "*id_ed25519",
    "*.git-credentials",
    "*.netrc",
    "*.npmrc",
    "*.pypirc",
    "*credentials.json",
    "*secrets.yaml",
    "*secrets.yml",
    "*secrets.json",
    "*.aws/credentials",
    "*.docker/config.json",
    "*.kube/config",
)
"""The default permission-rule globs (``read_file``: deny) derived from this policy; the tools
themselves apply :func:`is_secret_path`, which is wider and case-insensitive, whatever the rules."""

SECRET_FILE_EXCEPTIONS: tuple[str, ...] = ("*.env.example",)


def fold(text: str) -> str:
    """The form names are compared in: NFKC (full-width and compatibility forms), then casefold."""
    return unicodedata.normalize("NFKC", text).casefold()


def _parts(path: str) -> list[str]:
    clean = fold(path.replace("\\", "/"))
    return [p for p in clean.split("/") if p and p != "."]


def is_secret_path(*paths: str) -> bool:
    """True when any of ``paths`` (the given and the resolved form, posix or absolute) is a secrets file."""
    return any(_is_secret_one(p) for p in paths if p)


@functools.lru_cache(maxsize=8192)
def is_secret_file(path: str) -> bool:
    """:func:`is_secret_path` of one path, remembered (the patterns are fixed): asked per diff card
    and per file a bash checkpoint records."""
    return is_secret_path(path)


def _is_secret_one(path: str) -> bool:
    parts = _parts(path)
    if not parts:
        return False
    name = parts[-1]
    if any(fnmatchcase(name, p) for p in NOT_SECRET_PATTERNS):
        return False
    if any(fnmatchcase(name, p) for p in SECRET_NAME_PATTERNS):
        return True
    for suffix in SECRET_PATH_SUFFIXES:
        depth = suffix.count("/") + 1
        tail = "/".join(parts[-depth:])
        if len(parts) >= depth and fnmatchcase(tail, suffix):
            return True
    return False


def git_exclusions(root: Path | None = None) -> list[str]:
    """Pathspecs that leave secrets files (any case) and, with the repository's real ``root``,
    the state root (:func:`keep_private`) out of git's output."""
    names = [p for p in SECRET_NAME_PATTERNS]
    suffixes = [p for p in SECRET_PATH_SUFFIXES]
    private = private_within(root) if root is not None else []
    return [
        *(f":(exclude,icase,glob)**/{p}" for p in (*names, *suffixes)),
        *(f":(exclude,literal){p}" for p in private),
    ]


def refusal(path: str) -> str:
    """What the model reads when it asks for a secrets file."""
    return (
        f"{path} is a secrets file; Shiro never sends its contents to the model. "
        "Ask the user for the specific value you need (or for a redacted example) instead."
    )


def flag(rel: str) -> str:
    """A secrets file's name as listings show it (the name only, never its contents)."""
    return f"{rel}  [secrets file: contents never sent to the model]"


def skipped_note(names: list[str]) -> str:
    """grep's closing line about the secrets files it did not search."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    noun = "file was" if len(names) == 1 else "files were"
    return (
        f"[{len(names)} secrets {noun} skipped ({shown}): Shiro never searches or sends the "
        "contents of secrets files to the model]"
    )


# --- bash commands that name a secrets file ---------------------------------------------------

_WORD_SPLIT = re.compile(r"[\s;&|()<>`'\"=:,]+")


def command_reads_secrets(command: str) -> list[str]:
    """The secrets files a shell command visibly names (``cat .env``, ``source .envrc`` ...)."""
    try:
        words = shlex.split(command, comments=False, posix=True)
    except ValueError:
        words = []
    words += _WORD_SPLIT.split(command)
    found: list[str] = []
    for word in words:
        word = word.strip()
        if not word or (word.startswith("-") and "=" not in word):
            continue
        if word.startswith("--") and "=" in word:
            word = word.split("=", 1)[1]
        if is_secret_path(word) and word not in found:
            found.append(word)
    return found


def secrets_warning(files: list[str]) -> str:
    shown = ", ".join(files[:3])
    return (
        f"This command reads a secrets file ({shown}). Whatever it prints goes to the model; "
        "known key formats are redacted, but anything else in the file is not."
    )


# --- secret values in text --------------------------------------------------------------------

KEY_FORMATS: tuple[tuple[str, str], ...] = (
    (
        "private key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("Anthropic key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    (
        "AWS secret key",
        r"(?i)(?<=aws_secret_access_key)(\s*[:=]\s*[\"']?)[A-Za-z0-9/+]{40}\b",
    ),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("GitLab token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("Slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"),
    ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("JSON web token", r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
    ("URL password", r"(?<=://)([^/\s:@]*:)[^/\s@]+(?=@)"),
    ("URL credential", r"(?<=://)[A-Za-z0-9_\-.~%]{16,}(?=@)"),
    (
        "URL query secret",
        r"(?i)([?&](?:api[_-]?key|key|access[_-]?token|refresh[_-]?token|id[_-]?token|token|auth|"
        r"password|passwd|secret|client[_-]?secret)=)(?!\[redacted)[^&#\s\"'<>]+",
    ),
    (
        "authorization header",
        r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot)\s+)?)"
        r"(?!\[redacted)[^\s\"',;}]{4,}",
    ),
    ("bearer token", r"(?i)(\bbearer\s+)(?!\[redacted)[A-Za-z0-9._~+/=\-]{8,}"),
    (
        "key field",
        r"(?i)([\"']?\b(?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|client[_-]?secret|"
        r"password|secret)[\"']?\s*[:=]\s*[\"'])(?!\[redacted)[A-Za-z0-9_\-./+=~]{8,}(?=[\"'])",
    ),
    (
        "secret assignment",
        r"(?<![A-Za-z0-9_])([A-Z0-9_]*(?:API_?KEY|APIKEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY)"
        r"[A-Z0-9_]*[\"']?\s*[:=]\s*[\"']?)(?!\[redacted)([^\s\"',;$\{]{8,})",
    ),
)
"""(kind, regex). A regex with capture groups keeps group 1 (the ``NAME=`` part) and cuts the rest."""

_COMPILED = tuple((kind, re.compile(rx)) for kind, rx in KEY_FORMATS)
MIN_VALUE_CHARS = 6
"""Configured values shorter than this are not redacted by value (too many false hits)."""


@dataclass(frozen=True)
class Redaction:
    text: str
    count: int
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Redactor:
    """Cuts secrets out of text: known key formats plus the exact ``values`` configured here."""

    values: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, values: Iterable[str | None]) -> Redactor:
        unique = sorted({v for v in values if v and len(v) >= MIN_VALUE_CHARS}, key=len, reverse=True)
        return cls(tuple(unique))

    def scan(self, text: str) -> Redaction:
        count = 0
        kinds: list[str] = []

        def note(kind: str) -> None:
            nonlocal count
            count += 1
            if kind not in kinds:
                kinds.append(kind)

        for value in self.values:
            if value in text:
                note("configured key")
                text = text.replace(value, "[redacted configured key]")
        for kind, regex in _COMPILED:

            def cut(match: re.Match[str], kind: str = kind) -> str:
                note(kind)
                keep = match.group(1) if match.re.groups and match.group(1) else ""
                return f"{keep}[redacted {kind}]"

            text = regex.sub(cut, text)
        return Redaction(text, count, tuple(kinds))

    def redact(self, text: str) -> str:
        return self.scan(text).text


def scan_text(text: str, values: Iterable[str | None] = ()) -> Redaction:
    """Scan one piece of text with the known formats and ``values``; see :class:`Redactor`."""
    return Redactor.of(values).scan(text)


# --- Writes over values the model never saw ----------------------------------------------------

REDACTED_MARK = "[redacted "
_MARKER = re.compile(
    r"\[redacted (?:configured key|" + "|".join(re.escape(kind) for kind, _ in KEY_FORMATS) + r")\]"
)


class HiddenSecretWrite(ValueError):
    """A write would put a redaction marker, or a value of the model's own, where a secret was hidden."""


def with_hidden_values(before: str, after: str, redactor: Redactor) -> str:
    """``after`` (a file's new text, written by the model over ``before``) with each line the model
    copied as it was shown, its secret cut out, given the secret back: a small model rewrites a whole
    ``config.json`` and would otherwise replace the password with ``[redacted key field]``.
    Raises :class:`HiddenSecretWrite` for a marker on a line the file never had, and for a secret's
    line rewritten with another value (the model cannot know the value; it invented one)."""
    hidden = _hidden_lines(before, redactor)
    if not hidden and not _MARKER.search(after):
        return after
    lines = after.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        body = line.rstrip("\r\n")
        if body in hidden:
            lines[number - 1] = hidden[body] + line[len(body) :]
        elif _MARKER.search(body):
            raise HiddenSecretWrite(f"line {number} holds a {REDACTED_MARK}…] marker that is not in the file")
        elif (key := _rewritten_secret(body, hidden)) is not None:
            raise HiddenSecretWrite(f"line {number} gives {key} a value of yours")
    return "".join(lines)


def _hidden_lines(text: str, redactor: Redactor) -> dict[str, str]:
    """Each line of ``text`` that holds a secret, as the model was shown it, to the line itself."""
    if redactor.redact(text) == text:  # one pass for the usual file without secrets
        return {}
    return {shown: line for line in text.splitlines() if (shown := redactor.redact(line)) != line}


def _rewritten_secret(line: str, hidden: dict[str, str]) -> str | None:
    """The key of a hidden secret that ``line`` sets to another value: it starts as the secret's line
    did up to the marker (``"password": "``), and is not that line."""
    for shown, original in hidden.items():
        prefix = shown.partition(REDACTED_MARK)[0]
        key = prefix.strip().strip("\"':= ")
        if key and line != original and line.strip().startswith(prefix.strip()):
            return key
    return None


# --- Shiro's own state: never a tool's to read -------------------------------------------------

_private_roots: tuple[Path, ...] = ()


def keep_private(root: Path) -> None:
    """Make a state root off-limits to every tool of this process, wherever it lies.

    The state root keeps checkpoint blobs (old copies of ``.env`` included), the journal and the
    sessions; with the home folder opened as the workspace it lies inside the workspace. The jail
    (:func:`shiro_lsp.fs.jail.locate`) refuses any path in it, the walks of ``list_dir``, ``glob``
    and ``grep`` never enter it, and git tools leave it out. Process-wide: a process serves one
    state root (a second ``home`` adds a second).
    """
    global _private_roots
    real = Path(os.path.realpath(root))
    if real not in _private_roots:
        _private_roots = (*_private_roots, real)


def private_roots() -> tuple[Path, ...]:
    """The state roots of this process (real paths): what a sandbox hides."""
    return _private_roots


def is_private(resolved: Path) -> bool:
    """Whether a resolved absolute path is in a state root (:func:`keep_private`)."""
    return any(resolved == root or resolved.is_relative_to(root) for root in _private_roots)


def private_within(root: Path) -> list[str]:
    """The state roots strictly inside ``root`` (a real path), as posix paths relative to it."""
    inner = [p for p in _private_roots if p != root and p.is_relative_to(root)]
    return [PurePosixPath(*p.relative_to(root).parts).as_posix() for p in inner]


def private_refusal(path: str) -> str:
    return (
        f"{path} is in Shiro's own state folder (sessions, checkpoints, keys to restore); "
        "no tool reads, lists or writes it."
    )


# --- attachments: what the user attaches to a prompt ------------------------------------------


def attachment_refusal(roots: Sequence[Path], source: str, label: str) -> str | None:
    """Why an attached document must not reach the model, or None when it may.

    ``source`` is the document's URI (``file:///…``, ``untitled:…``); ``roots`` are the real paths
    of the workspace folders. A secrets file (by its path or its label), a file outside every
    workspace folder, and a file in the state root are refused; an unsaved buffer is the user's
    own text and passes (the redactor still cuts key formats out of it).
    """
    parsed = urlsplit(source)
    if parsed.scheme == "untitled":
        return None
    path = unquote(parsed.path) if parsed.scheme else source
    label_path = re.sub(r":\d+(?:-\d+)?$", "", label)
    shown = label_path or path
    if is_secret_path(path, label_path):
        return f"{shown} is a secrets file; Shiro never sends its contents to the model."
    real = Path(os.path.realpath(path))
    if is_private(real):
        return private_refusal(shown)
    if not any(real == root or real.is_relative_to(root) for root in roots):
        return f"{shown} is outside the workspace folders; only files inside them can be attached."
    return None
