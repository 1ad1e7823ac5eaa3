#!/usr/bin/env python3
"""The dashboard of a fleet service in a real browser: headless Chromium driven by Selenium,
against one of two `peregrined` services sharing a PostgreSQL queue (issue 20).

    python3 Tests/Dashboard/fleet_dashboard_test.py --port 6800 --other-port 6801 --secret S \
        --base-url http://127.0.0.1:8080 --file a.bin --file b.bin --slow slow/big.bin \
        --service-pid 1234 --service-pid 1235 --screenshots DIR

The page is opened on --port; every download is added through the other service's RPC
(--other-port), so the page can only know of them through the shared queue. The files named by
--file are served by the base URL; --slow is served slowly (it stays active while the test
looks at it). Checks: the page shows the fleet's queue (one list, no sort, sections or trash),
the tasks the other service added, their ends, which service (--service-pid, the process ids
of both) holds the active one; pause, resume and
remove from the page act on the queue, as the other service reports.

Exits 0 when every check passed, printing each step, then PASS; prints the first failure and
exits 1 otherwise. Every wait is bounded (a bound, not a measurement: nothing asserts on time).
Needs selenium 4.40.0, chromium and chromium-driver (Debian), as dashboard_test.py.
"""

import argparse
import os
import shutil
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dashboard_test import RPC, drive, fail, page_ready, row_element, row_status, rows, shot, step, wait  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--other-port", type=int, required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--slow", required=True)
    parser.add_argument("--service-pid", action="append", default=[])
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    arguments = parser.parse_args()
    os.makedirs(arguments.screenshots, exist_ok=True)
    here = RPC(arguments.port, arguments.secret)
    other = RPC(arguments.other_port, arguments.secret)
    page = f"http://127.0.0.1:{arguments.port}/#secret=" + urllib.parse.quote(arguments.secret)
    drive(arguments, lambda driver: run(driver, here, other, page, arguments))


def visible(driver, element_id):
    return driver.find_element(By.ID, element_id).is_displayed()


def holder_text(driver, gid):
    try:
        return row_element(driver, gid).find_element(By.CSS_SELECTOR, ".holder").text
    except Exception:
        return None


def click(driver, gid, action):
    row_element(driver, gid).find_element(By.CSS_SELECTOR, f'button[data-action="{action}"]').click()


def run(driver, here, other, page, arguments):
    # 1. The page shows the fleet's queue: one list, without the list model's controls.
    step("the page of a fleet service shows the fleet's queue")
    driver.get(page)
    wait(driver, "the list", lambda: page_ready(driver))
    tabs = [tab.text for tab in driver.find_elements(By.CSS_SELECTOR, "#tabs button")]
    if tabs != ["Fleet queue"]:
        fail(f"the tabs are {tabs}")
    for hidden in ["sort-type-label", "sort-order-label", "sectioning"]:
        if visible(driver, hidden):
            fail(f"{hidden} shows on a fleet service")

    # 2. Downloads added through the other service appear here, and end here too.
    step("downloads added through the other service appear and finish")
    gids = [other.call("aria2.addUri", [f"{arguments.base_url}/files/{name}"]) for name in arguments.file]
    slow_gid = other.call("aria2.addUri", [f"{arguments.base_url}/{arguments.slow}"])
    wait(driver, "every row", lambda: {r[0] for r in rows(driver)} >= set(gids + [slow_gid]))
    names = {r[0]: r[1] for r in rows(driver)}
    expected = dict(zip(gids, arguments.file))
    expected[slow_gid] = arguments.slow.rsplit("/", 1)[-1]
    if any(names.get(gid) != name for gid, name in expected.items()):
        fail(f"the rows are named {names}, not {expected}")
    for gid in gids:
        wait(driver, f"{expected[gid]} to be done", lambda gid=gid: row_status(driver, gid) == "Done")
        if here.call("aria2.tellStatus", gid, ["status"])["status"] != "complete":
            fail(f"this service does not report {expected[gid]} complete")

    # 3. The slow one is active, with the service that holds it.
    step("the active download shows who holds it")
    wait(driver, "the slow download to be active", lambda: row_status(driver, slow_gid) == "Downloading")
    wait(driver, "its holder", lambda: (holder_text(driver, slow_gid) or "").startswith("on "))
    shown = holder_text(driver, slow_gid)
    if shown.rsplit(":", 1)[-1] not in arguments.service_pid:
        fail(f"the holder shown, {shown!r}, is not one of the services {arguments.service_pid}")
    shot(driver, arguments, "fleet")

    # 4. Pause and resume from this page: the other service sees the queue's state.
    step("pause and resume from the page")
    click(driver, slow_gid, "pause")
    wait(driver, "the other service to report it paused",
         lambda: other.call("aria2.tellStatus", slow_gid, ["status"])["status"] == "paused")
    wait(driver, "the row to show it paused", lambda: row_status(driver, slow_gid) == "Paused")
    click(driver, slow_gid, "resume")
    wait(driver, "the other service to report it waiting or active",
         lambda: other.call("aria2.tellStatus", slow_gid, ["status"])["status"] in ("waiting", "active"))
    wait(driver, "the row to show it active again", lambda: row_status(driver, slow_gid) == "Downloading")

    # 5. Remove from this page: out of the queue for every service.
    step("remove from the page")
    driver.execute_script("window.confirm = () => true;")
    click(driver, slow_gid, "remove")
    wait(driver, "the row to go", lambda: slow_gid not in {r[0] for r in rows(driver)})
    wait(driver, "the other service to forget it", lambda: not other_knows(other, slow_gid))


def other_knows(rpc, gid):
    try:
        return rpc.call("aria2.tellStatus", gid, ["status"])["status"] != "removed"
    except RuntimeError:
        return False


if __name__ == "__main__":
    main()
