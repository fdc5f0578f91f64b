import re

UNITS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """Turn a duration like '2h5m' or '45s' into seconds."""
    total = 0
    for amount, unit in re.findall(r"(\d+)([hms])", text):
        total += int(amount) * UNITS[unit]
    return total
