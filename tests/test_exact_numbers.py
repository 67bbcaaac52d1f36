"""A number read from a file is the number written (issue 51): every float64 a writer writes with enough digits
reads back bit for bit through every reader (CSV, TSV, XLSX, Parquet, a typed table, ``apply`` and ``io.aggregate``
in place), and ``python -m fairness_core apply`` decides every row as ``rule.predict`` does.

pandas' default text → float converter is not correctly rounded (about one float in three written by
``DataFrame.to_csv`` came back one unit in the last place off), and DuckDB read a 17-digit SQL literal as a
DECIMAL whose cast to DOUBLE missed the nearest float about one time in ten: the row holding a threshold was
decided the other way."""

from __future__ import annotations

import dataclasses
import io as _io
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairness_core import cli, io, mitigation
from fairness_core.common.numbers import NUMBER, SPACES, as_numbers
from fairness_core.services import apply
from fairness_core.services.io import warehouse
from workbooks import table_workbook

#: 40 examples of 300 floats: 12,000 floats through every reader (10,200 through io.aggregate, its 34 examples
#: taking 11 s of the file's 16 s on one core).
BATCHES = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
BATCH = 300
#: Floats that have broken readers: ±0, the smallest subnormal and the largest one, the smallest normal, the
#: largest float, 17-significant-digit scores (the issue's threshold among them), 2^53 + 1 as an integer.
SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 2.225073858507201e-308, 2.2250738585072014e-308, 1.7976931348623157e308,
           -1.7976931348623157e308, 0.26310143550766046, 0.36995516654807925, 1e-7, 1e16, 1e21, 9007199254740993.0,
           0.1, 1 / 3, 123456789.12345679]
WRITERS = ("to_csv", "savetxt", "savetxt %.17g", "repr", "str")


@st.composite
def float_batches(draw, size: int = BATCH) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``size`` finite float64s: hypothesis' own (it favours edges), :data:`SPECIAL`, then random bit patterns
    (every exponent), subnormals, uniform draws on [0, 1) (17 significant digits) and scaled ones, shuffled."""
    edge = draw(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bits = rng.integers(-2**63, 2**63 - 1, size=size, dtype=np.int64).view(np.float64)
    subnormal = (rng.integers(1, 2**52, size=size // 10, dtype=np.int64).view(np.float64)
                 * rng.choice([-1.0, 1.0], size // 10))
    uniform = rng.random(size)
    scaled = rng.standard_normal(size) * 10.0 ** rng.integers(-310, 300, size).astype(float)
    pool = np.concatenate([bits[np.isfinite(bits)], subnormal, uniform, scaled])
    pool = pool[np.isfinite(pool)]
    chosen = np.concatenate([np.array(edge, dtype=float), SPECIAL,
                             rng.choice(pool, size - len(edge) - len(SPECIAL), replace=False)])
    return rng.permutation(chosen)


def written(x: np.ndarray, writer: str) -> list[str]:
    """Each float's text as ``writer`` writes it."""
    if writer == "to_csv":
        return pd.DataFrame({"x": x}).to_csv(index=False).splitlines()[1:]
    if writer.startswith("savetxt"):
        buffer = _io.StringIO()
        np.savetxt(buffer, x, **({"fmt": "%.17g"} if writer.endswith("g") else {}))   # default: "%.18e"
        return buffer.getvalue().splitlines()
    return [repr(v) for v in x.tolist()] if writer == "repr" else [str(v) for v in x]


def same_bits(got: np.ndarray, x: np.ndarray, where: str) -> None:
    """Bit for bit (-0.0 is not 0.0), naming the first value read otherwise."""
    got = np.asarray(got, dtype=np.float64)
    bad = np.flatnonzero(got.view(np.int64) != x.view(np.int64))
    assert bad.size == 0, f"{where}: {bad.size} of {x.size} floats misread, e.g. {x[bad[0]]!r} read as {got[bad[0]]!r}"


