"""How Shiro adapts to a model: what it is shown of the workspace and the formats it edits in."""
