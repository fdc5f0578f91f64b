"""How a model's reply is read: native tool calls, calls written as text, files written out whole."""
