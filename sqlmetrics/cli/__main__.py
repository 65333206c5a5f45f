"""``python -m sqlmetrics.cli``: the tests run the command this way, as a subprocess."""

import sys

from sqlmetrics.cli import main

sys.exit(main())
