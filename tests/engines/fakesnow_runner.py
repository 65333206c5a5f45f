"""Runs SQL on fakesnow for the test suite, inside fakesnow's own virtual environment.

fakesnow pins its own sqlglot and duckdb, so it cannot share the suite's environment. The suite
starts this script with that environment's Python and writes one JSON object a line on its
stdin, ``{"sql": "..."}``; each gets one line back on stdout: ``{"columns": [...], "rows":
[...]}`` or ``{"error": "..."}``. It exits at the end of its input. Only the standard library,
fakesnow and the Snowflake connector are imported.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
from typing import Any


def plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def main() -> int:
    # Anything fakesnow or DuckDB print must not mix with the answers.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    import warnings

    import fakesnow
    import snowflake.connector

    warnings.simplefilter("ignore")
    with fakesnow.patch():
        connection = snowflake.connector.connect(database="SQLMETRICS", schema="TESTS")
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            try:
                cursor = connection.cursor()
                cursor.execute(request["sql"])
                if cursor.description:
                    columns = [d[0] for d in cursor.description]
                    rows = [[plain(v) for v in row] for row in cursor.fetchall()]
                else:
                    columns, rows = [], []
                answer: dict[str, Any] = {"columns": columns, "rows": rows}
            except Exception as error:  # reported to the test, which fails with it
                answer = {"error": f"{type(error).__name__}: {error}"}
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
