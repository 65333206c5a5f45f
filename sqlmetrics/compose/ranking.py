"""The ranking's stages as assemble() binds them: ranked (by the plan's file, the tie policy,
the cutoff), judged and joined's rewrites, truth's ideal order, the lists of DuckDB's plans
(top_lists.sql and its kin, list_counts.sql) and the hit-rows plan's stages."""

from __future__ import annotations

from sqlglot import exp

from sqlmetrics.compose import duckdb_plan
from sqlmetrics.compose.diagnostics import list_counts_stage
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.plan import Plan
from sqlmetrics.compose.stages import bind_placeholders, derived_table, number, prune, stage


def cutoff_literal(tree: exp.Select, cutoff: int | None) -> exp.Select:
    """Binds ``$cutoff``; without one (a metric reads the whole list) drops the QUALIFY (the
    WHERE of ranked_given.sql, which has no window to qualify)."""
    if cutoff is None:
        tree.set("qualify", None)
        where = tree.args.get("where")
        if where is not None and any(p.name == "cutoff" for p in where.find_all(exp.Placeholder)):
            tree.set("where", None)
        return tree
    return bind_placeholders(tree, cutoff=exp.Literal.number(cutoff))


def top_lists_stage(
    lists: str | None,
    options: Options,
    cutoff: int | None,
    rows: int | None,
    score_floor: float | None,
    diagnostics: bool,
    depth: int | None,
) -> exp.Select:
    """plan.py's lists (top_lists.sql, score_lists.sql or sorted_lists.sql), each user's first
    ``rows`` items and scores (the deepest cutoff, + 1 for the diagnostics) as lists (scores
    alone in score_lists.sql); ranked_top_k.sql unnests them, the hit-rows plan joins them
    (duckdb_plan.py). Unused (and not assembled) without lists. ``depth``: how deep its
    repeated items are counted (plan.repeats_depth)."""
    top_lists = stage(lists or "top_lists")
    duckdb_plan.bind_repeats(top_lists, depth)
    if options.ties == "id_text":
        order_ids_as_text(top_lists)
    if lists is not None and cutoff is not None and rows is not None:
        top_lists = bind_placeholders(
            top_lists, cutoff=exp.Literal.number(cutoff), rows=exp.Literal.number(rows)
        )
    duckdb_plan.bind_score_floor(top_lists, score_floor)
    if lists is not None and not diagnostics:
        duckdb_plan.without_list_checks(top_lists)
    return top_lists


def bound_list_counts(
    plan: Plan,
    inputs: Inputs,
    options: Options,
    dialect: str,
    diagnostics: bool,
    repeats: str,
) -> exp.Select:
    """list_counts.sql: the lengths the metrics read, and with the diagnostics every count
    over the whole lists; the repeated items too unless ranked's first positions count them
    (``repeats`` "ranked") or none is counted ("none"); on DuckDB's own plans they are found in
    each list's items."""
    given_ranks = inputs.rank is not None
    list_counts = list_counts_stage(given_ranks, given_ranks and options.ranks == "literal")
    if not diagnostics:  # only the diagnostics read more than the lengths
        prune(list_counts, {"user_id", "list_length"})
    elif repeats != "lists":
        kept = [p for p in list_counts.expressions if p.alias_or_name != "duplicate_rows"]
        list_counts.set("expressions", kept)
    if dialect == "duckdb" and diagnostics:
        duckdb_plan.count_nan_by_filter(list_counts)
    if plan.own and diagnostics and repeats == "lists":
        list_counts = duckdb_plan.count_repeats_in_lists(list_counts)
    return list_counts


