"""The sums of the off-policy estimators, as one query over the log, the new policy and the
reward model (sqlmetrics.off_policy reads them; sqlmetrics/stats/off_policy.py finishes them).

Every estimator is a ratio of sums over the log's rounds (one row: a context, a position, the
item shown there, its reward and the logging policy's propensity of showing it there) or over
its lists (the rounds of one context): the query returns those sums, their squares for the
intervals, and the counts of the checks, in one row. Nothing per round travels back.

Written in DuckDB's semantics through the AST; the engine renders it for its dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

# Policy mass above 1 by more than this, in a context (and position), is refused: a rounding
# error of probabilities written as floats is not.
MASS_TOLERANCE = 1e-6

# The query's columns that are the checks' counts (a positive count refuses the call).
CHECKS = (
    "bad_propensities",
    "bad_rewards",
    "repeated_rounds",
    "bad_item_propensities",
    "bad_probabilities",
    "null_groups",
    "repeated_keys",
    "overfull_contexts",
    "overfull_items",
    "unpredicted_rounds",
    "repeated_predictions",
)


@dataclass(frozen=True)
class OffPolicyInputs:
    """The three inputs as relations, and the names of their columns (one name per role, the
    same in every table that has it)."""

    log: exp.Expr
    policy: exp.Expr
    rewards: exp.Expr | None
    context: str
    item: str
    reward: str
    propensity: str
    position: str
    policy_kind: str  # "rank" (a deterministic list) or "probability"
    policy_value: str  # the rank or the probability column of the policy
    prediction: str
    log_position: bool  # the log has a position column (else every round is position 1)
    policy_position: bool  # the policy's probabilities are per position (always for ranks)
    rewards_position: bool
    item_propensity: str | None  # the log's propensity of the item anywhere in its list
    clip: float
    groups: tuple[str, ...] = ()  # the policy's columns that tell its candidates apart
    rewards_groups: bool = False  # the reward model is per candidate (has the group columns)

    @property
    def item_estimator(self) -> bool:
        return self.item_propensity is not None


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table, quoted=True)


def _own(name: str, table: str | None = None) -> exp.Column:
    """A column the query names itself (never a user's name)."""
    return exp.column(name, table=table)


def _double(value: exp.Expr) -> exp.Expr:
    return exp.cast(value, exp.DataType.build("DOUBLE"))


def _num(value: float) -> exp.Expr:
    return exp.Literal.number(repr(float(value)) if not float(value).is_integer() else int(value))


def _case(condition: exp.Expr, then: exp.Expr, otherwise: exp.Expr) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=condition, true=then)], default=otherwise)


def _count_if(condition: exp.Expr) -> exp.Expr:
    return exp.func("SUM", _case(condition, _num(1), _num(0)))


def _ratio(numerator: exp.Expr, denominator: exp.Expr) -> exp.Expr:
    return exp.Div(this=exp.paren(numerator), expression=exp.func("NULLIF", denominator, _num(0)))


def _and(conditions: Sequence[exp.Expr]) -> exp.Expr:
    out = conditions[0]
    for condition in conditions[1:]:
        out = exp.and_(out, condition)
    return out


def _equal_keys(left: str, right: str, keys: Sequence[str]) -> exp.Expr:
    return _and([exp.EQ(this=_own(key, left), expression=_own(key, right)) for key in keys])


def _groups(given: OffPolicyInputs) -> list[str]:
    """The group columns' names inside the query (the users' names are aliased once)."""
    return [f"group_{index}" for index in range(len(given.groups))]


def _group_columns(given: OffPolicyInputs) -> list[exp.Expr]:
    return [
        exp.alias_(_col(name), alias)
        for name, alias in zip(given.groups, _groups(given), strict=True)
    ]


