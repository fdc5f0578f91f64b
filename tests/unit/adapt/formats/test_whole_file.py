"""Files a small model writes out in its reply: which blocks are writes, of which file, with what."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_lsp.adapt.formats.whole_file import file_listings, splice, without_listings, writes_literal_file

STATS = "def average(numbers):\n    return sum(numbers) / (len(numbers) + 1)\n\n\ndef largest(numbers):\n    return max(numbers)\n"
FIXED = STATS.replace("(len(numbers) + 1)", "len(numbers)")
RUNNER = 'from stats import average\n\nprint(f"average: {average([2, 4, 6])}")\n'


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "stats.py").write_text(STATS)
    (tmp_path / "run_stats.py").write_text(RUNNER)
    return tmp_path


def written(text: str, ws: Path, prompt: str = "Fix the average.") -> dict[str, str]:
    return {listing.path: listing.content for listing in file_listings(text, ws, prompt)}


@pytest.mark.parametrize("path_line", ["stats.py", "`stats.py`", "**stats.py**", "### stats.py", "stats.py:"])
def test_a_path_line_then_a_fence_is_the_file(ws: Path, path_line: str) -> None:
    assert written(f"The divisor is wrong.\n\n{path_line}\n```python\n{FIXED}```\n", ws) == {
        "stats.py": FIXED
    }


@pytest.mark.parametrize("indent", ["  ", "   ", "    "])
def test_a_block_indented_under_a_list_item_is_the_file_without_the_indent(ws: Path, indent: str) -> None:
    block = "\n".join(f"{indent}{line}" if line else "" for line in f"```python\n{FIXED}```".split("\n"))
    assert written(f"The changes:\n\n- `stats.py`:\n{block}\n", ws) == {"stats.py": FIXED}


README = "# Stats\n\n## Use\n\n```bash\npython3 run_stats.py\n```\n\n## Options\n\nNone yet.\n\n## Licence\n\nMIT\n"


def test_a_markdown_file_with_its_own_examples_is_read_to_its_end(ws: Path) -> None:
    (ws / "README.md").write_text(README)
    documented = README.replace("None yet.\n", "- --round: digits to round the average to\n")
    reply = f"README.md\n```markdown\n{documented}```\n"
    assert written(reply, ws, "Document a --round option in README.md.") == {"README.md": documented}


def test_a_new_file_needs_its_path_on_its_own_line(ws: Path) -> None:
    assert written("hello.py\n```python\nprint('hello')\n```", ws) == {"hello.py": "print('hello')\n"}
    assert written("Create `hello.py` with:\n```python\nprint('hello')\n```", ws) == {}


def test_a_new_file_the_user_asked_for_is_the_block_the_sentence_names(ws: Path) -> None:
    # the shape of Qwen2.5-Coder-1.5B's reply
    reply = (
        "The files that must change are:\n```\nsizes.sh\n```\n"
        'The new content of `sizes.sh` is:\n```bash\n#!/bin/bash\ndu -sh "$1"\n```'
    )
    prompt = "I need sizes.sh: a shell script giving the disk size of the folder it is given."
    assert written(reply, ws, prompt) == {"sizes.sh": '#!/bin/bash\ndu -sh "$1"\n'}
    assert written(reply, ws, "I need a script giving a folder's size.") == {}  # the user named no file


def test_a_new_file_is_not_taken_for_an_existing_one_the_sentence_also_names(ws: Path) -> None:
    reply = (
        "The deps.txt file should list the libraries run_stats.py pulls in. The contents of the file "
        "should be:\n```\nhttpx\nrich\n```"
    )
    prompt = "Write deps.txt naming each outside library run_stats.py pulls in."
    assert written(reply, ws, prompt) == {"deps.txt": "httpx\nrich\n"}
    (ws / "deps.txt").write_text("numpy\n")  # it exists now: the block is not a rewrite of it
    assert written(reply, ws, prompt) == {}


def test_the_file_the_sentence_names_is_the_one_written(ws: Path) -> None:
    text = f"Here is the corrected version of `stats.py`:\n\n```python\n{FIXED}```\nDone."
    assert written(text, ws) == {"stats.py": FIXED}


def test_with_no_path_near_it_the_block_goes_to_the_named_file_it_fits(ws: Path) -> None:
    text = f"The divisor is wrong. Fixed:\n\n```python\n{FIXED}```"
    assert written(text, ws, "Something in stats.py is off; sort it out.") == {"stats.py": FIXED}
    # named by no one, but its functions are stats.py's and no other file's: that file
    assert written(text, ws, "Something is off; sort it out.") == {"stats.py": FIXED}
    unknown = "Fixed:\n\n```python\ndef median(numbers):\n    return sorted(numbers)[1]\n```"
    assert written(unknown, ws, "Something is off; sort it out.") == {}  # defined nowhere: nowhere to put it


def test_a_fragment_replaces_the_block_it_starts(ws: Path) -> None:
    text = "stats.py\n```python\ndef average(numbers):\n    return sum(numbers) / len(numbers)\n```"
    assert written(text, ws) == {"stats.py": FIXED}


def test_a_method_written_flush_left_keeps_its_class_indent() -> None:
    source = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    assert splice(source, "def f(self):\n    return 3\n") == source.replace("return 1", "return 3")


def test_a_braced_block_is_replaced_with_its_closing_brace() -> None:
    source = "function sum(a) {\n  return a + 1;\n}\n\nfunction keep() {\n  return 0;\n}\n"
    fixed = splice(source, "function sum(a) {\n  return a;\n}\n")
    assert fixed == source.replace("return a + 1;", "return a;")


def test_a_fragment_whose_first_line_is_not_unique_is_not_applied() -> None:
    source = "def a():\n    x = 1\n\n\ndef b():\n    x = 1\n"
    assert splice(source, "    x = 1\n    y = 2\n") is None


@pytest.mark.parametrize(
    "text",
    [
        "For example, stats.py could look like:\n\nstats.py\n```python\ndef average(n):\n    return 0\n```",
        "stats.py\n```python\ndef average(numbers):\n    return sum(numbers) / len(numbers)\n...\n```",
        "stats.py\n```python\ndef average(numbers):\n    # ... rest of the code\n    return 1\n```",
        "stats.py\n```console\ndef average(numbers):\n    return 2\n```",
        "stats.py\n```bash\npython3 run_stats.py\n```",
        f"Here is `stats.py` as it is:\n```python\n{STATS}```",
    ],
    ids=["example", "elided", "rest-of-code", "output", "shell-for-python", "unchanged"],
)
def test_what_is_not_a_write(ws: Path, text: str) -> None:
    assert written(text, ws) == {}


def test_a_quoted_other_file_is_not_written_over_the_named_one(ws: Path) -> None:
    text = f"Here's the corrected version of `run_stats.py`:\n\n```python\n{RUNNER}```"
    assert written(text, ws, "python3 run_stats.py prints the wrong average. Fix the bug.") == {}


def test_the_prose_keeps_everything_but_the_listings(ws: Path) -> None:
    text = f"The divisor is wrong.\n\nstats.py\n```python\n{FIXED}```\n\nRun it again to check."
    listings = file_listings(text, ws, "")
    assert without_listings(text, listings) == "The divisor is wrong.\n\nRun it again to check."


def test_a_quote_of_a_block_start_is_not_a_change() -> None:
    source = "def main():\n    a = 1\n    b = 2\n    return a + b\n"
    assert splice(source, "def main():\n    a = 1\n    b = 2\n") is None


def test_a_call_shaped_block_is_never_a_file_content(ws: Path) -> None:
    (ws / "settings.json").write_text('{"telemetry": true}\n')
    call = '{"function": "some_tool", "arguments": {"path": "settings.json", "content": "{}"}}'
    assert written(f"```json\n{call}\n```", ws, "Switch the flag off in settings.json.") == {}
    package = '{"name": "app", "version": "1.0.0"}'
    assert written(f"package.json\n```json\n{package}\n```", ws) == {"package.json": package + "\n"}


def test_a_block_with_no_file_named_goes_to_the_one_shown_file_it_fits(ws: Path) -> None:
    fragment = "def average(numbers):\n    return sum(numbers) / len(numbers)\n"
    text = f"Here's the corrected code:\n\n```python\n{fragment}```"  # as 1.5B writes it
    shown = ["run_stats.py", "stats.py"]
    assert {x.path: x.content for x in file_listings(text, ws, "The tests fail.", shown)} == {
        "stats.py": FIXED
    }
    (ws / "copy.py").write_text(STATS)
    assert file_listings(text, ws, "The tests fail.", [*shown, "copy.py"]) == []  # two fit: neither


def test_a_block_of_only_new_definitions_is_never_added_to_a_file(ws: Path) -> None:
    text = "To add `median` to `stats.py`, use:\n\n```python\ndef median(numbers):\n    return sorted(numbers)[1]\n```"
    assert written(text, ws) == {}  # shown, not written: nothing is appended by inference
    assert (ws / "stats.py").read_text() == STATS


MODULE = '''"""Statistics helpers."""

from __future__ import annotations

import math

__all__ = ["describe"]


def describe(numbers):
    count = len(numbers)
    total = sum(numbers)
    mean = total / (count + 1)
    low = min(numbers)
    high = max(numbers)
    spread = high - low
    squares = [(n - mean) ** 2 for n in numbers]
    variance = sum(squares) / count
    deviation = math.sqrt(variance)
    middle = sorted(numbers)[count // 2]
    return {
        "count": count,
        "mean": mean,
        "low": low,
        "high": high,
        "spread": spread,
        "deviation": deviation,
        "middle": middle,
    }
'''


@pytest.mark.parametrize("intro", ["stats.py\n", "The fix, in `stats.py`:\n\n", ""])
def test_a_one_function_block_replaces_that_function_and_keeps_the_module(ws: Path, intro: str) -> None:
    (ws / "stats.py").write_text(MODULE)
    # the function is most of the file: the block once passed for the whole file, and the module's
    # docstring, future import, import and __all__ were lost (issue 34)
    fixed = MODULE[MODULE.index("def describe") :].replace("(count + 1)", "count")
    text = f"{intro}```python\n{fixed}```\n"
    expected = MODULE.replace("(count + 1)", "count")
    assert written(text, ws, "The mean in stats.py is off.") == {"stats.py": expected}
    assert file_listings(text, ws, "The mean is off.", ["stats.py", "run_stats.py"])[0].content == expected


def test_a_file_written_out_with_a_constant_now_imported_is_the_file_rewritten(ws: Path) -> None:
    (ws / "parcels.py").write_text("FEE = 4\n\n\ndef charge(weight):\n    return weight * 2 + FEE\n")
    moved = "from fees import FEE\n\n\ndef charge(weight):\n    return weight * 2 + FEE\n"
    text = f"parcels.py\n```python\n{moved}```\n"
    assert written(text, ws, "Put the fee in fees.py") == {"parcels.py": moved}
    dropped = "def charge(weight):\n    return weight * 2 + FEE + 1\n"  # not imported: a fragment still
    assert written(f"parcels.py\n```python\n{dropped}```\n", ws) == {"parcels.py": "FEE = 4\n\n\n" + dropped}


def test_a_new_file_the_user_asked_for_may_be_named_by_its_absolute_path(ws: Path) -> None:
    text = f"The content of `{ws}/fees.py` should be:\n```python\nFEE = 4\n```\n"
    assert written(text, ws, "Put the fee in a new fees.py") == {"fees.py": "FEE = 4\n"}
    assert written(text, ws, "Put the fee somewhere else") == {}  # not asked for: never created


def test_a_function_block_quoting_the_file_unchanged_is_not_a_write(ws: Path) -> None:
    (ws / "stats.py").write_text(MODULE)
    quote = MODULE[MODULE.index("def describe") :]
    assert written(f"stats.py\n```python\n{quote}```\n", ws) == {}


@pytest.mark.parametrize(
    ("command", "literal"),
    [
        ("echo 'hi there' > wave.py", True),  # as 1.5B writes a new file
        ('echo "Added --loud" >> NEWS.md', True),
        ("cat > notes.md <<'EOF'\nhi\nEOF", True),
        ("python3 gen.py > out.txt", False),
        ("echo hi | tee a.txt", False),
        ("sed -i 's/a/b/' x.py", False),
    ],
)
def test_which_bash_commands_only_write_literal_text(command: str, literal: bool) -> None:
    assert writes_literal_file("bash", {"command": command}) is literal


def test_a_call_shaped_block_never_fits_a_shown_file(ws: Path) -> None:
    (ws / "app").mkdir()
    (ws / "app" / "__init__.py").write_text("")
    call = '{\n "name": "read_file",\n "arguments": {"path": "app/settings.py", "offset": 1}\n}'
    text = f"Adjust the offset:\n\n```json\n{call}\n```"  # 1.5B's, once written to app/__init__.py
    assert file_listings(text, ws, "Which file sets RETRY_LIMIT?", ["app/__init__.py", "stats.py"]) == []
    prose_block = "Use this:\n\n```python\nx = 1\ny = 2\n```"
    assert file_listings(prose_block, ws, "", ["app/__init__.py"]) == []  # an empty file fits anything


def test_the_path_may_be_the_blocks_first_line(ws: Path) -> None:
    recorded = "```\nwave.py\nprint('hi there')\n```"  # as 1.5B writes it
    assert written(recorded, ws) == {"wave.py": "print('hi there')\n"}
    heading = "README.md\n```markdown\n# notes.md\nSee the docs.\n```"
    assert written(heading, ws) == {"README.md": "# notes.md\nSee the docs.\n"}  # a heading is content


def test_a_file_named_alone_before_a_block_as_long_as_it_is_rewritten(tmp_path: Path) -> None:
    main = 'from labels import tidi\n\nfor raw in ["ada lovelace"]:\n    print(tidi(raw))\n'
    (tmp_path / "main.py").write_text(main)
    fixed = main.replace("tidi", "tidy")
    # the shape of 1.5B's answer after it was sent back
    reply = f"Here is the updated `main.py`:\n\n```python\n{fixed}```\n\nThe file to fix is `main.py`."
    assert written(reply, tmp_path, "python3 main.py stops early. Repair it.") == {"main.py": fixed}
    listed = f"Files to change: `main.py` `labels.py`\n\n```python\n{fixed}```"
    assert written(listed, tmp_path, "python3 main.py stops early. Repair it.") == {}
    traceback = (
        'Traceback (most recent call last):\n  File "main.py", line 1, in <module>\n'
        "    from labels import tidi\nImportError: cannot import name 'tidi'\n"
    )
    assert written(f"Running `main.py` gives:\n\n```\n{traceback}```", tmp_path, "Repair main.py.") == {}


def test_a_block_given_to_a_new_file_is_not_spliced_into_the_users_file(ws: Path) -> None:
    # the shape of 1.5B's reply (the block once went to the end of the user's file)
    reply = (
        "The `stats` module is not found.\n\n1. Create a directory named `stats`.\n2. Inside it, create a "
        "new file named `median.py` with the following content:\n\n"
        "```python\ndef median(numbers):\n    return sorted(numbers)[1]\n```"
    )
    assert written(reply, ws, "python3 run_stats.py stops early. Repair it.") == {}


def test_a_block_the_line_before_gives_to_one_file_is_never_another_files(ws: Path) -> None:
    # "the updated labels.py" was labels.py unchanged (as 1.5B wrote it), and once went to main.py's end
    labels = "def tidy(text):\n    return text.title()\n"
    (ws / "labels.py").write_text(labels)
    (ws / "main.py").write_text("from labels import tidi\n\nprint(tidi('ada'))\n")
    reply = f"tidy is missing. Here is the updated `labels.py` file:\n```python\n{labels}```"
    assert written(reply, ws, "python3 main.py fails on an import. Repair it.") == {}


@pytest.mark.parametrize("form", ["/{name}", "{root}/{name}"])
def test_a_path_from_the_workspace_root_names_the_workspace_file(ws: Path, form: str) -> None:
    # as 1.5B writes it: "Files changed:\n/stats.py" and the block after a blank line
    path = form.format(root=ws, name="stats.py")
    assert written(f"Files changed:\n{path}\n\n```python\n{FIXED}```", ws, "Sort out stats.py.") == {
        "stats.py": FIXED
    }


def test_a_function_block_with_no_path_goes_to_the_one_file_that_defines_it(tmp_path: Path) -> None:
    for n in range(45):
        (tmp_path / f"filler_{n:02}.py").write_text(f"def filler_{n:02}():\n    return {n}\n")
    (tmp_path / "zz").mkdir()
    deep = '"""Weir levels."""\n\nimport math\n\n\ndef crest(height):\n    return math.floor(height)\n'
    (tmp_path / "zz" / "weir.py").write_text(deep)
    shown = sorted(path.name for path in tmp_path.glob("*.py"))[:40]  # the deep file is not among them
    reply = "The crest rounds down; it should round up:\n\n```python\ndef crest(height):\n    return math.ceil(height)\n```"
    (listing,) = file_listings(reply, tmp_path, "The weir crest is too low.", shown)
    assert listing.path == "zz/weir.py" and listing.content == deep.replace("floor", "ceil")
    (tmp_path / "zz" / "other.py").write_text("def crest(h):\n    return h\n")  # two definers: which?
    assert file_listings(reply, tmp_path, "The weir crest is too low.", shown) == []


INVOICE = (
    '"""Invoice totals."""\n\n\ndef total(lines):\n    return sum(price for price, _ in lines)\n\n\n'
    "def count(lines):\n    return len(lines)\n"
)
INVOICE_FIXED = INVOICE.replace(
    "sum(price for price, _ in lines)", "sum(price * qty for price, qty in lines)"
)


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    (tmp_path / "lib" / "billing").mkdir(parents=True)
    (tmp_path / "lib" / "billing" / "invoice.py").write_text(INVOICE)
    (tmp_path / "lib" / "billing" / "__init__.py").write_text("")
    return tmp_path


@pytest.mark.parametrize("named", ["billing/invoice.py", "invoice.py"])
def test_a_file_named_without_its_leading_folders_is_the_one_file_it_ends(nested: Path, named: str) -> None:
    on_its_line = f"{named}\n```python\n{INVOICE_FIXED}```\n"
    in_the_sentence = f"Here is the corrected `{named}`:\n```python\n{INVOICE_FIXED}```\n"
    for reply in (on_its_line, in_the_sentence):
        assert written(reply, nested, "Totals ignore the quantity.") == {
            "lib/billing/invoice.py": INVOICE_FIXED
        }
    assert not (nested / named).exists()


def test_a_comment_naming_a_file_on_the_first_line_is_its_label(nested: Path) -> None:
    for label in ("# lib/billing/invoice.py", "# billing/invoice.py"):
        reply = f"Multiply by the quantity in `total`:\n```python\n{label}\n{INVOICE_FIXED}```\n"
        assert written(reply, nested, "Totals ignore the quantity.") == {
            "lib/billing/invoice.py": INVOICE_FIXED
        }


def test_a_comment_that_is_the_files_own_first_line_stays(nested: Path) -> None:
    headed = "# lib/billing/invoice.py\n" + INVOICE
    (nested / "lib" / "billing" / "invoice.py").write_text(headed)
    fixed = "# lib/billing/invoice.py\n" + INVOICE_FIXED
    reply = f"The fix:\n```python\n{fixed}```\n"
    assert written(reply, nested, "Totals ignore the quantity.") == {"lib/billing/invoice.py": fixed}


def test_a_name_that_several_files_end_with_is_no_file_of_theirs(nested: Path) -> None:
    (nested / "archive" / "billing").mkdir(parents=True)
    (nested / "archive" / "billing" / "invoice.py").write_text(INVOICE)
    reply = f"Here is the corrected `billing/invoice.py`:\n```python\n{INVOICE_FIXED}```\n"
    assert written(reply, nested, "Totals ignore the quantity.") == {}
    # and a comment naming no file is content: the block is no file's
    reply = f"The fix:\n```python\n# billing/other.py\n{INVOICE_FIXED}```\n"
    assert written(reply, nested, "Totals ignore the quantity.") == {}


def test_a_new_file_on_its_own_line_is_still_created_when_the_one_it_ends_does_not_take_it(
    nested: Path,
) -> None:
    fresh = "def rate():\n    return 0.2\n"
    reply = f"invoice.py\n```python\n{fresh}```\n"  # nothing of lib/billing/invoice.py: a file of its own
    assert written(reply, nested, "Add invoice.py with a rate function.") == {"invoice.py": fresh}


def test_a_block_that_adds_to_the_file_a_shorter_path_ends_is_that_paths_new_file(nested: Path) -> None:
    # the one file ending with the name has `total`; the block also adds `count_items`: it may be a
    # new file of its own, and is never merged into a file the model did not name in full
    block = "def total(lines):\n    return 0\n\n\ndef count_items(lines):\n    return len(lines)\n"
    reply = f"billing/invoice.py\n```python\n{block}```\n"
    assert written(reply, nested, "Add billing/invoice.py.") == {"billing/invoice.py": block}
    # changing only what that file has is that file's change
    only_total = "def total(lines):\n    return sum(price * qty for price, qty in lines)\n"
    reply = f"billing/invoice.py\n```python\n{only_total}```\n"
    assert written(reply, nested, "Totals ignore the quantity.") == {"lib/billing/invoice.py": INVOICE_FIXED}


def test_a_dotted_name_in_code_is_never_a_new_file(ws: Path) -> None:
    # the user and the reply both name `shapes.Circle` (a module's class); no such file is created
    block = "class Circle:\n    def __init__(self, r):\n        self.r = r\n\n    def area(self):\n        return 3.14159 * self.r**2\n"
    reply = f"Here is the updated `shapes.Circle`:\n```python\n{block}```\n"
    assert written(reply, ws, "Give shapes.Circle an area method.") == {}
    # a new file of a kind the user names is still created
    reply = "The new `notes.txt` is:\n```\nbuy milk\n```\n"
    assert written(reply, ws, "Create notes.txt with a reminder to buy milk.") == {"notes.txt": "buy milk\n"}


def test_a_comment_naming_a_file_outside_the_workspace_is_no_label(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "lib").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("SECRET_PLAN = 1\n")
    reply = "The change:\n```python\n# lib/../../outside.py\nSECRET_PLAN = 2\n```\n"
    assert written(reply, ws, "Change the plan.") == {}


STOCK = "def restock(shelf, count):\n    shelf.append(count)\n    shelf.append(count)\n\n\ndef empty(shelf):\n    shelf.clear()\n"
RESTOCK_FIXED = "def restock(shelf, count):\n    shelf.append(count)\n"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "stock.py").write_text(STOCK)
    (tmp_path / "till.py").write_text(
        "from stock import restock\n\nshelf = []\nrestock(shelf, 3)\nprint(shelf)\n"
    )
    return tmp_path


def fixed_in_talk_of_the_caller(definition: str) -> str:
    # the model names the script the user runs, and shows the function that script imports
    return f"The problem in `till.py` is that `restock` adds the count twice. The corrected function:\n\n```python\n{definition}```\n"


def test_a_definition_shown_while_naming_its_caller_goes_to_the_file_that_defines_it(shop: Path) -> None:
    (listing,) = file_listings(
        fixed_in_talk_of_the_caller(RESTOCK_FIXED), shop, "till.py prints [3, 3]. Fix it."
    )
    assert listing.path == "stock.py"
    assert listing.content == STOCK.replace(
        "    shelf.append(count)\n    shelf.append(count)\n", "    shelf.append(count)\n"
    )


def test_a_definition_two_files_have_or_none_has_goes_nowhere(shop: Path) -> None:
    reply = fixed_in_talk_of_the_caller(RESTOCK_FIXED)
    (shop / "backroom.py").write_text("def restock(shelf, count):\n    return None\n")
    assert file_listings(reply, shop, "till.py prints [3, 3]. Fix it.") == []
    (shop / "backroom.py").unlink()
    added = "def audit(shelf):\n    return len(shelf)\n"  # defined nowhere: nothing is added by inference
    assert file_listings(fixed_in_talk_of_the_caller(added), shop, "till.py prints [3, 3]. Fix it.") == []


def test_a_definition_meant_for_a_new_file_never_replaces_the_one_its_name_has(shop: Path) -> None:
    # the model wants a module of its own for it: stock.py's restock is not the block's to replace
    reply = f"Create a new file named `shelving/restock.py` with the following content:\n\n```python\n{RESTOCK_FIXED}```\n"
    assert file_listings(reply, shop, "till.py prints [3, 3]. Fix it.") == []


@pytest.mark.parametrize("fence", ["```", "```text"])
def test_a_block_listing_the_files_to_change_is_not_written_over_the_first(ws: Path, fence: str) -> None:
    stub = "def clamp(value, low, high):\n    pass\n"
    (ws / "clamp.py").write_text(stub)
    body = "def clamp(value, low, high):\n    return max(low, min(value, high))\n"
    text = f"I will edit these:\n{fence}\nclamp.py\nnotes.md\ntest_clamp.py\n```\nThe new `clamp.py`:\n```python\n{body}```\n"
    assert written(text, ws, "Write clamp in clamp.py; notes.md says how.") == {"clamp.py": body}
    assert written(f"I will edit these:\n{fence}\nclamp.py\nnotes.md\n```\n", ws, "Write clamp.") == {}


def test_a_list_of_paths_under_its_own_path_line_is_that_file(ws: Path) -> None:
    (ws / "MANIFEST.txt").write_text("stats.py\n")
    text = "MANIFEST.txt\n```\nstats.py\nrun_stats.py\n```\n"
    assert written(text, ws, "Add run_stats.py to MANIFEST.txt.") == {
        "MANIFEST.txt": "stats.py\nrun_stats.py\n"
    }
