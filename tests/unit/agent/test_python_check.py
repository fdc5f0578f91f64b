"""What is sent back about the Python files a small model wrote out: pyflakes' words, and where a
name it uses or imports really lives."""

from __future__ import annotations

from pathlib import Path

from shiro_lsp.agent.python_check import python_problems, with_missing_imports, without_standard_library

NAMES = "def title_case(text):\n    return text.title()\n"


def test_an_undefined_name_says_which_module_defines_it(tmp_path: Path) -> None:
    (tmp_path / "textutils.py").write_text("def is_palindrome(word):\n    return word == word[::-1]\n")
    (tmp_path / "main.py").write_text("print(is_palindrome('noon'))\n")
    assert python_problems(tmp_path, ["main.py"]) == [
        "main.py:1: undefined name 'is_palindrome' (defined in textutils.py: import it from there)"
    ]


def test_an_undefined_name_no_module_defines_gets_no_hint(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("print(shout('hi'))\n")
    assert python_problems(tmp_path, ["main.py"]) == ["main.py:1: undefined name 'shout'"]


def test_a_written_module_importing_a_name_its_module_lacks_gets_the_close_name(tmp_path: Path) -> None:
    (tmp_path / "names.py").write_text(NAMES)
    (tmp_path / "main.py").write_text("from names import titel_case\n\nprint(titel_case('ada'))\n")
    assert python_problems(tmp_path, ["main.py"]) == [
        "main.py:1: cannot import name 'titel_case' from 'names' (names.py defines title_case)"
    ]


def test_imports_between_modules_neither_written_are_not_judged(tmp_path: Path) -> None:
    (tmp_path / "names.py").write_text(NAMES)
    (tmp_path / "main.py").write_text("from names import titel_case\n")
    (tmp_path / "notes.py").write_text("NOTE = 1\n")
    assert python_problems(tmp_path, ["notes.py"]) == []


def test_a_name_a_written_module_lost_is_still_caught_in_its_importers(tmp_path: Path) -> None:
    (tmp_path / "geometry.py").write_text("def area(r):\n    return 3 * r * r\n")
    (tmp_path / "main.py").write_text("from geometry import calc_area\n")
    assert python_problems(tmp_path, ["geometry.py"]) == [
        "main.py:1: cannot import name 'calc_area' from 'geometry' (geometry.py defines area)"
    ]


PALINDROME = "def is_palindrome(word):\n    return word == word[::-1]\n"
USES = "for word in ['noon', 'no']:\n    if is_palindrome(word):\n        print(word)\n"


def test_a_missing_import_of_a_function_written_in_the_same_reply_is_added(tmp_path: Path) -> None:
    written = {"textutils.py": PALINDROME, "main.py": USES}
    content, added = with_missing_imports(tmp_path, written)["main.py"]
    assert added == ["from textutils import is_palindrome"]
    assert content == "from textutils import is_palindrome\n\n\n" + USES


def test_the_import_goes_after_the_docstring_and_beside_the_other_imports(tmp_path: Path) -> None:
    (tmp_path / "textutils.py").write_text(PALINDROME)
    source = '"""Prints palindromes."""\nimport sys\n\n' + USES
    content, _ = with_missing_imports(tmp_path, {"main.py": source})["main.py"]
    assert content == '"""Prints palindromes."""\nfrom textutils import is_palindrome\nimport sys\n\n' + USES


def test_no_import_is_guessed_for_a_name_two_modules_define_or_none(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(PALINDROME)
    (tmp_path / "b.py").write_text(PALINDROME)
    assert with_missing_imports(tmp_path, {"main.py": USES}) == {}
    assert with_missing_imports(tmp_path, {"main.py": "print(shout())\n"}) == {}


def test_the_standard_library_is_left_out_of_a_requirements_file() -> None:
    assert without_standard_library("requirements.txt", "json\nos\nrequests\nflask>=2\n") == (
        "requests\nflask>=2\n",
        ["json", "os"],
    )
    assert without_standard_library("notes.txt", "json\nos\n") == ("json\nos\n", [])
    assert without_standard_library("requirements.txt", "os\n") == ("os\n", [])  # nothing would be left
