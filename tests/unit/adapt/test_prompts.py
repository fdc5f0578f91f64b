"""The compact prompt's wording, where a small model copies words as it reads them."""

from pathlib import Path

from shiro_lsp.adapt.prompts import PromptParts, build_compact_system_prompt


def test_the_closing_rule_gives_no_word_a_small_model_copies_as_a_heading(tmp_path: Path) -> None:
    # "answer ..., outcome first" came back as "outcome: tests.py" over an empty block (1.5B) and as
    # "### Outcome:" headings (0.5B, tests/fixtures/realmodel/0.5b-readme-cycle-loop.txt)
    for writes_out in (True, False):
        prompt = build_compact_system_prompt(PromptParts(tmp_path, (), writes_out=writes_out))
        closing = next(line for line in prompt.splitlines() if "When you are done" in line)
        assert "outcome" not in closing.lower()
        assert "files" in closing  # the answer still says which files changed
