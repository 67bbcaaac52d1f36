"""How this server process tunes itself for many sessions: imported modules moved out of the garbage collector's
way, memory that ended sessions freed handed back to the operating system, and downloads made on request kept
until the browser fetches them. Pages only call :func:`freeze_imports`, :func:`return_freed_memory` and
:func:`keep_generated_downloads` (``ui.state.page_setup`` does, on every run)."""

from __future__ import annotations

import gc
import sys
import threading
import time


_FROZEN = {"modules": 0}
_FREEZE_LOCK = threading.Lock()


def freeze_imports() -> None:
    """Move what the imported libraries made to the garbage collector's permanent generation.

    Streamlit runs a full collection after every script run (``runner.postScriptGC``), which walks every
    tracked object: the ~160,000 objects of pandas, plotly, SciPy and Streamlit itself cost ~0.08 s of CPU
    per run, about a third of the server's work for a view. They live as long as the process; frozen
    (:func:`gc.freeze`) once their modules are imported, a collection walks only what the sessions made.
    Done again only when more modules have been imported since (a page importing a library of its own)."""
    if len(sys.modules) == _FROZEN["modules"]:
        return
    with _FREEZE_LOCK:
        if len(sys.modules) != _FROZEN["modules"]:
            gc.collect()    # garbage is collected first, never frozen
            gc.freeze()
            _FROZEN["modules"] = len(sys.modules)


#: How often the server hands freed memory back to the operating system (seconds).
TRIM_EVERY_S = 30.0
_TRIMMER: dict[str, threading.Thread] = {}


def _trim_forever() -> None:
    import ctypes

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):   # not glibc: the allocator keeps freed memory for reuse
        return
    while True:
        time.sleep(TRIM_EVERY_S)
        trim(0)


def return_freed_memory() -> None:
    """Start, once per server process, a thread that every :data:`TRIM_EVERY_S` seconds returns the memory
    that ended sessions freed to the operating system (glibc's ``malloc_trim``). Without it the process keeps
    its peak: reused by later sessions, but never given back."""
    if "thread" in _TRIMMER:
        return
    with _FREEZE_LOCK:
        if "thread" not in _TRIMMER:
            _TRIMMER["thread"] = threading.Thread(target=_trim_forever, name="fairness-malloc-trim", daemon=True)
            _TRIMMER["thread"].start()


#: How long a file made for a download on request (``st.download_button`` given a function) is kept for the
#: browser to fetch it, whatever other sessions do meanwhile (seconds).
GENERATED_DOWNLOAD_GRACE_S = 120.0
_GENERATED: dict[str, float] = {}   # file id -> when it was made (time.monotonic)


def keep_generated_downloads() -> None:
    """Keep a download made on request until the browser has had time to fetch it.

    Streamlit (1.67) makes such a file when its button is clicked and leaves it referenced by no session; every
    script run that ends, in any session, sweeps unreferenced files, marking them first and deleting them at the
    next sweep. With several sessions at work, two of their runs can end between the file's making and the
    browser's request for it: the browser then gets a 404 and cancels the download (seen in the ten-session
    browser test on a loaded two-core machine). Here the sweep passes over such a file for
    :data:`GENERATED_DOWNLOAD_GRACE_S`; a later sweep removes it as before. Patched once per process, on
    Streamlit's media file manager class (``tests/test_generated_downloads.py`` fails if its names change)."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    if getattr(MediaFileManager, "_fairness_keeps_generated", False):
        return
    with _FREEZE_LOCK:
        if getattr(MediaFileManager, "_fairness_keeps_generated", False):
            return
        execute, inactive = MediaFileManager.execute_deferred, MediaFileManager._get_inactive_file_ids

        def execute_deferred(self, file_id: str) -> str:  # type: ignore[no-untyped-def]
            before = set(self._file_metadata)
            url = execute(self, file_id)
            now = time.monotonic()
            for made in set(self._file_metadata) - before:
                _GENERATED[made] = now
            return url

        def _get_inactive_file_ids(self) -> set[str]:  # type: ignore[no-untyped-def]
            ids = inactive(self)
            now = time.monotonic()
            for made, when in list(_GENERATED.items()):
                if now - when < GENERATED_DOWNLOAD_GRACE_S:
                    ids.discard(made)
                else:
                    del _GENERATED[made]
            return ids

        MediaFileManager.execute_deferred = execute_deferred  # type: ignore[method-assign]
        MediaFileManager._get_inactive_file_ids = _get_inactive_file_ids  # type: ignore[method-assign]
        MediaFileManager._fairness_keeps_generated = True  # type: ignore[attr-defined]