def frame(x: np.ndarray, cells: list[str] | np.ndarray) -> pd.DataFrame:
    """The batch as a row-level table: the floats' text, a label, a prediction, two groups for audits and
    twenty for a rule, and the row number."""
    n = len(x)
    return pd.DataFrame({"x": cells, "y": np.arange(n) % 2, "p": (np.arange(n) // 2) % 2,
                         "g": np.where(np.arange(n) % 3 == 0, "a", "b"), "rg": [f"r{k % 20:02d}" for k in range(n)],
                         "i": np.arange(n)})


@BATCHES
@given(float_batches(), st.sampled_from(WRITERS))
def test_every_float_written_reads_back_bit_for_bit_in_csv_tsv_xlsx_and_parquet(x, writer):
    cells = written(x, writer)
    table = frame(x, cells)
    for sep, name in ((",", "f.csv"), ("\t", "f.tsv"), (";", "f.txt")):
        df = io.read_table(table.to_csv(sep=sep, index=False).encode(), name)
        same_bits(as_numbers(df["x"], df.attrs["delimiter"]).to_numpy(), x, f"{name} written by {writer}")
        same_bits(io.to_numbers(df)["x"].to_numpy(), x, f"{name} features")
    models = io.candidates_from_predictions(df, "y", "1", ["g"], ["p"], ["x"])   # the scores a page's rule is fit on
    same_bits(models.scores["x"], x, "an upload's score column")
    workbook = table_workbook(["x", "g"], [[v, g] for v, g in zip(x.tolist(), table["g"])])   # numbers by repr
    same_bits(as_numbers(io.read_table(workbook, "f.xlsx")["x"]).to_numpy(), x, "xlsx")
    buffer = _io.BytesIO()
    with np.errstate(over="ignore"):   # floats past float32's range are its ±inf
        x32 = x.astype(np.float32)
    pd.DataFrame({"x": x, "x32": x32, "g": table["g"]}).to_parquet(buffer, index=False)
    df = io.read_table(buffer.getvalue(), "f.parquet")
    same_bits(as_numbers(df["x"]).to_numpy(), x, "parquet")
    widened = x32.astype(np.float64)
    same_bits(as_numbers(df["x32"]).to_numpy(), widened, "parquet float32 (its stored value)")


@BATCHES
@given(float_batches())
def test_a_typed_table_keeps_every_float_and_every_count(x):
    typed = frame(x, x)   # floats as floats: nothing is parsed
    same_bits(io.candidates_from_predictions(typed, "y", 1, ["g"], ["p"], ["x"]).scores["x"], x, "a typed table")
    counts = np.abs(x.view(np.int64)) % (io.MAX_COUNT + 1)   # whole counts up to the limit, 10^15
    cells = pd.DataFrame({"group": [f"G{k}" for k in range(20)], **{c: counts[k * 20:(k + 1) * 20] + 1 for k, c in
                                                                     enumerate(["TP", "FN", "FP", "TN"])}})
    pasted = io.cms_from_table(io.read_table(cells.to_csv(index=False).encode(), "pasted.csv"))
    edited = io.cms_from_table(cells)   # the Upload page's editor hands over numbers
    for audit in (pasted, edited):
        got = np.array([audit.cms[f"G{k}"].as_array() for k in range(20)])
        np.testing.assert_array_equal(got, cells[["TP", "FN", "FP", "TN"]].to_numpy())


@BATCHES
@given(float_batches(), st.sampled_from(WRITERS))
def test_apply_decides_every_row_at_its_threshold_and_one_float_above(x, writer):
    """Every row is a group of its own whose threshold is its own score: decided positive; and negative once the
    threshold is the next float up. A score read one float off flips one of the two."""
    table = frame(x, written(x, writer)).drop(columns=["y", "p", "g"]).assign(row=[f"r{k:03d}" for k in range(len(x))])
    df = io.read_table(table.to_csv(index=False).encode(), "f.csv")
    rule = mitigation.fit_thresholds(x, np.arange(len(x)) % 2, table["rg"].to_numpy(), "none")
    for step, expected in ((-np.inf, 1), (np.inf, 0)):
        with np.errstate(over="ignore"):   # the largest float's next is inf: nobody in its group
            thresholds = dict(zip(table["row"], np.nextafter(x, step).tolist() if step > 0 else x.tolist()))
        decided = apply.decide(dataclasses.replace(rule, thresholds=thresholds), df, "x", ["row"])
        wrong = np.flatnonzero(decided["decision"].to_numpy() != expected)
        assert wrong.size == 0, (f"{writer}: the row of {x[wrong[0]]!r} decided {1 - expected} at "
                                 f"{'its own score' if expected else 'the next float up'}")


@settings(BATCHES, max_examples=17)
@given(float_batches(2 * BATCH), st.sampled_from(WRITERS))
def test_aggregate_in_place_reads_every_float_and_thresholds_it_exactly(tmp_path_factory, x, writer):
    """DuckDB reads the CSV as text and casts it, Parquet as doubles; the threshold reaches the engine as the
    float it is. Thresholds are the batch's own values, so a row sits on each. Batches twice as large, half as
    many (10,200 floats in all, as before): each batch costs four aggregations, whatever its size."""
    folder = tmp_path_factory.mktemp("aggregate")
    table = frame(x, written(x, writer))
    table.to_csv(folder / "f.csv", index=False)
    frame(x, x).to_parquet(folder / "f.parquet", index=False)
    for path in (folder / "f.csv", folder / "f.parquet"):
        t = warehouse.open_files(str(path))
        read = t.select(i=t.i.cast("int64"), v=warehouse._scores(t.x)).order_by("i").to_pandas()
        same_bits(read["v"].to_numpy(), x, f"DuckDB reading {path.name} ({writer})")
        for threshold in (x[0], x[(x >= 0.01) & (x < 1)][0]):   # the second most likely a 17-digit score
            audit = io.aggregate(str(path), label="y", prediction="x", groups=["g"], positive=1,
                                 threshold=float(threshold))
            yhat, y = x >= threshold, table["y"].to_numpy() == 1
            for g in ("a", "b"):
                m = table["g"].to_numpy() == g
                expected = [int((m & a & b).sum()) for a, b in ((y, yhat), (y, ~yhat), (~y, yhat), (~y, ~yhat))]
                assert audit.cms[g].as_array().tolist() == expected, (path.name, threshold, g)


def test_aggregate_thresholds_the_row_holding_a_17_digit_threshold(tmp_path):
    """0.36995516654807925 as a SQL literal is a DECIMAL to DuckDB, whose cast to DOUBLE gives the float above it:
    the row holding the threshold was decided negative."""
    x = 0.36995516654807925
    pd.DataFrame({"y": [1, 0, 1, 0], "x": [x, 0.1, 0.9, x], "g": ["a", "a", "b", "b"]}).to_csv(tmp_path / "f.csv",
                                                                                             index=False)
    audit = io.aggregate(str(tmp_path / "f.csv"), label="y", prediction="x", groups=["g"], positive=1, threshold=x)
    assert audit.cms["a"].as_array().tolist() == [1, 0, 0, 1] and audit.cms["b"].as_array().tolist() == [1, 0, 1, 0]


def test_aggregate_reads_a_decimal_score_through_its_exact_text(tmp_path):
    """A Parquet DECIMAL(18, 17) score: DuckDB's DECIMAL → DOUBLE cast gives 0.47274908866546683 as the float below
    it, so the row holding the threshold was decided negative."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    x = 0.47274908866546683
    scores = pa.array([decimal.Decimal(repr(v)) for v in (x, 0.1, 0.9, x)], type=pa.decimal128(18, 17))
    pq.write_table(pa.table({"y": [1, 0, 1, 0], "x": scores, "g": ["a", "a", "b", "b"]}), tmp_path / "f.parquet")
    audit = io.aggregate(str(tmp_path / "f.parquet"), label="y", prediction="x", groups=["g"], positive=1, threshold=x)
    assert audit.cms["a"].as_array().tolist() == [1, 0, 0, 1] and audit.cms["b"].as_array().tolist() == [1, 0, 1, 0]


def test_the_issues_8000_rows_are_decided_as_the_rule_predicts(tmp_path):
    """The issue's case, end to end: a rule fitted in a notebook and written with ``to_json``, the scores written by
    pandas, ``python -m fairness_core apply``: every decision is ``rule.predict``'s. Each group's threshold is one
    of its scores, and that row flips when read one float low (pandas' default reading did flip one)."""
    rng = np.random.default_rng(0)
    n = 8000
    scores, groups = rng.random(n), rng.choice(["a", "b", "c"], n)
    rule = mitigation.fit_thresholds(scores, rng.random(n) < scores, groups, "demographic_parity", 0.02)
    (tmp_path / "rule.json").write_text(rule.to_json(), encoding="utf-8")
    pd.DataFrame({"score": scores, "group": groups}).to_csv(tmp_path / "data.csv", index=False)
    expected = rule.predict(scores, groups)
    on_threshold = np.isin(scores, list(rule.thresholds.values()))
    assert on_threshold.sum() == 3
    one_low = np.where(on_threshold, np.nextafter(scores, -np.inf), scores)
    assert (rule.predict(one_low, groups) != expected).sum() == 3   # the test can tell a misread row
    assert cli.main(["apply", str(tmp_path / "rule.json"), str(tmp_path / "data.csv"), "--score", "score", "--group",
                     "group", "--out", str(tmp_path / "out.csv")]) == cli.EXIT_OK
    decisions = pd.read_csv(tmp_path / "out.csv")["decision"].to_numpy()
    np.testing.assert_array_equal(decisions, expected)


# ------------------------------------------------------------------------------------------- the syntax

TOKENS = st.sampled_from(list("0123456789.eE+-_,x ") + ["inf", "infinity", "nan", "NaN", "INF", "Infinity", "\t",
                                                       "\u00a0", "\u0661", "\uff11", "e400", "e-400", "(", "0x"])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.lists(TOKENS, min_size=1, max_size=6).map("".join), min_size=1, max_size=50))