def _log_stage(given: OffPolicyInputs) -> exp.Select:
    position: exp.Expr = _col(given.position) if given.log_position else _num(1)
    columns = [
        exp.alias_(_col(given.context), "context_key"),
        exp.alias_(position, "position_key"),
        exp.alias_(_col(given.item), "item_key"),
        exp.alias_(_double(_col(given.reward)), "reward"),
        exp.alias_(_double(_col(given.propensity)), "propensity"),
    ]
    if given.item_propensity is not None:
        columns.append(exp.alias_(_double(_col(given.item_propensity)), "item_propensity"))
    return exp.select(*columns).from_(exp.alias_(given.log.copy(), "log_input", table=True))


def _policy_stage(given: OffPolicyInputs) -> exp.Select:
    columns = [
        *_group_columns(given),
        exp.alias_(_col(given.context), "context_key"),
        exp.alias_(_col(given.item), "item_key"),
    ]
    if given.policy_kind == "rank":
        columns += [
            exp.alias_(_col(given.policy_value), "position_key"),
            exp.alias_(_double(_num(1)), "pi"),
        ]
    else:
        if given.policy_position:
            columns.append(exp.alias_(_col(given.position), "position_key"))
        columns.append(exp.alias_(_double(_col(given.policy_value)), "pi"))
    return exp.select(*columns).from_(exp.alias_(given.policy.copy(), "policy_input", table=True))


def _rewards_stage(given: OffPolicyInputs, rewards: exp.Expr) -> exp.Select:
    columns = [
        *(_group_columns(given) if given.rewards_groups else []),
        exp.alias_(_col(given.context), "context_key"),
        exp.alias_(_col(given.item), "item_key"),
    ]
    if given.rewards_position:
        columns.append(exp.alias_(_col(given.position), "position_key"))
    columns.append(exp.alias_(_double(_col(given.prediction)), "prediction"))
    return exp.select(*columns).from_(exp.alias_(rewards.copy(), "rewards_input", table=True))


def _policy_keys(given: OffPolicyInputs) -> list[str]:
    """How a policy row meets a round: the context and the item, and the position when the
    policy's probabilities are per position."""
    positioned = given.policy_kind == "rank" or given.policy_position
    return [*_groups(given), "context_key", "item_key", *(["position_key"] if positioned else [])]


def _round_keys(given: OffPolicyInputs) -> list[str]:
    """Where the policy's probabilities add up to at most 1: a context (and position), per
    group."""
    return [key for key in _policy_keys(given) if key != "item_key"]


def _rewards_keys(given: OffPolicyInputs) -> list[str]:
    groups = _groups(given) if given.rewards_groups else []
    return [
        *groups,
        "context_key",
        "item_key",
        *(["position_key"] if given.rewards_position else []),
    ]


def _dm_stage(given: OffPolicyInputs) -> exp.Select:
    """Per context (and position): the reward model's value of the new policy, the sum over
    items of the policy's probability times the prediction; and the policy's mass that has no
    prediction (refused)."""
    round_keys = _round_keys(given)
    prediction = _own("prediction", "model")
    return (
        exp.select(
            *[_own(key, "policy_row") for key in round_keys],
            exp.alias_(
                exp.func(
                    "SUM",
                    exp.Mul(
                        this=_own("pi", "policy_row"),
                        expression=exp.func("COALESCE", prediction, _num(0)),
                    ),
                ),
                "dm",
            ),
            exp.alias_(
                exp.func(
                    "SUM", _case(prediction.is_(exp.null()), _own("pi", "policy_row"), _num(0))
                ),
                "unpredicted_mass",
            ),
            # a prediction repeated for an item of the policy adds to dm once per row: the
            # rows a policy item meets beyond its first (a repeat at a logged item also
            # multiplies the round: repeated_keys)
            exp.alias_(
                exp.Sub(
                    this=exp.func("COUNT", prediction.copy()),
                    expression=exp.func(
                        "COUNT",
                        exp.Distinct(
                            expressions=[
                                _case(
                                    prediction.is_(exp.null()),
                                    exp.null(),
                                    _own("item_key", "policy_row"),
                                )
                            ]
                        ),
                    ),
                ),
                "repeated_predictions",
            ),
        )
        .from_(exp.alias_(exp.to_table("op_policy"), "policy_row", table=True))
        .join(
            exp.alias_(exp.to_table("op_rewards"), "model", table=True),
            on=_equal_keys("policy_row", "model", _rewards_keys(given)),
            join_type="left",
        )
        .group_by(*[_own(key, "policy_row") for key in round_keys])
    )


