"""The one id format of Shiro's state: a UUIDv7 string (RFC 9562), time-ordered.

Written here rather than taken from the ``uuid6`` package: that package reads its own version from
the installed package metadata when it is imported (``importlib.metadata``: about 100 ms), and the
server makes its first id (the fresh session's) before it answers ``initialize``. The algorithm is
``uuid6.uuid7``'s: 48 bits of Unix milliseconds, moved on by one when the clock has not (so ids
made in one process sort in the order they were made), then the version (7), 12 random bits, the
variant (0b10) and 62 random bits.
"""

from __future__ import annotations

import secrets
import threading
import time
from uuid import UUID

_lock = threading.Lock()
_last_ms = 0


def uuid7() -> UUID:
    global _last_ms
    with _lock:
        ms = max(time.time_ns() // 1_000_000, _last_ms + 1)
        _last_ms = ms
    rand_a, rand_b = secrets.randbits(12), secrets.randbits(62)
    # Python 3.11's UUID(version=...) knows versions 1 to 5 only: the bits are set here.
    return UUID(int=(ms & 0xFFFF_FFFF_FFFF) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b)


def new_id() -> str:
    """``0192f0c4-…``: sorts by creation time, unique across processes."""
    return str(uuid7())
