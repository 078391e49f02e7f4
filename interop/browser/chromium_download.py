#!/usr/bin/env python3
"""Headless Chromium downloads one file over HTTP/3 and reports how long it
took and the SHA-256 of what it received.

    chromium_download.py --page https://10.77.0.2:4433/index.html \\
        --url https://10.77.0.2:4433/file-10485760 --spki BASE64 --out result.json

Chromium is driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: commands on its fd 3, replies on its fd 4, each a
JSON message ended by a NUL byte), so no library and no port are needed. It
opens --page (any page of the server's origin: a secure context of that
origin, so the fetch needs no CORS and WebCrypto is there), then runs in the
page a fetch of --url, reads the body whole, hashes it with WebCrypto and
returns the fetch's timings (performance.now around it, and its Resource
Timing entry, whose nextHopProtocol says whether HTTP/3 was used) with the
navigation's (its connectStart..connectEnd span is the QUIC handshake).

HTTP/3 is forced to the origin (--origin-to-force-quic-on: no TCP, no
Alt-Svc discovery) and the server's certificate is accepted by the SHA-256
of its SubjectPublicKeyInfo (--ignore-certificate-errors-spki-list, which
Chromium honours only with --user-data-dir, here a fresh temporary one).
Chromium refuses to run as root without --no-sandbox.

The result (JSON, --out and stdout) is written whatever happened; its
"status" is "ok" only when the page got HTTP 200 over h3 with the expected
length and, if --expect-sha256 is given, that hash. Exit status 0 for "ok",
1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# Run in the page once it has loaded: the download, its hash, its timings.
# performance.now() counts from the navigation's start (timeOrigin).
FETCH_JS = """
(async (url) => {
  const t0 = performance.now();
  const response = await fetch(url, {cache: "no-store"});
  const body = await response.arrayBuffer();
  const t1 = performance.now();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  const pick = (entry, keys) => Object.fromEntries(keys.map((k) => [k, entry ? entry[k] : null]));
  const resource = performance.getEntriesByName(response.url, "resource").pop();
  const navigation = performance.getEntriesByType("navigation")[0];
  return {
    http_status: response.status,
    bytes: body.byteLength,
    sha256: hex,
    fetch_start_ms: t0,
    fetch_end_ms: t1,
    resource: pick(resource, ["startTime", "requestStart", "responseStart", "responseEnd",
                              "nextHopProtocol", "encodedBodySize", "transferSize"]),
    navigation: pick(navigation, ["connectStart", "secureConnectionStart", "connectEnd",
                                  "requestStart", "responseEnd", "nextHopProtocol"]),
  };
})
"""

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


class DevToolsError(RuntimeError):
    pass


class DevToolsPipe:
    """The DevTools protocol over Chromium's --remote-debugging-pipe."""

    def __init__(self, to_chrome: int, from_chrome: int):
        self._out = to_chrome
        self._in = from_chrome
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self._events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self.closed = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(self._in, 1 << 16)
                if not chunk:
                    break
                pending += chunk
                *messages, pending = pending.split(b"\0")
                for raw in messages:
                    try:
                        message = json.loads(raw)
                    except ValueError:
                        continue
                    if not isinstance(message, dict):
                        continue
                    if "id" in message:
                        with self._lock:
                            box = self._replies.pop(message["id"], None)
                        if box is not None:
                            box.put(message)
                    else:
                        self._events.put(message)
        except OSError:
            pass
        finally:
            self.closed.set()

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0):
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            box: queue.Queue = queue.Queue()
            self._replies[ident] = box
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            try:
                reply = box.get(timeout=min(1.0, max(0.01, deadline - time.monotonic())))
                break
            except queue.Empty:
                if self.closed.is_set():
                    raise DevToolsError(f"{method}: Chromium closed the DevTools pipe") from None
                if time.monotonic() >= deadline:
                    raise DevToolsError(f"{method}: no reply within {timeout:.0f} s") from None
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return reply.get("result", {})

    def wait_event(self, method: str, session: str | None, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DevToolsError(f"no {method} within {timeout:.0f} s")
            try:
                event = self._events.get(timeout=min(1.0, remaining))
            except queue.Empty:
                if self.closed.is_set():
                    raise DevToolsError(f"waiting for {method}: Chromium closed the DevTools pipe") from None
                continue
            if event.get("method") == method and (session is None or event.get("sessionId") == session):
                return event.get("params", {})


def find_chromium(explicit: str | None) -> str:
    for name in (explicit,) if explicit else CHROMIUM_CANDIDATES:
        path = shutil.which(name) if name else None
        if path:
            return path
    raise FileNotFoundError("no Chromium found; run: apt-get install -y chromium")


def chromium_argv(binary: str, origin: str, spki: str, user_data_dir: Path, net_log: Path | None) -> list[str]:
    argv = [
        binary,
        "--headless=new",
        "--no-sandbox",
        f"--user-data-dir={user_data_dir}",
        "--remote-debugging-pipe",
        "--enable-quic",
        f"--origin-to-force-quic-on={origin}",
        f"--ignore-certificate-errors-spki-list={spki}",
        # Nothing else on the wire or on the CPU: no updates, no sync, no GPU.
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-extensions",
        "--disable-sync",
        "--disable-default-apps",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-dev-shm-usage",
        "about:blank",
    ]
    if net_log:
        argv.insert(-1, f"--log-net-log={net_log}")
    return argv


def high_fd(fd: int) -> int:
    """fd moved above 9, so that dup2 onto 3 and 4 in the child cannot
    clobber the other end."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def download(args: argparse.Namespace) -> dict:
    result: dict = {"status": "failed", "reason": None, "url": args.url, "page": args.page}
    origin = args.url.split("://", 1)[1].split("/", 1)[0]
    binary = find_chromium(args.chromium)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    result["chromium"] = version.stdout.strip() or None
    cmd_r, cmd_w = (high_fd(fd) for fd in os.pipe())
    rep_r, rep_w = (high_fd(fd) for fd in os.pipe())

    def child_fds() -> None:
        # Chromium reads commands on fd 3 and writes replies on fd 4.
        os.dup2(cmd_r, 3)
        os.dup2(rep_w, 4)

    with tempfile.TemporaryDirectory(prefix="interop-chromium-") as profile:
        argv = chromium_argv(binary, origin, args.spki, Path(profile), args.net_log)
        stderr = open(args.log, "w") if args.log else subprocess.DEVNULL  # noqa: SIM115
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
            preexec_fn=child_fds,
            close_fds=False,
        )
        os.close(cmd_r)
        os.close(rep_w)
        pipe = DevToolsPipe(cmd_w, rep_r)
        started = time.monotonic()
        try:
            targets = pipe.call("Target.getTargets", timeout=args.start_timeout)["targetInfos"]
            page = next((t for t in targets if t.get("type") == "page"), None)
            if page is None:
                page_id = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            else:
                page_id = page["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": page_id, "flatten": True})["sessionId"]
            pipe.call("Page.enable", session=session)
            result["browser_start_s"] = round(time.monotonic() - started, 3)
            navigated = pipe.call("Page.navigate", {"url": args.page}, session=session, timeout=args.timeout)
            if navigated.get("errorText"):
                raise DevToolsError(f"navigation to {args.page} failed: {navigated['errorText']}")
            pipe.wait_event("Page.loadEventFired", session, args.timeout)
            remaining = max(1.0, args.timeout - (time.monotonic() - started))
            evaluated = pipe.call(
                "Runtime.evaluate",
                {
                    "expression": f"({FETCH_JS})({json.dumps(args.url)})",
                    "awaitPromise": True,
                    "returnByValue": True,
                },
                session=session,
                timeout=remaining,
            )
            if "exceptionDetails" in evaluated:
                detail = evaluated["exceptionDetails"]
                text = (detail.get("exception") or {}).get("description") or detail.get("text")
                raise DevToolsError(f"the page's fetch failed: {text}")
            page_result = evaluated["result"]["value"]
            result.update(judge(page_result, args))
        except (DevToolsError, KeyError, TypeError, OSError) as e:
            result["reason"] = f"{type(e).__name__}: {e}"
        finally:
            with contextlib.suppress(DevToolsError, OSError):
                pipe.call("Browser.close", timeout=5)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(cmd_w)
            os.close(rep_r)
            if stderr is not subprocess.DEVNULL:
                stderr.close()
    return result


def judge(page: dict, args: argparse.Namespace) -> dict:
    """The page's report, checked: HTTP 200, over h3, every byte, the hash."""
    resource = page.get("resource") or {}
    navigation = page.get("navigation") or {}
    out: dict = {
        "http_status": page.get("http_status"),
        "bytes": page.get("bytes"),
        "sha256": page.get("sha256"),
        "protocol": resource.get("nextHopProtocol"),
        # Request sent to last byte read, on the connection the page opened.
        "fetch_s": round((page["fetch_end_ms"] - page["fetch_start_ms"]) / 1e3, 3),
        # The QUIC handshake, as the navigation's connect span.
        "handshake_s": None,
        "resource_timing": resource,
        "navigation_timing": navigation,
    }
    if navigation.get("connectEnd") is not None and navigation.get("connectStart") is not None:
        out["handshake_s"] = round((navigation["connectEnd"] - navigation["connectStart"]) / 1e3, 3)
    problems = []
    if out["http_status"] != 200:
        problems.append(f"HTTP status {out['http_status']}")
    if out["protocol"] != "h3":
        problems.append(f"protocol {out['protocol']!r}, not h3")
    if args.expect_bytes is not None and out["bytes"] != args.expect_bytes:
        problems.append(f"{out['bytes']} bytes, expected {args.expect_bytes}")
    if args.expect_sha256 and out["sha256"] != args.expect_sha256.lower():
        problems.append(f"sha256 {str(out['sha256'])[:16]}..., expected {args.expect_sha256[:16]}...")
    out["status"] = "ok" if not problems else "failed"
    out["reason"] = "; ".join(problems) or None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the file to download (https://HOST:PORT/PATH)")
    ap.add_argument("--page", help="a page of the same origin to run the fetch in (default: the origin's /)")
    ap.add_argument("--spki", required=True, help="base64 SHA-256 of the server certificate's SubjectPublicKeyInfo")
    ap.add_argument("--expect-sha256", help="hex SHA-256 the body must have")
    ap.add_argument("--expect-bytes", type=int, help="length the body must have")
    ap.add_argument("--out", type=Path, help="write the result (JSON) here too")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for the page and the download")
    ap.add_argument("--start-timeout", type=float, default=60.0, help="seconds for Chromium to start")
    ap.add_argument("--chromium", help="the browser binary (default: chromium on PATH)")
    ap.add_argument("--log", type=Path, help="Chromium's own stdout and stderr")
    ap.add_argument("--net-log", type=Path, help="Chromium's NetLog (JSON) of the run")
    args = ap.parse_args()
    if not args.url.startswith("https://"):
        ap.error("--url must be https:// (HTTP/3)")
    args.page = args.page or args.url.split("/", 3)[0] + "//" + args.url.split("/", 3)[2] + "/"
    # Stopped from outside (the runner's timeout stops the driver's process
    # group, the browser with it): unwind, so the profile directory goes.
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    try:
        result = download(args)
    except FileNotFoundError as e:
        result = {"status": "failed", "reason": str(e), "url": args.url}
    text = json.dumps(result, indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
