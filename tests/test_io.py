"""Upload paths: every bad input names its row and column and builds nothing."""

import io

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix
from fairness_core.io import (DataValidationError, cms_from_predictions, cms_from_table, neutralize_cell,
                              read_table, to_safe_csv)


def table(text: str) -> pd.DataFrame:
    return read_table(text.encode(), "t.csv")


def problems(exc_info):
    return [str(p) for p in exc_info.value.problems]


def test_cm_table_with_common_header_spellings():
    audit = cms_from_table(table("Group,True Positives,false_negatives,FP,tn\nA,1,0,0,5\nB,7,0,1,10\n"))
    assert audit.groups == ["A", "B"]
    assert audit.cms["B"] == ConfusionMatrix(7, 0, 1, 10)


def test_semicolon_and_tab_delimiters_are_sniffed():
    for sep in (";", "\t"):
        audit = cms_from_table(table(sep.join(["group", "TP", "FN", "FP", "TN"]) + "\n"
                                     + sep.join(["x", "1", "2", "3", "4"]) + "\n"
                                     + sep.join(["y", "4", "3", "2", "1"]) + "\n"))
        assert audit.cms["y"].as_array().tolist() == [4, 3, 2, 1]


def test_two_group_columns_make_intersections():
    audit = cms_from_table(table("race,sex,TP,FN,FP,TN\nB,F,1,1,1,1\nB,M,2,2,2,2\nW,F,3,3,3,3\n"))
    assert audit.groups == ["B & F", "B & M", "W & F"]


@pytest.mark.parametrize("text,expected", [
    ("group,TP,FN,FP,TN\nA,1,-2,0,5\nB,1,1,1,1\n", "row 1 (file line 2), column 'FN': negative count -2"),
    ("group,TP,FN,FP,TN\nA,1,0,0,5\nB,1.5,1,1,1\n", "row 2 (file line 3), column 'TP': fractional count 1.5"),
    ("group,TP,FN,FP,TN\nA,1,0,0,5\nB,1,x,1,1\n", "row 2 (file line 3), column 'FN': 'x' is not a number"),
    ("group,TP,FN,FP,TN\nA,1,0,0,5\nB,1,,1,1\n", "row 2 (file line 3), column 'FN': missing count"),
    ("group,TP,FN,FP,TN\nA,1,0,0,5\nB,0,0,0,0\n", "row 2 (file line 3): group 'B' is empty"),
    ("group,TP,FN,FP,TN\nA,1,0,0,5\nA,1,1,1,1\n", "row 2 (file line 3), column 'group': group 'A' already appears in row 1"),
    ("group,TP,FN,FP,TN\nA,1,0,0,5\n,1,1,1,1\n", "row 2 (file line 3), column 'group': missing group name"),
])
def test_bad_cm_tables_name_row_and_column(text, expected):
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table(text))
    assert any(expected in p for p in problems(exc)), problems(exc)


def test_missing_columns_are_listed():
    with pytest.raises(DataValidationError, match="missing column\\(s\\) FP, TN"):
        cms_from_table(table("group,TP,FN\nA,1,2\n"))


def test_too_many_group_columns():
    with pytest.raises(DataValidationError, match="found 3"):
        cms_from_table(table("a,b,c,TP,FN,FP,TN\nx,y,z,1,1,1,1\n"))


def test_all_problems_are_reported_at_once():
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table("group,TP,FN,FP,TN\nA,-1,0,0,5\nB,1,0.5,1,1\nA,1,1,1,1\n"))
    assert len(exc.value.problems) == 3


def test_unreadable_files():
    with pytest.raises(DataValidationError, match="empty"):
        read_table(b"", "x.csv")
    with pytest.raises(DataValidationError, match="binary"):
        read_table(b"\x00\x01\x02PK", "x.csv")
    with pytest.raises(DataValidationError, match="Excel"):
        read_table(b"not a zip", "x.xlsx")
    with pytest.raises(DataValidationError, match="unsupported file type"):
        read_table(b"a,b\n1,2\n", "x.pkl")
    with pytest.raises(DataValidationError, match="no data rows"):
        read_table(b"group,TP,FN,FP,TN\n", "x.csv")


