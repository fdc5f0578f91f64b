"""The restart cut sees a reply begin again word for word, and nothing a real answer holds."""

from __future__ import annotations

from shiro_lsp.adapt.reflections.restart_cut import RestartWatch

CONVERTER = "".join(
    f'def {name}_to_metres(value):\n    """{name.capitalize()} in metres."""\n    return value * {factor}\n\n\n'
    for name, factor in (
        ("feet", 0.3048),
        ("inches", 0.0254),
        ("yards", 0.9144),
        ("miles", 1609.344),
        ("chains", 20.1168),
        ("furlongs", 201.168),
        ("fathoms", 1.8288),
        ("leagues", 4828.032),
    )
)
GLOSSARY = "".join(f"- **{term}**: a unit of length used in {where}.\n" for term, where in [
    ("foot", "building plans"), ("inch", "screen sizes"), ("yard", "sports fields"),
    ("mile", "road signs"), ("league", "old sea charts"), ("furlong", "horse racing"),
    ("chain", "land surveys"), ("rod", "fencing"), ("fathom", "depth soundings"),
    ("cubit", "ancient buildings"), ("hand", "the height of horses"), ("span", "old tailoring"),
    ("pace", "marching drills"), ("ell", "cloth trade"), ("link", "survey chains"),
    ("perch", "garden plots"), ("cable", "naval distances"), ("nail", "cloth measures"),
])  # fmt: skip
PASS = (
    "The files that change:\n- units.py\n\nunits.py\n```python\n"
    + CONVERTER
    + "```\n\nGLOSSARY.md\n```markdown\n# Glossary\n\n"
    + GLOSSARY
    + "```\n\nunits.py converts four units to metres now.\n\n"
)


def cut_at(text: str, chunk: int = 7) -> int | None:
    """Where the watch cut the stream (fed in small chunks, as it streams), or None."""
    watch = RestartWatch()
    for at in range(0, len(text), chunk):
        if watch.feed(text[at : at + chunk]):
            return watch.keep_until
    return None


def test_a_reply_written_again_word_for_word_is_cut_where_it_began_again() -> None:
    assert len(PASS) > 1_600
    assert cut_at(PASS * 4) == len(PASS)


def test_it_is_cut_before_the_second_pass_ends() -> None:
    text = PASS * 2
    watch = RestartWatch()
    fed = next(at for at in range(0, len(text), 7) if watch.feed(text[at : at + 7]))
    assert fed < len(text) - 200  # the model's time is not spent on the rest of the pass


def test_a_repeat_that_begins_inside_a_block_is_cut_after_that_block() -> None:
    """A file written out again with its first line changed keeps the change: the cut falls at the end
    of the block the repeat began in."""
    changed = PASS.replace("def feet_to_metres", "def foot_to_metres", 1)
    text = PASS + changed + changed
    kept = text[: cut_at(text)]
    assert kept.endswith("4828.032\n\n\n```\n") and "def foot_to_metres" in kept
    assert kept.count("# Glossary") == 1  # the second pass's glossary is the first's


def test_a_file_written_again_with_a_change_then_new_prose_is_not_cut() -> None:
    first = f"units.py\n```python\n{CONVERTER}{CONVERTER}```\n\n"
    fixed = first.replace("0.3048", "0.30480", 1)
    text = first + "Fixed a rounding slip:\n\n" + fixed + "Now every factor has its full digits, and a test"
    text += " of each conversion would pass." * 3
    assert cut_at(text) is None


def test_an_answer_that_repeats_a_short_phrase_or_two_similar_files_is_not_cut() -> None:
    two_files = (
        f"a.py\n```python\n{CONVERTER}```\n\nb.py\n```python\n{CONVERTER.replace('metres', 'meters')}```\n"
    )
    assert cut_at(two_files + "Both files convert to metres. " * 5) is None
