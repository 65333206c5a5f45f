"""Files and the process's own DuckDB database: TREC files read as trec_eval reads them
(trec_reader.py; its bytes, lines and refusals in trec_bytes.py, trec_lines.py,
trec_refusals.py), the local in-memory database they and local inputs are read in
(database.py), and the rules that keep a user's files safe when the CLI writes (files.py)."""
