"""A page in real headless Chromium (Debian's `chromium`), driven over the DevTools protocol
on a pipe (--remote-debugging-pipe: no port, no network): load a file, collect console
errors and uncaught exceptions, run JavaScript, take screenshots. Standard library only.

    with Browser() as browser:
        page = browser.open(Path("report.html"), width=1280, height=900)
        page.evaluate("document.title")
        png = page.screenshot()
        page.errors   # console errors, uncaught exceptions, failed loads
"""
import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def find_chromium():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    return None


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, executable=None, timeout=60):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise BrowserError("chromium is not installed (tools/install-deps installs it)")
        self.timeout = timeout
        self.profile = tempfile.TemporaryDirectory(prefix="collsim-chromium-")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()

        def wire_pipes():
            # Chromium reads commands on fd 3 and answers on fd 4 (copies first: the pipes may be 3 or 4).
            reading, writing = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        args = [self.executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-sync", "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile.name}", "about:blank"]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, pass_fds=(3, 4, to_browser_read, from_browser_write),
                                        preexec_fn=wire_pipes)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.process.poll() is None:
            try:
                self.send("Browser.close", wait=False)
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired, BrowserError):
                self.process.kill()
                self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.profile.cleanup()

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium closed the DevTools pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, wait=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for_event(self, method, session, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        for index, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(index)
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method and event.get("sessionId") == session:
                return event
            self.events.append(event)

    def open(self, path, width=1280, height=900):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, target)
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.send(domain, session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
        self.wait_for_event("Page.loadEventFired", session)
        return page


class Page:
    def __init__(self, browser, session, target=None):
        self.browser = browser
        self.session = session
        self.target = target

    def close(self):
        """Closes the page's tab (a tab left open in the background stops painting)."""
        if self.target:
            self.browser.send("Target.closeTarget", {"targetId": self.target})

    @property
    def errors(self):
        """Console errors, uncaught exceptions and failed loads seen so far (as text)."""
        self.evaluate("0")  # drain pending events
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console." + params["type"] + ": " +
                             " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append("log: " + params["entry"].get("text", ""))
        return found

    def evaluate(self, expression):
        result = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                        "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def screenshot(self, full_page=False, clip=None, fast=False):
        """PNG bytes of the viewport, of the whole page, or of a clip (x, y, width, height) of the page.
        fast: Chromium's optimizeForSpeed encoding (every row filtered "Up"), which decode_png
        reads many times faster."""
        params = {"format": "png"}
        if fast:
            params["optimizeForSpeed"] = True
        if clip:
            params.update({"captureBeyondViewport": True,
                           "clip": dict(zip(("x", "y", "width", "height"), clip), scale=1)})
        if full_page:
            width, height = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update({"captureBeyondViewport": True,
                           "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        return base64.b64decode(self.browser.send("Page.captureScreenshot", params, session=self.session)["data"])

    def print_pdf(self):
        return base64.b64decode(self.browser.send("Page.printToPDF", {}, session=self.session)["data"])


def add_bytes(a, b):
    """(a[i] + b[i]) mod 256 for every i, at C speed: each byte in the low half of a 16-bit lane."""
    spread_a, spread_b = bytearray(2 * len(a)), bytearray(2 * len(b))
    spread_a[1::2], spread_b[1::2] = a, b
    total = int.from_bytes(spread_a, "big") + int.from_bytes(spread_b, "big")
    return bytearray(total.to_bytes(2 * len(a) + 1, "big")[2::2])


def decode_png_lines(data):
    """(width, height, channels, rows of bytes) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, idat, header = 8, b"", None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 2:  # Up: bytewise sums, done as one sum of 16-bit lanes (no carry crosses a lane)
            line = add_bytes(line, previous)
        elif kind != 0:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                corner = previous[i - channels] if i >= channels else 0
                if kind == 1:
                    line[i] = (line[i] + left) & 0xFF
                elif kind == 3:
                    line[i] = (line[i] + (left + up) // 2) & 0xFF
                elif kind == 4:
                    estimate = left + up - corner
                    pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                    line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def decode_png(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    width, height, channels, lines = decode_png_lines(data)
    return width, height, [[tuple(line[x * channels:x * channels + 3]) for x in range(width)] for line in lines]
