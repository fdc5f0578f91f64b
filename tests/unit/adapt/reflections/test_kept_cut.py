"""Where a streaming reply is cut when it begins to write out a file the turn keeps."""

from __future__ import annotations

from shiro_lsp.adapt.reflections.kept_cut import KeptWatch

KEPT = {"tests/test_ledger.py", "ledger_test.py"}
BODY = "def test_total():\n    assert total([]) == 0\n"


def cut(reply: str, chunk: int = 7) -> tuple[int, str | None] | None:
    watch = KeptWatch(lambda path: path.removeprefix("./") in KEPT)
    for i in range(0, len(reply), chunk):
        if watch.feed(reply[i : i + chunk]):
            return watch.keep_until, watch.cut_at_path
    return None


def test_a_listing_under_the_kept_files_path_line_is_cut_where_the_path_line_starts() -> None:
    head = "ledger.py\n```python\ndef total(rows):\n    return sum(rows)\n```\n\n"
    reply = head + f"tests/test_ledger.py\n```python\n{BODY}```\n"
    assert cut(reply) == (len(head), "tests/test_ledger.py")


def test_a_sentence_ending_in_a_colon_or_a_path_inside_the_block_introduces_it_too() -> None:
    said = "The new content for ./ledger_test.py is:\n"
    assert cut(f"{said}```python\n{BODY}```\n") == (0, "./ledger_test.py")
    assert cut(f"Done.\n\n```python\n# ledger_test.py\n{BODY}```\n") == (len("Done.\n\n"), "ledger_test.py")


def test_code_listings_and_mere_mentions_are_not_cut() -> None:
    assert cut(f"ledger.py\n```python\n{BODY}```\n") is None
    assert cut("Run ledger_test.py, then tests/test_ledger.py:\n```bash\npytest\n```\n") is None
    assert cut(f"The tests are in ledger_test.py.\n```python\n{BODY}```\n") is None
    assert cut("```text\nledger_test.py\n```\n") is None  # a one-line block: nothing to write
