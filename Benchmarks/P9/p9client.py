#!/usr/bin/env python3
"""The JSON-RPC client of Benchmarks/p9.sh: fills a service with paused downloads, measures
call latency over one keep-alive HTTP connection, and counts WebSocket notifications.

It speaks aria2's JSON-RPC only, so the same code drives `peregrine daemon` and
`aria2c --enable-rpc`. Standard library only (http.client, asyncio); the WebSocket client is
the few lines RFC 6455 needs for text frames.

    p9client.py populate URL SECRET COUNT BASE       add COUNT paused downloads BASE/NNNNN.bin
    p9client.py latency URL SECRET METHOD N WARMUP   N sequential calls; prints p50 p99 (ms)
    p9client.py notify URL SECRET CLIENTS URI...     CLIENTS WebSocket listeners while URI...
                                                     download; prints one line of figures
Every command exits non-zero when the service answers an error.
"""

import asyncio
import base64
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse


def connection(url):
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=120), parts.path


def call(conn, path, body):
    """POSTs one body on a keep-alive connection; returns the decoded answer."""
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise SystemExit(f"p9client: HTTP {response.status}: {data[:200]!r}")
    return json.loads(data)


def populate(url, secret, count, base):
    conn, path = connection(url)
    batch = 500
    start = time.perf_counter()
    for first in range(0, count, batch):
        calls = [
            {"methodName": "aria2.addUri",
             "params": [f"token:{secret}", [f"{base}/{i:05d}.bin"], {"pause": "true"}]}
            for i in range(first, min(count, first + batch))
        ]
        answer = call(conn, path, json.dumps(
            {"jsonrpc": "2.0", "id": first, "method": "system.multicall", "params": [calls]}))
        if "error" in answer:
            raise SystemExit(f"p9client: multicall failed: {answer['error']}")
        for item in answer["result"]:
            if not isinstance(item, list):
                raise SystemExit(f"p9client: addUri failed: {item}")
    elapsed = time.perf_counter() - start
    stat = call(conn, path, json.dumps(
        {"jsonrpc": "2.0", "id": "s", "method": "aria2.getGlobalStat", "params": [f"token:{secret}"]}))["result"]
    waiting = int(stat["numWaiting"])
    if waiting != count:
        raise SystemExit(f"p9client: {waiting} waiting downloads after adding {count}")
    print(f"{elapsed:.3f}")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def latency(url, secret, method, count, warmup):
    params = {"tellActive": [f"token:{secret}"],
              "tellWaiting": [f"token:{secret}", 0, 100],
              "getGlobalStat": [f"token:{secret}"]}[method]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "aria2." + method, "params": params})
    conn, path = connection(url)
    expected = 100 if method == "tellWaiting" else None
    samples = []
    for i in range(warmup + count):
        start = time.perf_counter_ns()
        answer = call(conn, path, body)
        elapsed = time.perf_counter_ns() - start
        if "error" in answer:
            raise SystemExit(f"p9client: {method}: {answer['error']}")
        if expected is not None and len(answer["result"]) != expected:
            raise SystemExit(f"p9client: {method} answered {len(answer['result'])} entries, not {expected}")
        if i >= warmup:
            samples.append(elapsed / 1e6)
    print(f"{statistics.median(samples):.3f} {percentile(samples, 0.99):.3f}")


