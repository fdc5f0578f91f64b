"""The agent: provider adapters (openai SDK), tools and permissions, the turn engine, prompts, pricing.

Nothing here knows about the LSP.
"""
