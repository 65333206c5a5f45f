"""A Griffe extension for the API reference (mkdocs.yml): a public function that takes its keyword
options as ``**options: Unpack[...]`` (sqlmetrics/options.py) is shown with the signature
``@takes`` gives it at run time, every keyword with its type and default, as ``help()`` shows
it. Only the modules of those functions are imported; everything else stays static."""

from __future__ import annotations

import ast
import importlib
import inspect
from typing import Any

import griffe

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: griffe.ParameterKind.positional_only,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: griffe.ParameterKind.positional_or_keyword,
    inspect.Parameter.KEYWORD_ONLY: griffe.ParameterKind.keyword_only,
}


class OptionsSignature(griffe.Extension):
    def on_function(self, *, func: griffe.Function, **kwargs: Any) -> None:
        options = [
            parameter
            for parameter in func.parameters
            if parameter.kind is griffe.ParameterKind.var_keyword
            and "Unpack" in str(parameter.annotation)
        ]
        if not options:
            return
        module = importlib.import_module(func.module.path)
        signature = inspect.signature(getattr(module, func.name))
        del func.parameters[options[0].name]
        for parameter in signature.parameters.values():
            if parameter.name in func.parameters:
                continue
            text = parameter.annotation
            annotation = griffe.safe_get_annotation(
                ast.parse(text, mode="eval").body, parent=func.parent
            )
            func.parameters.add(
                griffe.Parameter(
                    parameter.name,
                    annotation=annotation or text,
                    kind=_KINDS[parameter.kind],
                    default=repr(parameter.default),
                )
            )
