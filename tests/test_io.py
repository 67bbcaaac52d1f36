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
    flipped = cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", positive_is="harm")
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
    with pytest.raises(DataValidationError, match="same column.*audit the decisions alone"):
        cms_from_predictions(df, "y", "y", ["g"], positive_label=1)
    with pytest.raises(DataValidationError, match="all be different"):
        cms_from_predictions(df, "y", "p", ["p"], positive_label=1)


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
    flipped = cms_from_predictions(df, "y", "pred", ["race"], positive_label="yes", positive_is="harm",
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


# --- issue 14: silent misreads are refused or read right -----------------------------------

def test_a_row_with_one_field_too_many_is_refused_not_shifted():
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table("group,TP,FN,FP,TN\nWhite,5,6,7,8\nBlack,10,20,30,40,999\n"))
    assert "row 2 (file line 3): 6 fields but the header has 5" in problems(exc)[0]
    assert "'999'" in problems(exc)[0]


def test_a_trailing_comma_is_named_as_an_empty_column():
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table("group,TP,FN,FP,TN\nA,1,2,3,4,\nB,1,2,3,4,\n"))
    assert "row 1 (file line 2): an empty column after 'TN'" in problems(exc)[0]


@pytest.mark.parametrize("value,expected", [
    ("1.000", "ambiguous"), ("0x10", "not a decimal whole number"), ("1e-400", "scientific notation"),
    ("1e3", "scientific notation"), ("2.5", "fractional count 2.5"), ("-4", "negative count -4"),
    ("abc", "'abc' is not a number")])
def test_counts_must_be_plain_whole_numbers(value, expected):
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table(f"group;TP;FN;FP;TN\nA;{value};1;1;1\nB;1;1;1;1\n"))
    assert any("row 1 (file line 2), column 'TP'" in p and expected in p for p in problems(exc)), problems(exc)


def test_unambiguous_thousands_separators_and_float_exports_are_read():
    audit = cms_from_table(table('group;TP;FN;FP;TN\nA;1,234;1 000;5.0;7\nB;1;1;1;1\n'))
    assert audit.cms["A"].as_array().tolist() == [1234, 1000, 5, 7]
    with pytest.raises(DataValidationError):  # in a comma file "1,234" cannot be a number
        cms_from_table(table('group,TP,FN,FP,TN\nA,"1,234",1,1,1\nB,1,1,1,1\n'))


def test_group_columns_keep_their_text():
    audit = cms_from_table(table("id,TP,FN,FP,TN\n007,1,1,1,1\n1.10,2,2,2,2\n12345678901234567890,3,3,3,3\n"))
    assert audit.groups == ["007", "1.10", "12345678901234567890"]
    df = read_table(b"y,p,g\n1,1,007\n0,1,007\n1,0,7\n0,0,7\n", "rows.csv")
    assert cms_from_predictions(df, "y", "p", ["g"], "1").groups == ["007", "7"]


def test_a_pandas_index_column_is_dropped_with_a_notice():
    df = read_table(b",group,TP,FN,FP,TN\n0,A,1,1,1,1\n1,B,2,2,2,2\n", "t.csv")
    assert list(df.columns) == ["group", "TP", "FN", "FP", "TN"]
    assert any("index" in n for n in df.attrs["notices"])
    assert cms_from_table(df).groups == ["A", "B"]


def test_cp1252_is_detected_with_a_notice_and_utf16_by_its_bom():
    text = "group,TP,FN,FP,TN\nJosé,1,1,1,1\nZoë – x,2,2,2,2\n"
    df = read_table(text.encode("cp1252"), "t.csv")
    assert cms_from_table(df).groups == ["José", "Zoë – x"] and "Windows-1252" in df.attrs["notices"][0]
    assert cms_from_table(read_table(text.encode("utf-16"), "t.csv")).groups == ["José", "Zoë – x"]


