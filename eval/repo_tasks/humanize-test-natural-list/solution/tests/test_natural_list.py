from __future__ import annotations

from humanize import natural_list


def test_empty() -> None:
    assert natural_list([]) == ""


def test_one() -> None:
    assert natural_list(["one"]) == "one"


def test_two() -> None:
    assert natural_list(["one", "two"]) == "one and two"


def test_three() -> None:
    assert natural_list(["one", "two", 3]) == "one, two and 3"
