"""The tests written must catch a broken clamp: each mutant must make them fail."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MUTANTS = [
    "def clamp(value, low, high):\n    return value\n",
    "def clamp(value, low, high):\n    return max(low, value)\n",
    "def clamp(value, low, high):\n    return min(high, value)\n",
]
caught = 0
for mutant in MUTANTS:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy("test_mathutils.py", Path(tmp) / "test_mathutils.py")
        (Path(tmp) / "mathutils.py").write_text(mutant)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
        caught += proc.returncode != 0
if caught < 2:
    sys.exit(f"the tests caught {caught} of {len(MUTANTS)} broken clamps")
