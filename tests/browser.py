# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: a headless Chromium driven by Selenium, whose console log a
test reads (chromium and chromium-driver are installed by `make setup`)."""

import shutil

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


def browser():
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,2000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))


def no_console_errors_and_kept(driver, shot, name):
    """The page logged no error; its screenshot `shot` is a real picture and
    is kept as build/test-artifacts/`name` for a person to look at."""
    from mpiscope.engine.build import REPO

    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10000
    keep = REPO / "build" / "test-artifacts"
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, keep / name)
