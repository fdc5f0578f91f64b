"""The copy cut stops a reply that, after a block of its own, copies a file it was shown."""

from __future__ import annotations

from shiro_lsp.adapt.formats.echoes import Shown
from shiro_lsp.adapt.reflections.copy_cut import CopyWatch
from shiro_lsp.adapt.view import VIEW_KEY

STUB = "def wind_chill(celsius, wind_kmh):\n    pass\n"
NOTES = (
    "# Wind chill\n\nHow cold the air feels on skin.\n\n```text\n13.12 + 0.6215 T - 11.37 V^0.16\n```\n\n"
    "It holds for temperatures at or below 10 degrees and winds above 4.8 km/h.\n"
)
CHECKS = (
    "from chill import wind_chill\n\n\ndef test_calm():\n    assert wind_chill(5, 3) == 5\n\n\n"
    "def test_windy():\n    assert round(wind_chill(-10, 30)) == -20\n"
)
SHOWN_VIEW = f"chill.py\n```\n{STUB}```\n\nNOTES.md\n````\n{NOTES}````\n\ntest_chill.py\n```\n{CHECKS}```\n"
CHANGE = (
    "def wind_chill(celsius, wind_kmh):\n    if celsius > 10 or wind_kmh <= 4.8:\n        return celsius\n"
    "    v = wind_kmh ** 0.16\n    return 13.12 + 0.6215 * celsius - 11.37 * v + 0.3965 * celsius * v\n"
)
WROTE_CHANGE = f"chill.py\n```python\n{CHANGE}```\n\n"
COPIED_NOTES = f"NOTES.md\n```markdown\n{NOTES}```\n\n"
COPIED_CHECKS = f"test_chill.py\n```python\n{CHECKS}```\n\n"


def shown() -> Shown:
    return Shown.of([{"role": "user", "content": "Make chill.py work.", VIEW_KEY: SHOWN_VIEW}])


def kept(reply: str) -> str | None:
    """What the watch kept of ``reply``, fed in small pieces as it streams (None: it never cut)."""
    watch = CopyWatch(shown)
    for at in range(0, len(reply), 5):
        if watch.feed(reply[at : at + 5]):
            return reply[: watch.keep_until]
    return None


def test_a_copy_after_the_change_is_cut_after_that_copy() -> None:
    reply = "The files that change:\n\n" + WROTE_CHANGE + COPIED_CHECKS + COPIED_NOTES + "Done."
    assert kept(reply) == "The files that change:\n\n" + WROTE_CHANGE + COPIED_CHECKS.rstrip("\n") + "\n"


def test_a_markdown_copy_reads_its_inner_fences_as_nested() -> None:
    reply = WROTE_CHANGE + COPIED_NOTES + COPIED_CHECKS
    assert kept(reply) == WROTE_CHANGE + COPIED_NOTES.rstrip("\n") + "\n"


def test_a_change_written_after_a_copy_is_not_cut() -> None:
    assert kept(COPIED_CHECKS + WROTE_CHANGE + "chill.py computes the wind chill now.") is None


def test_changes_alone_or_short_blocks_are_not_cut() -> None:
    tests_changed = CHECKS.replace("== -20", "== -18")
    command = "Run it:\n```bash\npython3 -m pytest -q\n```\n\n"
    reply = WROTE_CHANGE + command + f"test_chill.py\n```python\n{tests_changed}```\n\n" + command
    assert kept(reply) is None
    one_line = "```python\nfrom chill import wind_chill\n```\n\n"  # shown text, too short to be a copy
    assert kept(WROTE_CHANGE + one_line + "Done.") is None


def indented(text: str) -> str:
    return "".join(f"  {line}" if line.strip() else line for line in text.splitlines(keepends=True))


def test_a_markdown_copy_left_unclosed_under_a_list_item_ends_at_the_next_item() -> None:
    """As 1.5B writes a list of files: each block indented under its item, the copied notes closed only
    once (their own example's fence taken for theirs)."""
    change = f"- `chill.py`:\n  ```python\n{indented(CHANGE)}  ```\n\n"
    notes = f"- `NOTES.md`:\n  ```markdown\n{indented(NOTES)}\n"
    reply = change + notes + f"- `test_chill.py`:\n  ```python\n{indented(CHECKS)}  ```\n"
    assert kept(reply) == change + notes


def test_a_markdown_copy_left_unclosed_ends_at_the_next_listings_path_line() -> None:
    notes = f"NOTES.md\n```markdown\n{NOTES}\n"
    assert kept(WROTE_CHANGE + notes + COPIED_CHECKS) == WROTE_CHANGE + notes


def test_a_fence_with_a_language_never_closes_a_block() -> None:
    """Only a bare fence closes a block: an example opened inside a listing is part of it."""
    listing = f"chill.py\n```python\n{CHANGE}```text\n{CHECKS}```\n\n"
    assert kept(listing + COPIED_CHECKS) == listing + COPIED_CHECKS.rstrip("\n") + "\n"
