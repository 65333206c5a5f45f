"""Renders the sqlmetrics dbt package's ``evaluate`` macro the way dbt does, without a project.

Runs in the dbt virtual environment (it has Jinja2; the test suite's does not): reads one JSON
request from stdin, ``{"package": folder, "calls": [{"adapter": ..., "kwargs": {...}}]}``, and
writes a JSON list with, per call, ``{"sql": ...}`` or ``{"error": message}`` (a compiler error).

dbt's parts the macros use are stood in for: ``return()`` (a macro's value), ``adapter.dispatch``
(``<adapter>__name``, else ``default__name``), ``exceptions.raise_compiler_error`` and
``modules.re``. The real dbt runs of the package are in test_dbt.py.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import jinja2


class MacroReturn(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class CompilerError(Exception):
    pass


def do_return(value: Any) -> None:
    raise MacroReturn(value)


def raise_compiler_error(message: str) -> None:
    raise CompilerError(message)


class Macros:
    """``sqlmetrics.name(...)``: a macro's return() value, or its rendered text."""

    def __init__(self) -> None:
        self.macros: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        macro = self.macros[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return str(macro(*args, **kwargs))
            except MacroReturn as returned:
                return returned.value

        return call


class Adapter:
    def __init__(self, name: str, macros: Macros) -> None:
        self.name = name
        self.macros = macros

    def dispatch(self, name: str, package: str) -> Any:
        assert package == "sqlmetrics"
        for prefix in (self.name, "default"):
            if f"{prefix}__{name}" in self.macros.macros:
                return getattr(self.macros, f"{prefix}__{name}")
        raise KeyError(name)


class Namespace:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def load(package: Path, adapter: str) -> Macros:
    macros = Macros()
    # SQL, not HTML: nothing to escape, as in dbt.
    environment = jinja2.Environment(
        extensions=["jinja2.ext.do"],
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701
    )
    environment.globals.update(
        sqlmetrics=macros,
        adapter=Adapter(adapter, macros),
        exceptions=Namespace(raise_compiler_error=raise_compiler_error),
        modules=Namespace(re=re),
    )
    environment.globals["return"] = do_return
    for path in sorted((package / "macros").rglob("*.sql")):
        # dbt reads every macro of a file; Jinja's module would hide the _private ones.
        template = environment.from_string(path.read_text(encoding="utf-8"))
        context = template.new_context()
        for _ in template.root_render_func(context):
            pass
        for name, value in context.vars.items():
            if isinstance(value, jinja2.runtime.Macro):
                macros.macros[name] = value
    return macros


def main() -> None:
    request = json.load(sys.stdin)
    package = Path(request["package"])
    loaded: dict[str, Macros] = {}
    results = []
    for call in request["calls"]:
        adapter = call["adapter"]
        if adapter not in loaded:
            loaded[adapter] = load(package, adapter)
        macros = loaded[adapter]
        try:
            results.append(
                {"sql": str(getattr(macros, call.get("macro", "evaluate"))(**call["kwargs"]))}
            )
        except CompilerError as error:
            results.append({"error": str(error)})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
