#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium driven by Selenium, against a running
`peregrine daemon` and a web server that serves the files it downloads.

    python3 Tests/Dashboard/dashboard_test.py --port 6800 --secret S --base-url http://127.0.0.1:8080 \
        --file a-mid.bin --file b-big.bin --file c-small.bin --slow slow/big.bin \
        --hostile "files/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.bin" --screenshots DIR

The files named by --file are served by the base URL (their names sort otherwise than their
sizes); --slow is served slowly (it stays active while the test looks at it); --hostile is a
path whose file name is markup. Screenshots of the main views go to --screenshots.

Exits 0 when every check passed, printing each step, then PASS; prints the first failure and
exits 1 otherwise. Every wait is bounded (a bound, not a measurement: nothing asserts on time).
Needs selenium 4.40.0 (`pip install selenium==4.40.0`), chromium and chromium-driver (Debian).
"""

import argparse
import json
import os
import shutil
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, UnexpectedAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

STEP_TIMEOUT = 45


def fail(message):
    print(f"FAIL: {message}", flush=True)
    raise SystemExit(1)


def step(message):
    print(f"- {message}", flush=True)


class RPC:
    """The service's JSON-RPC over HTTP, for setting up and for checking what the page did."""

    def __init__(self, port, secret):
        self.url = f"http://127.0.0.1:{port}/jsonrpc"
        self.secret = secret

    def call(self, method, *params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": [f"token:{self.secret}", *params]})
        request = urllib.request.Request(self.url, data=body.encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def view(self):
        """The default list, its rows as objects (the service sends arrays in the order of `fields`)."""
        view = self.call("peregrine.listView")
        for section in view["sections"]:
            section["downloads"] = [dict(zip(view["fields"], row)) for row in section["downloads"]]
        return view

    def names(self):
        """The display names of the default list, in the model's order."""
        return [row["name"] for section in self.view()["sections"] for row in section["downloads"]]


def wait(driver, what, predicate, timeout=STEP_TIMEOUT):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda _: predicate())
    except TimeoutException:
        fail(f"timed out waiting for {what}")


def rows(driver):
    """The rows the page shows, in list order: [(gid, name, status)] (visible rows only)."""
    return driver.execute_script(
        """
        return [...document.querySelectorAll('#list-scroller .row:not([hidden])')]
            .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
            .map((row) => [row.dataset.gid, row.querySelector('.name').textContent,
                           row.querySelector('.status').textContent]);
        """
    )


def row_element(driver, gid):
    return driver.find_element(By.CSS_SELECTOR, f'#list-scroller .row[data-gid="{gid}"]:not([hidden])')


def row_status(driver, gid):
    try:
        return row_element(driver, gid).find_element(By.CSS_SELECTOR, ".status").text
    except Exception:
        return None


def page_ready(driver):
    return driver.execute_script("return document.body.dataset.ready === 'true'")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--slow", required=True)
    parser.add_argument("--hostile", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    arguments = parser.parse_args()
    os.makedirs(arguments.screenshots, exist_ok=True)
    rpc = RPC(arguments.port, arguments.secret)
    page = f"http://127.0.0.1:{arguments.port}/"

    drive(arguments, lambda driver: run(driver, rpc, page, arguments))


def drive(arguments, body):
    """Runs `body(driver)` in a headless Chromium (arguments.chromium, .chromedriver), then checks
    the console; on a failure, a screenshot (arguments.screenshots) and the browser's log."""
    options = webdriver.ChromeOptions()
    options.binary_location = arguments.chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,860", "--force-color-profile=srgb", "--hide-scrollbars"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver Debian ships, named: Selenium Manager never downloads one.
    driver = webdriver.Chrome(service=Service(executable_path=arguments.chromedriver), options=options)
    driver.set_script_timeout(30)
    try:
        try:
            body(driver)
        except SystemExit:
            shot(driver, arguments, "failure")
            for entry in driver.get_log("browser"):
                print(f"  browser: {entry['level']} {entry['message']}", flush=True)
            raise
        check_console(driver)
    finally:
        driver.quit()
    print("PASS", flush=True)


def shot(driver, arguments, name):
    # The type icons come from /thumbnail/GID, which waits up to 2 s for a real thumbnail: let
    # them arrive for the picture (bounded; nothing is asserted on it).
    try:
        WebDriverWait(driver, 5, poll_frequency=0.1).until(lambda _: driver.execute_script(
            "return [...document.querySelectorAll('.row:not([hidden]) .icon img')].every((i) => !i.hidden)"))
    except TimeoutException:
        pass
    path = os.path.join(arguments.screenshots, f"dashboard-{name}.png")
    driver.save_screenshot(path)
    step(f"screenshot {path}")


def run(driver, rpc, page, arguments):
    # 1. A wrong secret is refused; the page stays at its login.
    step("a wrong secret is refused")
    driver.get(page)
    secret_box = wait(driver, "the login form", lambda: driver.find_element(By.ID, "login-secret"))
    wait(driver, "the login form to show", lambda: secret_box.is_displayed())
    secret_box.send_keys("not-the-secret" + Keys.ENTER)
    wait(driver, "the refusal", lambda: driver.find_element(By.ID, "login-error").text == "The secret is wrong.")
    if driver.find_element(By.ID, "app").is_displayed():
        fail("the application shows with a wrong secret")
    if driver.execute_script("return sessionStorage.length") != 0:
        fail("a refused secret was stored")
    shot(driver, arguments, "login")

    # 2. The secret in the fragment signs in; the fragment leaves the address.
    step("the secret in the URL fragment signs in")
    driver.get(page + "#secret=" + urllib.parse.quote(arguments.secret))
    wait(driver, "the list", lambda: page_ready(driver))
    if driver.execute_script("return location.hash") != "":
        fail("the secret stayed in the address")
    if driver.find_element(By.ID, "login").is_displayed():
        fail("the login shows after signing in with the fragment")

    # 3. Add a URL with the form and watch it finish (live: notifications, tellStatus).
    step("add a URL with the form and watch it finish")
    driver.find_element(By.ID, "add-toggle").click()
    # Display names leave the extension out (the manager's hiddenFileExtension).
    files = [name.rsplit(".", 1)[0] for name in arguments.file]
    first = files[0]
    driver.find_element(By.ID, "add-uris").send_keys(f"{arguments.base_url}/files/{arguments.file[0]}")
    driver.find_element(By.ID, "add-submit").click()
    gid = wait(driver, f"a row for {first}", lambda: next((r[0] for r in rows(driver) if r[1] == first), None))
    wait(driver, f"{first} to be done", lambda: row_status(driver, gid) == "Done")
    status = rpc.call("aria2.tellStatus", gid, ["status", "completedLength", "totalLength"])
    if status["status"] != "complete" or status["completedLength"] != status["totalLength"]:
        fail(f"the service says {status}")

    # The other files (through the RPC), and the slow one, which stays active.
    for name in arguments.file[1:]:
        rpc.call("aria2.addUri", [f"{arguments.base_url}/files/{name}"])
    slow_gid = rpc.call("aria2.addUri", [f"{arguments.base_url}/{arguments.slow}"])
    for name in files:
        wait(driver, f"{name} to be done", lambda name=name: any(r[1] == name and r[2] == "Done" for r in rows(driver)))
    wait(driver, "the slow download to be active", lambda: row_status(driver, slow_gid) == "Downloading")
    wait(driver, "the global bar to count the active download",
         lambda: driver.find_element(By.ID, "num-active").text == "1")

    # 4. An RPC error is shown to the user.
    step("an RPC error is shown")
    driver.find_element(By.ID, "add-uris").send_keys("not a url")
    driver.find_element(By.ID, "add-submit").click()
    wait(driver, "the error banner", lambda: driver.find_element(By.ID, "error-banner").is_displayed())
    if "not" not in driver.find_element(By.ID, "error-text").text:
        fail(f"the banner says {driver.find_element(By.ID, 'error-text').text!r}")
    driver.find_element(By.ID, "error-close").click()
    driver.find_element(By.ID, "add-uris").clear()
    driver.find_element(By.ID, "add-toggle").click()

    # 5. Sort by name, then by size: the page shows the model's order.
    step("sort by name")
    Select(driver.find_element(By.ID, "sort-type")).select_by_value("fileName")
    wait(driver, "the name order", lambda: [r[1] for r in rows(driver) if r[1] in files] == sorted(files))
    if [n for n in rpc.names() if n in files] != sorted(files):
        fail(f"the service's order is {rpc.names()}")
    step("sort by size")
    Select(driver.find_element(By.ID, "sort-type")).select_by_value("fileSize")
    by_size = [name for name in files]
    by_size.sort(key=lambda name: int(next(
        row["total"] for section in rpc.view()["sections"] for row in section["downloads"] if row["name"] == name)))
    wait(driver, "the size order", lambda: [r[1] for r in rows(driver) if r[1] in files] == by_size)
    if by_size == sorted(files):
        fail("the files' sizes sort as their names: the check would prove nothing")
    Select(driver.find_element(By.ID, "sort-order")).select_by_value("descending")
    wait(driver, "the descending size order",
         lambda: [r[1] for r in rows(driver) if r[1] in files] == list(reversed(by_size)))
    Select(driver.find_element(By.ID, "sort-order")).select_by_value("ascending")
    wait(driver, "the ascending size order", lambda: [r[1] for r in rows(driver) if r[1] in files] == by_size)

    # 6. Switch sectioning: size groups appear as section titles, and go again.
    step("switch sectioning")
    driver.find_element(By.ID, "sec-fileSize").click()
    wait(driver, "size sections", lambda: "0 ~ 1 MB" in section_titles(driver))
    if not rpc.view()["sectioning"]["fileSize"]:
        fail("the service's list is not sectioned by size")
    shot(driver, arguments, "light")
    driver.find_element(By.ID, "sec-fileSize").click()
    wait(driver, "no size sections", lambda: "0 ~ 1 MB" not in section_titles(driver))

    # 7. The hostile name is text; no markup runs.
    step("a file name made of markup is shown as text")
    driver.execute_script("window.__injected = false; window.alert = () => { window.__injected = true; };")
    hostile_gid = rpc.call("aria2.addUri", [f"{arguments.base_url}/{arguments.hostile}"])
    hostile_name = "<img src=x onerror=alert(1)>"
    wait(driver, "the hostile row", lambda: any(r[0] == hostile_gid for r in rows(driver)))
    wait(driver, "the hostile name", lambda: row_element(driver, hostile_gid).find_element(
        By.CSS_SELECTOR, ".name").text == hostile_name)
    rpc.call("peregrine.setDisplayName", hostile_gid, "<b id=bold>bold</b><script>window.__injected=true</script>")
    wait(driver, "the hostile display name", lambda: "<b id=bold>" in row_element(driver, hostile_gid).find_element(
        By.CSS_SELECTOR, ".name").text)
    if driver.execute_script(
        "return window.__injected || document.querySelectorAll('img[src=x], #bold, .name *').length > 0"
    ):
        fail("markup from the service became elements")

    # 8. Manual mode: drag the last row before the first; the service has the new order.
    step("drag a task in manual mode")
    Select(driver.find_element(By.ID, "sort-type")).select_by_value("manual")
    wait(driver, "the drag handles", lambda: driver.find_elements(By.CSS_SELECTOR, "#list-scroller .row .handle:not([hidden])"))
    before = [row["gid"] for row in rpc.view()["sections"][0]["downloads"]]
    moved = before[-1]
    handle = row_element(driver, moved).find_element(By.CSS_SELECTOR, ".handle")
    target = row_element(driver, before[0])
    ActionChains(driver).click_and_hold(handle).move_to_element_with_offset(target, 0, -10).pause(0.1) \
        .move_to_element_with_offset(target, 0, -8).release().perform()
    expected = [moved] + before[:-1]
    wait(driver, "the new order in the service", lambda: [r["gid"] for r in rpc.view()["sections"][0]["downloads"]] == expected)
    wait(driver, "the new order on the page", lambda: [r[0] for r in rows(driver)] == expected)
    step("rename a section, move a task into a new one with the keyboard")
    driver.find_element(By.CSS_SELECTOR, '#list-scroller .section:not([hidden]) button[data-action="rename"]').click()
    title_box = wait(driver, "the title dialog", lambda: driver.find_element(By.ID, "title-input"))
    title_box.clear()
    title_box.send_keys("Renamed <i>here</i>" + Keys.ENTER)
    wait(driver, "the new title", lambda: rpc.view()["sections"][0]["title"] == "Renamed <i>here</i>")
    wait(driver, "the new title on the page", lambda: "Renamed <i>here</i>" in section_titles(driver))
    driver.find_element(By.ID, "add-section").click()
    title_box = wait(driver, "the title dialog", lambda: driver.find_element(By.ID, "title-input"))
    title_box.send_keys("Later" + Keys.ENTER)
    wait(driver, "the second section", lambda: len(rpc.view()["sections"]) == 2)
    last = expected[-1]
    row_element(driver, last).find_element(By.CSS_SELECTOR, ".name").click()
    driver.find_element(By.ID, "list-scroller").send_keys(Keys.ALT, Keys.ARROW_DOWN)
    wait(driver, "the task in the second section",
         lambda: [r["gid"] for r in rpc.view()["sections"][1]["downloads"]] == [last])

    # 9. Delete to trash, then restore from the trash view.
    step("delete to trash and restore")
    victim = expected[0]
    row_element(driver, victim).find_element(By.CSS_SELECTOR, 'button[data-action="trash"]').click()
    wait(driver, "the trash to hold it", lambda: rpc.call("peregrine.listTrash") == [victim])
    wait(driver, "the row to leave the list", lambda: all(r[0] != victim for r in rows(driver)))
    driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="trash"]').click()
    restore = wait(driver, "the trash row", lambda: driver.find_element(
        By.CSS_SELECTOR, f'#trash-scroller .row[data-gid="{victim}"] button[data-action="restore"]'))
    shot(driver, arguments, "trash")
    restore.click()
    wait(driver, "the trash to be empty", lambda: rpc.call("peregrine.listTrash") == [])
    wait(driver, "the empty trash view", lambda: driver.find_element(By.ID, "trash-summary").text.startswith("0 "))
    driver.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="list"]').click()
    wait(driver, "the restored row", lambda: any(r[0] == victim for r in rows(driver)))

    # 10. Limits from the global bar.
    step("change the concurrency limit")
    box = driver.find_element(By.ID, "max-concurrent")
    box.clear()
    box.send_keys("3" + Keys.ENTER)
    wait(driver, "the new limit", lambda: rpc.call("aria2.getGlobalOption")["max-concurrent-downloads"] == "3")

    # Screenshots: sorted by size (light, above), dark, 360 px wide.
    step("screenshots")
    Select(driver.find_element(By.ID, "sort-type")).select_by_value("fileType")
    wait(driver, "type sections", lambda: len(section_titles(driver)) >= 1)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    shot(driver, arguments, "dark")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 360, "height": 760, "deviceScaleFactor": 1, "mobile": True})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
    time.sleep(0.2)
    if driver.execute_script("return document.documentElement.scrollWidth") > 360:
        fail("the page is wider than a 360 px screen")
    shot(driver, arguments, "360px")

    # The ⋯ menu of a finished row offers what its buttons would: no Resume, no Pause.
    step("the phone menu of a finished row")
    done = next((r[0] for r in rows(driver) if r[2] == "Done"), None)
    if done is None:
        fail("no finished row to open the menu of")
    more = row_element(driver, done).find_element(By.CSS_SELECTOR, "button[data-action='more']")
    driver.execute_script("arguments[0].click()", more)
    offered = wait(driver, "the row's menu", lambda: driver.execute_script(
        "const m = document.querySelector('.menu');"
        " return m && [...m.querySelectorAll('button')].map((b) => b.textContent);"))
    if "Resume" in offered or "Pause" in offered:
        fail(f"the menu of a finished row offers {offered}")
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def section_titles(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#list-scroller .section:not([hidden]) .title')].map((t) => t.textContent)"
    )


def expected_entry(message):
    """What the browser logs that is no problem: the favicon it asks for by itself, and the
    HTTP status of a JSON-RPC error answer (400, as aria2 sends it), which the steps that
    provoke one (a wrong secret, an RPC error) get."""
    if "favicon.ico" in message:
        return True
    return "/jsonrpc" in message and "status of 400" in message


def check_console(driver):
    """No script error and no refused resource (a CSP violation) on the way."""
    problems = [
        entry["message"] for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE" and not expected_entry(entry["message"])
    ]
    if problems:
        fail("the browser reported: " + "; ".join(problems))


if __name__ == "__main__":
    try:
        main()
    except UnexpectedAlertPresentException as error:
        fail(f"an alert opened: {error}")
