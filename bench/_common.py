"""What the bench scripts share: wall-clock timing, the ``--quick`` flag and the goals their JSON line declares.

Every script that times something imports it from here (``from bench._common import stopwatch, timed`` after
putting the checkout on ``sys.path``), so that "seconds" means one thing in every benchmark: the
``time.perf_counter`` wall time of the call, the best of ``repeat`` runs where a script repeats. The code
strings that aggregate.py runs in fresh processes keep their own two perf_counter lines (a child's import
path and peak memory stay its own); job_memory.py measures memory only; bench/server_load.py times browser
steps asynchronously, with its own helper.

>>> seconds, total = timed(sum, range(1000), repeat=2)
>>> total, seconds >= 0
(499500, True)
>>> with stopwatch() as took:
...     _ = sorted(range(1000), reverse=True)
>>> took.seconds >= 0
True

Every script ends with one JSON line that holds its figures and declares what it promises (read by
``bench/run.py``): ``"goals"`` maps a figure (a key of the line, dotted into nested objects) to a bound,
``"ratio"`` is the script's figure against the baseline it ran in the same process, and ``"quick"`` says
whether it ran at the smaller ``--quick`` sizes.

>>> line = declare({"seconds": 0.8}, goals={"seconds": at_most(1.0)}, ratio=(25.0, "loop / vectorized"), quick=False)
>>> line["goals"], line["ratio"]
({'seconds': {'at_most': 1.0}}, {'value': 25.0, 'of': 'loop / vectorized'})
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, TypeVar

__all__ = ["Stopwatch", "at_least", "at_most", "check", "declare", "equal_to", "figure", "goal_text", "stopwatch", "timed"]

T = TypeVar("T")


def timed(fn: Callable[..., T], *args: Any, repeat: int = 3, **kwargs: Any) -> tuple[float, T]:
    """The best wall time in seconds of ``repeat`` calls of ``fn(*args, **kwargs)``, and the last call's result.

    The best, not the mean: the other work of a shared machine only ever adds time."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat!r}")
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, out  # type: ignore[return-value]


class Stopwatch:
    """The wall time of a ``with`` block (:func:`stopwatch`): :attr:`seconds` once it ends, :meth:`elapsed`
    while it runs."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        #: Wall seconds the block took; NaN until it ends.
        self.seconds = float("nan")

    def elapsed(self) -> float:
        """Seconds since the block began."""
        return time.perf_counter() - self.start

    def __enter__(self) -> Stopwatch:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = self.elapsed()


def stopwatch() -> Stopwatch:
    """``with stopwatch() as took: ...`` then ``took.seconds``: for a span that is not one call (a loop, a fit
    with set-up around it), or one that must run once."""
    return Stopwatch()


def at_most(bound: float) -> dict[str, float]:
    """A goal: the figure is at most ``bound``."""
    return {"at_most": bound}


def at_least(bound: float) -> dict[str, float]:
    """A goal: the figure is at least ``bound``."""
    return {"at_least": bound}


def equal_to(value: Any) -> dict[str, Any]:
    """A goal: the figure equals ``value`` (a check that must hold, such as two methods agreeing)."""
    return {"equal_to": value}


def declare(figures: dict[str, Any], *, goals: dict[str, dict[str, Any]], ratio: tuple[float, str] | None,
            quick: bool) -> dict[str, Any]:
    """``figures`` with the script's ``goals`` (figure -> :func:`at_most` / :func:`at_least` / :func:`equal_to`),
    its ``ratio`` against the same-process baseline as (value, what it divides) and whether it ran ``quick``:
    the JSON last line ``bench/run.py`` reads."""
    out = dict(figures)
    out["goals"] = goals
    out["ratio"] = None if ratio is None else {"value": ratio[0], "of": ratio[1]}
    out["quick"] = quick
    return out


def figure(line: dict[str, Any], path: str) -> Any:
    """The value at ``path`` ("a.b.c") in a JSON line; KeyError when absent."""
    value: Any = line
    for key in path.split("."):
        value = value[key]
    return value


def check(value: Any, bound: dict[str, Any]) -> bool:
    """Whether ``value`` meets one bound ({"at_most": x}, {"at_least": x} or {"equal_to": x})."""
    (kind, limit), = bound.items()
    if value is None:
        return False
    if kind == "at_most":
        return value <= limit
    if kind == "at_least":
        return value >= limit
    if kind == "equal_to":
        return value == limit
    raise ValueError(f"unknown goal {kind!r}")


def goal_text(bound: dict[str, Any]) -> str:
    """A bound in words for a table: "<= 1", ">= 300", "== true".

    >>> goal_text(at_most(1.0)), goal_text(equal_to(True))
    ('<= 1', '== true')
    """
    (kind, limit), = bound.items()
    return {"at_most": "<=", "at_least": ">=", "equal_to": "=="}[kind] + f" {limit:g}" if isinstance(
        limit, (int, float)) and not isinstance(limit, bool) else f"== {json.dumps(limit)}"
