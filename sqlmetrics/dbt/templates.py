"""A dbt package and dbt models generated from ``sql/``, so scheduled tables get the same numbers.

The package's ``evaluate`` macro takes the metric list, the group columns and the options as
arguments, so its SQL cannot be rendered in advance for every call. It is rendered instead
once per adapter, through ``compose`` and ``dialects.portable`` like every other query, from
inputs made of sentinels: sentinel tables and columns, two sentinel group columns (one in
both tables, one in the recommendations only) and a sentinel cutoff. The rendered tree is
then turned into a Jinja template on the AST, never by editing SQL text:

- the sentinel tables and columns become ``{{ recommendations }}``, ``{{ columns.user }}``...,
  filled by the macro with relations and validated identifiers;
- each run of group columns in a list (a PARTITION BY, a GROUP BY, a projection list, a join
  condition) becomes a Jinja loop over the groups the macro was given;
- the per-user metric columns and the final aggregates become a loop over the requests, each
  request's expression rendered from its metric file, with ``{{ r.k }}`` for its cutoff;
- what the options change (tie policy, whole list or a cutoff, population, rank or score,
  a relevance column or none) is rendered for each value, and the macro picks the variant.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import ErrorLevel

from sqlmetrics.catalog.metrics import Metric, MetricRequest, metrics
from sqlmetrics.compose.inputs import POPULATIONS, TIES, Group, Inputs, Options
from sqlmetrics.compose.per_user import CUTOFF_CONSTANTS
from sqlmetrics.compose.query import compose
from sqlmetrics.compose.stages import group_key
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render.dialects import RESERVED_WORDS, portable

ADAPTERS: dict[str, str] = {
    "duckdb": "duckdb",
    "postgres": "postgres",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "databricks": "databricks",
    "spark": "spark",
    "redshift": "redshift",
    "trino": "trino",
    "clickhouse": "clickhouse",
}
"""dbt adapter name -> sqlglot dialect of its macro body. Any other adapter gets ``default``."""
DEFAULT_DIALECT = "postgres"  # standard SQL with explicit casts: the likeliest to run elsewhere

SENTINEL_RECOMMENDATIONS = "sqlmetrics_sentinel_recommendations"
SENTINEL_INTERACTIONS = "sqlmetrics_sentinel_interactions"
# dbt models: the table each input role is written as, replaced by ref() once rendered
INPUT_TABLES = {
    "recommendations": SENTINEL_RECOMMENDATIONS,
    "interactions": SENTINEL_INTERACTIONS,
    "items": "sqlmetrics_sentinel_items",
    "history": "sqlmetrics_sentinel_history",
}
_COLUMNS = ("user", "item", "score", "rank", "relevance")
_SHARED, _ARM = 0, 1  # the two sentinel groups: in both tables, in the recommendations only
_CUTOFF = 987654321  # a cutoff no metric file writes; checked to be gone after templating
_THRESHOLD = 0.123456789


def _sentinel_column(role: str) -> str:
    return f"sqlmetrics_sentinel_{role}_column"


def _sentinel_group(index: int) -> tuple[str, str]:
    """(input column, output name) of the index-th sentinel group."""
    return f"sqlmetrics_sentinel_group_column_{index}", f"sqlmetrics_sentinel_group_name_{index}"


@dataclass(frozen=True)
class Variant:
    """The options a macro body depends on; each value renders its own text."""

    order: str  # "score" or "rank"
    ties: str
    length: str  # "cutoff": the stages stop at the deepest cutoff; "whole": whole lists
    population: str
    relevance: str  # "column" or "none" (every interaction counts 1)

    def dimensions(self) -> dict[str, str]:
        return {
            "order": self.order,
            "ties": self.ties,
            "length": self.length,
            "population": self.population,
            "relevance": self.relevance,
        }


def variants() -> list[Variant]:
    found = []
    for order, ties, length, population, relevance in itertools.product(
        ("score", "rank"), TIES, ("cutoff", "whole"), POPULATIONS, ("column", "none")
    ):
        if order == "rank" and ties != "id":
            continue  # a rank column fixes the order (compose refuses the others)
        found.append(Variant(order, ties, length, population, relevance))
    return found


def _inputs(variant: Variant) -> Inputs:
    def column(role: str) -> exp.Identifier:
        return exp.to_identifier(_sentinel_column(role))

    groups = []
    for index in (_SHARED, _ARM):
        source, name = _sentinel_group(index)
        groups.append(Group(name, exp.to_identifier(source), in_interactions=index == _SHARED))
    return Inputs(
        recommendations=exp.to_table(SENTINEL_RECOMMENDATIONS),
        interactions=exp.to_table(SENTINEL_INTERACTIONS),
        user=column("user"),
        item=column("item"),
        score=column("score") if variant.order == "score" else None,
        rank=column("rank") if variant.order == "rank" else None,
        relevance=column("relevance") if variant.relevance == "column" else None,
        groups=tuple(groups),
    )


def is_packaged(metric: Metric) -> bool:
    """A ranking metric, read from the ranked lists and the relevant interactions, whose SQL
    depends on its cutoff only through ``$k`` (a constant computed from k, like ndcg_ideal_k's,
    has no Jinja form, nor has the @x of a level metric like iprec_at_recall)."""
    constants = {node.name for node in metric.query.find_all(exp.Placeholder)}
    return (
        metric.reads == "judged"
        and not constants & set(CUTOFF_CONSTANTS)
        and not metric.takes_score_threshold
    )


def packaged_metrics() -> list[Metric]:
    """The metrics the package's macros compute (is_packaged). The others (scored rows, whole
    lists with an items or history table, constants of k) are refused by name in the macros;
    ``sqlmetrics dbt models`` writes them."""
    return [metric for metric in metrics().values() if is_packaged(metric)]


def _stage_requests(variant: Variant) -> list[MetricRequest]:
    """Every metric the variant can serve: its stages keep every column one of them reads."""
    requests = []
    for metric in packaged_metrics():
        if variant.ties == "average" and not metric.ties_average:
            continue
        if variant.length == "cutoff":
            if metric.takes_cutoff and not metric.reads_whole_list:
                requests.append(MetricRequest(metric, _CUTOFF, f"{metric.name}@{_CUTOFF}"))
        else:
            requests.append(MetricRequest(metric, None, metric.name))
    return requests


# templating the tree -----------------------------------------------------------------------


def jinja_var(text: str) -> exp.Var:
    return exp.Var(this=text)


class _Templater:
    """Turns one rendered-to-be tree (after ``portable``) into a Jinja template."""

    def __init__(self, dialect: str, cutoff: str = "{{ cutoff }}") -> None:
        self.dialect = Dialect.get_or_raise(dialect)
        self.cutoff = cutoff
        self.keys = {group_key(_SHARED): _SHARED, group_key(_ARM): _ARM}
        self.names: dict[str, tuple[int, str]] = {}
        for index in (_SHARED, _ARM):
            source, name = _sentinel_group(index)
            self.names[source] = (index, "{{ g.column }}")
            self.names[name] = (index, "{{ q }}{{ g.name }}{{ q }}")

    def sql(self, node: exp.Expr, pretty: bool = False) -> str:
        return node.sql(dialect=self.dialect, pretty=pretty, unsupported_level=ErrorLevel.RAISE)

    def groups_in(self, node: exp.Expr) -> set[int]:
        found = set()
        for identifier in node.find_all(exp.Identifier):
            if identifier.name in self.keys:
                found.add(self.keys[identifier.name])
            elif identifier.name in self.names:
                found.add(self.names[identifier.name][0])
        return found

    def loop_item(self, node: exp.Expr) -> str:
        """One group's item with its names as Jinja expressions over the loop variable ``g``."""
        copy = node.copy()
        for identifier in list(copy.find_all(exp.Identifier)):
            if identifier.name in self.keys:
                identifier.replace(jinja_var("{{ g.key }}"))
            elif identifier.name in self.names:
                identifier.replace(jinja_var(self.names[identifier.name][1]))
        return self.sql(copy)

    def loop(self, items: Sequence[exp.Expr], separator: str, last: bool) -> str:
        """A Jinja loop writing ``items`` (a run of group items) once per group; ``last`` when
        nothing follows the run (no separator after the last group)."""
        by_group = {next(iter(self.groups_in(item))): self.loop_item(item) for item in items}
        if len(by_group) != len(items):
            raise SqlmetricsError("a group item names more than one group")
        if set(by_group) == {_SHARED, _ARM}:
            groups = "groups"
            shared, arm = by_group[_SHARED], by_group[_ARM]
            body = (
                shared
                if shared == arm
                else f"{{% if g.shared %}}{shared}{{% else %}}{arm}{{% endif %}}"
            )
        elif set(by_group) == {_ARM}:
            groups, body = "arm_groups", by_group[_ARM]
        else:
            groups, body = "shared_groups", by_group[_SHARED]
        end = f"{{% if not loop.last %}}{separator}{{% endif %}}" if last else separator
        return f"{{% for g in {groups} %}}{body}{end}{{% endfor %}}"

    def template(self, tree: exp.Expr) -> exp.Expr:
        self.replace_inputs(tree)
        for node in list(tree.find_all(exp.And)):
            if not isinstance(node.parent, exp.And) and node.root() is tree:
                self.conjunction(node)
        self.visit(tree)
        return tree

    def visit(self, node: exp.Expr) -> None:
        """Top down: an item naming one group becomes a loop, as a whole; the others (a window
        partitioned by every group, say) are visited in turn."""
        for key, value in list(node.args.items()):
            if isinstance(value, list):
                self.group_list(node, key, value)
                children = [v for v in node.args.get(key) or [] if isinstance(v, exp.Expr)]
            else:
                children = [value] if isinstance(value, exp.Expr) else []
            for child in children:
                if child.parent is node:
                    self.visit(child)

    def replace_inputs(self, tree: exp.Expr) -> None:
        relations = {
            SENTINEL_RECOMMENDATIONS: "recommendations",
            SENTINEL_INTERACTIONS: "interactions",
        }
        for table in list(tree.find_all(exp.Table)):
            if table.name in relations:
                alias = table.alias or relations[table.name]
                source = jinja_var(f"{{{{ {relations[table.name]} }}}}")
                table.replace(exp.alias_(source, alias))
        columns = {_sentinel_column(role): role for role in _COLUMNS}
        for identifier in list(tree.find_all(exp.Identifier)):
            if identifier.name in columns:
                identifier.replace(jinja_var(f"{{{{ columns.{columns[identifier.name]} }}}}"))
        for literal in list(tree.find_all(exp.Literal)):
            if literal.is_number and literal.this == str(_CUTOFF):
                literal.replace(jinja_var(self.cutoff))
            elif literal.is_number and literal.this == str(_THRESHOLD):
                literal.replace(jinja_var("{{ threshold }}"))

    def conjunction(self, node: exp.And) -> None:
        """``a.group = b.group AND ... AND a.user_id = b.user_id``: a loop, then the rest."""
        terms = list(node.flatten())
        grouped = [term for term in terms if self.groups_in(term)]
        if not grouped:
            return
        rest = [term for term in terms if not self.groups_in(term)]
        if terms[: len(grouped)] != grouped or not rest:
            raise SqlmetricsError(f"unexpected group condition {self.sql(node)}")
        node.replace(jinja_var(self.loop(grouped, " AND ", last=False) + self.sql(exp.and_(*rest))))

    def group_list(self, node: exp.Expr, key: str, items: list[exp.Expr]) -> None:
        positions = [
            i
            for i, item in enumerate(items)
            if not isinstance(item, exp.Join) and len(self.groups_in(item)) == 1
        ]
        if not positions:
            return
        start, end = positions[0], positions[-1] + 1
        if positions != list(range(start, end)):
            raise SqlmetricsError(f"group items not together in {self.sql(node)}")
        run = items[start:end]
        if end < len(items):  # the loop, then the item after the groups (user_id, users...)
            text = self.loop(run, ", ", last=False) + self.sql(items[end])
            node.set(key, [*items[:start], jinja_var(text), *items[end + 1 :]])
            return
        if start != 0:
            raise SqlmetricsError(f"group items at the end of a list in {self.sql(node)}")
        # The whole list is groups: the clause itself exists only when there are any.
        groups = "arm_groups" if self.groups_in(node) == {_ARM} else "groups"
        node.set(key, [jinja_var(self.loop(run, ", ", last=True))])
        clause = node.find_ancestor(exp.Join) if groups == "arm_groups" else node
        if clause is not None and (isinstance(node, exp.Group) or isinstance(clause, exp.Join)):
            text = f"{{% if {groups} %}} {self.sql(clause)}{{% endif %}}"
            # In a Join's place the text goes in a Column (written as the text alone): walking
            # the scope, Snowflake's generator reads each join's ``this``, which sqlglot's
            # compiled build requires to be a node (a bare Var's is a string).
            clause.replace(
                exp.Column(this=jinja_var(text))
                if isinstance(clause, exp.Join)
                else jinja_var(text)
            )
        else:
            raise SqlmetricsError(f"a list of group columns only in {self.sql(node)}")


