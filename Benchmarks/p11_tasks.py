#!/usr/bin/env python3
"""P11's tasks (Benchmarks/p11.sh runs it): TASKS − ACTIVE paused downloads (never fetched) and
ACTIVE running ones from nginx on 127.0.0.1 to 127.0.0.7, added to a running service in batches
of 1000 calls (its batch bound); waits until ACTIVE are active (at most 120 s).

    python3 Benchmarks/p11_tasks.py RPC_PORT SECRET NGINX_PORT TASKS ACTIVE
"""
import json, sys, time, urllib.request
port, secret, nginx, tasks, active = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def post(body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/jsonrpc", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())
def call(method, *params):
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": [f"token:{secret}", *params]}
paused = [f"http://127.0.0.1:{nginx}/p/{i:05d}-file.bin" for i in range(tasks - active)]
for start in range(0, len(paused), 1000):
    answers = post([call("aria2.addUri", [url], {"pause": "true"}) for url in paused[start:start + 1000]])
    bad = [a for a in answers if "error" in a]
    if bad: sys.exit(f"addUri failed: {bad[0]}")
hosts = [f"127.0.0.{n}" for n in range(1, 8)]
answers = post([call("aria2.addUri", [f"http://{hosts[i % len(hosts)]}:{nginx}/a/{i + 1}.bin"]) for i in range(active)])
bad = [a for a in answers if "error" in a]
if bad: sys.exit(f"addUri failed: {bad[0]}")
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    stat = post(call("aria2.getGlobalStat"))["result"]
    if int(stat["numActive"]) == active: break
    time.sleep(0.2)
else:
    sys.exit(f"only {stat['numActive']} of {active} downloads became active")
