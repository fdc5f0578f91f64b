"""natural_list takes a conjunction (default "and")."""

import humanize
from humanize.lists import natural_list

assert natural_list(["a", "b", "c"], conjunction="or") == "a, b or c", natural_list(
    ["a", "b", "c"], conjunction="or"
)
assert natural_list(["a", "b"], conjunction="or") == "a or b", natural_list(["a", "b"], conjunction="or")
assert natural_list(["a", "b", "c"]) == "a, b and c"
assert natural_list(["x"], conjunction="or") == "x"
assert humanize.natural_list([1, 2], "nor") == "1 nor 2", humanize.natural_list([1, 2], "nor")
