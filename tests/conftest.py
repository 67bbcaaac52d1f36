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


def pytest_collection_modifyitems(config, items):
    """Run the browser modules first, then the others by their number of tests, largest first. With two workers
    taking one module at a time (``--dist loadfile``), a module of a few long tests taken last is a tail that one
    worker runs while the other sits idle: the browser modules hold under 3 % of the tests and about two fifths of the
    run's CPU-seconds (measured: 533 of about 1,250). (pytest-xdist's own order, which pyproject turns off with ``--no-loadscope-reorder``, is by number of
    tests alone, which put every browser module last.)"""
    sizes: dict[str, int] = {}
    browser: set[str] = set()
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        sizes[module] = sizes.get(module, 0) + 1
        if item.get_closest_marker("browser"):
            browser.add(module)
    rank = {m: i for i, m in enumerate(sorted(sizes, key=lambda m: (m not in browser, -sizes[m])))}
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can react to failures
    (the browser tests save a screenshot of the page as a test artifact)."""
    outcome = yield
    setattr(item, f"rep_{outcome.get_result().when}", outcome.get_result())


# Every browser test's waits are bounded and, when one gives up, say what the page showed (tests/browser_helpers.py).
from browser_helpers import name_what_waits_saw  # noqa: E402

name_what_waits_saw()