# rendering the macro bodies ----------------------------------------------------------------


@functools.cache
def composed_once(requests: tuple[MetricRequest, ...], variant: Variant, duckdb: bool) -> exp.Query:
    """compose's portable query, which differs between adapters only for DuckDB's (its
    ordered sums): composed once for the nine others of an export, not once per adapter.
    Unbounded, and emptied when the export ends: the adapters walk the ~100 variants in turn,
    and a bounded LRU cache smaller than that never hits (half the export's CPU)."""
    options = Options(ties=variant.ties, threshold=_THRESHOLD, population=variant.population)
    dialect = "duckdb" if duckdb else "postgres"
    query = compose(requests, _inputs(variant), options, dialect=dialect, portable=True)
    query.set("order", None)  # a model is a table: no order to keep
    return query


def _composed(requests: Sequence[MetricRequest], variant: Variant, dialect: str) -> exp.Select:
    # portable() rewrites a copy: the cached query stays as composed
    tree = portable(composed_once(tuple(requests), variant, dialect == "duckdb"), dialect)
    if not isinstance(tree, exp.Select):
        raise SqlmetricsError("the composed query is not a SELECT")
    return tree


def _cte(tree: exp.Select, name: str) -> exp.Select:
    body = next(cte.this for cte in tree.args["with_"].expressions if cte.alias == name)
    if not isinstance(body, exp.Select):
        raise SqlmetricsError(f"the {name} stage is not a SELECT")
    return body


