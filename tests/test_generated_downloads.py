"""A download made on request (``st.download_button`` given a function) survives other sessions' runs until the
browser has fetched it (ui.server.keep_generated_downloads): Streamlit's sweep after every script run, in any
session, deletes an unreferenced file at its second pass, so with several sessions at work the browser's request
could find it gone and cancel the download."""

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from ui import server


def made_on_request(manager: MediaFileManager) -> str:
    """Click a deferred download button: the id of the file made for the browser to fetch."""
    placeholder = manager.add_deferred(lambda: b"<html>the report</html>", "text/html", "1.2.3", "report.html")
    before = set(manager._file_metadata)
    manager.execute_deferred(placeholder)
    (made,) = set(manager._file_metadata) - before
    return made


def test_a_file_made_on_request_outlives_two_sweeps_then_goes(monkeypatch):
    server.keep_generated_downloads()
    server.keep_generated_downloads()   # once per process, however often pages call it
    assert MediaFileManager._fairness_keeps_generated
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    made = made_on_request(manager)
    for _ in range(3):                  # three other sessions end a run before the browser asks
        manager.remove_orphaned_files()
    assert made in manager._file_metadata and manager._storage.get_file(made).content == b"<html>the report</html>"
    monkeypatch.setattr(server, "GENERATED_DOWNLOAD_GRACE_S", 0.0)   # the grace over: swept as Streamlit sweeps
    manager.remove_orphaned_files()
    manager.remove_orphaned_files()
    assert made not in manager._file_metadata


def test_without_the_grace_streamlit_deletes_it_at_the_second_sweep(monkeypatch):
    """What the grace is for: with none, the second run that ends anywhere deletes the file before its fetch."""
    server.keep_generated_downloads()
    monkeypatch.setattr(server, "GENERATED_DOWNLOAD_GRACE_S", 0.0)
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    made = made_on_request(manager)
    manager.remove_orphaned_files()
    assert made in manager._file_metadata          # marked, still there
    manager.remove_orphaned_files()
    assert made not in manager._file_metadata      # gone: the browser's request would get a 404
    with pytest.raises(Exception):
        manager._storage.get_file(made)