def test_too_many_rows():
    with pytest.raises(DataValidationError, match="limit is 3"):
        read_table(b"a\n1\n2\n3\n4\n", "x.csv", max_rows=3)


def test_xlsx_round_trip(tmp_path):
    df = pd.DataFrame({"group": ["A", "B"], "TP": [1, 7], "FN": [0, 0], "FP": [0, 1], "TN": [5, 10]})
    buf = io.BytesIO()
    df.to_excel(buf, index=False)
    audit = cms_from_table(read_table(buf.getvalue(), "cms.xlsx"))
    assert audit.cms["A"] == ConfusionMatrix(1, 0, 0, 5)


def rows_frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "y": rng.choice(["yes", "no"], n), "pred": rng.choice(["yes", "no"], n),
        "race": rng.choice(["a", "b", "c"], n), "sex": rng.choice(["F", "M"], n),
    })


def test_predictions_aggregate_like_an_independent_crosstab():
    df = rows_frame()
    audit = cms_from_predictions(df, "y", "pred", ["race", "sex"], positive_label="yes")
    for (race, sex), part in df.groupby(["race", "sex"]):
        cm = ConfusionMatrix.from_predictions((part["y"] == "yes").astype(int), (part["pred"] == "yes").astype(int))
        assert audit.cms[f"{race} & {sex}"] == cm
    assert audit.total().n == len(df)


def test_flip_swaps_tp_with_tn_and_fn_with_fp():
    df = rows_frame()
    plain = cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes")
    flipped = cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", flip=True)
    for g in plain.groups:
        tp, fn, fp, tn = plain.cms[g].as_array()
        assert flipped.cms[g].as_array().tolist() == [tn, fp, fn, tp]
    assert any("flipped" in note for note in flipped.notes)


def test_threshold_turns_scores_into_predictions():
    df = pd.DataFrame({"y": [1, 1, 0, 0], "score": [0.9, 0.2, 0.7, 0.1], "g": ["a", "a", "b", "b"]})
    audit = cms_from_predictions(df, "y", "score", ["g"], positive_label=1, threshold=0.5)
    assert audit.cms["a"] == ConfusionMatrix(1, 1, 0, 0)
    assert audit.cms["b"] == ConfusionMatrix(0, 0, 1, 1)


def test_non_binary_labels_name_the_first_offending_row():
    df = pd.DataFrame({"y": ["a", "b", "a", "c"], "p": ["a"] * 4, "g": ["x", "y", "x", "y"]})
    with pytest.raises(DataValidationError, match="row 4 \\(file line 5\\), column 'y': 'c' is a third"):
        cms_from_predictions(df, "y", "p", ["g"], positive_label="a")


def test_missing_values_and_bad_choices():
    df = pd.DataFrame({"y": [1, None, 0], "p": [1, 0, 0], "g": ["x", "y", "x"]})
    with pytest.raises(DataValidationError, match="row 2 \\(file line 3\\), column 'y': missing label"):
        cms_from_predictions(df, "y", "p", ["g"], positive_label=1)
    df = pd.DataFrame({"y": [1, 0, 0], "p": [1, 0, 0], "g": ["x", None, "x"]})
    with pytest.raises(DataValidationError, match="column 'g': missing group value"):
        cms_from_predictions(df, "y", "p", ["g"], positive_label=1)
    df = pd.DataFrame({"y": [1, 0], "p": [1, 0], "g": ["x", "y"]})
    with pytest.raises(DataValidationError, match="column 'nope': no such column"):
        cms_from_predictions(df, "y", "p", ["nope"], positive_label=1)
    with pytest.raises(DataValidationError, match="'yes' does not occur"):
        cms_from_predictions(df, "y", "p", ["g"], positive_label="yes")
    with pytest.raises(DataValidationError, match="all be different"):
        cms_from_predictions(df, "y", "y", ["g"], positive_label=1)


