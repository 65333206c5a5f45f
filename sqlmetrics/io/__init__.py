"""Files: the rules that keep a user's files safe when the CLI writes (files.py)."""
