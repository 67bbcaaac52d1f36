"""Screenshot every page of a running app in headless Debian Chromium (a developer tool).

    streamlit run app.py --server.port 8599 &
    python scripts/screenshots.py http://localhost:8599 shots/
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

PAGES = {"home": "", "upload": "Upload", "bias_audit": "Bias_Audit",
         "bias_audit_gei": "Bias_Audit?view=Inequality+across+individuals",
         "bias_audit_virny": "Bias_Audit?view=Stability+and+uncertainty",
         "sample_size_match": "Sample_Size_Explorer",
         "sample_size_cdf": "Sample_Size_Explorer?tab=Distributions+as+n+grows",
         "sample_size_holes": "Sample_Size_Explorer?tab=Holes",
         "sample_size_normal": "Sample_Size_Explorer?tab=Normal+approximation",
         "sample_size_imbalance": "Sample_Size_Explorer?tab=Class+and+group+imbalance",
         "smoothing": "Smoothing", "synthetic": "Synthetic_Data",
         "forecasting": "Forecasting", "compare_and_mitigate": "Compare_and_Mitigate", "saved_audits": "Saved_Audits", "methods": "Methods"}
#: Pages where a button starts background training: (button text, text that means it finished).
TRAIN = {"bias_audit_virny": ("Train the ensemble", "Per group"), "synthetic": ("Train and evaluate", "Results"), "forecasting": ("Train PTN", "Results on the test part")}
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def main(base: str, out: str, width: int = 1400, only: str = "") -> None:
    Path(out).mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        for name, path in PAGES.items():
            if only and not name.startswith(only):
                continue
            page.goto(f"{base.rstrip('/')}/{path}")
            page.wait_for_selector("[data-testid='stApp']")
            page.wait_for_timeout(1500)
            page.wait_for_function("!!document.querySelector('[data-testid=\"stApp\"][data-test-script-state=\"notRunning\"]')", timeout=60000)
            page.wait_for_timeout(2500)
            if name in TRAIN:
                button, finished = TRAIN[name]
                page.get_by_role("button", name=button).click()
                page.wait_for_timeout(8000)  # mid-training: the live curves
                shoot(page, width, f"{out}/{name}_live.png")
                page.get_by_role("heading", name=finished).wait_for(timeout=1_200_000)
                page.wait_for_timeout(3000)
            shoot(page, width, f"{out}/{name}.png")

        browser.close()


def shoot(page, width: int, path: str) -> None:  # type: ignore[no-untyped-def]
    """The page at its full height: Streamlit scrolls inside its main container, so grow the
    viewport to that container's height first."""
    height = page.evaluate("Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))")
    page.set_viewport_size({"width": width, "height": min(int(height) + 50, 12000)})
    page.wait_for_timeout(1500)
    page.screenshot(path=path, full_page=True)
    page.set_viewport_size({"width": width, "height": 900})
    print(path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "shots", only=sys.argv[3] if len(sys.argv) > 3 else "")
