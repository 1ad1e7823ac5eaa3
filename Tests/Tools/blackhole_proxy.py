#!/usr/bin/env python3
"""A TCP proxy that can stop forwarding without closing anything, as a network partition does.

    blackhole_proxy.py TARGET_PORT   # prints the port it listens on (127.0.0.1), then serves

Commands, one a line on standard input: "cut" — from now on nothing is forwarded in either
direction and new connections are accepted but get nothing (packets dropped, no reset);
"cutlisteners" — the same for the connections that have sent a LISTEN statement so far only,
as when a firewall or NAT forgets one idle connection; "open" — forward again on every
connection (what was held back is dropped, as a network drops it). Each is acknowledged by
printing it once in effect. The proxy ends with its standard input.
"""
import asyncio
import sys

blackholed = False
connections = []


class Connection:
    def __init__(self):
        self.listens = False
        self.cut = False


async def pipe(reader, writer, connection, from_client):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if from_client and b"LISTEN " in data:
                connection.listens = True
            if blackholed or connection.cut:
                continue
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def handle(client_reader, client_writer, target_port):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    connection = Connection()
    connections.append(connection)
    await asyncio.gather(
        pipe(client_reader, server_writer, connection, True), pipe(server_reader, client_writer, connection, False)
    )


async def main():
    global blackholed
    target_port = int(sys.argv[1])
    loop = asyncio.get_running_loop()
    server = await asyncio.start_server(lambda r, w: handle(r, w, target_port), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    while True:
        line = await commands.readline()
        if not line:
            break
        command = line.decode().strip()
        if command in ("cut", "open"):
            blackholed = command == "cut"
            if command == "open":
                for connection in connections:
                    connection.cut = False
            print(command, flush=True)
        elif command == "cutlisteners":
            for connection in connections:
                connection.cut = connection.cut or connection.listens
            print(command, flush=True)
    server.close()


asyncio.run(main())
