"""Reflections: what sends a model back for another step when its reply leaves the work undone or
wrong (Aider's reflected message), in one loop with one budget (``base.py``). Each has a name, a
group (its module) and a one-line general rule (its docstring's first line)."""
