"""What a model's training needs from whoever runs it, and nothing of the runner itself.

A model's ``train(config, on_progress, should_stop)`` is a plain function (docs/STYLE.md, "Long jobs"): it
reports typed :class:`Progress` records through ``on_progress``, looks at ``should_stop()`` at least once per
epoch and raises :class:`Cancelled` when it says so, and its ``estimate(config)`` declares the run's cost as
an :class:`Estimate`. Those few names are all ``models/`` imports about jobs, and from here only, so that the
models run the same under the app's job runner (:mod:`fairness_core.services.jobs`), in a notebook or in a bench
script, and never import the runner's threads, registry and server limits.

The records, the exception and :class:`Estimate` come from :mod:`fairness_core.progress`, the library's
vocabulary of progress, which imports nothing of the runner; the runner catches that same :class:`Cancelled`
and reads that same :class:`Estimate`.

>>> stop = iter([False, True])
>>> def train(on_progress: ProgressCallback, should_stop: ShouldStop) -> None:
...     for epoch in range(1, 4):
...         if should_stop():
...             raise Cancelled(f"stopped before epoch {epoch}")
...         on_progress(Stage(done=epoch, total=3, phase="epoch"))
>>> seen: list[Progress] = []
>>> train(seen.append, lambda: next(stop))
Traceback (most recent call last):
...
fairness_core.progress.Cancelled: stopped before epoch 2
>>> [r.done for r in of_kind(seen, Stage)]
[1]
"""

from __future__ import annotations

from collections.abc import Callable

from fairness_core.progress import Cancelled, Estimate, Progress, ProgressCallback, Stage, ignore, of_kind

__all__ = ["Cancelled", "Estimate", "Progress", "ProgressCallback", "ShouldStop", "Stage", "ignore", "of_kind"]

#: What a long job calls to learn whether someone cancelled it (True: stop, raising :class:`Cancelled`).
ShouldStop = Callable[[], bool]