def hit_rows_stages(
    top_lists: exp.Select,
    needed: set[str],
    cutoff: int | None,
    options: Options,
    diagnostics: bool,
    placed_by_score: bool,
) -> list[tuple[str, exp.Expr]]:
    """DuckDB's hit-rows plan (duckdb_plan.py): judged from per-user lists and hit rows.
    ``placed_by_score``: the lists are score_lists.sql's, and placed_hits.sql finds the hits."""
    truth_lists, judged = stage("truth_lists"), stage("judged_hits")
    if not diagnostics:  # only the diagnostics read the other counts
        prune(truth_lists, {"user_id", "n_relevant", "top_relevances"})
    prune(judged, needed)
    if placed_by_score:
        placed = stage("placed_hits")
        if options.ties == "id_text":
            order_ids_as_text(placed)
        duckdb_plan.place_hits(judged, placed)
    threshold = number(options.threshold)
    return [
        (
            "truth_lists",
            bind_placeholders(truth_lists, threshold=threshold, cutoff=exp.convert(cutoff)),
        ),
        ("top_lists", top_lists),
        ("judged", bind_placeholders(judged, threshold=threshold, cutoff=exp.convert(cutoff))),
    ]


def ranked_stage(name: str, options: Options) -> exp.Select:
    ranked = stage(name)
    if name in ("ranked", "ranked_top_k", "ranked_judged") and options.ties == "id_text":
        order_ids_as_text(ranked)
    if name == "ranked_by_relevance" and options.ties == "pessimistic":
        for ordered in ranked.find_all(exp.Ordered):
            if isinstance(ordered.this, exp.Coalesce):
                ordered.set("desc", False)
    return ranked


def order_ids_as_text(ranked: exp.Select) -> None:
    """ties="id_text": equal scores by the item id's text, descending (trec_eval compares docnos
    with strcmp, so 9 comes before 100 before 10). dialects.py makes that text compare byte by
    byte where the default collation would not."""
    for ordered in ranked.find_all(exp.Ordered):
        if isinstance(ordered.this, exp.Column) and ordered.this.name == "item_id":
            ordered.set("this", exp.cast(ordered.this.copy(), exp.DataType.build("varchar")))
    # placed_hits.sql and ranked_judged.sql count the rows of a tied score with a greater item id
    for greater in ranked.find_all(exp.GT):
        sides = (greater.this, greater.expression)
        if all(isinstance(side, exp.Column) and side.name == "item_id" for side in sides):
            for side in sides:
                side.replace(exp.cast(side.copy(), exp.DataType.build("varchar")))
    # top_lists.sql and sorted_lists.sql sort {score, item} structs: the text goes in between.
    for struct in ranked.find_all(exp.Struct):
        fields = list(struct.expressions)
        item = next((f.expression for f in fields if f.this.name == "item"), None)
        if item is None:
            continue
        text = exp.cast(item.copy(), exp.DataType.build("varchar"))
        fields.insert(1, exp.PropertyEQ(this=exp.to_identifier("item_text"), expression=text))
        struct.set("expressions", fields)


IDEAL_COLUMNS = (
    "ideal_dcg_through",
    "ideal_gain_through",
    "ideal_excess_through",
    "level_weight_from",
)


def match_within(joined: exp.Select, cutoff: int) -> None:
    """joined.sql matching interactions only to ranked's rows within ``cutoff``: ranked keeps
    the row after it for the diagnostics' ties alone, and a relevant item repeated there
    (unread, so not refused: plan.repeats_depth) would meet its interaction a second time."""
    join = joined.args["joins"][0]
    within = exp.column("pos", "ranked") <= exp.Literal.number(cutoff)
    join.set("on", exp.and_(join.args["on"], within))


def ranked_ideal(joined: exp.Select) -> list[tuple[str, exp.Expr]]:
    """ranked_ideal.sql, when joined (pruned) reads its columns of the ideal order (only
    ndcg_rel, normalized_gain, rndcg and q_measure do): pruned to what joined reads, and read
    by joined in ranked's place (as ``ranked``, so joined.sql's names stand), with ranked's
    other columns joined reads (the chained diagnostics' flags). Else nothing."""
    reads = {column.name for column in joined.find_all(exp.Column)}
    if not reads & set(IDEAL_COLUMNS):
        return []
    carried = {column.name for column in joined.find_all(exp.Column) if column.table == "ranked"}
    ranked_ideal = _in_place_of(joined, "ranked_ideal", "ranked", carried)
    return [("ranked_ideal", ranked_ideal)]


