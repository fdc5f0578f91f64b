"""A block of definitions a model wrote replaces those definitions in the file, and nothing else."""

from __future__ import annotations

import pytest

from shiro_lsp.adapt.definitions import place_definitions

TIDES = '''"""Tide tables for the harbour."""

from __future__ import annotations

import math

__all__ = ["high_water", "Gauge"]


def high_water(hour: float) -> float:
    return 2.0 + math.sin(hour)


class Gauge:
    unit = "m"

    def read(self) -> float:
        return 0.0

    def reset(self) -> None:
        pass


def low_water(hour: float) -> float:
    return 2.0 - math.sin(hour)
'''


def test_a_one_function_block_replaces_that_function_and_keeps_the_rest() -> None:
    block = "def high_water(hour: float) -> float:\n    return 2.5 + math.sin(hour / 2)\n"
    placed = place_definitions("tides.py", TIDES, block)
    assert placed == TIDES.replace("return 2.0 + math.sin(hour)", "return 2.5 + math.sin(hour / 2)")


def test_a_method_written_without_its_class_goes_into_the_class() -> None:
    block = "def reset(self) -> None:\n    self.level = 0.0\n"
    placed = place_definitions("tides.py", TIDES, block)
    assert placed == TIDES.replace(
        "    def reset(self) -> None:\n        pass", "    def reset(self) -> None:\n        self.level = 0.0"
    )


def test_a_class_with_some_of_its_methods_keeps_the_others() -> None:
    block = 'class Gauge:\n    unit = "m"\n\n    def read(self) -> float:\n        return 1.5\n'
    placed = place_definitions("tides.py", TIDES, block)
    assert placed == TIDES.replace("        return 0.0", "        return 1.5")
    changed_attribute = block.replace('"m"', '"ft"')
    assert place_definitions("tides.py", TIDES, changed_attribute) is None


def test_a_new_helper_next_to_a_rewritten_function_goes_right_after_it_with_its_import() -> None:
    block = (
        "import statistics\n\n\n"
        "def high_water(hour: float) -> float:\n    return _smoothed(hour)\n\n\n"
        "def _smoothed(hour: float) -> float:\n    return statistics.fmean([hour, 2.0])\n"
    )
    placed = place_definitions("tides.py", TIDES, block)
    assert placed is not None
    assert placed.index("import math\nimport statistics\n") < placed.index("__all__")
    assert placed.index("def high_water") < placed.index("def _smoothed") < placed.index("class Gauge")
    assert placed.count("def low_water") == 1 and '"""Tide tables for the harbour."""' in placed


@pytest.mark.parametrize(
    "block",
    [
        "def ebb(hour):\n    return -hour\n",  # only new: never added by inference
        "def high_water(hour):\n    return hour\n\nprint(high_water(3))\n",  # a statement besides definitions
        "def high_water(hour):\n    return (hour\n",  # does not parse
        "x = 1\n",  # a new constant
    ],
)
def test_a_block_that_cannot_be_placed_is_not(block: str) -> None:
    assert place_definitions("tides.py", TIDES, block) is None


def test_a_name_defined_twice_at_the_same_depth_cannot_be_placed() -> None:
    two = "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n"
    assert place_definitions("two.py", two, "def run(self):\n    return 1\n") is None


def test_a_decorated_function_is_replaced_with_its_decorators() -> None:
    current = "import functools\n\n\n@functools.cache\ndef depth(n):\n    return n\n\n\nLIMIT = 3\n"
    block = "@functools.lru_cache(maxsize=8)\ndef depth(n):\n    return n * 2\n"
    assert place_definitions("d.py", current, block) == (
        "import functools\n\n\n@functools.lru_cache(maxsize=8)\ndef depth(n):\n    return n * 2\n\n\nLIMIT = 3\n"
    )


def test_javascript_and_typescript_functions_are_placed_by_their_definition() -> None:
    current = (
        'import { clamp } from "./math.js";\n\n'
        "export function level(x) {\n  return clamp(x, 0, 9);\n}\n\n"
        "function unused() {\n  return 1;\n}\n"
    )
    block = "export function level(x) {\n  return clamp(x * 2, 0, 9);\n}\n"
    assert place_definitions("levels.js", current, block) == current.replace(
        "clamp(x, 0, 9)", "clamp(x * 2, 0, 9)"
    )
    typed = "export function tally(rows: number[]): number {\n  return rows.length;\n}\n\nexport const LIMIT = 4;\n"
    fixed = "export function tally(rows: number[]): number {\n  return rows.reduce((a, b) => a + b, 0);\n}\n"
    assert place_definitions("tally.ts", typed, fixed) == typed.replace(
        "return rows.length;", "return rows.reduce((a, b) => a + b, 0);"
    )


def test_a_file_of_unknown_language_is_not_placed() -> None:
    assert place_definitions("notes.txt", "a\n", "def a():\n    pass\n") is None


def test_the_first_lines_of_a_function_quoted_change_nothing_and_a_deletion_does() -> None:
    quote = "def count(apples):\n    total = 0\n"
    current = "def count(apples):\n    total = 0\n    print(apples)\n    return total\n"
    assert place_definitions("c.py", current, quote) == current
    assert place_definitions("c.py", current, "def count(apples):\n    total = 0\n    return total\n") == (
        "def count(apples):\n    total = 0\n    return total\n"
    )


def test_a_block_nested_too_deep_to_parse_is_not_placed() -> None:
    deep = "def total():\n    return " + " + ".join(["1"] * 100_000) + "\n"
    assert place_definitions("calc.py", "def total():\n    return 0\n", deep) is None
