"""Runs sqlmetrics.evaluate through snowflake.connector patched by fakesnow, inside fakesnow's
own virtual environment (it pins its own sqlglot and duckdb; sqlmetrics and the test cases are
imported from the repository, and the connector's own code path runs).

Reads a JSON list of case names on stdin, loads each case's tables, evaluates every metric of
the case (summary and per user) and writes one JSON object on stdout: for each case and
per_user, the result and the diagnostics (``to_json(orient="split")``, with dtypes), or the
message of the refusal.
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

    import sqlmetrics
    from tests.engines.cases import extra_cases, load_cases
    from tests.engines.engines import create_statements

    warnings.simplefilter("ignore")
    wanted = set(json.loads(sys.stdin.read()))
    found: dict[str, Any] = {}
    with fakesnow.patch():
        connection = snowflake.connector.connect(database="SQLMETRICS", schema="TESTS")
        for case in load_cases() + extra_cases():
            if case.name not in wanted:
                continue
            given = {"recommendations": f"r_{case.name}", "interactions": f"t_{case.name}"}
            tables = [(given["recommendations"], case.recommendations)]
            tables.append((given["interactions"], case.interactions))
            if case.items is not None:
                given["items"] = f"i_{case.name}"
                tables.append((given["items"], case.items))
            if case.history is not None:
                given["history"] = f"h_{case.name}"
                tables.append((given["history"], case.history))
            for name, table in tables:
                for statement in create_statements(name, table, "snowflake", replace=True):
                    connection.cursor().execute(statement)
            kwargs = case.kwargs()
            kwargs.pop("interactions_group_by", None)
            for per_user in (False, True):
                key = f"{case.name} per_user={per_user}"
                try:
                    frame = sqlmetrics.evaluate(
                        metrics=case.all_metrics,
                        connection=connection,
                        dialect="snowflake",
                        per_user=per_user,
                        **given,
                        **kwargs,
                    )
                except sqlmetrics.SqlmetricsError as error:
                    found[key] = {"error": str(error)}
                    continue
                diagnostics = sqlmetrics.read_diagnostics(frame)
                found[key] = {
                    "result": frame.to_json(orient="split"),
                    "dtypes": [str(t) for t in frame.dtypes],
                    "diagnostics": diagnostics.to_json(orient="split"),
                }
    answers.write(json.dumps(found))
    answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