def _item_policy_stage(given: OffPolicyInputs) -> exp.Select:
    """Per context and item: the new policy's probability of showing the item anywhere in the
    context's list (its slots: the log's deepest position there)."""
    pi = _own("pi", "policy_row")
    keys = [_own(key, "policy_row") for key in [*_groups(given), "context_key", "item_key"]]
    query = exp.select(*keys, exp.alias_(exp.func("SUM", pi), "pi_item")).from_(
        exp.alias_(exp.to_table("op_policy"), "policy_row", table=True)
    )
    if given.policy_kind == "rank" or given.policy_position:
        slots = (
            exp.select(
                _own("context_key"), exp.alias_(exp.func("MAX", _own("position_key")), "slots")
            )
            .from_("op_log")
            .group_by(_own("context_key"))
        )
        query = query.join(
            slots.subquery("list_slots"),
            on=exp.and_(
                _equal_keys("policy_row", "list_slots", ["context_key"]),
                exp.LTE(
                    this=_own("position_key", "policy_row"),
                    expression=_own("slots", "list_slots"),
                ),
            ),
        )
    return query.group_by(*[key.copy() for key in keys])


def _model_columns(pi: exp.Expr, weight: exp.Expr) -> list[exp.Expr]:
    """A round's terms with the reward model: the direct method's (the policy's modelled
    reward there), the doubly robust one, and whether a prediction it needs is missing."""
    logged = _own("prediction", "model")
    dm = exp.func("COALESCE", _own("dm", "policy_value"), _num(0))
    residual = exp.Sub(
        this=_own("reward", "logged"), expression=exp.func("COALESCE", logged.copy(), _num(0))
    )
    dr = exp.Add(
        this=dm.copy(),
        expression=exp.Mul(this=exp.paren(weight.copy()), expression=exp.paren(residual)),
    )
    # the logged item's prediction counts only where its weight is not 0
    unpredicted = exp.or_(
        exp.and_(logged.is_(exp.null()), exp.GT(this=pi.copy(), expression=_num(0))),
        exp.GT(this=_own("unpredicted_mass", "policy_value"), expression=_num(0)),
    )
    return [
        exp.alias_(dm, "dm"),
        exp.alias_(dr, "dr"),
        exp.alias_(_case(unpredicted, _num(1), _num(0)), "unpredicted"),
    ]


