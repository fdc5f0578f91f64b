"""Line diffs: hunks are the changed regions, revert puts chosen ones back, the card diff applies."""

from __future__ import annotations

import random

from shiro_lsp import diffs
from shiro_lsp.agent.tools.edits import apply_hunks, parse_patch

BASE = "".join(f"line {i}\n" for i in range(1, 31))


def test_three_separate_edits_are_three_hunks_and_one_can_be_put_back() -> None:
    edited = BASE.replace("line 2\n", "two\n").replace("line 15\n", "fifteen\n").replace("line 28\n", "")
    found = diffs.hunks(BASE, edited)
    assert [(h.header(), h.old_lines, h.new_lines) for h in found] == [
        ("@@ -2 +2 @@", 1, 1),
        ("@@ -15 +15 @@", 1, 1),
        ("@@ -28 +27,0 @@", 1, 0),
    ]
    middle_back = diffs.revert(BASE, edited, [1])
    assert "line 15\n" in middle_back and "two\n" in middle_back and "line 28\n" not in middle_back
    assert diffs.revert(BASE, edited, [0, 1, 2]) == BASE
    assert diffs.counts(BASE, edited) == (2, 3)


def test_the_card_diff_is_a_patch_that_turns_before_into_after() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice(["x\n", "y\n", "\n", "z\n"]) for _ in range(rng.randint(0, 30))]
        b = list(a)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(b))
            if rng.random() < 0.5:
                b.insert(at, rng.choice(["new\n", "x\n", "\n"]))
            elif b:
                del b[min(at, len(b) - 1)]
        before, after = "".join(a), "".join(b)
        added, deleted, text = diffs.card(before, after, "f.txt", limit=10**9)
        assert (added, deleted) == diffs.counts(before, after)
        if before == after:
            assert text == ""
            continue
        (patch,) = parse_patch(text)
        assert apply_hunks(before, patch.hunks, "f.txt") == after


def test_a_long_diff_is_cut_and_says_so() -> None:
    text = diffs.unified("", "".join(f"{i}\n" for i in range(5000)), "big.txt", limit=500)
    assert len(text) < 600 and "[diff cut," in text
