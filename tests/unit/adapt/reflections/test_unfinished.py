"""Replies that leave the work undone (adapt/reflections/unfinished.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.adapt.reflections.base import Reply, TurnFacts
from shiro_lsp.adapt.reflections.unfinished import LOCAL_MODULE, LocalModule, announces_a_step


@pytest.mark.parametrize(
    ("text", "announces"),
    [
        ("I will now edit tally.py.", True),
        ("The slip is in total(). Let me fix it:", True),
        ("Next, let's update banner.py to add the flag.", True),
        ("I'll try again, but now with a different approach.", True),
        ("Let me know if you need anything else.", False),
        ("I repaired the sum; it prints 12 now.", False),
        ("I will now edit it:\n```python\nx = 1\n```\nDone, it prints 12.", False),
    ],
)
def test_a_reply_that_ends_by_announcing_a_step(text: str, announces: bool) -> None:
    assert announces_a_step(text) is announces


@pytest.mark.parametrize(
    "reply",
    [
        "The `labels` module cannot be found. You need to install it:\n```sh\npip install labels\n```",
        "The error happens because the `labels` module is not found in the workspace. Make a folder `labels`.",
    ],
)
def test_a_workspace_module_the_reply_would_install_is_sent_back_naming_its_file(
    tmp_path: Path, reply: str
) -> None:
    (tmp_path / "labels.py").write_text("def tidy(text):\n    return text.strip()\n")
    facts = TurnFacts("python3 app.py stops with an error about labels. Repair it.", tmp_path)
    sent = LocalModule().answer(Reply(reply), facts)
    assert sent is not None and sent.instruction == LOCAL_MODULE.format(module="labels", file="labels.py")


def test_a_package_the_workspace_does_not_hold_may_be_installed(tmp_path: Path) -> None:
    facts = TurnFacts("import httpx fails. Repair it.", tmp_path)
    assert LocalModule().answer(Reply("Run `pip install httpx`."), facts) is None
