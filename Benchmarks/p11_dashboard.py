#!/usr/bin/env python3
"""P11's browser half (Benchmarks/p11.sh runs it): opens the dashboard of a running service in
headless Chromium and measures

- the first full render: from the navigation's start to the second animation frame after the
  rows were put in the page (so the frame with them was produced), from the page's own
  Performance marks; with the parts: the list request, its answer, the DOM work; measured on
  the page opened a second time in the browser (warm), and on the browser's first page (cold).
  The page asks for its first screenfuls of rows (with every section's count, so the list has
  its full height), then for the whole list: the first render is the frame with the first
  answer's rows, and *whole list* the frame after the second answer;
- the longest main-thread task while the service's downloads update, over a window of
  --seconds: from Chromium's trace (every task the renderer's main thread ran, not only ours),
  wall and the thread's own CPU time (a shared machine preempts it), plus the `longtask` entries of a PerformanceObserver (tasks over 50 ms, the API's floor) and
  the page's own longest update round.

Prints one JSON object. Needs selenium 4.40.0, chromium and chromium-driver.
"""

import argparse
import json
import shutil
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

OBSERVER = """
window.__longtasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longtasks.push([entry.startTime, entry.duration]);
}).observe({ type: 'longtask', buffered: true });
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the page, with #secret=… when the service has one")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rows", type=int, required=True, help="the rows the list must show")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    arguments = parser.parse_args()

    options = webdriver.ChromeOptions()
    options.binary_location = arguments.chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 f"--window-size={arguments.width},{arguments.height}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    options.add_experimental_option("perfLoggingPrefs", {
        "enableNetwork": False, "enablePage": False,
        "traceCategories": "devtools.timeline,toplevel,disabled-by-default-devtools.timeline",
    })
    driver = webdriver.Chrome(service=Service(executable_path=arguments.chromedriver), options=options)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
        # Cold: the browser's first page. Warm: the same page opened again (a new document, the
        # browser's processes already running), as a person opening the dashboard sees it.
        driver.get(arguments.url)
        WebDriverWait(driver, 120, poll_frequency=0.02).until(
            lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
        cold = driver.execute_script("return window.peregrineMetrics.firstRender")
        driver.get("about:blank")
        driver.get(arguments.url)
        WebDriverWait(driver, 120, poll_frequency=0.02).until(
            lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
        load = driver.execute_script("""
            const m = window.peregrineMetrics;
            return { firstRender: m.firstRender, listRequested: m.listRequested, listReceived: m.listReceived,
                     painted: m.painted, listBytes: m.listBytes, firstBytes: m.firstBytes, wholeList: m.wholeList,
                     rows: document.getElementById('list-scroller').getAttribute('aria-rowcount') };
        """)
        if int(load["rows"]) < arguments.rows:
            print(f"the list shows {load['rows']} entries, fewer than {arguments.rows}", file=sys.stderr)
            return 1
        # The window: what the renderer ran while the downloads updated, from a mark in the trace.
        driver.execute_script("window.__longtasks = []; window.peregrineMetrics.longestUpdate = 0;"
                              "window.peregrineMetrics.updates = 0; console.timeStamp('p11-window');")
        began = driver.execute_script("return performance.now()")
        time.sleep(arguments.seconds)
        window = driver.execute_script("""
            return { longtasks: window.__longtasks, longestUpdate: window.peregrineMetrics.longestUpdate,
                     updates: window.peregrineMetrics.updates,
                     active: document.getElementById('num-active').textContent };
        """)
        tasks, cpu, parts = main_thread_tasks(driver.get_log("performance"))
    finally:
        driver.quit()
    print(json.dumps({
        "first_render_ms": round(load["firstRender"], 1),
        "first_render_cold_ms": round(cold, 1),
        "list_request_ms": round(load["listRequested"], 1),
        "list_answer_ms": round(load["listReceived"] - load["listRequested"], 1),
        "dom_ms": round(load["painted"] - load["listReceived"], 1),
        "list_bytes": load["listBytes"],
        "first_bytes": load["firstBytes"],
        "whole_list_ms": round(load["wholeList"], 1),
        "rows": int(load["rows"]),
        "window_s": arguments.seconds,
        "active_shown": window["active"],
        "updates": window["updates"],
        "longest_update_ms": round(window["longestUpdate"], 2),
        "longtasks_over_50ms": len(window["longtasks"]),
        "trace_tasks": len(tasks),
        "longest_task_ms": round(max(tasks, default=0), 2),
        "tasks_over_16ms": sum(1 for duration in tasks if duration > 16),
        "longest_task_cpu_ms": round(max(cpu, default=0), 2),
        "longest_task_parts": parts,
    }))
    return 0


def main_thread_tasks(entries):
    """The durations (ms) of the tasks the page's main thread ran after the window's mark."""
    events = []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Tracing.dataCollected":
            events.append(message["params"])
    mark = next((event for event in events if event.get("name") == "TimeStamp"
                 and event.get("args", {}).get("data", {}).get("message") == "p11-window"), None)
    if mark is None:
        raise SystemExit("the trace has no window mark")
    thread = (mark.get("pid"), mark.get("tid"))
    mine = [event for event in events if (event.get("pid"), event.get("tid")) == thread and event.get("ts", 0) >= mark["ts"]]
    tasks = [event for event in mine if event.get("name") == "RunTask" and event.get("ph") == "X" and "dur" in event]
    if not tasks:
        return [], [], {}
    # What the longest task spent its time on: the timeline events inside it, by name.
    longest = max(tasks, key=lambda event: event["dur"])
    parts = {}
    for event in mine:
        if event is longest or event.get("ph") != "X" or "dur" not in event or event.get("name") == "RunTask":
            continue
        if longest["ts"] <= event["ts"] and event["ts"] + event["dur"] <= longest["ts"] + longest["dur"]:
            parts[event["name"]] = round(parts.get(event["name"], 0) + event["dur"] / 1000, 2)
    top = dict(sorted(parts.items(), key=lambda item: -item[1])[:6])
    # Wall time (dur) counts the time the thread waited for a core on a shared machine; the
    # thread's own time (tdur) is the work.
    return [event["dur"] / 1000 for event in tasks], [event.get("tdur", 0) / 1000 for event in tasks], top


if __name__ == "__main__":
    sys.exit(main())