def test_names_that_differ_only_by_invisible_characters_or_normalization_collide():
    nfd = "Jose\u0301"  # é as e + combining accent
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table(f"group,TP,FN,FP,TN\nJosé,1,1,1,1\n{nfd},2,2,2,2\n"))
    assert "already appears in row 1" in problems(exc)[0]
    with pytest.raises(DataValidationError):
        cms_from_table(table("group,TP,FN,FP,TN\nA,1,1,1,1\nA\u200b,2,2,2,2\n"))
    df = read_table("y,p,g\n1,1,A\n0,1,A\u200b\n1,0,B\n".encode(), "rows.csv")
    with pytest.raises(DataValidationError, match="invisible"):
        cms_from_predictions(df, "y", "p", ["g"], "1")


def test_line_numbers_count_quoted_line_breaks():
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(table('group,note,TP,FN,FP,TN\nA,"a note\nwith a break",1,1,1,1\nB,x,1,-1,1,1\n'),
                       group_columns=["group"])
    assert "row 2 (file line 4), column 'FN': negative count -1" in problems(exc)[0]


def test_a_line_break_inside_a_group_name_is_refused_and_shown():
    with pytest.raises(DataValidationError, match=r"row 1 \(file line 2\), column 'group': group name "
                                                  r"'A⟨U\+000A⟩with a break' holds a hidden character"):
        cms_from_table(table('group,TP,FN,FP,TN\n"A\nwith a break",1,1,1,1\nB,1,1,1,1\n'))


def test_messages_show_plain_values_not_numpy_reprs():
    frame = pd.DataFrame({"group": ["A", "B"], "TP": [1.0, np.inf], "FN": [1, 1], "FP": [1, 1], "TN": [1, 1]})
    with pytest.raises(DataValidationError) as exc:
        cms_from_table(frame)
    assert "np." not in str(exc.value) and "inf is not a finite count" in str(exc.value)


def test_too_many_columns_and_too_long_names_are_refused_quickly():
    wide = ",".join(f"c{k}" for k in range(5000)) + "\n" + ",".join("1" for _ in range(5000)) + "\n"
    with pytest.raises(DataValidationError, match="5,000 columns; the limit is 1,000"):
        read_table(wide.encode(), "wide.csv")
    with pytest.raises(DataValidationError, match="the limit is 200"):
        cms_from_table(table("group,TP,FN,FP,TN\n" + "x" * 5000 + ",1,1,1,1\nB,1,1,1,1\n"))


def _xlsx(sheets: dict[str, list[list]]) -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_xlsx_formulas_without_saved_values_are_named():
    data = _xlsx({"counts": [["group", "TP", "FN", "FP", "TN"], ["A", 1, 1, 1, "=SUM(B2:D2)"], ["B", 1, 1, 1, 1]]})
    with pytest.raises(DataValidationError) as exc:
        read_table(data, "f.xlsx")
    assert "row 1 (file line 2), column 'TN': a formula (=SUM(B2:D2)) without a saved value" in problems(exc)[0]


def test_xlsx_data_on_a_second_sheet_is_found_and_sheets_can_be_chosen():
    from fairness_core.io import sheet_names

    data = _xlsx({"notes": [["read me"]], "counts": [["group", "TP", "FN", "FP", "TN"], ["A", 1, 1, 1, 1],
                                                      ["007", 2, 2, 2, 2]]})
    assert sheet_names(data) == ["notes", "counts"]
    assert cms_from_table(read_table(data, "s.xlsx")).groups == ["A", "007"]
    with pytest.raises(DataValidationError, match="no data rows.*other sheets: 'counts'"):
        read_table(data, "s.xlsx", sheet="notes")
    with pytest.raises(DataValidationError, match="no sheet 'x'"):
        read_table(data, "s.xlsx", sheet="x")


def test_an_xlsx_beyond_the_row_limit_stops_early():
    rows = [["y", "p", "g"]] + [[1, 0, "a"]] * 2000
    with pytest.raises(DataValidationError, match="the limit is 1,000"):
        read_table(_xlsx({"rows": rows}), "big.xlsx", max_rows=1000)