def test_text_reads_as_the_nearest_float_exactly_where_it_spells_a_number(texts):
    """What reads: :data:`NUMBER` with spaces around it, as the nearest float (Python's ``float``, correctly
    rounded); anything else is NaN, so the caller names its row. Arrow's fast path for a column that reads whole
    and the checked path for one that does not agree value by value."""
    rx = re.compile(NUMBER)
    expected = np.array([float(t.strip(SPACES)) if rx.fullmatch(t.strip(SPACES)) else np.nan for t in texts])
    got = as_numbers(pd.Series(texts, dtype=io.TEXT)).to_numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    same_bits(np.where(np.isnan(got), 0.0, got), np.where(np.isnan(expected), 0.0, expected), "text")
    readable = [t for t, e in zip(texts, expected) if not np.isnan(e)]
    if readable:   # the same values without the unreadable ones: Arrow's one-cast path
        same_bits(as_numbers(pd.Series(readable, dtype=io.TEXT)).to_numpy(), expected[~np.isnan(expected)], "fast")
    # what pd.to_numeric read is read still, except for spaces around inf/nan and numbers past the largest float
    old = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    spelled = re.compile(r"[+-]?(?i:inf|infinity|nan)")
    known = np.array([(t != t.strip(SPACES) and bool(spelled.fullmatch(t.strip(SPACES))))
                      or (bool(np.isinf(e)) and "inf" not in t.lower()) for t, e in zip(texts, expected)], dtype=bool)
    np.testing.assert_array_equal(np.isnan(old)[~known], np.isnan(got)[~known])


