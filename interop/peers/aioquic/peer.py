"""aioquic peer of scripts/interop: an hq-interop (HTTP/0.9 over QUIC)
client and server.

    peer.py client --url https://10.77.0.2:4433/file --out FILE
    peer.py server --listen 10.77.0.2:4433 --root DIR --cert C --key K

The client downloads one URL into FILE and prints a JSON line with the byte
count and the time from the request to the last byte. The server serves the
files under DIR. Both raise aioquic's flow-control windows far above a
600 ms satellite path's bandwidth-delay product, use quiche's datagram size
(1350 bytes), and write qlog to $QLOGDIR when it is set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import ssl
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from aioquic.asyncio import connect, serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, StreamDataReceived
from aioquic.quic.logger import QuicFileLogger

ALPN = ["hq-interop"]
# 64 MiB per stream, 96 MiB per connection: 600 ms at 20 Mbit/s is 1.5 MB.
STREAM_WINDOW = 64 << 20
CONNECTION_WINDOW = 96 << 20
DATAGRAM = 1350


def configuration(is_client: bool) -> QuicConfiguration:
    config = QuicConfiguration(
        is_client=is_client,
        alpn_protocols=ALPN,
        max_data=CONNECTION_WINDOW,
        max_stream_data=STREAM_WINDOW,
        max_datagram_size=DATAGRAM,
        idle_timeout=60.0,
    )
    qlog_dir = os.environ.get("QLOGDIR")
    if qlog_dir:
        os.makedirs(qlog_dir, exist_ok=True)
        config.quic_logger = QuicFileLogger(qlog_dir)
    return config


class HqClient(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._done: dict[int, asyncio.Future] = {}
        self._files: dict[int, object] = {}
        self.received = 0

    async def get(self, path: str, out: Path) -> int:
        stream_id = self._quic.get_next_available_stream_id()
        self._files[stream_id] = open(out, "wb")  # noqa: SIM115 (closed at the end of the stream)
        done = self._loop.create_future()
        self._done[stream_id] = done
        self._quic.send_stream_data(stream_id, f"GET {path}\r\n".encode(), end_stream=True)
        self.transmit()
        await done
        return self.received

    def quic_event_received(self, event) -> None:
        if isinstance(event, StreamDataReceived) and event.stream_id in self._files:
            f = self._files[event.stream_id]
            f.write(event.data)
            self.received += len(event.data)
            if event.end_stream:
                f.close()
                self._done.pop(event.stream_id).set_result(True)
        elif isinstance(event, ConnectionTerminated):
            for done in self._done.values():
                if not done.done():
                    done.set_exception(
                        ConnectionError(f"connection closed: {event.error_code:#x} {event.reason_phrase}")
                    )


async def run_client(url: str, out: Path, timeout: float) -> None:
    parsed = urlparse(url)
    if parsed.scheme != "https" or not parsed.hostname:
        raise ValueError(f"expected an https URL, got {url!r}")
    config = configuration(is_client=True)
    config.verify_mode = ssl.CERT_NONE
    config.server_name = "localhost"
    port = parsed.port or 443
    start = time.monotonic()
    async with connect(
        parsed.hostname, port, configuration=config, create_protocol=HqClient, wait_connected=True
    ) as client:
        assert isinstance(client, HqClient)
        received = await asyncio.wait_for(client.get(parsed.path or "/", out), timeout)
        elapsed = time.monotonic() - start
        client.close()
        # Send the CONNECTION_CLOSE, then end without waiting out the
        # draining period (three PTOs: seconds on a satellite path), so that
        # the process ends with the transfer, as the other clients do.
        await asyncio.sleep(0.05)
        print(json.dumps({"bytes": received, "elapsed_s": elapsed}), flush=True)
        if config.quic_logger is not None:
            for trace in list(getattr(config.quic_logger, "_traces", [])):
                config.quic_logger.end_trace(trace)
        os._exit(0)


class HqServer(QuicConnectionProtocol):
    root: Path = Path(".")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._requests: dict[int, bytes] = {}

    def quic_event_received(self, event) -> None:
        if not isinstance(event, StreamDataReceived):
            return
        request = self._requests.get(event.stream_id, b"") + event.data
        self._requests[event.stream_id] = request
        if not (event.end_stream or b"\n" in request):
            return
        del self._requests[event.stream_id]
        line = request.split(b"\n", 1)[0].strip().decode("latin-1")
        parts = line.split(" ")
        body = b""
        if len(parts) >= 2 and parts[0] == "GET":
            target = (self.root / parts[1].lstrip("/")).resolve()
            if target.is_file() and self.root.resolve() in target.parents:
                body = target.read_bytes()
        self._quic.send_stream_data(event.stream_id, body, end_stream=True)
        self.transmit()


async def run_server(listen: str, root: Path, cert: Path, key: Path) -> None:
    host, _, port = listen.rpartition(":")
    config = configuration(is_client=False)
    config.load_cert_chain(cert, key)
    HqServer.root = root
    await serve(host.strip("[]"), int(port), configuration=config, create_protocol=HqServer)
    print(f"aioquic-peer: listening on {listen}, serving {root}", file=sys.stderr, flush=True)
    stopped = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, lambda: stopped.done() or stopped.set_result(None))
    await stopped
    # aioquic writes a connection's qlog when the connection ends; one that
    # is still draining when we are stopped is written now.
    logger = config.quic_logger
    if isinstance(logger, QuicFileLogger):
        for trace in list(getattr(logger, "_traces", [])):
            logger.end_trace(trace)


def main() -> int:
    parser = argparse.ArgumentParser(prog="aioquic-peer")
    sub = parser.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("client")
    c.add_argument("--url", required=True)
    c.add_argument("--out", required=True, type=Path)
    c.add_argument("--timeout", type=float, default=600.0)
    s = sub.add_parser("server")
    s.add_argument("--listen", default="127.0.0.1:4433")
    s.add_argument("--root", required=True, type=Path)
    s.add_argument("--cert", required=True, type=Path)
    s.add_argument("--key", required=True, type=Path)
    args = parser.parse_args()
    try:
        if args.mode == "client":
            asyncio.run(run_client(args.url, args.out, args.timeout))
        else:
            if not args.root.is_dir():
                raise ValueError(f"--root {args.root} is not a directory")
            asyncio.run(run_server(args.listen, args.root, args.cert, args.key))
    except (Exception, asyncio.TimeoutError) as e:  # noqa: BLE001 (a peer reports, never crashes the runner)
        print(f"aioquic-peer: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
