"""File-system policy and OS primitives, below every other area: the workspace jail, ignore rules,
the secrets policy and the directory watcher. A leaf: it imports nothing of Shiro's but ``errors``."""