# judgements_ideal.sql's own columns: the ideal order by gain read at a listed position
IDEAL_GAIN_COLUMNS = (
    "gains_dcg_so_far",
    "gains_gain_so_far",
    "gains_ideal_dcg_at_pos",
    "gains_ideal_excess_at_pos",
    "gains_level_weight_at_pos",
)


def judgements_ideal(per_user: exp.Select) -> tuple[list[tuple[str, exp.Expr]], set[str]]:
    """judgements_ideal.sql, when the per-user select over judgements reads its columns (only
    ndcg_rel_gains, normalized_gain_gains and rndcg_gains do): pruned to what that select
    reads, with judgements' other columns it reads, and read by it in judgements' place; and
    the columns of judgements the stage reads. Else nothing."""
    reads = {column.name for column in per_user.find_all(exp.Column)}
    if not reads & set(IDEAL_GAIN_COLUMNS):
        return [], set()
    ideal = _in_place_of(per_user, "judgements_ideal", "judgements", reads)
    return [("judgements_ideal", ideal)], {column.name for column in ideal.find_all(exp.Column)}


def _in_place_of(reader: exp.Select, name: str, replaced: str, carried: set[str]) -> exp.Select:
    """Stage ``name`` read by ``reader`` in the place of ``replaced`` (under that name, so the
    reader's column names stand): pruned to what ``reader`` reads, its derived tables too, with
    those of ``carried`` (columns of ``replaced`` the reader reads) it does not compute."""
    reads = {column.name for column in reader.find_all(exp.Column)}
    inside = stage(name)
    prune(inside, reads)
    _prune_derived(inside)
    for column in sorted(carried - set(inside.named_selects)):
        inside.select(exp.column(column, replaced), copy=False)
    for table in reader.find_all(exp.Table):
        if table.name == replaced:
            table.set("this", exp.to_identifier(name))
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(replaced)))
    return inside


def _prune_derived(select: exp.Select) -> None:
    """The derived tables ``select`` reads, each pruned to the columns the rest of ``select``
    reads, down the nesting: a window of the ideal order no metric asked for is not computed."""
    sources = [select.args["from_"].this, *(join.this for join in select.args.get("joins") or [])]
    for source in sources:
        if not (isinstance(source, exp.Subquery) and isinstance(source.this, exp.Select)):
            continue
        inside = {id(column) for column in source.find_all(exp.Column)}
        outside = {c.name for c in select.find_all(exp.Column) if id(c) not in inside}
        prune(source.this, outside)
        _prune_derived(source.this)


def hits_so_far(judged: exp.Select, literal: bool) -> None:
    """judged.sql's hits_so_far, or under ranks="literal" its hits_through_position (the
    relevant items at positions 1..pos, repeated positions included, carried by one relevant
    row per position); the other is dropped."""
    projections = {projection.alias_or_name: projection for projection in judged.expressions}
    by_position = projections.pop("hits_through_position")
    if literal:
        projections["hits_so_far"].set("this", by_position.this)
    judged.set("expressions", list(projections.values()))


def with_list_lengths(ranked: exp.Select) -> exp.Select:
    """ranked with each list's length (list_counts.sql), for the metrics that read it."""
    names = [projection.alias_or_name for projection in ranked.expressions]
    return (
        exp.select(
            *[exp.column(name, "ranked_rows") for name in names],
            exp.column("list_length", "list_counts"),
        )
        .from_(derived_table(ranked, "ranked_rows"))
        .join(
            "list_counts",
            on=exp.column("user_id", "ranked_rows").eq(exp.column("user_id", "list_counts")),
            join_type="left",
            copy=False,
        )
    )
