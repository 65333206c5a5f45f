"""The command line run in-process, with a subprocess's exit code, stdout and stderr.

``python -m sqlmetrics.cli`` is ``sys.exit(main())``: calling ``main`` here runs the same code
without an interpreter's start and imports (about a second of CPU per call). The module itself
runs as a process in tests/test_cli_sql.py, and wherever a test needs one (a umask, a full
disk as stdout, a signal).
"""

from __future__ import annotations

import io
import subprocess
from contextlib import redirect_stderr, redirect_stdout

from sqlmetrics.cli import main


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit:  # argparse's: 2 on bad arguments, 0 after --help
            if isinstance(exit.code, str):
                err.write(exit.code + "\n")
            code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    return subprocess.CompletedProcess(["sqlmetrics", *args], code, out.getvalue(), err.getvalue())
