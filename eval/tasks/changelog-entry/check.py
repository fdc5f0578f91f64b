"""The entry sits under [Unreleased], names --shout, and the released sections are untouched."""

import re
import sys

with open("CHANGELOG.md") as f:
    text = f.read()
m = re.search(r"^## \[Unreleased\][^\n]*\n(.*?)(?=^## )", text, re.M | re.S)
if not m:
    sys.exit("no [Unreleased] section followed by a release")
if "shout" not in m.group(1).lower():
    sys.exit("the [Unreleased] section does not mention --shout: " + repr(m.group(1)[:200]))
for old in [
    "## [1.1.0] - 2026-10-04",
    "- `--name` option for greet.py.",
    "## [1.0.0] - 2026-09-12",
    "- First release: greet.py prints a greeting.",
]:
    if old not in text:
        sys.exit(f"a released entry changed: {old!r} is gone")
if text.lower().count("shout") > 2:
    sys.exit("--shout is mentioned in several places")
