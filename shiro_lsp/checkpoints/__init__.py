"""Change tracking: what a turn changed (recorded for the engine), the user's review of it (diff,
undo, keep, restore), and the workspace scans that see what bash changed. The store on disk is
``state/checkpoints.py``."""
