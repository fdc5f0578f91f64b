"""Shiro: an AI coding agent behind a language server."""

__version__ = "0.1.0"
