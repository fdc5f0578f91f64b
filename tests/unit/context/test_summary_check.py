"""When a /compact summary is refused, and the digest that stands in for it (summary_check.py)."""

from __future__ import annotations

from shiro_lsp.context.summary_check import (
    EMPTY,
    NO_GOAL,
    REPEATED,
    digest_summary,
    files_touched,
    goal_words,
    last_answer,
    summary_problem,
)
from shiro_lsp.messages import Message

REQUEST = "The lighthouse timer skips the last flash; make blink_pattern repeat every cycle."
REPLY = (
    "Change the loop in beacon.py so that blink_pattern yields the final flash before it restarts the cycle."
)


def test_a_copy_of_the_last_answer_is_refused_even_with_a_heading() -> None:
    assert summary_problem(REPLY, REPLY, REQUEST) == REPEATED
    assert summary_problem("Summary:\n" + REPLY, REPLY, REQUEST) == REPEATED


def test_a_summary_that_quotes_a_little_of_the_answer_is_kept() -> None:
    summary = (
        "Goal: the lighthouse timer should repeat blink_pattern every cycle.\n"
        "Files touched: beacon.py (read).\nDecisions: the loop drops the final flash."
    )
    assert summary_problem(summary, REPLY, REQUEST) is None


def test_a_summary_naming_nothing_of_the_request_is_refused() -> None:
    assert summary_problem("We renamed a helper and added two tests.", REPLY, REQUEST) == NO_GOAL


def test_a_request_of_common_words_only_has_no_goal_to_check() -> None:
    assert goal_words("what does this do?") == set()
    assert summary_problem("Read a file and answered.", "", "what does this do?") is None


def test_key_words_match_by_their_stem() -> None:
    assert summary_problem("Goal: flashes should repeat.", "", "one flash repeating") is None


def test_an_empty_summary_is_refused() -> None:
    assert summary_problem("  \n", REPLY, REQUEST) == EMPTY


def test_the_request_s_attached_documents_are_not_its_key_words() -> None:
    prompt = 'tidy it up\n\n<context label="notes.md">\nzeppelin quartz\n</context>'
    assert goal_words(prompt) == {"tidy"}


VIEW: list[Message] = [
    {"role": "user", "content": REQUEST},
    {
        "role": "assistant",
        "content": [
            {"type": "tool-call", "toolCallId": "c1", "toolName": "read_file", "input": {"path": "beacon.py"}}
        ],
    },
    {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "read_file",
                "output": {"type": "text", "value": "x"},
            }
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": REPLY}]},
]


def test_the_digest_holds_the_goal_the_tasks_the_files_and_a_line_per_message() -> None:
    digest = digest_summary(VIEW, REQUEST, "[x] read beacon.py\n[ ] fix the loop")
    assert digest.startswith(f"Goal: {REQUEST}\n\nTask list:\n[x] read beacon.py\n[ ] fix the loop\n\n")
    assert "Files touched: beacon.py" in digest
    assert "- (user) The lighthouse timer" in digest and "- (assistant) Change the loop" in digest
    assert summary_problem(digest, last_answer(VIEW), REQUEST) is None


def test_the_last_answer_is_the_last_message_that_said_something() -> None:
    assert last_answer(VIEW) == REPLY
    assert files_touched(VIEW) == ["beacon.py"]
