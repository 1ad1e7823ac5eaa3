#!/usr/bin/env python3
"""aria2 JSON-RPC compatibility check, driven by aria2p (a client nobody here wrote).

Runs the same scenario against any server that speaks aria2's JSON-RPC: `peregrine daemon`
and `aria2c --enable-rpc`. Passing against both is the proof of compatibility.

    python3 Tests/RPC/aria2p_compat.py --port 6800 --secret S --base-url http://127.0.0.1:8080 \
        --file small1.bin=SHA256 --file small2.bin=SHA256 --file small3.bin=SHA256 --big big.bin

The base URL serves the files; `--big` names a file served slowly (throttled), so that it can
be paused, unpaused and removed while it downloads. Exits 0 when every check passed; prints
each step and the first failure. Needs aria2p 0.12.3 (`pip install aria2p==0.12.3`).
"""

import argparse
import hashlib
import json
import sys
import threading
import time
import urllib.error
import urllib.request

import aria2p
import websocket

STEP_TIMEOUT = 60.0


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def step(message):
    print(f"- {message}", flush=True)


def wait_for(what, predicate, timeout=STEP_TIMEOUT):
    """Polls until predicate() is true; fails after `timeout` seconds (a bound, not a measurement)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    fail(f"timed out waiting for {what}")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Notifications:
    """Collects aria2 notifications received over WebSocket by aria2p's listener."""

    def __init__(self):
        self.lock = threading.Condition()
        self.events = []

    def record(self, kind):
        def callback(_api, gid):
            with self.lock:
                self.events.append((kind, gid))
                self.lock.notify_all()

        return callback

    def wait(self, kind, gid, timeout=STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        with self.lock:
            while (kind, gid) not in self.events:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    fail(f"no {kind} notification for {gid}; received {self.events}")
                self.lock.wait(remaining)


def status_of(api, gid):
    return api.client.tell_status(gid, ["status"])["status"]


def download_into_a_folder(api, base_url, name, digest):
    """Adds `name` with `dir` a folder of the download directory, as AriaNg does, waits for it
    and checks where it went; returns its GID."""
    step("adds a download into a folder of the download directory (dir), as AriaNg does")
    root = api.client.get_global_option()["dir"].rstrip("/")
    folder = f"{root}/aria2p-folder/inner"
    placed = api.add_uris([f"{base_url}/{name}?into-a-folder"], options={"dir": folder})
    wait_for("the download into a folder to complete", lambda: status_of(api, placed.gid) == "complete")
    placed_status = api.client.tell_status(placed.gid, ["dir", "files"])
    placed_path = placed_status["files"][0]["path"]
    if placed_status["dir"] != folder or not placed_path.startswith(folder + "/"):
        fail(f"a download with dir={folder} is at {placed_status['dir']}, {placed_path}")
    if sha256(placed_path) != digest:
        fail(f"SHA-256 of {placed_path} does not match")
    if api.client.get_option(placed.gid).get("dir") != folder:
        fail(f"getOption does not report dir={folder}: {api.client.get_option(placed.gid).get('dir')}")
    return placed.gid


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", default="")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--file", action="append", default=[], help="NAME=SHA256 of a small file")
    parser.add_argument("--big", required=True, help="a file the server sends slowly")
    parser.add_argument(
        "--scenario",
        choices=["full", "dir"],
        default="full",
        help="dir: only a download into a folder of the download directory (a fleet service)",
    )
    arguments = parser.parse_args()
    files = [entry.split("=", 1) for entry in arguments.file]
    if len(files) < 3:
        fail("give at least three --file NAME=SHA256")

    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=arguments.port, secret=arguments.secret))
    if arguments.scenario == "dir":
        download_into_a_folder(api, arguments.base_url, *files[0])
        print("PASS", flush=True)
        return

    step("refuses a wrong secret with aria2's error")
    wrong = aria2p.Client(host="http://127.0.0.1", port=arguments.port, secret=arguments.secret + "x")
    try:
        wrong.get_global_stat()
        fail("a wrong secret was accepted")
    except aria2p.ClientException as error:
        if error.code != 1 or error.message != "Unauthorized":
            fail(f"wrong-secret error is {error.code} {error.message!r}")

    step("refuses a call without an id with -32600 and a null id, running nothing")
    body = json.dumps(
        {"jsonrpc": "2.0", "method": "aria2.pauseAll", "params": [f"token:{arguments.secret}"]}
    ).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{arguments.port}/jsonrpc", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=STEP_TIMEOUT) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        answer = json.loads(error.read())
    if answer.get("id", "absent") is not None or answer.get("error", {}).get("code") != -32600:
        fail(f"a call without an id was answered with {answer!r}")

    step("listens to notifications over WebSocket")
    connected = threading.Event()
    original = websocket.create_connection

    def connect(*args, **kwargs):
        socket = original(*args, **kwargs)
        connected.set()
        return socket

    websocket.create_connection = connect
    notifications = Notifications()
    api.listen_to_notifications(
        threaded=True,
        on_download_start=notifications.record("start"),
        on_download_pause=notifications.record("pause"),
        on_download_stop=notifications.record("stop"),
        on_download_complete=notifications.record("complete"),
        on_download_error=notifications.record("error"),
        timeout=1,
        handle_signals=False,
    )
    if not connected.wait(STEP_TIMEOUT):
        fail("the WebSocket listener did not connect")

    try:
        stopped_order = []
        (first_name, first_sha) = files[0]
        step(f"adds {first_name} and waits for it to complete")
        download = api.add_uris([f"{arguments.base_url}/{first_name}"], options={"split": "2"})
        gid = download.gid
        if len(gid) != 16 or any(c not in "0123456789abcdef" for c in gid):
            fail(f"GID {gid!r} is not 16 hex digits")
        wait_for(f"{first_name} to complete", lambda: status_of(api, gid) == "complete")
        notifications.wait("start", gid)
        notifications.wait("complete", gid)
        stopped_order.append(gid)
        download = api.get_download(gid)
        if download.total_length != download.completed_length or download.total_length == 0:
            fail(f"lengths {download.total_length} / {download.completed_length}")
        path = str(download.files[0].path)
        if sha256(path) != first_sha:
            fail(f"SHA-256 of {path} does not match")
        if api.client.get_option(gid).get("split") != "2":
            fail(f"getOption does not report split=2: {api.client.get_option(gid)}")

        placed = download_into_a_folder(api, arguments.base_url, first_name, first_sha)
        notifications.wait("complete", placed)
        stopped_order.append(placed)

        step(f"adds {arguments.big} paused, unpauses, pauses, unpauses and removes it")
        big = api.add_uris([f"{arguments.base_url}/{arguments.big}"], options={"pause": "true"})
        if status_of(api, big.gid) != "paused":
            fail(f"a download added with pause=true is {status_of(api, big.gid)}")
        waiting = [entry["gid"] for entry in api.client.tell_waiting(0, 100, ["gid"])]
        if big.gid not in waiting:
            fail("a paused download is not in tellWaiting")
        api.client.unpause(big.gid)
        def running():
            status = api.client.tell_status(big.gid, ["status", "completedLength"])
            return status["status"] == "active" and int(status["completedLength"]) > 0

        wait_for("the big download to run", running)
        notifications.wait("start", big.gid)
        active = [entry["gid"] for entry in api.client.tell_active(["gid"])]
        if big.gid not in active:
            fail("an active download is not in tellActive")
        stats = api.get_stats()
        if stats.num_active < 1:
            fail(f"getGlobalStat counts {stats.num_active} active downloads")
        api.client.pause(big.gid)
        wait_for("the big download to pause", lambda: status_of(api, big.gid) == "paused")
        notifications.wait("pause", big.gid)
        try:
            api.client.pause(big.gid)
            fail("pausing a paused download succeeded")
        except aria2p.ClientException as error:
            if error.code != 1:
                fail(f"pausing twice answers code {error.code}")
        api.client.unpause(big.gid)
        wait_for("the big download to run again", running)
        api.client.remove(big.gid)
        wait_for("the big download to be removed", lambda: status_of(api, big.gid) == "removed")
        notifications.wait("stop", big.gid)
        stopped_order.append(big.gid)

        step("forgets a paused download at once when it is removed (aria2 keeps no result)")
        paused = api.add_uris([f"{arguments.base_url}/{arguments.big}"], options={"pause": "true"})
        api.client.remove(paused.gid)
        try:
            api.client.tell_status(paused.gid)
            fail("a removed paused download still has a status")
        except aria2p.ClientException as error:
            if error.code != 1:
                fail(f"status of a removed paused download answers code {error.code}")

        step("takes, checks and reports options as aria2 does")
        options = {
            "pause": "true", "gid": "00000000000000a1", "bt-max-peers": "7", "min-split-size": "2M",
            "header": ["X-A: 1", "X-B: 2"], "user-agent": "compat/1", "no-such-option": "1",
        }
        optioned = api.client.add_uri([f"{arguments.base_url}/{arguments.big}"], options)
        if optioned != "00000000000000a1":
            fail(f"addUri with gid 00000000000000a1 answered {optioned}")
        reported = api.client.get_option(optioned)
        expected_options = {
            "bt-max-peers": "7", "min-split-size": "2097152", "header": "X-A: 1\nX-B: 2\n", "user-agent": "compat/1",
        }
        for name, value in expected_options.items():
            if reported.get(name) != value:
                fail(f"getOption reports {name}={reported.get(name)!r}, not {value!r}")
        for name in ["no-such-option", "gid", "pause"]:
            if name in reported:
                fail(f"getOption reports {name}")
        for name, bad in [("timeout", "0"), ("file-allocation", "fast"), ("max-connection-per-server", "17")]:
            try:
                api.client.add_uri([f"{arguments.base_url}/{first_name}?{name}"], {name: bad})
                fail(f"{name}={bad} was accepted")
            except aria2p.ClientException as error:
                prefix = f"We encountered a problem while processing the option '--{name}'"
                if error.code != 1 or not error.message.startswith(prefix):
                    fail(f"{name}={bad} answers {error.code} {error.message!r}")
        try:
            api.client.add_uri([f"{arguments.base_url}/{first_name}?again"], {"gid": "00000000000000a1"})
            fail("a GID in use was accepted")
        except aria2p.ClientException as error:
            # aria2 says "No URI to download."; Peregrine says why.
            if error.code != 1:
                fail(f"a GID in use answers {error.code} {error.message!r}")
        api.client.change_global_option({"bt-max-peers": "9"})
        if api.client.get_global_option().get("bt-max-peers") != "9":
            fail("changeGlobalOption did not keep bt-max-peers")
        api.client.remove(optioned)

        step("changes a download's URIs and has no servers for a paused one")
        first_uri, second_uri = f"{arguments.base_url}/{arguments.big}", f"{arguments.base_url}/{files[1][0]}"
        added = [f"{arguments.base_url}/{files[2][0]}", f"{arguments.base_url}/{first_name}"]
        sourced = api.client.add_uri([first_uri, second_uri], {"pause": "true"})
        counts = api.client.change_uri(sourced, 1, [second_uri], added)
        if counts != [1, 2]:
            fail(f"changeUri answered {counts}")
        uris = [entry["uri"] for entry in api.client.get_uris(sourced)]
        if uris != [first_uri] + added:
            fail(f"getUris after changeUri is {uris}")
        try:
            api.client.get_servers(sourced)
            fail("a paused download has servers")
        except aria2p.ClientException as error:
            if error.code != 1:
                fail(f"getServers of a paused download answers {error.code} {error.message!r}")
        api.client.remove(sourced)

        for name, expected in files[1:]:
            step(f"adds {name} and waits for it to complete")
            other = api.add_uris([f"{arguments.base_url}/{name}"])
            wait_for(f"{name} to complete", lambda: status_of(api, other.gid) == "complete")
            notifications.wait("complete", other.gid)
            path = str(api.get_download(other.gid).files[0].path)
            if sha256(path) != expected:
                fail(f"SHA-256 of {path} does not match")
            stopped_order.append(other.gid)

        step("pages tellStopped with positive and negative offsets as aria2 does")

        def stopped(offset, num):
            return [entry["gid"] for entry in api.client.tell_stopped(offset, num, ["gid"])]

        if stopped(0, 100) != stopped_order:
            fail(f"tellStopped(0, 100) is {stopped(0, 100)}, expected {stopped_order}")
        cases = {
            (0, 2): stopped_order[:2],
            (1, 2): stopped_order[1:3],
            (-1, 2): stopped_order[::-1][:2],
            (-2, 100): stopped_order[-2::-1],
            (-1, 1): stopped_order[-1:],
            (-100, 2): [],
            (100, 2): [],
        }
        for (offset, num), expected in cases.items():
            if stopped(offset, num) != expected:
                fail(f"tellStopped({offset}, {num}) is {stopped(offset, num)}, expected {expected}")

        step("reads the global statistics")
        stats = api.get_stats()
        if stats.num_active != 0 or stats.num_waiting != 0 or stats.num_stopped != len(stopped_order):
            fail(f"getGlobalStat: {stats.num_active} active, {stats.num_waiting} waiting, {stats.num_stopped} stopped")

        step("answers an unknown GID with aria2's error")
        try:
            api.client.tell_status("0123456789abcdef")
            fail("an unknown GID was found")
        except aria2p.ClientException as error:
            if error.code != 1 or "0123456789abcdef" not in error.message:
                fail(f"unknown-GID error is {error.code} {error.message!r}")

        step("removes one result, then purges the rest")
        api.client.remove_download_result(stopped_order[0])
        if stopped(0, 100) != stopped_order[1:]:
            fail(f"after removeDownloadResult tellStopped is {stopped(0, 100)}")
        api.client.purge_download_result()
        if stopped(0, 100) != []:
            fail(f"after purgeDownloadResult tellStopped is {stopped(0, 100)}")

        step("lists methods and notifications")
        methods = set(api.client.list_methods())
        for method in ["aria2.addUri", "aria2.tellStatus", "aria2.tellStopped", "system.multicall"]:
            if method not in methods:
                fail(f"system.listMethods lacks {method}")
        results = api.client.multicall(
            [{"methodName": "aria2.getGlobalStat", "params": []}, {"methodName": "aria2.getVersion", "params": []}]
        )
        if len(results) != 2 or "version" not in results[1][0]:
            fail(f"system.multicall answered {results}")
    finally:
        api.stop_listening()

    print("PASS", flush=True)


if __name__ == "__main__":
    main()
