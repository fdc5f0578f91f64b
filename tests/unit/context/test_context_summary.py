"""Summary strings, the digest, the note's placement and the per-session span record."""

from __future__ import annotations

from unit.context.context_fixtures import call_and_result, reasoning_turn, transcript, user

from shiro_lsp.context.estimate import estimate_tokens
from shiro_lsp.context.ladder import dropped_span, prune_to_fit
from shiro_lsp.context.summary import (
    COMPACT_SUMMARY_PREFIX,
    COMPACT_SYSTEM_PROMPT,
    PRUNED_SPAN_PREFIX,
    SPAN_SUMMARY_SYSTEM_PROMPT,
    SpanSummaries,
    compact_request,
    compacted_history,
    digest_of,
    is_summary_note,
    merge_note_texts,
    note_bodies,
    span_summary_request,
    summary_note,
    with_span_summary,
)
from shiro_lsp.messages import Message


def test_the_exact_strings_of_the_reference() -> None:
    assert COMPACT_SYSTEM_PROMPT.startswith(
        "Summarize this coding session for use as the sole context of a fresh session. Keep: the user goal,"
    )
    assert COMPACT_SYSTEM_PROMPT.endswith("Write it as notes, not prose.")
    assert COMPACT_SUMMARY_PREFIX == "Summary of the session so far:\n\n"
    assert PRUNED_SPAN_PREFIX == "Earlier in this session, now compacted away:\n\n"
    assert "Write at most 120 words of notes capturing decisions made" in SPAN_SUMMARY_SYSTEM_PROMPT
    system, messages = compact_request([user("goal"), reasoning_turn("rs_1", "msg_1")])
    assert system == COMPACT_SYSTEM_PROMPT and "msg_1" not in str(messages) and "answer" in str(messages)
    assert compacted_history("notes") == [
        {"role": "user", "content": "Summary of the session so far:\n\nnotes"}
    ]


def test_the_digest_has_one_clipped_line_per_message_and_calls_results_result() -> None:
    long_text = "word " * 100
    span: list[Message] = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool-call", "toolCallId": "t0", "toolName": "read_file", "input": {"path": "f0.ts"}}
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "t0",
                    "toolName": "read_file",
                    "output": {"type": "text", "value": "line 1\nline 2"},
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "reasoning", "text": "only thinking"}]},
        user(long_text),
    ]
    lines = digest_of(span).split("\n")
    assert lines[0] == '- (assistant) read_file {"path":"f0.ts"}'
    assert lines[1] == "- (result) read_file: line 1 line 2"
    assert lines[2].startswith("- (user) word word") and lines[2].endswith("...")
    assert len(lines[2]) == len("- (user) ") + 160 + 3
    assert len(lines) == 3


def test_a_long_digest_is_capped_keeping_how_the_span_began_and_ended() -> None:
    span = [user(f"step {i} " + "x" * 150) for i in range(500)]
    digest = digest_of(span, max_chars=2_000)
    assert len(digest) <= 2_000
    assert digest.startswith("- (user) step 0 ")
    assert "step 499 " in digest.split("\n")[-1]
    assert "- (… 4" in digest and "messages omitted …)" in digest


def test_a_span_summary_request_carries_the_digest_and_not_earlier_notes() -> None:
    span = [summary_note("old summary"), *call_and_result("c1")]
    request = span_summary_request(span)
    assert request is not None
    system, messages = request
    assert system == SPAN_SUMMARY_SYSTEM_PROMPT
    assert messages[0]["role"] == "user"
    assert "old summary" not in messages[0]["content"] and "grep" in messages[0]["content"]
    assert (
        span_summary_request([{"role": "assistant", "content": [{"type": "reasoning", "text": "x"}]}]) is None
    )


def test_the_note_goes_right_after_the_goal_and_replaces_earlier_notes() -> None:
    goal = user("goal")
    rest = transcript(3, 10)[1:]
    first = with_span_summary([goal, *rest], "summary one")
    assert first[0] is goal and is_summary_note(first[1])
    assert first[1]["content"] == PRUNED_SPAN_PREFIX + "summary one"
    assert all(a is b for a, b in zip(first[2:], rest, strict=True))
    merged = merge_note_texts([*note_bodies(first), "summary two"])
    second = with_span_summary(first, merged)
    notes = [m for m in second if is_summary_note(m)]
    assert len(notes) == 1 and second[1] is notes[0]
    assert notes[0]["content"].count(PRUNED_SPAN_PREFIX.strip()) == 1
    assert "summary one" in notes[0]["content"] and "summary two" in notes[0]["content"]