@pytest.mark.parametrize("values, delimiter, expected", [
    (["0,25", "1", " -2,5 "], ";", [0.25, 1.0, -2.5]),            # a column of decimal commas
    (["0,25", "1.5"], ";", [np.nan, 1.5]),                       # mixed: commas are not decimal points
    (["0,25", "1"], ",", [np.nan, 1.0]),                         # a comma-delimited file has no decimal commas
    (["1_000", "0x10", "1e", ".", "- 1", "１", "1,5,0"], ";", [np.nan] * 7),
    (["-0", "+.5", "5.", "1E-0", "-Infinity", "1e400", "1e-400"], ",", [-0.0, 0.5, 5.0, 1.0, -np.inf, np.inf, 0.0]),
])
def test_the_accepted_syntax(values, delimiter, expected):
    got = as_numbers(pd.Series(values, dtype=io.TEXT), delimiter).to_numpy()
    np.testing.assert_array_equal(got, expected)
    assert np.signbit(got[0]) == np.signbit(expected[0])


def test_objects_categories_and_numbers_read_as_they_are():
    mixed = pd.Series(["0.26310143550766046", 0.1, None, "x", 7, np.float32(0.5)], dtype=object)
    np.testing.assert_array_equal(as_numbers(mixed).to_numpy(), [0.26310143550766046, 0.1, np.nan, np.nan, 7.0, 0.5])
    category = pd.Series(["0.26310143550766046", "b", None, "0.26310143550766046"], dtype="category")
    np.testing.assert_array_equal(as_numbers(category).to_numpy(), [0.26310143550766046, np.nan, np.nan,
                                                                    0.26310143550766046])
    np.testing.assert_array_equal(as_numbers(pd.Series([1, None], dtype="Int64")).to_numpy(), [1.0, np.nan])


# ------------------------------------------------------------------------------------------- apply's groups

def _rule_and_table() -> tuple[mitigation.ThresholdRule, pd.DataFrame]:
    rng = np.random.default_rng(3)
    n = 600
    groups = rng.choice(["Black Male", "White Female", "A"], n)
    scores = rng.random(n)
    rule = mitigation.fit_thresholds(scores, rng.random(n) < scores, groups, "demographic_parity", 0.05)
    return rule, pd.DataFrame({"score": scores.astype(str), "group": groups})


def test_apply_matches_a_group_as_uploads_clean_group_values():
    """Invisible characters, other spaces and padding, as the Upload page cleans them, match the rule's group; the
    decisions are the clean file's."""
    rule, table = _rule_and_table()
    clean = apply.decide(rule, table, "score", ["group"])["decision"].to_numpy()
    even = np.arange(len(table)) % 2 == 0
    messy = table.assign(group=np.where(even & (table["group"] == "White Female"), " White  Female",
                                        table["group"].replace({"Black Male": "Black\u00a0 Male ", "A": "A\u200b"})))
    np.testing.assert_array_equal(apply.decide(rule, messy, "score", ["group"])["decision"].to_numpy(), clean)
    assert (clean == rule.predict(table["score"].astype(float).to_numpy(), table["group"].to_numpy())).all()


def test_apply_refuses_a_group_that_matches_only_by_look_and_shows_both_spellings():
    rule, table = _rule_and_table()
    table.loc[4, "group"] = "Bl\u0430ck Male"   # a Cyrillic а
    with pytest.raises(apply.ApplyError) as err:
        apply.decide(rule, table, "score", ["group"])
    message = str(err.value)
    assert "'Bl\u0430ck Male' (data row 5, the rule's nearest is 'Black Male')" in message
    assert "never fitted for 1 group" in message and "Nothing was written" in message
