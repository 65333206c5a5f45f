"""tests/cpu_times.py counts a test's own CPU and its descendants', live or waited for."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.cpu_times import _Snapshot

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def test_a_child_waited_for_and_one_still_running_are_both_counted() -> None:
    before = _Snapshot()
    subprocess.run([sys.executable, "-c", BURN.format(seconds=0.4)], check=True)
    running = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=0.4) + "time.sleep(30)"])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _Snapshot().cpu_since(before) < 0.8:
            time.sleep(0.05)
        spent = _Snapshot().cpu_since(before)
    finally:
        running.kill()
        running.wait()
    assert 0.8 <= spent < 5, spent  # not our own waiting: the two children's 0.4 s each


def test_a_child_gone_since_the_first_snapshot_is_not_counted_twice() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", BURN.format(seconds=0.3) + "input()"], stdin=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    first = _Snapshot()
    while time.monotonic() < deadline and first.live.get(child.pid, 0.0) < 0.3:
        time.sleep(0.05)
        first = _Snapshot()
    child.communicate(b"\n")  # it ends and is waited for: its time moves to RUSAGE_CHILDREN
    assert _Snapshot().cpu_since(first) < 0.25
