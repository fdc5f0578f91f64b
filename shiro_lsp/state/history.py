"""Prompt history per workspace (spec §6.1): Up/Down in the chat box walks it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiro_lsp.state.jsonstore import JsonArrayFile, Reporter, log_reporter

MAX_PROMPTS = 200


def _is_prompt(value: Any) -> bool:
    return isinstance(value, str)


class PromptHistory:
    def __init__(self, path: Path, reporter: Reporter = log_reporter) -> None:
        self.file = JsonArrayFile(path, label="prompt history", is_valid=_is_prompt, reporter=reporter)

    def load(self) -> list[str]:
        return [str(p) for p in self.file.load()]

    def append(self, prompt: str) -> None:
        text = prompt.strip()
        if not text:
            return
        with self.file.locked_items() as prompts:
            if prompts and prompts[-1] == text:
                return
            prompts.append(text)
            self.file.save(prompts[-MAX_PROMPTS:])
