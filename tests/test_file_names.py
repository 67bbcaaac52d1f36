"""Names that become file names: every user-supplied name (group, attribute, score, table) that goes into a download's
file name or a zip entry's name is one safe slug (no folder, no ``..``, no hidden or reserved character, bounded,
never empty, unique within its archive), and the file keeps the name as it is."""

from __future__ import annotations

import ast
import csv
import html
import io
import re
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings, strategies as st
from streamlit.runtime.media_file_manager import MediaFileManager

from app_helpers import page_with_audit
from fairness_core import ConfusionMatrix as CM, report
from fairness_core.audit import Audit
from fairness_core.common.text import MAX_FILE_STEM, MAX_FILE_STEM_BYTES, hidden_characters, safe_file_name
from fairness_core.io import cms_from_predictions, neutralize_cell, to_safe_csv
from test_hostile_names import NAMES
from ui.widgets import download_name, figure_html, with_names

ROOT = Path(__file__).resolve().parents[1]
#: Names that would make a path, a hidden file, a device, a reversed extension, or nothing at all.
PATHS = ["../../etc/passwd", "a/b", "a\\b", "..", ".", "", "CON", "nul.txt", "Com1", "x" * 500, "\u202eexe.csv",
         "a\x00b", "a\nb\r\tc", "\u202a\u200b\u2066\u200e\u200f\ufeff", "C:\\Windows\\system32", "<>:\"|?*",
         "ｆｕｌｌ／．．／wide", ".bashrc", "-rf", "trailing. ", "Zoë & José", "日本語" * 40, "𐌰" * 100, "कि" * 60]
HOSTILE = NAMES + PATHS
#: Characters no file name keeps: separators, Windows' reserved ones, and spaces.
FORBIDDEN = set('/\\<>:"|?* ')
WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"{d}{k}" for d in ("COM", "LPT") for k in range(10))}


def assert_safe(file: str, suffix: str) -> None:
    """One file or entry name as :func:`safe_file_name` promises it."""
    assert file.endswith(suffix), file
    stem = file[: len(file) - len(suffix)]
    assert stem and not FORBIDDEN & set(file), file
    assert ".." not in file and not file.startswith((".", "-", "_")) and not stem.endswith("."), file
    assert hidden_characters(file) is None and not re.search(r"\s", file), file
    assert all(unicodedata.category(c)[0] != "C" for c in file), file
    assert stem.split(".")[0].upper() not in WINDOWS_DEVICES, file
    assert len(stem) <= MAX_FILE_STEM and len(stem.encode("utf-8")) <= MAX_FILE_STEM_BYTES, file
    assert file == unicodedata.normalize("NFKC", file), file


@pytest.mark.parametrize("name", HOSTILE, ids=range(len(HOSTILE)))
def test_every_hostile_name_becomes_a_safe_file_name(name):
    assert_safe(safe_file_name(name, ".csv"), ".csv")
    assert_safe(safe_file_name(name), "")


def test_file_names_read_as_their_names_and_fall_back_to_unnamed():
    f = safe_file_name
    assert f("verdicts by Race/Ethnicity alone", ".csv") == "verdicts_by_Race_Ethnicity_alone.csv"
    assert f("../../etc/passwd", ".csv") == "etc_passwd.csv"
    assert [f(n) for n in ("", ".", "..", "\u202a\u200b\u2066", "/")] == ["unnamed"] * 5
    assert f("\u202eexe.csv", ".txt") == "exe.csv.txt"        # the override is gone: it ends as it reads
    assert f("Zoë & José", ".html") == "Zoë_José.html"        # letters of any script stay, their accents too
    assert f("ｆｕｌｌ／．．／wide") == "full_._wide"            # fullwidth slash and dots are slash and dots
    assert [f(n, ".csv") for n in ("CON", "nul.txt", "Com1", "LPT9.a.b", "CONSOLE")] == \
        ["CON_.csv", "nul_.txt.csv", "Com1_.csv", "LPT9_.a.b.csv", "CONSOLE.csv"]
    assert f("a\nb\tc") == "a_b_c" and f("a\x00b") == "ab"      # a line break is a gap; a NUL is nothing