def _is_metric_column(projection: exp.Expr) -> bool:
    return re.fullmatch(r"m\d+(_numerator|_denominator)?", projection.alias_or_name) is not None


@dataclass(frozen=True)
class MetricTexts:
    """One request form's templates: its per-user column(s) and its aggregate, reading the
    loop variables ``i`` (its position) and ``r`` (the request: ``r.k``, ``r.label``)."""

    per_user: str
    aggregate: str


def metric_texts(dialect: str, ties: str) -> dict[str, MetricTexts]:
    """Keyed ``ndcg@k`` (with a cutoff) and ``ndcg`` (without), every metric the tie policy
    takes (ties="average" sums hits in closed form)."""
    requests = []
    for metric in packaged_metrics():
        if ties == "average" and not metric.ties_average:
            continue
        if metric.takes_cutoff:
            requests.append(MetricRequest(metric, _CUTOFF, f"{metric.name}@{_CUTOFF}"))
        requests.append(MetricRequest(metric, None, metric.name))
    tree = _composed(requests, Variant("score", ties, "whole", "all", "column"), dialect)
    templater = _Templater(dialect, cutoff="{{ r.k }}")
    templater.template(tree)
    per_user = _cte(tree, "per_user")
    texts: dict[str, MetricTexts] = {}
    for index, request in enumerate(requests):
        name = f"m{index + 1}"
        own = {name, f"{name}_numerator", f"{name}_denominator"}
        columns = [p for p in per_user.expressions if p.alias_or_name in own]
        aggregates = [p for p in tree.expressions if p.alias_or_name == request.label]
        if len(columns) not in (1, 2) or len(aggregates) != 1:
            raise SqlmetricsError(f"cannot find {request.label}'s columns in the composed query")
        for column in aggregates[0].find_all(exp.Column):
            if column.name in own:
                column.set("this", jinja_var(column.name.replace(name, "m{{ i }}", 1)))
        per_user_text = ", ".join(
            f"{templater.sql(p.this)} AS {p.alias.replace(name, 'm{{ i }}', 1)}" for p in columns
        )
        aggregate_text = (
            f"{templater.sql(aggregates[0].this)} AS {{{{ q }}}}{{{{ r.label }}}}{{{{ q }}}}"
        )
        key = f"{request.metric.name}@k" if request.k is not None else request.metric.name
        texts[key] = MetricTexts(per_user_text, aggregate_text)
    return texts


