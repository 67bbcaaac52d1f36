"""Table display: Streamlit's grid prints "None" for a null cell whatever the Styler says, so
``styled`` must hand it no nulls in number columns and display "undefined" itself."""

import numpy as np
import pandas as pd

from ui.widgets import P_FORMATS, styled


def displayed(styler):
    """The text each cell shows, as Streamlit reads it from the Styler."""
    styler._compute()
    body = styler._translate(False, False)["body"]
    return [[cell["display_value"] for cell in row if cell["type"] == "td"] for row in body]


def test_undefined_numbers_show_the_word_and_stay_numeric():
    df = pd.DataFrame({"x": [0.5, np.nan, -1.25], "n": [1200, 3, 4], "note": ["a", None, "b"]})
    s = styled(df, 2)
    assert not s.data["x"].isna().any() and s.data["x"].dtype == float  # no null reaches the grid
    assert np.isposinf(s.data.loc[1, "x"])  # sorts after every defined value
    assert displayed(s) == [["0.50", "1,200", "a"], ["undefined", "3", ""], ["-1.25", "4", "b"]]
    assert df["x"].isna().sum() == 1  # the caller's frame is untouched


def test_p_values_keep_significant_digits():
    df = pd.DataFrame({"p-value": [1.26e-213, 0.114, np.nan], "observed": [0.2, 0.3, 0.4]})
    shown = displayed(styled(df, 4, P_FORMATS))
    assert [row[0] for row in shown] == ["1.26e-213", "0.114", "undefined"]
    assert [row[1] for row in shown] == ["0.2000", "0.3000", "0.4000"]


def test_a_callable_format_decides_for_itself():
    df = pd.DataFrame({"bound": [np.nan, 21.18]})
    shown = displayed(styled(df, formats={"bound": lambda v: "—" if not np.isfinite(v) else f"{v:.1f}"}))
    assert shown == [["—"], ["21.2"]]


def test_download_file_names_built_from_group_names_are_plain():
    from fairness_core.common.text import MAX_FILE_STEM
    from ui.widgets import download_name

    assert download_name('vs_<a href="x">/../Black\u202e.csv', ".csv") == "vs_a_href_x_._Black.csv"
    assert download_name("ofi_vs_Zoë & José.html", ".html") == "ofi_vs_Zoë_José.html"   # letters of any script stay
    long = download_name("vs_" + "x" * 300 + ".csv", ".csv")
    assert long == "vs_" + "x" * (MAX_FILE_STEM - 3) + ".csv"
    assert download_name("../.hidden.csv", ".csv") == "hidden.csv"
    assert download_name("v1.2.csv", ".csv") == "v1.2.csv"                  # only the app's suffix is taken off


def test_styled_tables_are_rendered_once_and_show_what_a_fresh_styler_shows():
    """Streamlit renders a styler on every view; ``styled`` hands out one rendered per table content (shared by
    sessions), whose cells read exactly as a fresh render's, and a table that differs in any cell gets its own."""
    import numpy as np
    import pandas as pd

    from ui import widgets

    table = pd.DataFrame({"OFI": [0.0123456, np.nan], "group": ["a", None], "n": [12, 3400]}, index=["x", "y"])

    def cells(style):  # type: ignore[no-untyped-def]
        return [c["display_value"] for row in style._translate(False, False)["body"] for c in row if c.get("id")]

    first = widgets.styled(table, 3)
    assert widgets.styled(table.copy(), 3) is first                   # the same content: rendered once
    fresh = widgets._style(table, 3, {})
    assert cells(first) == cells(fresh) == ["x", "0.012", "a", "12", "y", "undefined", "", "3,400"]
    assert widgets.styled(table.assign(OFI=[0.0123457, np.nan]), 3) is not first   # one cell differs
    assert widgets.styled(table, 4) is not first and widgets.styled(table.rename(columns={"n": "rows"}), 3) is not first
    assert cells(widgets.styled(table, 3, {"OFI": "{:.3g}"}))[1] == "0.0123"
