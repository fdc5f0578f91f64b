"""The context a small window is shown: named files, symbol definers, traceback files, their tests,
then the map of the rest, within a budget, the same bytes every time."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.adapt.context_builder import (
    MAX_MAP_TOKENS,
    build_context,
    first_look,
    focus_files,
    mentioned_names,
)
from shiro_lsp.adapt.formats.search_replace import HOW
from shiro_lsp.adapt.repo_map import RepoMap, Scan
from shiro_lsp.fs.secrets import Redactor

KEEP = lambda text: text  # noqa: E731

GLAZE = '''"""Pottery glaze mixing."""

__all__ = ["mix_glaze"]


def mix_glaze(parts: dict[str, float]) -> float:
    return sum(parts.values()) / len(parts)
'''
KILN_HEAD = '''"""Kiln schedules."""


class Kiln:
    def ramp(self, start: int, stop: int) -> list[int]:
        return list(range(start, stop, 50))

'''
KILN_FILLER = "".join(f"    def segment_{n:03}(self) -> int:\n        return {n}\n\n" for n in range(120))
KILN_TAIL = """
def cone_temperature(cone: str) -> int:
    table = {"06": 999, "04": 1060}
    return table[cone]
"""


def studio(root: Path, modules: int = 64) -> Path:
    """A workspace of ``modules`` small modules that call each other, plus a few that matter."""
    (root / "studio").mkdir()
    for n in range(modules):
        calls = f"    return helper_{(n + 1) % modules:02}(x) + 1\n" if n % 3 else "    return x\n"
        (root / "studio" / f"part_{n:02}.py").write_text(
            f"from studio import *\n\n\ndef helper_{n:02}(x):\n{calls}"
        )
    (root / "studio" / "glaze.py").write_text(GLAZE)
    (root / "studio" / "kiln.py").write_text(KILN_HEAD + KILN_FILLER + KILN_TAIL)
    (root / "tests").mkdir()
    (root / "tests" / "test_glaze.py").write_text(
        "from studio.glaze import mix_glaze\n\n\ndef test_even():\n    assert mix_glaze({'a': 1.0}) == 1.0\n"
    )
    (root / "README.md").write_text("Studio tools.\n")
    return root


def scan_of(root: Path) -> Scan:
    return RepoMap(root).scan()


def test_a_named_function_in_a_big_repository_is_shown_with_its_test(tmp_path: Path) -> None:
    root = studio(tmp_path)
    built = build_context(scan_of(root), root, "The average in mix_glaze is off by a bit", 4_000, KEEP)
    assert built.text.startswith("studio/glaze.py\n```\n" + GLAZE.rstrip("\n") + "\n```")
    assert built.text.index("tests/test_glaze.py\n```") > built.text.index("studio/glaze.py")
    assert built.files == ("studio/glaze.py", "tests/test_glaze.py")
    assert "Other files, with their main definitions:" in built.text and not built.whole
    assert built.tokens <= 4_000


def test_the_order_is_named_files_then_definers_then_traceback_then_tests_then_map(tmp_path: Path) -> None:
    root = studio(tmp_path)
    message = (
        "README.md says `Kiln.ramp` is fine, yet this happens:\n"
        "Traceback (most recent call last):\n"
        '  File "studio/part_04.py", line 5, in helper_04\n'
        f'  File "{root}/studio/glaze.py", line 7, in mix_glaze\n'
        "ZeroDivisionError: division by zero\n"
    )
    order = [item.rel for item in focus_files(scan_of(root), root, message)]
    assert order == [
        "README.md",
        "studio/kiln.py",  # defines Kiln and ramp
        "studio/glaze.py",  # the frame nearest the error first
        "studio/part_04.py",
        "tests/test_glaze.py",
    ]


def test_a_file_too_long_to_show_whole_gives_its_outline_and_the_named_definition(tmp_path: Path) -> None:
    root = studio(tmp_path)
    built = build_context(scan_of(root), root, "What does cone_temperature return for 04?", 2_000, KEEP)
    assert "studio/kiln.py has" in built.text and "too many to show whole" in built.text
    assert "class Kiln:\n    def ramp(self, start: int, stop: int) -> list[int]:" in built.text
    region = built.text[built.text.index("Lines ") :]
    assert region.startswith("Lines ") and 'table = {"06": 999, "04": 1060}' in region
    assert "\nstudio/kiln.py\n```" not in built.text  # never in the form of a whole file
    assert "studio/kiln.py" not in built.files
    assert built.tokens <= 2_000
    assert built.text.endswith(HOW.format(files="studio/kiln.py"))  # said once, after what is shown


def test_the_budget_is_kept_at_every_size(tmp_path: Path) -> None:
    root = studio(tmp_path)
    scan = scan_of(root)
    for tokens in (300, 800, 2_000, 8_000):
        built = build_context(scan, root, "mix_glaze and Kiln and cone_temperature", tokens, KEEP)
        assert built.tokens <= tokens + 60, tokens  # a heading's worth over at most, never a file's


def test_the_same_workspace_and_message_give_the_same_bytes(tmp_path: Path) -> None:
    root = studio(tmp_path)
    message = "Why does helper_07 return more than helper_06?"
    first = build_context(scan_of(root), root, message, 3_000, KEEP)
    again = build_context(RepoMap(root).scan(), root, message, 3_000, KEEP)
    assert first == again and "studio/part_07.py" in first.text


def test_a_small_workspace_is_shown_whole(tmp_path: Path) -> None:
    (tmp_path / "glaze.py").write_text(GLAZE)
    (tmp_path / "notes.txt").write_text("Mix by weight.\n")
    (tmp_path / "empty.py").write_text("")
    built = build_context(scan_of(tmp_path), tmp_path, "notes.txt is out of date", 2_000, KEEP)
    later = build_context(scan_of(tmp_path), tmp_path, "and notes.txt again", 2_000, KEEP, overview=False)
    assert later.whole and later.text == "notes.txt\n```\nMix by weight.\n```"
    assert built.whole and "SEARCH" not in built.text  # short files are written out whole
    assert built.files == ("notes.txt", "glaze.py")  # the named file first, then the rest
    assert built.text.startswith("notes.txt\n```\nMix by weight.\n```\n\nglaze.py\n```")


def test_ignored_and_secrets_files_stay_out_and_secret_values_are_cut(tmp_path: Path) -> None:
    root = studio(tmp_path)
    (root / ".gitignore").write_text("scratch/\n")
    (root / "scratch").mkdir()
    (root / "scratch" / "draft.py").write_text("def draft_glaze():\n    pass\n")
    (root / ".env").write_text("KILN_TOKEN=sk-live-abcdef0123456789abcdef\n")
    (root / "studio" / "glaze.py").write_text(GLAZE + '\nKILN_KEY = "sk-proj-ABCDEFGHIJ0123456789"\n')
    redact = Redactor.of(["sk-proj-ABCDEFGHIJ0123456789"]).redact
    built = build_context(scan_of(root), root, "mix_glaze, draft_glaze and .env please", 8_000, redact)
    assert "sk-proj-ABCDEFGHIJ0123456789" not in built.text and "[redacted" in built.text
    assert "sk-live" not in built.text and "KILN_TOKEN" not in built.text
    assert "draft" not in built.text


def test_names_are_read_as_written() -> None:
    assert mentioned_names("Call `Kiln.ramp` then cone_temperature()") == [
        "Call",
        "Kiln",
        "ramp",
        "then",
        "cone_temperature",
    ]


def test_a_plain_word_names_a_definition_only_when_one_file_defines_it(tmp_path: Path) -> None:
    root = studio(tmp_path)
    for name in ("a.py", "b.py"):
        (root / name).write_text("def glaze():\n    pass\n")
    scan = scan_of(root)
    assert [item.rel for item in focus_files(scan, root, "make the glaze darker")] == []
    (root / "b.py").unlink()
    scan = scan_of(root)
    assert [item.rel for item in focus_files(scan, root, "make the glaze darker")] == ["a.py"]


def test_a_later_turn_shows_only_what_the_message_points_at(tmp_path: Path) -> None:
    root = studio(tmp_path)
    later = build_context(scan_of(root), root, "Now mix_glaze again", 4_000, KEEP, overview=False)
    assert later.text.startswith("studio/glaze.py\n```") and "Other files" not in later.text
    assert build_context(scan_of(root), root, "Thanks!", 4_000, KEEP, overview=False).text == ""


def test_a_first_look_is_the_map_alone_within_its_budget(tmp_path: Path) -> None:
    root = studio(tmp_path)
    look = first_look(scan_of(root), root, "where is mix_glaze used?", 300, KEEP)
    assert look.startswith("The repository's files, with their main definitions:\n")
    assert "def mix_glaze(parts: dict[str, float]) -> float:" in look and "```" not in look
    assert len(look) // 4 <= 300


def test_a_qualified_name_is_its_last_defined_part_and_the_qualifier_picks_the_definer(
    tmp_path: Path,
) -> None:
    root = studio(tmp_path, modules=4)
    (root / "studio" / "packing.py").write_text("class Box:\n    def wrap(self):\n        return 1\n")
    (root / "studio" / "wrap.py").write_text(
        "class Sheet:\n    def __init__(self, width):\n        self.width = width\n"
    )
    (root / "studio" / "oven.py").write_text("class Oven:\n    def ramp(self):\n        return 2\n")
    scan = scan_of(root)

    def focus(message: str) -> list[str]:
        return [item.rel for item in focus_files(scan, root, message)]

    # the module before the class names where it is defined; the keyword before `=` names nothing
    assert focus("pack(wrap=wrap.Sheet(width=3)) tears the paper") == ["studio/wrap.py"]
    # the class before the method picks that class's method among the files defining one of that name
    assert focus("Oven.ramp() overshoots by 40 degrees") == ["studio/oven.py"]
    assert focus("Kiln.ramp() overshoots by 40 degrees") == ["studio/kiln.py"]
    # a member the workspace does not define falls back to its class
    assert focus("Oven.preheat_minutes is read before it is set") == ["studio/oven.py"]


def test_a_file_the_message_names_comes_before_the_files_of_the_names_it_uses(tmp_path: Path) -> None:
    root = studio(tmp_path)
    message = "In studio/kiln.py, make mix_glaze agree with Kiln.ramp"  # kiln.py: named, and a definer
    order = [item.rel for item in focus_files(scan_of(root), root, message)]
    assert order[:2] == ["studio/kiln.py", "studio/glaze.py"]


def test_a_long_file_found_by_a_name_is_shown_in_part_though_it_would_fit(tmp_path: Path) -> None:
    root = studio(tmp_path)
    built = build_context(scan_of(root), root, "Kiln.ramp skips the last step", 8_000, KEEP)
    assert built.partial[:1] == ("studio/kiln.py",) and "studio/kiln.py" not in built.files
    assert "def ramp(self, start: int, stop: int)" in built.text
    assert "return list(range(start, stop, 50))" in built.text  # the named method whole
    assert "def segment_119(self)" not in built.text or "return 119" not in built.text


def test_a_long_file_the_message_names_is_shown_whole_when_it_fits(tmp_path: Path) -> None:
    root = studio(tmp_path)
    built = build_context(scan_of(root), root, "In studio/kiln.py, Kiln.ramp skips a step", 8_000, KEEP)
    assert built.files[:1] == ("studio/kiln.py",)
    assert "        return 119\n" in built.text


def test_the_map_spends_its_share_not_what_the_files_leave(tmp_path: Path) -> None:
    root = studio(tmp_path, modules=400)
    built = build_context(scan_of(root), root, "How is this project laid out?", 8_000, KEEP)
    assert built.text.startswith("Other files, with their main definitions:")
    assert 1_000 < built.tokens <= MAX_MAP_TOKENS
