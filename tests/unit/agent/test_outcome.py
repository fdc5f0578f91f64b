"""What Shiro says came of a turn (agent/outcome.py): the files changed, and a turn asked to change
files that changed none, or not the ones its answer names."""

from __future__ import annotations

from shiro_lsp.agent import events as ev
from shiro_lsp.agent.outcome import OutcomeWatch, TurnOutcome, claimed_files, claims_a_change
from shiro_lsp.checkpoints.rows import ChangedFile


def row(path: str) -> ChangedFile:
    return ChangedFile(path=path, status="modified", additions=1, deletions=1, reviewed=False)


def watched(*events: ev.Event) -> OutcomeWatch:
    watch = OutcomeWatch()
    for event in events:
        watch.see(event)
    return watch


CLAIM = "After making this change, the ledger script should work correctly."


def test_a_claimed_fix_with_nothing_changed_is_said_with_what_shiro_tried() -> None:
    watch = watched(
        ev.ToolCall("s1", "bash", {"command": "python3 ledger.py"}, "shiro"),
        ev.ToolResult("s1", "bash", "exit: 1\nKeyError: 'amount'"),
        ev.ToolCall("w1", "write_file", {"path": "ledger.py", "content": "same"}, "text"),
        ev.ToolResult("w1", "write_file", "wrote ledger.py", files=None),
        ev.Text(CLAIM),
    )
    result = watch.outcome(can_write=True, sent_back=2)
    assert (result.outcome, result.changed_files) == ("unchanged", [])
    assert result.notice == (
        "The answer says the code was changed, but no file was changed in this turn. "
        "The model's write_file of ledger.py changed nothing. "
        "Shiro ran `python3 ledger.py` (exit 1) and sent the model back twice to finish its work."
    )


def test_a_question_answered_in_words_gets_no_notice() -> None:
    watch = watched(ev.Text("The ledger adds each entry's amount; a missing one raises KeyError."))
    assert watch.outcome(can_write=True, sent_back=0).outcome == "answered"
    assert watch.outcome(can_write=True, sent_back=0).notice is None


def test_an_agent_that_cannot_write_is_never_told_it_changed_nothing() -> None:
    watch = watched(ev.Text("I have updated the plan: step two comes first."))
    result = watch.outcome(can_write=False, sent_back=0)
    assert (result.outcome, result.notice) == ("answered", None)


def test_changed_files_are_listed_and_a_claim_about_another_file_is_said() -> None:
    watch = watched(
        ev.ToolCall("e1", "edit_file", {"path": "src/ledger.py"}),
        ev.ToolResult("e1", "edit_file", "edited", files=[row("src/ledger.py")]),
        ev.Text("I have updated ledger.py and report.py to skip empty amounts."),
    )
    result = watch.outcome(can_write=True, sent_back=0)
    assert (result.outcome, result.changed_files) == ("changed", ["src/ledger.py"])
    assert result.notice == "The answer says report.py was changed, but this turn changed only src/ledger.py."


def test_a_refused_edit_is_said_only_when_the_answer_still_claims_a_change() -> None:
    refused = (
        ev.ToolCall("e1", "edit_file", {"path": "ledger.py"}),
        ev.ToolDenied("e1", "edit_file", "User denied this tool call."),
    )
    quiet = watched(*refused, ev.Text("Understood, I will leave it."))
    assert quiet.outcome(can_write=True, sent_back=0) == TurnOutcome("unchanged", [], None)
    claimed = watched(*refused, ev.Text("I have fixed ledger.py."))
    assert claimed.outcome(can_write=True, sent_back=0).notice == (
        "The answer says the code was changed, but no file was changed in this turn. "
        "The model's edit_file of ledger.py was refused."
    )


def test_without_a_checkpoint_a_file_call_that_ran_counts_as_a_change() -> None:
    watch = watched(
        ev.ToolCall("w1", "write_file", {"path": "notes.txt"}),
        ev.ToolResult("w1", "write_file", "wrote notes.txt"),
    )
    assert watch.outcome(can_write=True, sent_back=0, recorded=False).changed_files == ["notes.txt"]


def test_claims_are_told_from_descriptions() -> None:
    assert claims_a_change("Here's the corrected code:")
    assert claims_a_change("The function has been fixed.")
    assert claims_a_change("I've added a guard for empty input.")
    assert not claims_a_change("The function returns the sum of the amounts.")
    assert not claims_a_change("You could add a guard for empty input.")
    assert claimed_files("I changed a.py.\n```python\nb.py\n```\nThen b.py reads it.") == ["a.py"]