def test_long_names_are_cut_on_a_character_boundary():
    assert safe_file_name("x" * 500, ".csv") == "x" * MAX_FILE_STEM + ".csv"
    wide = safe_file_name("𐌰" * 100)                                  # four bytes a letter: the bytes bound
    assert wide == "𐌰" * (MAX_FILE_STEM_BYTES // 4)
    accents = safe_file_name("a" + "x\u0301" * 60)                     # x and its accent stay together ...
    assert accents == "a" + "x\u0301" * 39 and len(accents) == MAX_FILE_STEM - 1   # ... so x is cut with it
    hindi = safe_file_name("abc" + "कि" * 60)                           # 200 bytes end between क and its vowel sign
    assert hindi == "abc" + "कि" * 32


def test_names_that_slug_alike_get_numbered_within_one_set():
    taken: set[str] = set()
    got = [safe_file_name(n, ".csv", taken) for n in ("a/b", "a\\b", "A:b", "a b", "x" * 500, "x" * 501)]
    assert got == ["a_b.csv", "a_b-2.csv", "A_b-3.csv", "a_b-4.csv", "x" * 80 + ".csv", "x" * 78 + "-2.csv"]
    assert taken == {g.casefold() for g in got}
    taken = {"contents.csv"}                                      # a name the caller holds back
    assert safe_file_name("Contents", ".csv", taken) == "Contents-2.csv"
    everything: set[str] = set()
    files = [safe_file_name(n, ".csv", everything) for n in HOSTILE + HOSTILE]
    assert len({f.casefold() for f in files}) == len(files)
    for file in files:
        assert_safe(file, ".csv")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=6))
def test_any_text_becomes_a_safe_unique_file_name(names):
    taken: set[str] = set()
    files = [safe_file_name(n, ".csv", taken) for n in names]
    for file in files:
        assert_safe(file, ".csv")
    assert len({f.casefold() for f in files}) == len(files)


def test_a_suffix_must_be_an_extension():
    for bad in ("csv", "/x.csv", ".c/sv", "..", ".csv\u202e"):
        with pytest.raises(ValueError, match="suffix"):
            safe_file_name("a", bad)


# --- the report's zip -------------------------------------------------------------------------------------------

def read_csv(data: bytes) -> list[list[str]]:
    """A CSV's rows as Python's csv module reads them (a NUL in a name is kept)."""
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_the_report_zip_names_every_entry_safely_and_keeps_every_table_name_inside():
    rng = np.random.default_rng(0)
    n = 300
    rows = pd.DataFrame({"y": rng.integers(0, 2, n), "yhat": rng.integers(0, 2, n),
                         "Race/Ethnicity": rng.choice(["Black", "White"], n), "a/b": rng.choice(["p", "q"], n),
                         "a\\b": rng.choice(["r", "s"], n)})
    audit = cms_from_predictions(rows, "y", "yhat", ["Race/Ethnicity", "a/b", "a\\b"], 1, source="x.csv",
                                 positive_is="benefit")
    extra = {name: pd.DataFrame({"v": [1, 2]}) for name in HOSTILE if name not in ("contents", "verdicts")}
    extra["contents"] = extra["Contents"] = extra["verdicts"] = pd.DataFrame({"v": [3]})   # the zip's own names
    rep = report.build(audit, extra_tables=extra)
    with zipfile.ZipFile(io.BytesIO(rep.csv_zip())) as z:
        entries = z.namelist()
        data = {e: z.read(e) for e in entries}
    assert entries[0] == report.ZIP_CONTENTS and len(entries) == len(rep.tables) + 1
    assert len({e.casefold() for e in entries}) == len(entries)
    for entry in entries:
        assert_safe(entry, ".csv")
    assert {"verdicts_by_Race_Ethnicity_alone.csv", "verdicts_by_a_b_alone.csv",
            "verdicts_by_a_b_alone-2.csv"} <= set(entries)              # never the folder verdicts_by_Race/
    contents = read_csv(data[report.ZIP_CONTENTS])
    assert contents[0] == ["file", "table"]
    assert [row[0] for row in contents[1:]] == entries[1:]
    names = [neutralize_cell(name) for name in rep.tables]             # as every CSV writes text: formula-safe
    assert [row[1] for row in contents[1:]] == names                     # each entry beside its table's real name
    for (file, shown), name in zip(contents[1:], rep.tables):
        table = read_csv(data[file])
        assert table[0][0] == "table" and len(table) == len(rep.tables[name]) + 1, file
        assert all(row[0] == shown for row in table[1:]), (file, name)  # the real name on every row
    alone = pd.read_csv(io.BytesIO(data["verdicts_by_a_b_alone-2.csv"]))   # a CSV reader reads it as before
    assert set(alone["table"]) == {"verdicts by a\\b alone"}
    assert alone.drop(columns="table").columns.tolist() == rep.tables["verdicts by a\\b alone"].columns.tolist()


# --- the app's downloads ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", HOSTILE, ids=range(len(HOSTILE)))
def test_every_download_name_built_from_a_user_name_is_safe(name):
    for pattern, suffix in (("vs_{}.csv", ".csv"), ("ofi_vs_{}.html", ".html"), ("match_PPR_{}.html", ".html"),
                            ("priors_{}.csv", ".csv"), ("cps_verdicts_{}.csv", ".csv"),
                            ("stability_disparities_vs_{}.csv", ".csv"), ("ll144_summary_scoring_rate_{}.csv", ".csv"),
                            ("threshold sweep by group_{}.csv", ".csv"), ("sweep_{}.html", ".html")):
        file = download_name(pattern.format(name), suffix)
        assert_safe(file, suffix)
        assert file.startswith(pattern.split("{")[0].replace(" ", "_").rstrip("_")), file   # the app's words first