def _rounds_stage(given: OffPolicyInputs) -> exp.Select:
    """One row per round: its reward, the new policy's probability of the logged item there
    (pi), the importance weight, its clipped form and, with a reward model, the direct method's
    term and the doubly robust one."""
    pi = exp.func("COALESCE", _own("pi", "policy_row"), _num(0))
    weight = _ratio(pi, _own("propensity", "logged"))
    clipped = _case(
        exp.GT(this=weight.copy(), expression=_num(given.clip)), _num(given.clip), weight.copy()
    )
    groups = _groups(given)
    columns: list[exp.Expr] = [
        *[_own(group, "logged") for group in groups],
        _own("context_key", "logged"),
        _own("reward", "logged"),
        _own("propensity", "logged"),
        exp.alias_(pi, "pi"),
        exp.alias_(weight, "w"),
        exp.alias_(clipped, "w_clipped"),
        exp.alias_(
            _case(_own("context_key", "covered").is_(exp.null()), _num(1), _num(0)), "uncovered"
        ),
    ]
    # the contexts the policy has a row for: a round of another is one it shows nothing in
    contexts = (
        exp.select(*[_own(key) for key in [*groups, "context_key"]]).distinct().from_("op_policy")
    )
    # each candidate (group) of the policy is estimated on every round of the log
    rounds = "op_candidate_log" if groups else "op_log"
    query = exp.select().from_(exp.alias_(exp.to_table(rounds), "logged", table=True))
    query = query.join(
        exp.alias_(exp.to_table("op_policy"), "policy_row", table=True),
        on=_equal_keys("logged", "policy_row", _policy_keys(given)),
        join_type="left",
    ).join(
        contexts.subquery("covered"),
        on=_equal_keys("logged", "covered", [*groups, "context_key"]),
        join_type="left",
    )
    if given.rewards is not None:
        columns += _model_columns(pi, weight)
        round_keys = _round_keys(given)
        query = query.join(
            exp.alias_(exp.to_table("op_rewards"), "model", table=True),
            on=_equal_keys("logged", "model", _rewards_keys(given)),
            join_type="left",
        ).join(
            exp.alias_(exp.to_table("op_dm"), "policy_value", table=True),
            on=_equal_keys("logged", "policy_value", round_keys),
            join_type="left",
        )
    if given.item_estimator:
        pi_item = exp.func("COALESCE", _own("pi_item", "item_policy"), _num(0))
        columns.append(exp.alias_(_ratio(pi_item, _own("item_propensity", "logged")), "w_item"))
        query = query.join(
            exp.alias_(exp.to_table("op_item_policy"), "item_policy", table=True),
            on=_equal_keys("logged", "item_policy", [*groups, "context_key", "item_key"]),
            join_type="left",
        )
    return query.select(*columns)


def _candidate_log_stage(given: OffPolicyInputs) -> exp.Select:
    """The log's rounds once per candidate of the policy (its group values)."""
    candidates = (
        exp.select(*[_own(group) for group in _groups(given)]).distinct().from_("op_policy")
    )
    return (
        exp.select(
            exp.Column(this=exp.Star(), table=exp.to_identifier("logged")),
            *[_own(group, "candidate") for group in _groups(given)],
        )
        .from_(exp.alias_(exp.to_table("op_log"), "logged", table=True))
        .join(candidates.subquery("candidate"), join_type="cross")
    )


def _product(*factors: exp.Expr) -> exp.Expr:
    out = factors[0].copy()
    for factor in factors[1:]:
        out = exp.Mul(this=out, expression=factor.copy())
    return out


def _with_squares(name: str, term: exp.Expr) -> list[tuple[str, exp.Expr, str]]:
    """The sum of a round's term and the sum of its square."""
    return [(name, term, "SUM"), (f"{name}_sq", _product(term, term), "SUM")]


def _round_terms(given: OffPolicyInputs) -> list[tuple[str, exp.Expr, str]]:
    """Every sum (or maximum) the estimators need, as (name, the round's term, SUM or MAX):
    summed per list first (op_lists), then over the lists of each group (the final row)."""
    w, reward, pi, clipped = _own("w"), _own("reward"), _own("pi"), _own("w_clipped")
    terms = [
        ("rounds", _num(1), "SUM"),
        ("matched_rounds", _case(exp.GT(this=pi, expression=_num(0)), _num(1), _num(0)), "SUM"),
        ("uncovered_rounds", _own("uncovered"), "SUM"),
        *_with_squares("pi", pi),
        ("pi_max", pi, "MAX"),
        *_with_squares("pi_r", _product(pi, reward)),
        ("pi_sq_r", _product(pi, pi, reward), "SUM"),
        *_with_squares("w", w),
        ("w_max", w, "MAX"),
        *_with_squares("w_r", _product(w, reward)),
        ("w_sq_r", _product(w, w, reward), "SUM"),
        *_with_squares("c", clipped),
        ("c_max", clipped, "MAX"),
        *_with_squares("c_r", _product(clipped, reward)),
        (
            "clipped_rounds",
            _case(exp.GT(this=w, expression=_num(given.clip)), _num(1), _num(0)),
            "SUM",
        ),
    ]
    if given.rewards is not None:
        terms += [
            *_with_squares("dm", _own("dm")),
            *_with_squares("dr", _own("dr")),
            ("unpredicted_rounds", _own("unpredicted"), "SUM"),
        ]
    if given.item_estimator:
        item = _own("w_item")
        terms += [
            *_with_squares("wi", item),
            ("wi_max", item, "MAX"),
            ("wi_matched", _case(exp.GT(this=item, expression=_num(0)), _num(1), _num(0)), "SUM"),
            *_with_squares("wi_r", _product(item, reward)),
        ]
    return terms


