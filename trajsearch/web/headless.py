"""Headless Chromium (Debian's ``chromium`` + ``chromium-driver``) driven by selenium.

Used by the browser tests and ``scripts/screenshots.py``; nothing in the service imports
it. The browser starts with a fresh profile, and with everything that would reach the
network on its own turned off, so it opens nothing but the page it is sent to.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("TRAJSEARCH_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TRAJSEARCH_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
    "--force-device-scale-factor=1", "--lang=en-US",
)


def missing() -> str | None:
    """Why the browser cannot start here (None: it can)."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() and os.access(path, os.X_OK)) and shutil.which(path) is None:
            return f"{path} not found: install the Debian packages chromium and chromium-driver (make test does, as root)"
    import importlib.util

    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed: pip install -e '.[test]'"
    return None


def start_chromium(profile: str | Path, *, width: int = 1366, height: int = 900) -> Any:
    """A selenium Chrome driver on headless Chromium with a fresh ``--user-data-dir`` at ``profile``."""
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager must not look for drivers online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={Path(profile).resolve()}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    return driver
