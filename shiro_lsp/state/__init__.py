"""Persistence: paths, atomic writes and locks, and the stores built on them."""
