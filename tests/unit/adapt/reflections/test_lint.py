"""What is sent back about the Python files a small model wrote out: pyflakes' words, and where a
name it uses or imports really lives."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.adapt.reflections.lint import python_problems, with_missing_imports

LABELS = "def tidy(text):\n    return text.title()\n"


def test_an_undefined_name_says_which_module_defines_it(tmp_path: Path) -> None:
    (tmp_path / "wordtools.py").write_text("def is_mirrored(word):\n    return word == word[::-1]\n")
    (tmp_path / "main.py").write_text("print(is_mirrored('noon'))\n")
    assert python_problems(tmp_path, ["main.py"]) == [
        "main.py:1: undefined name 'is_mirrored' (defined in wordtools.py; import it)"
    ]


def test_an_undefined_name_no_module_defines_gets_no_hint(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("print(shout('hi'))\n")
    assert python_problems(tmp_path, ["main.py"]) == ["main.py:1: undefined name 'shout'"]


def test_a_written_module_importing_a_name_its_module_lacks_gets_the_close_name(tmp_path: Path) -> None:
    (tmp_path / "labels.py").write_text(LABELS)
    (tmp_path / "main.py").write_text("from labels import tidi\n\nprint(tidi('ada'))\n")
    assert python_problems(tmp_path, ["main.py"]) == [
        "main.py:1: cannot import name 'tidi' from 'labels' (labels.py defines tidy)"
    ]


def test_imports_between_modules_neither_written_are_not_judged(tmp_path: Path) -> None:
    (tmp_path / "labels.py").write_text(LABELS)
    (tmp_path / "main.py").write_text("from labels import tidi\n")
    (tmp_path / "notes.py").write_text("NOTE = 1\n")
    assert python_problems(tmp_path, ["notes.py"]) == []


def test_a_name_a_written_module_lost_is_still_caught_in_its_importers(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text("def square(r):\n    return 3 * r * r\n")
    (tmp_path / "main.py").write_text("from shapes import square_size\n")
    assert python_problems(tmp_path, ["shapes.py"]) == [
        "main.py:1: cannot import name 'square_size' from 'shapes' (shapes.py defines square)"
    ]


MIRRORED = "def is_mirrored(word):\n    return word == word[::-1]\n"
USES = "for word in ['noon', 'no']:\n    if is_mirrored(word):\n        print(word)\n"


def test_a_missing_import_of_a_function_written_in_the_same_reply_is_added(tmp_path: Path) -> None:
    written = {"wordtools.py": MIRRORED, "main.py": USES}
    content, added = with_missing_imports(tmp_path, written)["main.py"]
    assert added == ["from wordtools import is_mirrored"]
    assert content == "from wordtools import is_mirrored\n\n\n" + USES


def test_the_import_goes_after_the_docstring_and_beside_the_other_imports(tmp_path: Path) -> None:
    (tmp_path / "wordtools.py").write_text(MIRRORED)
    source = '"""Prints mirrored words."""\nimport sys\n\n' + USES
    content, _ = with_missing_imports(tmp_path, {"main.py": source})["main.py"]
    assert content == '"""Prints mirrored words."""\nfrom wordtools import is_mirrored\nimport sys\n\n' + USES


def test_no_import_is_guessed_for_a_name_two_modules_define_or_none(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(MIRRORED)
    (tmp_path / "b.py").write_text(MIRRORED)
    assert with_missing_imports(tmp_path, {"main.py": USES}) == {}
    assert with_missing_imports(tmp_path, {"main.py": "print(shout())\n"}) == {}
