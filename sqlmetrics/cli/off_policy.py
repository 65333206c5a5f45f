"""``sqlmetrics off-policy``: a new policy's estimated reward from a log of impressions."""

from __future__ import annotations

import argparse
import sys

from sqlmetrics.cli.output import render, write
from sqlmetrics.cli.sources import engine_connection
from sqlmetrics.io.files import check_output

ROLES = ("context", "position", "item", "reward", "propensity", "item_propensity")
POLICY_ROLES = ("probability", "rank", "prediction")


def add_off_policy(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "off-policy",
        help="estimate a new policy's reward from a log of an old one's impressions",
    )
    parser.add_argument(
        "log",
        help="the log (context_id, item_id, reward, propensity[, position, item_propensity]): "
        "Parquet/CSV file, glob or folder; a table with --connection",
    )
    parser.add_argument(
        "policy",
        help="the new policy: its lists (context_id, item_id, rank) or its probabilities "
        "(context_id, item_id, probability[, position])",
    )
    parser.add_argument(
        "--rewards",
        metavar="FILE",
        help="a reward model's predictions (context_id, item_id, prediction[, position]): adds "
        "DM and DR",
    )
    for role in (*ROLES, *POLICY_ROLES):
        parser.add_argument(
            f"--{role.replace('_', '-')}-column", metavar="NAME", help=f"the {role} column's name"
        )
    parser.add_argument(
        "--group-by",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column of the policy that tells candidate policies apart (model): each is "
        "estimated on the whole log; repeatable",
    )
    parser.add_argument(
        "--clip",
        type=float,
        default=100.0,
        metavar="WEIGHT",
        help="clipped IPS's cap on the importance weights",
    )
    parser.add_argument(
        "--ci",
        type=float,
        default=0.95,
        metavar="LEVEL",
        help="level of the normal intervals (0: none)",
    )
    parser.add_argument(
        "--connection",
        metavar="URL",
        help="run in this database (a SQLAlchemy URL); the inputs are its table names",
    )
    parser.add_argument(
        "--dialect", help="with --connection: the sqlglot dialect, when sqlmetrics cannot tell"
    )
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="cancel the query after this many seconds"
    )
    parser.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="how to print it"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    parser.add_argument("-q", "--quiet", action="store_true", help="no notes on stderr")


def off_policy_command(args: argparse.Namespace) -> int:
    from sqlmetrics.off_policy import off_policy

    inputs = [] if args.connection else [args.log, args.policy, args.rewards]
    if args.output is not None:
        check_output(args.output, inputs)
    columns = {
        role: getattr(args, f"{role}_column")
        for role in (*ROLES, *POLICY_ROLES)
        if getattr(args, f"{role}_column") is not None
    }
    args.spark = None  # engine_connection's other way; off-policy reads tables or files
    with engine_connection(args) as connection:
        result = off_policy(
            args.log,
            args.policy,
            args.rewards,
            columns=columns,
            group_by=args.group_by,
            clip=args.clip,
            ci=args.ci or None,
            connection=connection,
            dialect=args.dialect,
            timeout=args.timeout,
        )
    write(render(result, args.format), args.output, inputs)
    if not args.quiet and result.attrs.get("clipped_rounds"):
        sys.stderr.write(
            f"note: clipped_ips capped the weights of {result.attrs['clipped_rounds']} rounds "
            f"at {args.clip:g}\n"
        )
    if not args.quiet and (result["matched_share"] == 0).any():
        sys.stderr.write(
            "note: the new policy matches no round of the log (matched_share 0): the "
            "importance-weighted estimates are 0 by construction, with no interval\n"
        )
    if not args.quiet and result.attrs.get("uncovered_rounds"):
        sys.stderr.write(
            f"note: {result.attrs['uncovered_rounds']} rounds are of contexts the policy has no "
            "row for: it shows nothing there\n"
        )
    return 0
