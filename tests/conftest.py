from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@pytest.fixture
def small() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two users with lists, one population user without; see test_api for the values."""
    recs = pd.DataFrame(
        {
            "user_id": [1, 1, 1, 2, 2],
            "item_id": [10, 11, 12, 20, 21],
            "score": [0.9, 0.8, 0.7, 0.9, 0.5],
        }
    )
    truth = pd.DataFrame(
        {"user_id": [1, 1, 2, 3], "item_id": [11, 13, 20, 30], "relevance": [1, 1, 2, 1]}
    )
    return recs, truth
