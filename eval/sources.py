"""Public code the eval runs on, fetched at a pinned commit into the eval's cache when a run needs it.

Code from public repositories is never committed to this repository: each set names a repository and a
full commit hash, and the files are exported from the first source that has that commit, in order:
the set's environment variable (a git directory or a URL), the local mirror
(``$EVAL_MIRROR/<owner>+<name>/repo``, default ``/work/.mirror``), then GitHub. The export lands in
``~/.cache/shiro-eval/src/<owner>+<name>/<commit>/`` (``SHIRO_EVAL_CACHE`` moves the cache) and is
reused from then on.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from eval.harnesses import CACHE

FETCH_TIMEOUT = 900.0
_DONE = ".complete"


class SourceUnavailable(RuntimeError):
    """No source holds the pinned commit (or none is reachable)."""


@dataclass(frozen=True)
class Pinned:
    """A public repository at one commit: ``repo`` is ``owner/name``, ``env`` the variable that can name
    another source (a git directory or URL holding the commit)."""

    repo: str
    commit: str
    env: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}.git"

    @property
    def mirror(self) -> Path:
        root = Path(os.environ.get("EVAL_MIRROR") or "/work/.mirror")
        return root / self.repo.replace("/", "+") / "repo"

    @property
    def dest(self) -> Path:
        return CACHE / "src" / self.repo.replace("/", "+") / self.commit

    def sources(self) -> list[str]:
        named = os.environ.get(self.env, "").strip()
        return [s for s in (named, str(self.mirror), self.url) if s]


def _is_url(source: str) -> bool:
    return "://" in source or source.startswith("git@")


def _git(*args: str, timeout: float = FETCH_TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(["git", *args], capture_output=True, timeout=timeout, env=env, check=False)


def has_commit(source: str, commit: str) -> bool:
    """Whether a local git directory (bare or with a work tree) holds the commit."""
    if _is_url(source) or not Path(source).is_dir():
        return False
    return _git("-C", source, "cat-file", "-e", f"{commit}^{{commit}}", timeout=60).returncode == 0


def _archive(git_dir: str, commit: str, paths: list[str], into: Path) -> None:
    archive = _git("-C", git_dir, "archive", "--format=tar", commit, *paths)
    if archive.returncode != 0:
        raise SourceUnavailable(archive.stderr.decode(errors="replace").strip()[:300])
    untar = subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, capture_output=True)
    if untar.returncode != 0:
        raise SourceUnavailable(untar.stderr.decode(errors="replace").strip()[:300])


def _export(source: str, commit: str, paths: list[str], into: Path) -> None:
    if not _is_url(source):
        if not has_commit(source, commit):
            raise SourceUnavailable("no git directory holding the commit")
        _archive(source, commit, paths, into)
        return
    with tempfile.TemporaryDirectory(prefix="shiro-eval-fetch-") as tmp:
        for args in (
            ("init", "-q", "--bare", tmp),
            ("-C", tmp, "fetch", "-q", "--depth", "1", source, commit),
        ):
            done = _git(*args)
            if done.returncode != 0:
                raise SourceUnavailable(done.stderr.decode(errors="replace").strip()[:300])
        _archive(tmp, commit, paths, into)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def reachable(pin: Pinned, network: bool = True) -> bool:
    """Whether ``checkout`` can succeed: cached already, or a local source holds the commit (or, with
    ``network``, a URL is named, which is only known by trying)."""
    if (pin.dest / _DONE).is_file():
        return True
    return any(has_commit(s, pin.commit) or (network and _is_url(s)) for s in pin.sources())


def checkout(pin: Pinned, paths: list[str] | None = None, network: bool = True) -> Path:
    """The files of ``pin`` at its commit (only ``paths`` when given), exported into the cache once."""
    dest = pin.dest
    if (dest / _DONE).is_file():
        return dest
    with locked(dest.parent / f"{pin.commit}.lock"):
        if (dest / _DONE).is_file():
            return dest
        tried: list[str] = []
        for source in pin.sources():
            if _is_url(source) and not network:
                continue
            part = dest.with_name(dest.name + ".part")
            shutil.rmtree(part, ignore_errors=True)
            part.mkdir(parents=True)
            try:
                _export(source, pin.commit, paths or [], part)
            except (SourceUnavailable, OSError, subprocess.SubprocessError) as error:
                tried.append(f"{source} ({error})")
                shutil.rmtree(part, ignore_errors=True)
                continue
            (part / _DONE).write_text(f"{pin.repo} {pin.commit} from {source}\n")
            shutil.rmtree(dest, ignore_errors=True)
            part.rename(dest)
            return dest
    raise SourceUnavailable(
        f"eval: cannot fetch {pin.repo} at {pin.commit}; tried: {'; '.join(tried) or 'nothing'}. "
        f"Set {pin.env} to a git directory or URL that holds this commit."
    )
