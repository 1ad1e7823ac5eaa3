#!/usr/bin/env python3
"""Average download rates over sliding 10-second windows, for Benchmarks/limits.sh.

    limits_windows.py peregrine BIN OUT STATE RATE URL...   peregrine get --max-overall-limit RATE
    limits_windows.py curl OUT RATE URL                     curl --limit-rate RATE (one URL)

Peregrine's byte counts come from its --json progress events (at most one a second per
download), interpolated linearly per download; curl's from the size of its output file, read
every 100 ms. Windows start 2 s after the first byte and end before the first download
finishes (so every window has all transfers running), one per second. Prints one line:
`windows=N mean=… min=… max=… worst=…%` with rates in bytes per second and the worst
deviation of any window's average from the limit.
"""
import json
import os
import subprocess
import sys
import time

WINDOW = 10.0


def interpolate(samples, t):
    """Bytes at time t from (time, bytes) samples, linearly between the two around it."""
    if not samples or t <= samples[0][0]:
        return samples[0][1] if samples else 0
    for (t0, b0), (t1, b1) in zip(samples, samples[1:]):
        if t0 <= t <= t1:
            return b0 + (b1 - b0) * (t - t0) / (t1 - t0) if t1 > t0 else b1
    return samples[-1][1]


def windows(totals, start, end):
    """Averages of the total over [t, t+10] for t = start, start+1, … while t+10 ≤ end."""
    result = []
    t = start
    while t + WINDOW <= end:
        result.append((totals(t + WINDOW) - totals(t)) / WINDOW)
        t += 1.0
    return result


def run_peregrine(binary, out, state, rate, urls):
    samples = {url: [] for url in urls}
    first_byte = None
    first_finish = None
    command = [binary, "get", "--json", "-q", "-j", str(len(urls)), "-o", out, "--state-dir", state, "--max-overall-limit", rate] + urls
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    for line in process.stdout:
        now = time.monotonic()
        try:
            event = json.loads(line)
        except ValueError:
            continue
        url = event.get("url")
        if event.get("event") == "progress" and url in samples:
            samples[url].append((now, event["received"]))
            if first_byte is None and event["received"] > 0:
                first_byte = now
        elif event.get("event") == "finished":
            if url in samples:
                samples[url].append((now, event.get("size", samples[url][-1][1] if samples[url] else 0)))
            first_finish = first_finish or now
    status = process.wait()
    finishes = sorted(samples[url][-1][0] - (first_byte or 0) for url in urls if samples[url])
    print(f"finished after {', '.join(f'{t:.1f}' for t in finishes)} s", file=sys.stderr)
    starts = sorted((samples[url][0][0] - (first_byte or 0), samples[url][0][1], url[-9:]) for url in urls if samples[url])
    print("first samples:", ", ".join(f"{u} {t:.1f}s {b}" for t, b, u in starts), file=sys.stderr)
    if status != 0:
        sys.exit(f"peregrine get exited with {status}")
    if first_byte is None or first_finish is None:
        sys.exit("no progress events")
    total = lambda t: sum(interpolate(samples[url], t) for url in urls)
    return windows(total, first_byte + 2, first_finish - 1)


def run_curl(out, rate, url):
    samples = []
    process = subprocess.Popen(["curl", "-sS", "--limit-rate", rate, "-o", out, url])
    while process.poll() is None:
        now = time.monotonic()
        try:
            samples.append((now, os.stat(out).st_size))
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    if process.returncode != 0:
        sys.exit(f"curl exited with {process.returncode}")
    first_byte = next(t for t, size in samples if size > 0)
    return windows(lambda t: interpolate(samples, t), first_byte + 2, samples[-1][0] - 1)


def main():
    mode = sys.argv[1]
    if mode == "peregrine":
        binary, out, state, rate = sys.argv[2:6]
        averages = run_peregrine(binary, out, state, rate, sys.argv[6:])
    elif mode == "curl":
        out, rate, url = sys.argv[2:5]
        averages = run_curl(out, rate, url)
    else:
        sys.exit("usage: limits_windows.py peregrine|curl …")
    if not averages:
        sys.exit("the download was shorter than one window")
    limit = parse_rate(rate)
    worst = max(abs(a - limit) / limit for a in averages)
    print(
        f"windows={len(averages)} mean={sum(averages) / len(averages):.0f} min={min(averages):.0f} "
        f"max={max(averages):.0f} worst={100 * worst:.2f}%")


def parse_rate(text):
    factor = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1].lower(), 1)
    return float(text[:-1] if factor > 1 else text) * factor


if __name__ == "__main__":
    main()
