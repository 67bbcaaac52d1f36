import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can react to failures
    (the browser tests save a screenshot of the page as a test artifact)."""
    outcome = yield
    setattr(item, f"rep_{outcome.get_result().when}", outcome.get_result())