class WebSocket:
    """A WebSocket client for text frames (RFC 6455), on asyncio streams."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, url):
        parts = urllib.parse.urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                      f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit(f"p9client: WebSocket upgrade refused: {head[:80]!r}")
        return cls(reader, writer)

    def send(self, text, opcode=1):
        payload = text.encode() if isinstance(text, str) else text
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + len(payload).to_bytes(2, "big")
        else:
            header += bytes([0x80 | 127]) + len(payload).to_bytes(8, "big")
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(header + mask + masked)

    async def receive(self):
        """The next text message; None when the server closes."""
        message = b""
        while True:
            first, second = await self.reader.readexactly(2)
            length = second & 0x7F
            if length == 126:
                length = int.from_bytes(await self.reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await self.reader.readexactly(8), "big")
            payload = await self.reader.readexactly(length)
            opcode = first & 0x0F
            if opcode == 8:
                return None
            if opcode == 9:
                self.send(payload, opcode=10)
                continue
            if opcode in (0, 1, 2):
                message += payload
                if first & 0x80:
                    return message.decode()


async def listener(url, secret, index, ready, received, expected):
    ws = await WebSocket.connect(url)
    # An answer on the socket proves the service handles it, so it is among the notified.
    ws.send(json.dumps({"jsonrpc": "2.0", "id": f"ready-{index}", "method": "aria2.getVersion",
                        "params": [f"token:{secret}"]}))
    count = 0
    while count < expected:
        text = await ws.receive()
        if text is None:
            return
        message = json.loads(text)
        if message.get("id") == f"ready-{index}":
            ready.release()
            continue
        if "method" in message:
            now = time.perf_counter()
            key = (message["method"], message["params"][0]["gid"])
            received.setdefault(key, []).append(now)
            count += 1
    ws.writer.close()


async def notify(url, secret, clients, uris):
    ws_url = url.replace("http://", "ws://")
    received = {}
    ready = asyncio.Semaphore(0)
    expected_total = clients * len(uris) * 2  # onDownloadStart and onDownloadComplete
    tasks = [asyncio.create_task(listener(ws_url, secret, i, ready, received, len(uris) * 2))
             for i in range(clients)]
    for _ in range(clients):
        await asyncio.wait_for(ready.acquire(), timeout=60)
    conn, path = connection(url)
    calls = [{"methodName": "aria2.addUri", "params": [f"token:{secret}", [uri]]} for uri in uris]
    body = json.dumps({"jsonrpc": "2.0", "id": "go", "method": "system.multicall", "params": [calls]})
    sent = time.perf_counter()
    # The call runs on another thread: the listeners keep stamping notifications meanwhile.
    answer = await asyncio.get_running_loop().run_in_executor(None, call, conn, path, body)
    if "error" in answer or not all(isinstance(item, list) for item in answer["result"]):
        raise SystemExit(f"p9client: addUri failed: {answer}")
    gids = {item[0] for item in answer["result"]}
    deadline = time.perf_counter() + 120
    while time.perf_counter() < deadline:
        done = sum(len(received.get((m, g), [])) for g in gids
                   for m in ("aria2.onDownloadStart", "aria2.onDownloadComplete"))
        if done >= expected_total:
            break
        await asyncio.sleep(0.05)
    for task in tasks:
        task.cancel()
    starts = [t - sent for g in gids for t in received.get(("aria2.onDownloadStart", g), [])]
    spreads = []
    delivered = 0
    for g in gids:
        for m in ("aria2.onDownloadStart", "aria2.onDownloadComplete"):
            times = received.get((m, g), [])
            delivered += len(times)
            if times:
                first = min(times)
                spreads += [(t - first) * 1000 for t in times]
    complete = sum(1 for g in gids if len(received.get(("aria2.onDownloadComplete", g), [])) == clients)
    print(f"delivered={delivered} expected={expected_total} "
          f"downloads_notified_complete={complete}/{len(uris)} "
          f"start_p50_ms={statistics.median(starts) * 1000 if starts else float('nan'):.1f} "
          f"start_p99_ms={percentile(starts, 0.99) * 1000 if starts else float('nan'):.1f} "
          f"fanout_p50_ms={statistics.median(spreads) if spreads else float('nan'):.2f} "
          f"fanout_p99_ms={percentile(spreads, 0.99) if spreads else float('nan'):.2f}")
    if delivered != expected_total:
        sys.exit(3)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    command, args = argv[1], argv[2:]
    if command == "populate":
        populate(args[0], args[1], int(args[2]), args[3])
    elif command == "latency":
        latency(args[0], args[1], args[2], int(args[3]), int(args[4]))
    elif command == "notify":
        asyncio.run(notify(args[0], args[1], int(args[2]), args[3:]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
