import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Every page's sidebar opens the audit store: tests keep theirs in memory, never in the developer's ./data
# (a test of the store or of saving points FAIRNESS_AUDIT_STORE at a file of its own).
os.environ.setdefault("FAIRNESS_AUDIT_STORE", "sqlite://")

# Under pytest-xdist each worker is one process per core: one compute thread each (PyTorch's and NumPy's BLAS
# read this when imported), so two workers never run four threads on two cores, where PyTorch's spinning
# threads slowed a HydraGAN test tenfold. A test that needs threads sets them itself.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can react to failures
    (the browser tests save a screenshot of the page as a test artifact)."""
    outcome = yield
    setattr(item, f"rep_{outcome.get_result().when}", outcome.get_result())


# Every browser test's waits are bounded and, when one gives up, say what the page showed (tests/browser_helpers.py).
from browser_helpers import name_what_waits_saw  # noqa: E402

name_what_waits_saw()
