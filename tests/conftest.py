import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Every page's sidebar opens the audit store: tests keep theirs in memory, never in the developer's ./data
# (a test of the store or of saving points FAIRNESS_AUDIT_STORE at a file of its own).
os.environ.setdefault("FAIRNESS_AUDIT_STORE", "sqlite://")

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can react to failures
    (the browser tests save a screenshot of the page as a test artifact)."""
    outcome = yield
    setattr(item, f"rep_{outcome.get_result().when}", outcome.get_result())