@pytest.mark.parametrize("index", [False, True])
def test_a_csv_download_keeps_the_names_its_file_name_was_built_from(index):
    df = pd.DataFrame({"metric": ["TPR", "FPR"], "value": [0.5, np.nan]}, index=pd.Index(["r1", "r2"], name="row"))
    for name in HOSTILE:
        frame, keep = with_names(df, {"group": name, "score": "s"}, index)
        rows = read_csv(to_safe_csv(frame, index=keep))
        assert rows[0] == ["group", "score", *(["row"] if index else []), "metric", "value"]
        assert all(row[:2] == [neutralize_cell(name), "s"] for row in rows[1:]) and len(rows) == 3, name
    assert with_names(df, None, index) == (df, index)                  # no names: the table as it was


def test_a_figure_download_keeps_the_names_escaped_in_its_title_and_page():
    fig = go.Figure(go.Bar(x=[1], y=[2]))
    for name in HOSTILE:
        page = figure_html(fig, {"group": name})
        title = re.search("<title>(.*?)</title>", page, re.S).group(1)
        assert html.unescape(title) == f"group: {name}", name
        line = page[page.index("<p>"): page.index("</p>")]                # what the page says above the figure
        assert line == f"<p>group: <bdi>{html.escape(name)}</bdi>" and page.index("</p>") < page.index("<div")
        assert page.startswith("<!DOCTYPE html>") and "plotly" in page
    div_ids = re.compile(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")   # each render's figure has a new id
    assert div_ids.sub("", figure_html(fig)) == div_ids.sub("", fig.to_html(include_plotlyjs=True, full_html=True))


#: Groups whose names would make paths, devices and overlong names (a group name holds no hidden character).
GROUPS = ["../../etc/passwd", "a/b", "a\\b", "CON", "x" * 200, NAMES[0]]
#: Each page, the picker of a group, and the downloads whose file name holds the picked group (prefix, column).
PAGES = [("pages/2_Bias_Audit.py", "reference", [("vs_", "reference group"), ("ofi_vs_", "reference group")]),
         ("pages/3_Sample_Size_Explorer.py", "match-group", [("match_PPR_", "group")]),
         ("pages/4_Smoothing.py", "prior-group", [("priors_", "hidden group")])]


@pytest.fixture
def registered(monkeypatch):  # type: ignore[no-untyped-def]
    """Every deferred download a run registers, in order: (file name, callable)."""
    kept: list[tuple[str, object]] = []
    add = MediaFileManager.add_deferred

    def keep(self, data, mimetype, coordinates, file_name=None, **kwargs):  # type: ignore[no-untyped-def]
        kept.append((file_name, data))
        return add(self, data, mimetype, coordinates, file_name=file_name, **kwargs)
    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    return kept


@pytest.mark.parametrize("page, key, built", PAGES, ids=[p[6:9] for p, _, _ in PAGES])
def test_the_pages_downloads_of_a_picked_hostile_group_are_safe_and_keep_its_name(page, key, built, registered):
    cms = [CM(300, 20, 90, 590), CM(250, 120, 40, 590), CM(3, 1, 1, 2), CM(40, 10, 12, 60), CM(500, 60, 60, 500),
           CM(30, 8, 6, 40)]
    at = page_with_audit(Audit(dict(zip(GROUPS, cms)), source="x.csv"), page)
    for group in GROUPS:
        registered.clear()
        at.selectbox(key=key).set_value(group).run()
        assert not at.exception, at.exception
        files = [f for f, _ in registered]
        assert len(set(files)) == len(files), files                    # one set of downloads, no name twice
        for file in files:
            assert_safe(file, file[file.rindex("."):])
        for prefix, column in built:
            suffix = ".html" if prefix == "ofi_vs_" or prefix.startswith("match") else ".csv"
            want = download_name(f"{prefix}{group}{suffix}", suffix)
            (make,) = [m for f, m in registered if f == want]
            data = make()  # type: ignore[operator]
            if suffix == ".csv":
                rows = read_csv(data if isinstance(data, bytes) else data.encode())
                assert rows[0][0] == column and {row[0] for row in rows[1:]} == {group}, (want, rows[:2])
            else:
                assert f"<bdi>{html.escape(group)}</bdi>" in data, want


def test_no_download_button_outside_the_widgets_takes_a_computed_file_name():
    """Every download built from data goes through ui/widgets.py (csv_download, html_download, chart), which make
    its file name safe; a page's own st.download_button names a fixed file."""
    for path in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"]:
        if path.name == "widgets.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "download_button":
                named = [k.value for k in node.keywords if k.arg == "file_name"] or node.args[2:3]
                assert named and isinstance(named[0], ast.Constant), (path.name, node.lineno)
