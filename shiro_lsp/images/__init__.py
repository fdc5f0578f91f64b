"""Images the user gives the model (pasted, dropped, attached, or read by read_file).

``process.py`` checks and downscales them (Pillow), ``store.py`` keeps them by hash in the state root,
``parts.py`` is how the message model names them and what a request carries for them.
"""