def variant_pieces(variant: Variant, dialect: str) -> list[tuple[str, str]]:
    """(CTE name, or "" for the final SELECT; its template text) for one variant."""
    requests = _stage_requests(variant)
    tree = _composed(requests, variant, dialect)
    per_user = _cte(tree, "per_user")
    kept = [p for p in per_user.expressions if not _is_metric_column(p)]
    per_user.set("expressions", [*kept, jinja_var("{{ per_user_columns }}")])
    labels = {request.label for request in requests}
    kept = [p for p in tree.expressions if p.alias_or_name not in labels]
    tree.set("expressions", [*kept, jinja_var("{{ aggregates }}")])
    templater = _Templater(dialect)
    templater.template(tree)
    pieces = [
        (cte.alias, templater.sql(cte.this, pretty=True)) for cte in tree.args["with_"].expressions
    ]
    tree.set("with_", None)
    pieces.append(("", templater.sql(tree, pretty=True)))
    return pieces


_SENTINELS = re.compile(rf"sqlmetrics_sentinel|{_CUTOFF}|{_THRESHOLD}")


def checked(text: str) -> str:
    """A template must hold no sentinel left over (a shape the templater did not know)."""
    found = _SENTINELS.search(text)
    if found:
        context = text[max(0, found.start() - 80) : found.end() + 20]
        raise SqlmetricsError(f"a sentinel is left in a generated macro: ...{context}")
    return text