def test_without_a_goal_the_note_leads_and_an_empty_note_only_removes() -> None:
    rest = transcript(2, 10)[1:]
    assert is_summary_note(with_span_summary(rest, "s")[0])
    assert with_span_summary([user("g"), summary_note("old"), *rest], "") == [user("g"), *rest]


def test_merged_notes_give_way_oldest_first() -> None:
    merged = merge_note_texts(["a" * 50, "b" * 50, "c" * 50], max_chars=110)
    assert "a" not in merged and "b" * 50 in merged and merged.endswith("c" * 50)


def pruned_step(messages: list[Message], threshold: int) -> tuple[list[Message], list[Message]]:
    pruned = prune_to_fit(messages, threshold)
    return pruned, dropped_span(messages, pruned)


def test_span_summaries_summarise_each_span_once_and_fall_back_to_the_digest() -> None:
    summaries = SpanSummaries()
    history = transcript(40, 500)
    pruned, span = pruned_step(history, 2_000)
    batch = summaries.due(span)
    assert batch
    summaries.record(batch, None)  # the model call failed: the digest stands in
    wire = summaries.wire(pruned, span)
    assert wire[0] is history[0] and is_summary_note(wire[1])
    assert "f0.ts" in wire[1]["content"]
    assert summaries.due(span) == []

    history = [*history, *transcript(30, 500, prefix="late")[1:]]
    pruned, span = pruned_step(history, 2_000)
    batch = summaries.due(span)
    assert batch and all(m in span for m in batch)
    assert all("'f0.ts'" not in str(m) for m in batch)
    assert any("latef0.ts" in str(m) for m in batch)
    summaries.record(batch, "  Read the late files; nothing pending.  ")
    wire = summaries.wire(pruned, span)
    notes = [m for m in wire if is_summary_note(m)]
    assert len(notes) == 1
    assert "f0.ts" in notes[0]["content"] and "nothing pending." in notes[0]["content"]


def test_a_small_new_span_rides_along_as_digest_lines_until_the_batch_fills() -> None:
    summaries = SpanSummaries(min_batch=50)
    history = transcript(20, 500)
    pruned, span = pruned_step(history, 1_000)
    assert summaries.due(span) == []
    wire = summaries.wire(pruned, span)
    assert "f0.ts" in wire[1]["content"]


def test_span_summaries_round_trip_through_a_dict() -> None:
    summaries = SpanSummaries()
    summaries.record(call_and_result("c9"), "ran grep")
    again = SpanSummaries.from_dict(summaries.to_dict())
    assert again.notes == ["ran grep"] and again.covered == summaries.covered
    assert again.unsummarised(call_and_result("c9")) == []


def test_repeated_write_back_never_nests_a_summary_and_shrinks_the_history() -> None:
    """The fork's canonical compaction: the pruned history plus its note replaces the history."""
    summaries = SpanSummaries(min_batch=1)
    history = transcript(30, 800)
    for round_number in range(3):
        history = [*history, *transcript(30, 800, prefix=f"r{round_number}")[1:]]
        before = estimate_tokens(history)
        pruned = prune_to_fit(history, 3_000)
        span = dropped_span(history, pruned)
        batch = summaries.due(span)
        request = span_summary_request(batch)
        assert request is not None and PRUNED_SPAN_PREFIX.strip() not in request[1][0]["content"]
        summaries.record(batch, f"round {round_number}: read the files")
        history = summaries.wire(pruned, span)
        notes = [m for m in history if is_summary_note(m)]
        assert len(notes) == 1 and history[1] is notes[0]
        assert notes[0]["content"].count(PRUNED_SPAN_PREFIX.strip()) == 1
        assert f"round {round_number}: read the files" in notes[0]["content"]
        assert estimate_tokens(history) < before
    assert history[0]["content"] == "do the thing"
