"""The baseline: a bare pygls server that only answers `initialize`."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "0").start_io()