def _condition(dimensions: dict[str, str], names: Sequence[str]) -> str:
    return " and ".join(f"v.{name} == '{dimensions[name]}'" for name in names) or "true"


def _choose(texts: dict[Variant, str]) -> str:
    """One Jinja if/elif over the variants' texts, testing only the options that change them."""
    distinct = list(dict.fromkeys(texts.values()))
    if len(distinct) == 1:
        return distinct[0]
    names = list(next(iter(texts)).dimensions())
    # The options this text depends on: changing one of them alone changes the text.
    relevant = [
        name
        for name in names
        if any(
            texts[a] != texts[b]
            for a in texts
            for b in texts
            if a.dimensions()[name] != b.dimensions()[name]
            and all(a.dimensions()[n] == b.dimensions()[n] for n in names if n != name)
        )
    ]
    cases: dict[str, list[str]] = {}
    seen: dict[tuple[str, ...], str] = {}
    for variant, text in texts.items():
        values = tuple(variant.dimensions()[name] for name in relevant)
        if seen.setdefault(values, text) != text:
            raise SqlmetricsError(f"a macro body depends on more than {relevant}")
        condition = _condition(variant.dimensions(), relevant)
        if condition not in cases.setdefault(text, []):
            cases[text].append(condition)
    parts = []
    for index, (text, conditions) in enumerate(cases.items()):
        keyword = "if" if index == 0 else "elif"
        test = " or ".join(f"({c})" for c in conditions)
        parts.append(f"{{%- {keyword} {test} %}}\n{text}\n")
    return "".join(parts) + "{%- endif %}"


def _fold(dialect: str) -> str:
    strategy = Dialect.get_or_raise(dialect).NORMALIZATION_STRATEGY
    if strategy == NormalizationStrategy.UPPERCASE:
        return "upper"
    if strategy == NormalizationStrategy.CASE_SENSITIVE:
        return "none"
    return "lower"