def _lists_stage(given: OffPolicyInputs) -> exp.Select:
    """Per list (a context, in each group): every term's sum over its rounds; the list sums of
    the weighted rewards (w_r, wi_r) are the item-position and independent-item terms."""
    keys = [*_groups(given), "context_key"]
    columns = [
        exp.alias_(exp.func(kind, term.copy()), name) for name, term, kind in _round_terms(given)
    ]
    return (
        exp.select(*[_own(key) for key in keys], *columns)
        .from_("op_rounds")
        .group_by(*[_own(key) for key in keys])
    )


def _scalar(query: exp.Select, name: str) -> exp.Expr:
    return exp.alias_(exp.Subquery(this=query), name)


def _repeats(table: str, keys: Sequence[str]) -> exp.Select:
    """How many key values repeat in ``table``."""
    repeated = (
        exp.select(*[_own(key) for key in keys])
        .from_(table)
        .group_by(*[_own(key) for key in keys])
        .having(exp.GT(this=exp.func("COUNT", exp.Star()), expression=_num(1)))
    )
    return exp.select(exp.func("COUNT", exp.Star())).from_(repeated.subquery("repeated"))


def _check_columns(given: OffPolicyInputs) -> list[exp.Expr]:
    """The checks' counts, as scalar subqueries of the final row."""
    propensity = _own("propensity")
    bad_propensity = exp.or_(
        propensity.is_(exp.null()),
        exp.LTE(this=propensity.copy(), expression=_num(0)),
        exp.GT(this=propensity.copy(), expression=_num(1)),
    )
    pi = _own("pi")
    if given.policy_kind == "rank":
        bad_pi = exp.or_(
            _own("position_key").is_(exp.null()),
            exp.LT(this=_own("position_key"), expression=_num(1)),
        )
    else:
        bad_pi = exp.or_(
            pi.is_(exp.null()),
            exp.LT(this=pi.copy(), expression=_num(0)),
            exp.GT(this=pi.copy(), expression=_num(1)),
        )
    groups = [_own(group).is_(exp.null()) for group in _groups(given)]
    mass_keys = _round_keys(given)
    overfull = (
        exp.select(*[_own(key) for key in mass_keys])
        .from_("op_policy")
        .group_by(*[_own(key) for key in mass_keys])
        .having(exp.GT(this=exp.func("SUM", pi.copy()), expression=_num(1 + MASS_TOLERANCE)))
    )
    columns = [
        _scalar(exp.select(_count_if(bad_propensity)).from_("op_log"), "bad_propensities"),
        _scalar(
            exp.select(_count_if(_own("reward").is_(exp.null()))).from_("op_log"), "bad_rewards"
        ),
        _scalar(_repeats("op_log", ["context_key", "position_key"]), "repeated_rounds"),
    ]
    if given.item_estimator:
        item = _own("item_propensity")
        bad_item = exp.or_(
            item.is_(exp.null()),
            exp.LTE(this=item.copy(), expression=_num(0)),
            exp.GT(this=item.copy(), expression=_num(1)),
        )
        columns.append(
            _scalar(exp.select(_count_if(bad_item)).from_("op_log"), "bad_item_propensities")
        )
    else:
        columns.append(exp.alias_(_num(0), "bad_item_propensities"))
    columns += [
        _scalar(exp.select(_count_if(bad_pi)).from_("op_policy"), "bad_probabilities"),
        _scalar(exp.select(_count_if(exp.or_(*groups))).from_("op_policy"), "null_groups")
        if groups
        else exp.alias_(_num(0), "null_groups"),
        # A key repeated in the policy or the reward model where a round meets it multiplies
        # the round in the joins (op_rounds): counted as the rounds gained, at no group-by of
        # its own (one over the policy's keys cost as much as the rest of the query). A repeat
        # elsewhere adds to its context's mass, which the next check bounds.
        exp.alias_(
            exp.Sub(
                this=exp.func("SUM", _own("rounds")),
                expression=exp.Subquery(
                    this=exp.select(exp.func("COUNT", exp.Star())).from_("op_log")
                ),
            ),
            "repeated_keys",
        ),
        _scalar(
            exp.select(exp.func("COUNT", exp.Star())).from_(overfull.subquery("overfull")),
            "overfull_contexts",
        ),
    ]
    # a rank policy listing an item at two ranks: its probability of being in the list (the
    # independent-item weight's numerator) is 2 (probabilities per position may sum above 1)
    twice = exp.GT(this=_own("pi_item"), expression=_num(1 + MASS_TOLERANCE))
    columns.append(
        _scalar(exp.select(_count_if(twice)).from_("op_item_policy"), "overfull_items")
        if given.item_estimator and given.policy_kind == "rank"
        else exp.alias_(_num(0), "overfull_items")
    )
    return columns + _rewards_checks(given)