def test_single_group_is_rejected():
    df = pd.DataFrame({"y": [1, 0], "p": [1, 0], "g": ["x", "x"]})
    with pytest.raises(ValueError, match="at least two groups"):
        cms_from_predictions(df, "y", "p", ["g"], positive_label=1)


@pytest.mark.parametrize("cell,safe", [
    ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+1+2", "'+1+2"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("-0.25", "-0.25"), ("+3", "+3"), ("plain", "plain"), ("1e-3", "1e-3"),
])
def test_neutralize_formula_cells(cell, safe):
    assert neutralize_cell(cell) == safe


def test_safe_csv_neutralizes_text_keeps_numbers_and_writes_undefined():
    df = pd.DataFrame({"=evil": ["=1+1", "ok"], "value": [-0.5, np.nan]}, index=["@idx", "b"])
    text = to_safe_csv(df).decode()
    assert "'=evil" in text and "'=1+1" in text and "'@idx" in text
    assert "-0.5" in text and "'-0.5" not in text
    assert "undefined" in text
    back = pd.read_csv(io.StringIO(text), index_col=0)
    assert back.loc["b", "value"] == "undefined"


def test_rows_travel_with_the_audit_and_agree_with_the_cms():
    df = rows_frame()
    audit = cms_from_predictions(df, "y", "pred", ["race", "sex"], positive_label="yes")
    rows = audit.rows
    assert len(rows) == len(df) and rows.probabilities is None
    for g, cm in audit.cms.items():
        mask = rows.groups == g
        assert ConfusionMatrix.from_predictions(rows.y[mask].astype(int), rows.y_pred[mask].astype(int)) == cm


def test_probability_columns_are_validated_and_flipped():
    df = rows_frame(50)
    rng = np.random.default_rng(2)
    df["m1"], df["m2"], df["m3"] = rng.uniform(size=(3, 50))
    audit = cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", probability_columns=["m1", "m2", "m3"])
    assert audit.rows.probabilities.shape == (50, 3) and audit.rows.model_names == ("m1", "m2", "m3")
    flipped = cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", flip=True,
                                   probability_columns=["m1", "m2", "m3"])
    assert np.allclose(flipped.rows.probabilities, 1 - audit.rows.probabilities)

    bad = df.astype({"m2": object, "m3": object})
    bad.loc[6, "m2"] = "high"
    bad.loc[9, "m3"] = 1.2
    bad.loc[10, "m3"] = None
    with pytest.raises(DataValidationError) as exc:
        cms_from_predictions(bad, "y", "pred", ["race"], positive_label="yes", probability_columns=["m1", "m2", "m3"])
    assert problems(exc) == ["row 7 (file line 8), column 'm2': 'high' is not a probability in [0, 1]",
                             "row 10 (file line 11), column 'm3': 1.2 is not a probability in [0, 1] (2 such rows)"]
    with pytest.raises(DataValidationError, match="at least two probability columns"):
        cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", probability_columns=["m1"])
    with pytest.raises(DataValidationError, match="cannot also be the label or a group"):
        cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", probability_columns=["m1", "race"])


def test_feature_columns_are_checked_at_upload():
    df = rows_frame(60)
    df["age"] = np.arange(60.0)
    df.loc[4, "age"] = np.nan
    with pytest.raises(DataValidationError, match=r"row 5, column 'age': missing value"):
        cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", features=df[["age", "sex"]])
    with pytest.raises(DataValidationError, match="cannot also be the label"):
        cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", features=df[["y"]])
    ok = cms_from_predictions(df.fillna(0), "y", "pred", ["race"], positive_label="yes", features=df.fillna(0)[["age"]])
    assert list(ok.rows.features.columns) == ["age"]


def test_utf16_text_with_a_byte_order_mark_is_read():
    text = "group\tTP\tFN\tFP\tTN\nÅsa\t1\t0\t0\t5\nBo\t7\t0\t1\t10\n"
    audit = cms_from_table(read_table(text.encode("utf-16"), "export.txt"))
    assert audit.groups == ["Åsa", "Bo"] and audit.cms["Bo"].fp == 1
