"""Names some engine reads as something else: a reserved word somewhere (``user``, ``order``) or a
name that is not plain ASCII is quoted, folded as the dialect folds unquoted names."""

from __future__ import annotations

import functools
import re

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.render.nodes import Nodes
from sqlmetrics.render.rules.common import DIALECTS

PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# Words that some engine reads as something other than a name: sqlglot's reserved words of every
# dialect, SQL:2016's reserved words, and the niladic functions and pseudo-columns of PostgreSQL,
# Oracle and SQL Server (``SELECT user`` is the current user in PostgreSQL, not a column).
_STANDARD_RESERVED = """
abs all allocate alter and any are array as asensitive asymmetric at atomic authorization avg
begin between bigint binary blob boolean both by call called cascaded case cast ceil char
character check clob close coalesce collate column commit condition connect constraint convert
corresponding count create cross cube current current_catalog current_date current_path
current_role current_row current_schema current_time current_timestamp current_user cursor cycle
date day deallocate dec decimal declare default delete deref describe deterministic disconnect
distinct double drop dynamic each element else end escape every except exec execute exists
external extract false fetch filter float for foreign free from full function fusion get global
grant group grouping having hold hour identity in indicator inner inout insensitive insert int
integer intersect intersection interval into is join language large lateral leading left like
local localtime localtimestamp match max member merge method min minute mod modifies module month
multiset national natural nchar nclob new no none normalize not null nullif numeric of old on
only open or order out outer over overlaps parameter partition position precision prepare
primary procedure range rank reads real recursive ref references referencing release result
return returns revoke right rollback rollup row rows savepoint scope scroll search second select
sensitive session_user set similar smallint some specific sql sqlexception sqlstate sqlwarning
start static submultiset symmetric system system_user table tablesample then time timestamp
timezone_hour timezone_minute to trailing translation treat trigger true union unique unknown
unnest update upper user using value values varchar varying when whenever where window with
within without year
access audit cluster comment compress exclusive file identified increment initial level lock
long maxextents mode noaudit nocompress nowait number offline online pctfree prior raw rename
resource rowid rownum session share size successful synonym sysdate systimestamp uid validate
view browse bulk checkpoint clustered compute database dbcc deny disk distributed dump errlvl
fillfactor freetext holdlock identitycol key kill lineno load nocheck nonclustered off offsets
percent pivot plan print proc public raiserror readtext reconfigure replication restore restrict
revert rowcount rowguidcol rule save schema securityaudit setuser shutdown statistics textsize
top tran transaction truncate tsequal unpivot updatetext use waitfor while writetext
"""


def _reserved_words() -> frozenset[str]:
    words = set(_STANDARD_RESERVED.split())
    for name in DIALECTS:
        generator = Dialect.get_or_raise(name).generator_class
        words |= {word.strip().lower() for word in generator.RESERVED_KEYWORDS}
    return frozenset(words)


RESERVED_WORDS = _reserved_words()


def quote_reserved(tree: exp.Expr, target: Dialect, nodes: Nodes | None = None) -> exp.Expr:
    """An unquoted name that is a reserved word somewhere (``user``, ``order``, ``rank``) or not
    a plain ASCII name is quoted, folded first as the dialect folds unquoted names (``order``
    is ``"ORDER"`` in Snowflake), so it names the same column and no engine reads it as SQL."""
    for identifier in (nodes or Nodes(tree)).of(exp.Identifier):
        if identifier.quoted or not _needs_quotes(identifier.name):
            continue
        target.normalize_identifier(identifier)
        identifier.set("quoted", True)
    return tree


@functools.lru_cache(maxsize=4096)
def _needs_quotes(name: str) -> bool:
    """A reserved word somewhere or not a plain ASCII name (a query repeats its few names)."""
    return not PLAIN_NAME.fullmatch(name) or name.lower() in RESERVED_WORDS
