"""Reading a long table of forecasts (fairness_core.services.forecast_files, issue 55): the quantile levels from the
headers, every refusal by the file's row and column, crossing rows sorted with their note, and the synthetic demo
rebuilt byte for byte by its script."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from fairness_core import forecasts
from fairness_core.io import DataValidationError
from fairness_core.services import forecast_files as files

ROWS = ["2024-01-01,a,1.0,0.0,1.0,2.0", "2024-01-02,a,1.5,2.0,1.0,3.0", "2024-01-01,b,0.5,0.0,0.5,1.0"]


def table(rows: list[str], header: str = "date,site,obs,q0.1,q0.5,q0.9") -> pd.DataFrame:
    return files.read((header + "\n" + "\n".join(rows) + "\n").encode(), "f.csv")


@pytest.mark.parametrize("header, level", [("q0.1", 0.1), ("Q_0.9", 0.9), ("quantile-0.25", 0.25), ("0.5", 0.5),
                                           (".05", 0.05), ("tau 0.75", 0.75), ("q10", 0.1), ("p95", 0.95),
                                           ("quantile_50", 0.5), ("10%", 0.1), ("2.5%", 0.025), ("q1.2", 1.2),
                                           ("10", None), ("level10", None), ("date", None), ("q", None)])
def test_a_header_names_its_level(header, level):
    assert files.level_of(header) == level


def test_levels_outside_the_unit_interval_or_repeated_are_refused_by_column():
    with pytest.raises(DataValidationError) as e:
        files.level_columns(["date", "q0.1", "q150", "10%"])
    assert [(p.column, p.message[:41]) for p in e.value.problems] == [
        ("q150", "the header reads as quantile level 1.5, w"), ("10%", "the header reads as quantile level 0.1, a")]
    with pytest.raises(DataValidationError, match="the median .0.5. must lie between two levels"):
        files.forecast_table(table(["2024-01-01,a,1,0,1"], "date,site,obs,q0.6,q0.9"), "site", "obs", "date")
    with pytest.raises(DataValidationError, match="no column is named as a quantile level"):
        files.forecast_table(table(["2024-01-01,a,1,0"], "date,site,obs,forecast"), "site", "obs", "date")


def test_every_bad_cell_is_named_by_the_files_row_and_column():
    rows = ["2024-01-01,a,,0,1,2", "soon,a,1,0,1,2", "2024-01-03,,1,0,1,2", "2024-01-04,b,1,0,inf,2",
            *[f"2024-02-{d:02d},b,n/a,0,1,2" for d in range(1, 9)]]
    with pytest.raises(DataValidationError) as e:
        files.forecast_table(table(rows), "site", "obs", "date")
    said = [str(p) for p in e.value.problems]
    assert "row 1 (file line 2), column 'obs': the observation is missing; every forecast needs it" in said
    assert "row 5 (file line 6), column 'obs': 'n/a' is not a number (observation)" in said
    assert "column 'obs': … and 3 more rows like these (8 in all)" in said        # 5 listed, the rest counted
    assert "row 4 (file line 5), column 'q0.5': 'inf' is infinite (quantile at level 0.5)" in said
    assert "row 3 (file line 4), column 'site': the group is missing; every forecast needs its group" in said
    assert "row 2 (file line 3), column 'date': 'soon' is neither a date, a time nor a number" in said


def test_crossing_rows_are_sorted_with_a_note_and_the_audit_is_the_librarys():
    t = files.forecast_table(table(ROWS), "site", "obs", "date", source="f.csv")
    assert t.notes == ("The quantiles cross (decrease along the levels) in 1 row (first: row 2, file line 3); each "
                       "such row's quantiles were sorted.",)
    np.testing.assert_array_equal(t.quantiles[1], [1.0, 2.0, 3.0])
    assert t.level_columns == {"q0.1": 0.1, "q0.5": 0.5, "q0.9": 0.9} and t.groups.tolist() == ["a", "a", "b"]
    assert t.time.dtype.kind == "M"
    with pytest.warns(UserWarning, match="cross"):   # the library sorts the same row, and says so
        direct = forecasts.audit([1.0, 1.5, 0.5], [[0, 1, 2], [2, 1, 3], [0, 0.5, 1]], [0.1, 0.5, 0.9],
                                 ["a", "a", "b"], positive_is="benefit", min_time_points=3)
    mine = files.audit(t, "benefit", min_time_points=3)
    pd.testing.assert_frame_equal(mine.by_group(), direct.by_group())


def test_numeric_times_and_repeated_time_points_are_read_and_said():
    t = files.forecast_table(table(["3,a,1,0,1,2", "1,a,1,0,1,2", "1,a,2,0,1,2"], "step,site,obs,q0.1,q0.5,q0.9"),
                             "site", "obs", "step")
    assert t.time.tolist() == [3.0, 1.0, 1.0]
    assert t.notes == ("1 rows share a group and a time with an earlier row: each time point of a group enters as "
                       "the sum of its rows.",)
    assert t.series("a")["time"].tolist() == [1.0, 1.0, 3.0]


def test_the_columns_are_guessed_by_name_then_by_position():
    assert files.guess_columns(["q0.1", "district", "peak", "date", "observed", "q0.9"]) == {
        "time": "date", "group": "district", "observation": "observed"}
    assert files.guess_columns(["when", "where", "what", "q0.5"]) == {"time": "when", "group": "where",
                                                                     "observation": "what"}


def test_the_demo_is_rebuilt_byte_for_byte_and_holds_what_it_was_built_with():
    spec = importlib.util.spec_from_file_location("make_forecast_demo",
                                                  files.DEMO_FILE.parents[1] / "scripts" / "make_forecast_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.make().to_csv(index=False, float_format="%.1f", lineterminator="\n").encode() == \
        files.DEMO_FILE.read_bytes()
    t = files.demo_table()
    assert len(t) == 4 * 730 and t.levels.tolist() == [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95] and not t.notes
    g = files.audit(t, "benefit").by_group()
    assert g.loc["Riverside", "benefit_ci_high"] < -4 < g.loc["Riverside", "benefit_ci_low"] + 3   # about −6 MW
    assert g.loc["Hillside", "coverage_0.9"] < 0.7 < g.loc["North", "coverage_0.9"]             # bands too narrow
