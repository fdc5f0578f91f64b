"""What the view says of a message's references that the workspace does not hold."""

from __future__ import annotations

import pytest

from shiro_lsp.adapt.view import missing_references_note


@pytest.mark.parametrize(
    ("message", "workspace", "note"),
    [
        ("Please sort out what #812 reports.", "def show(): ...", "#812 is not in the workspace"),
        ("Do #12 and #13, then #12 again.", "", "#12 and #13 are not in the workspace"),
        ("Handle #812.", "# see #812: numbers start at 1", ""),
        ("Change the first item (#1) and the color #ff0000.", "", ""),  # one digit, a color: not a ticket
        ("Handle issue#77 in a/#88", "", ""),  # glued to a word or a path: not a reference
    ],
)
def test_the_references_a_message_makes_that_the_workspace_lacks(
    message: str, workspace: str, note: str
) -> None:
    said = missing_references_note(message, workspace)
    assert said.startswith(note) if note else said == ""
