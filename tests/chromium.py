"""Headless Chromium driven over the DevTools protocol, for the report's browser test and the
README's screenshot (``python -m tests.chromium PAGE.html docs/report.png``).

Chromium is started on 127.0.0.1 with a port it picks itself (read back from
DevToolsActivePort, so two runs never collide), a throwaway profile, and is stopped by its
process id. Every request the page makes is recorded: a self-contained page makes none but its
own file.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    override = os.environ.get("SQLMETRICS_CHROMIUM")
    if override:
        return override
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Loaded:
    """What the browser saw while loading a page."""

    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions
    requests: list[str] = field(default_factory=list)  # every URL the page asked for


class Browser:
    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})  # type: ignore[no-any-return]
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            self._socket.settimeout(max(deadline - time.monotonic(), 0.1))
            message = json.loads(self._socket.recv())
            self.events.append(message)
            if message.get("method") == method:
                return message
        raise TimeoutError(f"no {method} within {timeout} s")

    def load(self, page: Path, width: int = 1200) -> Loaded:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=page.resolve().as_uri())
        self.wait_for("Page.loadEventFired")
        self.evaluate("1")  # drains the events that came with the load
        loaded = Loaded()
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                said = details.get("exception", {}).get("description") or details.get("text")
                loaded.errors.append(str(said)[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                loaded.errors.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                loaded.errors.append(params["entry"].get("text", "")[:500])
            elif method == "Network.requestWillBeSent":
                loaded.requests.append(params.get("request", {}).get("url", ""))
        return loaded

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, height: int | None = None) -> None:
        """The whole page (or its top ``height`` pixels) as a PNG."""
        width, full = self.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        clip = {"x": 0, "y": 0, "width": width, "height": min(height or full, full), "scale": 1}
        result = self.call(
            "Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip
        )
        path.write_bytes(base64.b64decode(result["data"]))


@contextlib.contextmanager
def chromium(binary: str, timeout: float = 30) -> Iterator[Browser]:
    """A headless Chromium on loopback, stopped by its pid on the way out."""
    import websocket  # websocket-client, a dev dependency

    profile = tempfile.mkdtemp(prefix="sqlmetrics-chromium-")
    command = [
        binary,
        "--headless=new",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "about:blank",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.is_file() or not port_file.read_text().strip():
            if process.poll() is not None:
                said = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"chromium exited with {process.returncode}: {said[-2000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"chromium did not open its DevTools port in {timeout} s")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        listing = f"http://127.0.0.1:{port}/json/list"
        with urllib.request.urlopen(listing, timeout=10) as answer:
            targets = json.load(answer)
        page = next(target for target in targets if target.get("type") == "page")
        socket = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True
        )
        try:
            yield Browser(socket)
        finally:
            socket.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    """PAGE.html OUT.png [HEIGHT]: a screenshot of the page's top HEIGHT pixels (default 1500)."""
    binary = find_chromium()
    if binary is None:
        sys.stderr.write("no chromium found (apt-get install chromium)\n")
        return 1
    page, out = Path(argv[0]), Path(argv[1])
    height = int(argv[2]) if len(argv) > 2 else 1500
    with chromium(binary) as browser:
        loaded = browser.load(page)
        if loaded.errors:
            sys.stderr.write(f"console errors: {loaded.errors}\n")
            return 1
        browser.screenshot(out, height)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
