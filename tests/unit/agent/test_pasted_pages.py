"""The URLs a small window's user pastes, and how a page is shown with the workspace view."""

from __future__ import annotations

from shiro_lsp.agent.pasted_pages import CUT_NOTE, page_block, pasted_urls


def test_urls_are_found_in_order_without_sentence_punctuation() -> None:
    text = "See https://a.example/x?y=1, then (http://b.example/z). Again: https://a.example/x?y=1 and https://c.example/"
    assert pasted_urls(text) == ["https://a.example/x?y=1", "http://b.example/z"]  # two at most


def test_a_page_longer_than_its_share_is_cut_at_a_line_and_says_so() -> None:
    page = "URL: https://a.example/\n\n" + "".join(f"line {n}\n" for n in range(100))
    block = page_block("https://a.example/", page, 200)
    assert block.startswith("https://a.example/\n```markdown\nURL: https://a.example/\n")
    assert block.endswith(f"\n```\n{CUT_NOTE}")
    assert len(block) < 300 and "line 99" not in block


def test_web_fetchs_read_on_note_is_replaced_by_the_views_own() -> None:
    page = "URL: https://a.example/\n\nshort text\n\n[Cut: characters 0 to 25,000 of 90,000. Call web_fetch with the same url and offset=25000 for more.]"
    block = page_block("https://a.example/", page, 10_000)
    assert "web_fetch" not in block and "short text\n```\n" + CUT_NOTE in block


def test_a_whole_page_has_no_cut_note() -> None:
    assert CUT_NOTE not in page_block("https://a.example/", "URL: https://a.example/\n\nall of it", 10_000)
