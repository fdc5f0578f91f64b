"""`make eval`: real coding tasks, run by Shiro and peer harnesses against one OpenAI-compatible server.

Not part of `make test`. The package never imports ``shiro_lsp``: Shiro is driven through its headless CLI.
"""
