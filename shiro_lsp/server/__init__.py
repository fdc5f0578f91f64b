"""pygls wiring only: the wire types, the handlers, the code action."""
