"""Screenshots of the web pages for the README: search, run, compare (headless Chromium).

Ingests the bundled sample (``trajsearch/samples/sample.jsonl``, tenant ``demo``) into a
temporary store with the real embedding model, serves the pages on 127.0.0.1, signs in with
a fresh key, pastes an error from the sample, opens the top run at its matching step and
compares it with a successful similar run; each page is saved as a PNG at laptop size.

    python scripts/screenshots.py                    # -> docs/screenshots/{search,run,compare}.png
    python scripts/screenshots.py --out /tmp/shots --width 1366 --height 900

Needs Debian's chromium and chromium-driver (``apt-get install chromium chromium-driver``)
and selenium (the ``test`` extra).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import ROOT  # noqa: F401 (sets the offline model environment first)

ERROR = "Error: flight HAT223 not available on date 2024-05-14"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--width", type=int, default=1366)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--query", default=ERROR, help="The error pasted into the search box.")
    parser.add_argument("--hashing", action="store_true",
                        help="The fast test embedder instead of the real model (for a quick look only).")
    args = parser.parse_args()

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from trajsearch.cli import SAMPLE
    from trajsearch.embed import HashingEmbedder, load_embedder
    from trajsearch.ingest.read import read_dump
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.web import WebConfig, WebServer, create_app
    from trajsearch.web.app import LOOPBACK_HOSTS
    from trajsearch.web.headless import missing, start_chromium

    why = missing()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trajsearch-shots-") as tmp:
        embedder = HashingEmbedder() if args.hashing else load_embedder("all-MiniLM-L6-v2")
        ts = TrajSearch.open(f"{tmp}/milvus.db", traces=f"{tmp}/traces", embedder=embedder)
        report = ts.add(read_dump(SAMPLE, tenant="demo"))
        print(f"ingested {report.ingested} runs of {SAMPLE.name}")
        key = new_key()
        keys = KeyRing.from_entries([key_entry(key, tenant="demo", role="read", key_id="screenshots")])
        web = WebServer(create_app(ts, keys, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS)), "127.0.0.1:0").start()
        driver = start_chromium(Path(tmp) / "profile", width=args.width, height=args.height)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",  # the viewport exactly, whatever the window
                               {"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": False})
        wait = WebDriverWait(driver, 60)
        try:
            driver.get(web.url + "/signin")
            driver.find_element(By.ID, "key").send_keys(key)
            driver.find_element(By.CSS_SELECTOR, "form.signin button[type=submit]").click()
            box = wait.until(EC.element_to_be_clickable((By.ID, "q")))
            box.send_keys(args.query)
            driver.find_element(By.CSS_SELECTOR, "form.search button[type=submit]").click()
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#results-heading")))
            wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            _shot(driver, args.out / "search.png")

            first = driver.find_element(By.CSS_SELECTOR, "ol.results a.run-link")
            broken = first.text
            first.click()
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "details.step.matched[open]")))
            wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            _shot(driver, args.out / "run.png")

            driver.find_element(By.LINK_TEXT, "Compare with a successful run").click()
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "table.compare")))
            wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            driver.execute_script("var d = document.querySelector('.divergence-summary');"
                                  "if (d) { d.scrollIntoView({block: 'start'}); window.scrollBy(0, -12); }")
            _shot(driver, args.out / "compare.png")
            print(f"broken run {broken}: screenshots in {args.out}")
        finally:
            driver.quit()
            web.stop()
            ts.close()
    return 0


def _shot(driver, path: Path) -> None:
    driver.save_screenshot(str(path))
    print(f"wrote {path}")


if __name__ == "__main__":
    raise SystemExit(main())