def test_a_zip_bomb_workbook_is_refused_before_it_is_read(monkeypatch):
    import zipfile

    from fairness_core import io as fio

    monkeypatch.setattr(fio.workbook, "MAX_XLSX_XML_BYTES", 2**20)  # the real limit is 512 MB; the check is the same

    data = _xlsx({"rows": [["y", "p", "g"], [1, 0, "a"]]})
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for item in src.infolist():
            body = src.read(item)
            if item.filename.startswith("xl/worksheets/"):  # 3 MB of rows squeezed into a few kB
                row = b'<row><c t="n"><v>1</v></c></row>'
                body = body.replace(b"</sheetData>", row * (3 * 2**20 // len(row)) + b"</sheetData>")
            z.writestr(item, body)
    assert len(out.getvalue()) < 100_000
    with pytest.raises(DataValidationError, match="expands to 3 MB of XML; the limit is 1 MB"):
        read_table(out.getvalue(), "bomb.xlsx")


def test_row_level_columns_are_guessed_by_names_and_values_never_an_id():
    from fairness_core.io import guess_columns

    n = 1000
    df = pd.DataFrame({"applicant_id": [str(k) for k in range(n)], "sex": ["female", "male"] * (n // 2),
                       "age_group": ["adult", "young"] * (n // 2), "credit_risk": ["good", "bad"] * (n // 2),
                       "yhat": ["good", "bad", "bad", "good"] * (n // 4), "duration": [str(k % 40) for k in range(n)]})
    g = guess_columns(df)
    assert (g.label, g.prediction, g.groups) == ("credit_risk", "yhat", ("sex", "age_group"))
    assert any("applicant_id" in r and "every row" in r for r in g.reasons)
    compas = pd.DataFrame({"race": ["a", "b"] * 5, "two_year_recid": ["0", "1"] * 5, "score": [str(k / 10) for k in range(10)]})
    g = guess_columns(compas)
    assert g.label == "two_year_recid" and g.prediction == "score" and g.groups == ("race",)


def test_decimal_commas_in_scores_are_read_where_the_file_convention_is_clear():
    df = read_table("y;score;g\n1;0,769;a\n0;0,2;a\n1;0,51;b\n0;0,9;b\n".encode(), "eu.csv")
    audit = cms_from_predictions(df, "y", "score", ["g"], "1", threshold=0.5)
    assert audit.cms["a"] == ConfusionMatrix(1, 0, 0, 1) and audit.cms["b"] == ConfusionMatrix(1, 0, 1, 0)
    from fairness_core.io import to_numbers

    features = to_numbers(df[["score", "g"]])
    assert features["score"].tolist() == [0.769, 0.2, 0.51, 0.9] and features["g"].tolist() == ["a", "a", "b", "b"]
    assert not pd.api.types.is_numeric_dtype(features["g"])
    mixed = read_table("y;score;g\n1;0,769;a\n0;0.2;a\n1;x;b\n0;0,9;b\n".encode(), "eu.csv")
    with pytest.raises(DataValidationError, match="'0,769' is not a number"):  # mixed: no clear convention
        cms_from_predictions(mixed, "y", "score", ["g"], "1", threshold=0.5)


def test_a_cm_table_with_a_rate_column_is_not_read_as_intersections():
    df = read_table(b"group,approval_rate,TP,FN,FP,TN\nA,0.5,1,1,1,1\nB,0.4,2,2,2,2\n", "t.csv")
    audit = cms_from_table(df)
    assert audit.groups == ["A", "B"] and any("approval_rate" in n for n in audit.notes)
    with pytest.raises(DataValidationError, match="found 3"):  # three text columns: the page asks which
        cms_from_table(read_table(b"a,b,c,TP,FN,FP,TN\nx,y,z,1,1,1,1\nu,v,w,1,1,1,1\n", "t.csv"))
    picked = cms_from_table(read_table(b"a,b,c,TP,FN,FP,TN\nx,y,z,1,1,1,1\nu,v,w,1,1,1,1\n", "t.csv"), ["a", "c"])
    assert picked.groups == ["x & z", "u & w"]