def _rewards_checks(given: OffPolicyInputs) -> list[exp.Expr]:
    """The reward model's checks: 0 without one; with one, the predictions repeated for an
    item of the policy (its rounds lacking a prediction are counted with the rounds' terms)."""
    if given.rewards is None:
        return [
            exp.alias_(_num(0), "unpredicted_rounds"),
            exp.alias_(_num(0), "repeated_predictions"),
        ]
    repeated = exp.func("COALESCE", exp.func("SUM", _own("repeated_predictions")), _num(0))
    return [_scalar(exp.select(repeated).from_("op_dm"), "repeated_predictions")]


def _final(given: OffPolicyInputs) -> exp.Select:
    """One row per group: the counts, the sums of every estimator's terms and their squares,
    the lists' sums of squares, and the checks."""
    groups = [_own(key) for key in _groups(given)]
    columns: list[exp.Expr] = [
        *groups,
        exp.alias_(exp.func("COUNT", exp.Star()), "lists"),
        *[exp.alias_(exp.func(kind, _own(name)), name) for name, _, kind in _round_terms(given)],
        exp.alias_(exp.func("SUM", _product(_own("w_r"), _own("w_r"))), "ip_list_sq"),
    ]
    if given.item_estimator:
        columns.append(
            exp.alias_(exp.func("SUM", _product(_own("wi_r"), _own("wi_r"))), "wi_list_sq")
        )
    query = exp.select(*columns, *_check_columns(given)).from_("op_lists")
    return query.group_by(*[group.copy() for group in groups]) if groups else query


def off_policy_query(given: OffPolicyInputs) -> exp.Select:
    """The one query: its stages as CTEs, the final row of sums and counts."""
    stages: list[tuple[str, exp.Select]] = [
        ("op_log", _log_stage(given)),
        ("op_policy", _policy_stage(given)),
    ]
    if given.rewards is not None:
        stages += [
            ("op_rewards", _rewards_stage(given, given.rewards)),
            ("op_dm", _dm_stage(given)),
        ]
    if given.item_estimator:
        stages.append(("op_item_policy", _item_policy_stage(given)))
    if given.groups:
        stages.append(("op_candidate_log", _candidate_log_stage(given)))
    stages += [("op_rounds", _rounds_stage(given)), ("op_lists", _lists_stage(given))]
    query = _final(given)
    for name, stage in stages:
        query = query.with_(name, as_=stage)
    return query
