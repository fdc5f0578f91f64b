"""The session file's record of turns and panel events (issue 22): kept, read back, cut with a branch,
and an entry that does not fit the history is dropped rather than failing the load."""

from __future__ import annotations

from shiro_lsp.state.sessions.live import LiveSession
from shiro_lsp.state.sessions.record import Compaction, SessionRecord, decode_record, encode_record


def live_with_two_turns() -> LiveSession:
    session = LiveSession.fresh(cwd="/w", provider="openai", model="gpt-5")
    session.turn_started("t1", "qwen")
    session.record_event("t1", {"type": "notice", "text": "before the prompt is appended"})
    session.append({"role": "user", "content": "one"}, {"role": "assistant", "content": "a"})
    session.record_event("t1", {"type": "notice", "text": "after the answer"})
    session.turn_ended("t1", "done")
    session.turn_started("t2", "qwen")
    session.append({"role": "user", "content": "two"})
    session.turn_ended("t2", "cancelled")
    return session


def test_turns_and_events_survive_a_save_and_a_load() -> None:
    session = live_with_two_turns()
    assert session.model == "qwen"
    loaded = decode_record(b"".join(encode_record(session.to_record())))
    assert [(t.task_id, t.at, t.end, t.stop_reason) for t in loaded.turns] == [
        ("t1", 0, 2, "done"),
        ("t2", 2, 3, "cancelled"),
    ]
    assert [(e.at, e.event["text"]) for e in loaded.events] == [
        (1, "before the prompt is appended"),  # never before the turn's own prompt
        (2, "after the answer"),
    ]
    assert loaded.model == "qwen"


def test_a_cut_keeps_what_lies_within_it_and_a_stray_mark_is_dropped_on_load() -> None:
    record = live_with_two_turns().to_record()
    record = SessionRecord(**{**record.__dict__, "compactions": [Compaction(2, "s", "")]})
    cut = record.up_to(2)
    assert [t.task_id for t in cut.turns] == ["t1"] and len(cut.events) == 2
    assert [c.at for c in cut.compactions] == [2]
    assert record.up_to(1).compactions == [] and record.up_to(1).turns[0].end == 1

    value = record.to_json()
    value["turns"].append({"taskId": "t9", "at": 99, "end": None})
    value["events"].append({"at": -1, "taskId": "t9", "event": {"type": "notice"}})
    loaded = SessionRecord.from_json(value)
    assert [t.task_id for t in loaded.turns] == ["t1", "t2"] and len(loaded.events) == 2
