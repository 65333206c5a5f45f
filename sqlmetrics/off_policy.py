"""off_policy: what a new policy would earn, estimated from a log of what an old one showed.

The inputs are bound in an engine as evaluate's are (DuckDB by default, or your connection);
one query (compose/off_policy.py) returns the sums of every estimator's terms, and Python
finishes the ratios and the intervals (stats/off_policy.py). docs/how-to/off-policy.md says
when to use it and what it does not promise.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlmetrics.compose.off_policy import CHECKS, OffPolicyInputs, off_policy_query
from sqlmetrics.engines import connection_of, open_engine
from sqlmetrics.engines.base import NUMERIC_TYPES, UNKNOWN, Engine, Source
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.off_policy import finish

if TYPE_CHECKING:
    import pandas as pd

# Each role's default column name; ``columns=`` renames any of them, in every input that has it.
COLUMNS = {
    "context": "context_id",
    "position": "position",
    "item": "item_id",
    "reward": "reward",
    "propensity": "propensity",
    "item_propensity": "item_propensity",
    "probability": "probability",
    "rank": "rank",
    "prediction": "prediction",
}

_REFUSALS = {
    "bad_propensities": "log: {n} rows have a propensity that is missing or outside (0, 1]; "
    "every estimator divides by it: log the logging policy's probability of showing the item "
    "there",
    "bad_rewards": "log: {n} rows have no reward; give 0 for a shown item without a click",
    "repeated_rounds": "log: {n} (context, position) pairs appear more than once; a round "
    "shows one item per position: give each shown list a context of its own",
    "bad_item_propensities": "log: {n} rows have an item propensity that is missing or outside "
    "(0, 1]",
    "null_groups": "policy: {n} rows have no value in a group column; give each candidate a name",
    "bad_probabilities": "policy: {n} rows have a probability outside [0, 1] (or a rank below "
    "1, or none)",
    "repeated_keys": "policy or rewards: {n} rounds meet more than one row for their (context, "
    "item{position}); give one row per key",
    "overfull_contexts": "policy: the probabilities of {n} contexts{position} add up to more "
    "than 1 (with ranks: two items at one rank, or a row repeated)",
    "overfull_items": "policy: {n} (context, item) pairs list the item at two ranks or more (in "
    "the log's positions); a list shows an item once",
    "unpredicted_rounds": "rewards: {n} rounds lack a prediction for an item the policy may "
    "show there (the logged one included); DM and DR need one for each",
    "repeated_predictions": "rewards: {n} predictions repeat a (context, item{position}) the "
    "policy may show; give one row per key",
}


def off_policy(
    log: object,
    policy: object,
    rewards: object = None,
    *,
    columns: Mapping[str, str] | None = None,
    group_by: Sequence[str] | str = (),
    clip: float = 100.0,
    ci: float | None = 0.95,
    connection: object = None,
    dialect: str | None = None,
    timeout: float | None = None,
) -> pd.DataFrame:
    """Estimates a new policy's mean reward from a log of an old policy's impressions.

    Args:
        log: one row per round (an item shown at a position of a context's list), in any of
            evaluate's input forms (DataFrame, Parquet/CSV path, table name with
            ``connection``, ``sqlmetrics.Query``). Columns context_id, item_id, reward,
            propensity (the logging policy's probability of showing that item there), and
            optionally position (1 when absent: one item per context) and item_propensity
            (its probability of showing the item anywhere in the list: the
            independent-item estimator).
        policy: the new policy, as its lists (context_id, item_id, rank: deterministic, the
            item at rank p is shown at position p) or its probabilities (context_id, item_id,
            probability, and position when they differ by position).
        rewards: optional, a reward model's predictions (context_id, item_id, prediction, and
            position when they differ by position): adds DM and DR.
        columns: your column names by role, e.g. ``{"context": "impression_id"}``; roles:
            context, position, item, reward, propensity, item_propensity, probability, rank,
            prediction.
        group_by: columns of the policy that tell candidate policies apart (``"model"``):
            each is estimated on the whole log, one set of rows per candidate. The reward
            model may have them too (one model per candidate) or not (one for all).
        clip: clipped IPS's cap on the importance weights.
        ci: the level of the normal intervals (None: none).
        connection: where the query runs, as evaluate's ``connection``.
        dialect: the sqlglot dialect of a DB-API connection, as evaluate's.
        timeout: cancel the query after this many seconds.

    Returns:
        The group columns (with ``group_by``) and one row per estimator (replay, ips,
        clipped_ips, snips, dm, dr, item_position_ips, independent_item_ips, those the
        inputs allow): ``value``, ``std_error``, ``lo`` and
        ``hi``, ``n`` (the rounds, or lists, averaged over), ``effective_sample_size``,
        ``max_weight`` and ``matched_share`` (rounds where the new policy may show the logged
        item).
    """
    if not (isinstance(clip, (int, float)) and clip > 0 and math.isfinite(clip)):
        raise SqlmetricsError(f"clip must be a positive number, not {clip!r}")
    if ci is not None and not (isinstance(ci, float) and 0 < ci < 1):
        raise SqlmetricsError(f"ci must be a level between 0 and 1 like 0.95, not {ci!r}")
    names = _column_names(columns)
    # Spark DataFrames are estimated in their session, as evaluate's are
    where = connection_of(connection, {"log": log, "policy": policy, "rewards": rewards})
    with open_engine(where, dialect=dialect, timeout=timeout) as engine:
        bound = {
            role: engine.bind(value, role)
            for role, value in (("log", log), ("policy", policy), ("rewards", rewards))
            if value is not None
        }
        groups = [group_by] if isinstance(group_by, str) else list(group_by)
        given = _grouped(_inputs(bound, names, float(clip)), bound, groups)
        query = off_policy_query(given)
        _, rows = engine.guarded(lambda: engine.fetch(engine.sql(query, copy=False)))
        if not rows:
            raise SqlmetricsError("log: no rows to estimate from")
        found = [dict(zip(query.named_selects, row, strict=True)) for row in rows]
        for sums in found:
            _refuse(sums, given)
        result = _frame(found, given.groups, engine, ci, clip)
    return result


def _column_names(columns: Mapping[str, str] | None) -> dict[str, str]:
    names = dict(COLUMNS)
    for role, name in (columns or {}).items():
        if role not in COLUMNS:
            raise SqlmetricsError(
                f"columns: unknown role {role!r}; the roles are {', '.join(COLUMNS)}"
            )
        names[role] = name
    return names


def _find(source: Source, name: str) -> str | None:
    """The source's column ``name``, matched exactly or else case-insensitively."""
    if name in source.columns:
        return name
    folded = [column for column in source.columns if column.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def _need(source: Source, role: str, name: str, numeric: bool = False) -> str:
    found = _find(source, name)
    if found is None:
        raise SqlmetricsError(
            f"{source.role}: no {role} column {name!r} (it has {', '.join(source.columns)}); "
            f"name yours with columns={{{role!r}: ...}}"
        )
    kind = source.columns[found]
    if numeric and kind != UNKNOWN and kind != "BOOLEAN" and not kind.startswith(NUMERIC_TYPES):
        raise SqlmetricsError(f"{source.role}: the {role} column {found!r} is {kind}, not a number")
    return found


def _same(sources: Mapping[str, Source], role: str, name: str, required: bool = True) -> str:
    """A role's column, spelled alike in every input that has it (the query names it once):
    the inputs that must have it are checked for it."""
    found = {
        source.role: _need(source, role, name) if required else _find(source, name)
        for source in sources.values()
    }
    spellings = {column for column in found.values() if column is not None}
    if len(spellings) > 1:
        listed = ", ".join(f"{role_} {column!r}" for role_, column in found.items() if column)
        raise SqlmetricsError(
            f"the {role} column is spelled differently ({listed}); name it alike in each"
        )
    return spellings.pop() if spellings else name


def _inputs(bound: Mapping[str, Source], names: Mapping[str, str], clip: float) -> OffPolicyInputs:
    log, policy, rewards = bound["log"], bound["policy"], bound.get("rewards")
    for role in ("reward", "propensity"):
        _need(log, role, names[role], numeric=True)
    probability, rank = _find(policy, names["probability"]), _find(policy, names["rank"])
    if (probability is None) == (rank is None):
        raise SqlmetricsError(
            f"policy: give either a {names['rank']!r} column (its lists) or a "
            f"{names['probability']!r} column (its probabilities), "
            + ("not both" if probability else f"it has {', '.join(policy.columns)}")
        )
    kind = "rank" if rank is not None else "probability"
    _need(policy, kind, names[kind], numeric=True)
    policy_position = kind == "rank" or _find(policy, names["position"]) is not None
    rewards_position = rewards is not None and _find(rewards, names["position"]) is not None
    if rewards is not None:
        _need(rewards, "prediction", names["prediction"], numeric=True)
        if rewards_position and not policy_position:
            raise SqlmetricsError(
                "rewards: the predictions are per position but the policy's probabilities are "
                "not: give the policy a position column too, or the predictions none"
            )
    item_propensity = _find(log, names["item_propensity"])
    if item_propensity is not None:
        _need(log, "item_propensity", item_propensity, numeric=True)
    keyed = {role: source for role, source in bound.items()}
    return OffPolicyInputs(
        log=log.relation,
        policy=policy.relation,
        rewards=None if rewards is None else rewards.relation,
        context=_same(keyed, "context", names["context"]),
        item=_same(keyed, "item", names["item"]),
        reward=_need(log, "reward", names["reward"]),
        propensity=_need(log, "propensity", names["propensity"]),
        position=_same(keyed, "position", names["position"], required=False),
        policy_kind=kind,
        policy_value=_need(policy, kind, names[kind]),
        prediction=names["prediction"]
        if rewards is None
        else _need(rewards, "prediction", names["prediction"]),
        log_position=_find(log, names["position"]) is not None,
        policy_position=policy_position,
        rewards_position=rewards_position,
        item_propensity=item_propensity,
        clip=clip,
    )


def _grouped(
    given: OffPolicyInputs, bound: Mapping[str, Source], groups: Sequence[str]
) -> OffPolicyInputs:
    """``given`` with the group columns of the policy, as it spells them, and whether the
    reward model has them."""
    if not groups:
        return given
    if len(set(groups)) < len(groups):
        raise SqlmetricsError(f"group_by names a column twice: {', '.join(groups)}")
    policy, rewards = bound["policy"], bound.get("rewards")
    spelled = tuple(_need(policy, "group", group) for group in groups)
    in_rewards = [_find(rewards, group) for group in spelled] if rewards is not None else []
    if any(in_rewards) and not all(in_rewards):
        raise SqlmetricsError(
            "rewards: give the reward model every group column (one model per candidate) or "
            f"none (one model for all); it has {', '.join(c for c in in_rewards if c)} only"
        )
    per_candidate = bool(in_rewards) and all(in_rewards)
    if per_candidate and in_rewards != list(spelled):
        raise SqlmetricsError("rewards: spell the group columns as the policy does")
    return dataclasses.replace(given, groups=spelled, rewards_groups=per_candidate)


def _refuse(sums: Mapping[str, object], given: OffPolicyInputs) -> None:
    """The first check with a positive count, as an error that says what to fix; then the
    values no check sees (NaN, infinities) and a policy that meets no context of the log."""
    if not sums.get("rounds"):
        raise SqlmetricsError("log: no rows to estimate from")
    positioned = given.policy_kind == "rank" or given.policy_position
    for check in CHECKS:
        count = sums.get(check)
        if count:
            raise SqlmetricsError(
                _REFUSALS[check].format(
                    n=int(count),  # type: ignore[call-overload]
                    position=", position" if positioned else "",
                )
            )
    # NaN and infinities pass the SQL checks on some engines (SQLite has none, NaN orders
    # differently elsewhere) but not the sums they reach
    keys = {f"group_{index}": group for index, group in enumerate(given.groups)}
    unfinite = [name for name, value in sums.items() if name not in keys and _not_finite(value)]
    if unfinite:
        raise SqlmetricsError(
            "a reward, propensity, probability or prediction is NaN or infinite (the sums "
            f"{', '.join(unfinite)} are not finite); fix or drop those rows"
        )
    if int(sums.get("uncovered_rounds") or 0) == int(sums["rounds"]):  # type: ignore[call-overload]
        candidate = ", ".join(f"{group}={sums[key]!r}" for key, group in keys.items())
        raise SqlmetricsError(
            f"policy{f' ({candidate})' if candidate else ''}: no context of the log has a row "
            "in the policy; check that the context columns hold the same values (and types) "
            "in both"
        )


def _total(found: Sequence[Mapping[str, object]], name: str) -> int:
    return sum(int(sums.get(name) or 0) for sums in found)  # type: ignore[call-overload]


def _not_finite(value: object) -> bool:
    try:
        return not math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _frame(
    found: Sequence[Mapping[str, object]],
    groups: Sequence[str],
    engine: Engine,
    ci: float | None,
    clip: float,
) -> pd.DataFrame:
    """The estimates of each group's sums, the group's values first; the counts in attrs are
    over every group."""
    import pandas as pd

    records = []
    for sums in found:
        keys = {group: sums[f"group_{index}"] for index, group in enumerate(groups)}
        numbers = {name: value for name, value in sums.items() if not name.startswith("group_")}
        records += [{**keys, **dataclasses.asdict(estimate)} for estimate in finish(numbers, ci)]
    frame = pd.DataFrame(records)
    if groups:
        frame = frame.sort_values(list(groups), kind="stable", na_position="last")
        frame = frame.reset_index(drop=True)
    frame["n"] = frame["n"].astype("int64")
    frame.attrs["engine"] = engine.name
    frame.attrs["dialect"] = engine.dialect
    frame.attrs["clip"] = clip
    frame.attrs["clipped_rounds"] = _total(found, "clipped_rounds")
    # rounds of contexts the policy has no row for: it shows nothing there (reward 0)
    frame.attrs["uncovered_rounds"] = _total(found, "uncovered_rounds")
    if ci is not None:
        frame.attrs["ci"] = {"level": ci, "method": "normal"}
    return frame
