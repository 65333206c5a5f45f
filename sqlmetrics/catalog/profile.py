"""A definition profile's type: one library's definitions as sqlmetrics metrics and options
(the profiles themselves are in profiles.py and trec_profiles.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# How a profile reads the interactions: "graded" keeps sqlmetrics' rule (relevant means
# relevance above the threshold, gain = relevance); "every_row" is for libraries that take the
# ground truth as a set of items (every interaction row is relevant, gain 1), as if the
# relevance column were absent.
RELEVANCE = ("graded", "every_row")


@dataclass(frozen=True)
class Profile:
    """One library's definitions, as sqlmetrics metrics and options."""

    name: str
    library: str  # the library and version the golden tests compare with
    metrics: Mapping[str, str]  # "map" (no cutoff) / "map@k" -> sqlmetrics metric file
    ties: str = "id"
    population: str = "all"
    # Forms whose mean runs over another population than the profile's (form -> population):
    # MS Recommenders' ndcg_at_k counts every user, its other functions the common ones.
    populations: Mapping[str, str] = field(default_factory=dict)
    # Populations the caller may ask for instead of the profile's, being the library's own
    # other conventions (trec_eval: its default "judged", and "all_judged" for -c).
    other_populations: tuple[str, ...] = ()
    relevance: str = "graded"
    # How a rank column is read (inputs.RANKS): "literal" for a library that takes the rank
    # values as positions, gaps and repeats included.
    ranks: str = "consecutive"
    # How deep repeated recommendations are refused (inputs.CHECK_DEPTHS): "full" for a library
    # that refuses a repeat anywhere in a list (trec_eval)
    checks: str = "read"
    # Names the library defines that no sqlmetrics metric reproduces: form -> why, and what
    # to do instead; requesting one is an error that says so.
    unsupported: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