def adapter_macros(adapter: str, dialect: str) -> str:
    """The macros of one adapter: the query body, its per-user columns and its aggregates."""
    by_piece: dict[str, dict[Variant, str]] = {}
    order: list[str] = []
    for variant in variants():
        previous: str | None = None
        for name, text in variant_pieces(variant, dialect):
            if name not in by_piece:
                # A CTE only some variants have (ranked_ideal) goes right after the one before it
                # in that variant's own order, ahead of the CTEs reading it.
                order.insert(order.index(previous) + 1 if previous in order else len(order), name)
            previous = name
            by_piece.setdefault(name, {})[variant] = text
    quote = exp.to_identifier("x", quoted=True).sql(dialect=dialect)[0]
    ctes = ",\n".join(f"{name} AS (\n{_choose(by_piece[name])}\n)" for name in order if name)
    body = f"WITH {ctes}\n{_choose(by_piece[''])}"
    per_user_by_ties, aggregates_by_ties = {}, {}
    for ties in TIES:
        texts = metric_texts(dialect, ties)
        variant = Variant("score", ties, "whole", "all", "column")
        per_user_by_ties[variant] = _request_switch({k: t.per_user for k, t in texts.items()})
        aggregates_by_ties[variant] = _request_switch({k: t.aggregate for k, t in texts.items()})
    per_user, aggregates = _choose(per_user_by_ties), _choose(aggregates_by_ties)
    prefix = f"{adapter}__"
    return checked(
        f"""{{#- Generated by `sqlmetrics dbt export` from sql/ ({dialect} SQL): do not edit. -#}}

{{% macro {prefix}sqlmetrics_quote() %}}{{{{ return({json.dumps(quote)}) }}}}{{% endmacro %}}

{{% macro {prefix}sqlmetrics_fold() %}}{{{{ return('{_fold(dialect)}') }}}}{{% endmacro %}}

{{% macro {prefix}sqlmetrics_query(recommendations, interactions, columns, groups, requests,
                                    cutoff, threshold, v) %}}
{{%- set q = {json.dumps(quote)} -%}}
{{%- set shared_groups = groups | selectattr('shared') | list -%}}
{{%- set arm_groups = groups | rejectattr('shared') | list -%}}
{{%- set per_user_columns -%}}
{per_user}
{{%- endset -%}}
{{%- set aggregates -%}}
{aggregates}
{{%- endset -%}}
{body}
{{% endmacro %}}
"""
    )


def _request_switch(texts: dict[str, str]) -> str:
    """A loop over the requests writing each one's text, chosen by its key."""
    cases = "".join(
        f"{{% {'if' if index == 0 else 'elif'} r.key == '{key}' %}}{text}"
        for index, (key, text) in enumerate(texts.items())
    )
    return (
        "{%- for r in requests %}{% set i = loop.index %}"
        f"{cases}{{% endif %}}{{% if not loop.last %}}, {{% endif %}}{{% endfor %}}"
    )


# the adapter-independent macros ------------------------------------------------------------


def _jinja_literal(value: object) -> str:
    """A Python value as a Jinja literal (JSON's syntax, which Jinja reads, without null)."""
    return json.dumps(value, sort_keys=True)


def _catalog() -> dict[str, dict[str, object]]:
    entries: dict[str, dict[str, object]] = {}
    for metric in metrics().values():
        entry: dict[str, object] = {
            "name": metric.name,
            "cutoff": metric.takes_cutoff,
            "whole": metric.reads_whole_list,
            "average": metric.ties_average,
            "packaged": is_packaged(metric),
        }
        for name in (metric.name, *metric.aliases):
            entries[name] = entry
    return entries


# The hand-written part: arguments checked, then the adapter's generated query macro called.
_SHARED_MACROS = Path(__file__).with_name("macros.sql")


def _metric_macro(name: str, title: str, definition: str, takes_cutoff: bool) -> str:
    label = "'" + name + "' if k is none else '" + name + "@' ~ k"
    check = (
        "  {%- if k is not none and (k is boolean or k is not integer or k < 1) -%}\n"
        f"    {{{{ sqlmetrics._sqlmetrics_fail('{name}: k must be a whole number of at least 1, "
        "got ' ~ k) }}\n  {%- endif -%}\n"
    )
    arguments = "k=none, " if takes_cutoff else ""
    request = label if takes_cutoff else f"'{name}'"
    return (
        f"{{% macro {name}(recommendations, interactions, {arguments}group_by=[], "
        "interactions_group_by=none, columns={}, ties='id', threshold=0.0, population='all') %}\n"
        f"  {{#- {title}: {definition} -#}}\n"
        + (check if takes_cutoff else "")
        + f"  {{{{ return(sqlmetrics.evaluate(recommendations, interactions, [{request}], "
        "group_by=group_by, interactions_group_by=interactions_group_by, columns=columns, "
        "ties=ties, threshold=threshold, population=population)) }}\n"
        "{% endmacro %}\n"
    )


def shared_macros() -> str:
    text = _SHARED_MACROS.read_text(encoding="utf-8").replace("CATALOG", _jinja_literal(_catalog()))
    text = text.replace("RESERVED", _jinja_literal(sorted(RESERVED_WORDS)))
    for metric in packaged_metrics():
        definition = metric.definition.replace("#}", "# }")
        text += "\n" + _metric_macro(metric.name, metric.title, definition, metric.takes_cutoff)
    return text
