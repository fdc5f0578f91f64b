"""The ACP front door (`shiro-lsp acp`): translation between the Agent Client Protocol and the service."""
