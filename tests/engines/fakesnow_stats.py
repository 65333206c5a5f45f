"""Runs evaluate(ci=...) and compare through snowflake.connector patched by fakesnow, inside
fakesnow's own virtual environment (as fakesnow_evaluate.py does for evaluate).

Reads a JSON list of {"case", "call"} on stdin (tests/engines/stats_cases.py's cases and
calls) and writes one JSON object on stdout: per "case call", the result as
``to_json(orient="split")``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def main() -> int:
    # Anything fakesnow or DuckDB print must not mix with the answer.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    import warnings

    import fakesnow
    import snowflake.connector

    from tests.engines.engines import create_statements
    from tests.engines.stats_cases import CASES, run

    warnings.simplefilter("ignore")
    wanted = json.loads(sys.stdin.read())
    found: dict[str, Any] = {}
    with fakesnow.patch():
        connection = snowflake.connector.connect(database="SQLMETRICS", schema="TESTS")
        loaded: set[str] = set()
        for item in wanted:
            case = next(case for case in CASES if case.name == item["case"])
            given = {"recommendations": f"r_{case.name}", "interactions": f"t_{case.name}"}
            if case.name not in loaded:
                tables = [(given["recommendations"], case.recommendations)]
                tables.append((given["interactions"], case.interactions))
                for name, table in tables:
                    for statement in create_statements(name, table, "snowflake", replace=True):
                        connection.cursor().execute(statement)
                loaded.add(case.name)
            options = {"connection": connection, "dialect": "snowflake"}
            frame = run(case, item["call"], given, options)
            found[f"{case.name} {item['call']}"] = frame.to_json(orient="split")
    answers.write(json.dumps(found))
    answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
