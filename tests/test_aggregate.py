"""io.aggregate: per-group counts computed where the data live (DuckDB out of core, any Ibis backend,
Spark for real), identical to the in-memory path, with the upload's checks."""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from fairness_core import datasets, io
from fairness_core.io import DataValidationError


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    df = datasets.compas_frame(datasets.ASSETS_DIR)
    return pd.DataFrame({"y": df["two_year_recid"].astype("int64"), "score": df["decile_score"].astype("float64") / 10,
                         "race": df["race"].astype(str), "sex": df["sex"].astype(str)}).reset_index(drop=True)


@pytest.fixture(scope="module")
def parquet_glob(rows, tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("logs")
    for k, part in enumerate(np.array_split(np.arange(len(rows)), 3)):  # three files: a glob reads them all
        rows.iloc[part].to_parquet(folder / f"part-{k}.parquet", index=False)
    return str(folder / "*.parquet")


def _in_memory(rows: pd.DataFrame, **kw):  # noqa: ANN202
    return io.cms_from_predictions(rows, "y", "score", kw.pop("groups"), 1, threshold=0.5, **kw)


@pytest.mark.parametrize("groups", [["race"], ["race", "sex"]])
@pytest.mark.parametrize("flip", [False, True])
def test_parquet_glob_gives_the_in_memory_counts(rows, parquet_glob, groups, flip):
    audit = io.aggregate(parquet_glob, label="y", prediction="score", groups=groups, positive=1, threshold=0.5,
                         positive_is="harm" if flip else None)
    assert audit.cms == _in_memory(rows, groups=groups, positive_is="harm" if flip else None).cms
    assert f"{len(rows):,} rows" in audit.source


def test_csv_files_and_binary_predictions(rows, tmp_path):
    binary = rows.assign(pred=np.where(rows["score"] >= 0.5, "high", "low"), y=rows["y"].map({1: "yes", 0: "no"}))
    binary.to_csv(tmp_path / "log.csv", index=False)
    audit = io.aggregate(tmp_path / "log.csv", label="y", prediction="pred", groups=["race"], positive="yes",
                         positive_prediction="high")
    expected = io.cms_from_predictions(binary, "y", "pred", ["race"], "yes", "high")
    assert audit.cms == expected.cms


def test_an_ibis_table_runs_on_its_own_backend(rows):
    ibis = pytest.importorskip("ibis")
    table = ibis.duckdb.connect().create_table("logs", rows)
    audit = io.aggregate(table, label="y", prediction="score", groups=["race", "sex"], threshold=0.5)
    assert audit.cms == _in_memory(rows, groups=["race", "sex"]).cms
    assert audit.source.startswith("Ibis table")


SPARK = shutil.which("java") is not None
try:
    import pyspark  # noqa: F401
except ImportError:
    SPARK = False


@pytest.mark.skipif(not SPARK and not os.environ.get("CI"), reason="PySpark and Java are optional (pip install .[spark])")
def test_the_same_call_runs_unchanged_on_spark(rows, parquet_glob):
    """A local Spark session reads the Parquet files; the GROUP BY runs in Spark through Ibis. Its JVM compiles with
    the quick compiler only and collects garbage in one thread: a test's few queries never repay the optimizing
    compiler (measured: the test took 26 CPU-seconds of the machine with the JVM's defaults, 15 with these)."""
    import glob

    import ibis
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("fairness-audit-test")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC").getOrCreate())
    try:
        spark.read.parquet(*sorted(glob.glob(parquet_glob))).createOrReplaceTempView("logs")
        table = ibis.pyspark.connect(spark).table("logs")
        for groups in (["race"], ["race", "sex"]):
            audit = io.aggregate(table, label="y", prediction="score", groups=groups, threshold=0.5)
            assert audit.cms == _in_memory(rows, groups=groups).cms
        with pytest.raises(DataValidationError, match="distinct values; the label must be binary"):
            io.aggregate(table, label="race", prediction="score", groups=["sex"], positive="Caucasian", threshold=0.5)
    finally:
        spark.stop()


def test_the_upload_checks_run_in_the_engine(rows, tmp_path):
    bad = rows.copy()
    bad.loc[3, "y"] = 2
    bad.loc[[5, 8], "race"] = None
    bad.to_parquet(tmp_path / "bad.parquet", index=False)
    with pytest.raises(DataValidationError) as err:
        io.aggregate(tmp_path / "bad.parquet", label="y", prediction="score", groups=["race"], threshold=0.5)
    text = str(err.value)
    assert "column 'y': 3 distinct values; the label must be binary" in text
    assert "column 'race': missing group value in 2 row(s)" in text
    with pytest.raises(DataValidationError, match="the chosen positive value 7 does not occur"):
        io.aggregate(tmp_path / "bad.parquet", label="sex", prediction="score", groups=["race"], positive=7,
                     threshold=0.5)
    with pytest.raises(DataValidationError, match="no such column"):
        io.aggregate(tmp_path / "bad.parquet", label="outcome", prediction="score", groups=["race"])
    with pytest.raises(DataValidationError, match="no file matches"):
        io.aggregate(str(tmp_path / "nothing-*.parquet"), label="y", prediction="score", groups=["race"])
    with pytest.raises(DataValidationError, match="the prediction must be binary"):
        io.aggregate(tmp_path / "bad.parquet", label="y", prediction="race", groups=["sex"], positive_prediction="Other")
    with pytest.raises(DataValidationError, match="'Male' cannot be compared with this column of type float64"):
        io.aggregate(tmp_path / "bad.parquet", label="sex", prediction="score", groups=["race"], positive="Male")
    many = pd.DataFrame({"y": [0, 1] * 600, "p": [1, 0] * 600, "id": [f"id{k}" for k in range(1200)]})
    many.to_parquet(tmp_path / "many.parquet", index=False)
    with pytest.raises(DataValidationError, match="more than 500 groups"):
        io.aggregate(tmp_path / "many.parquet", label="y", prediction="p", groups=["id"])
    (tmp_path / "notes.json").write_text("{}")
    with pytest.raises(DataValidationError, match="expected Parquet"):
        io.aggregate(tmp_path / "notes.json", label="y", prediction="p", groups=["id"])


def test_command_line_counts_a_parquet_glob_in_place(rows, parquet_glob, tmp_path, capsys):
    from fairness_core import cli

    out = tmp_path / "report.json"
    code = cli.main(["audit", parquet_glob, "--group", "race", "--label", "y", "--prediction", "score",
                     "--threshold", "0.5", "--positive-is", "harm", "--json", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    import json

    doc = json.loads(out.read_text())
    cells = {r["group"]: (r["TP"], r["FN"], r["FP"], r["TN"]) for r in doc["tables"]["cells"]}
    expected = _in_memory(rows, groups=["race"], positive_is="harm")
    assert cells == {g: (c.tp, c.fn, c.fp, c.tn) for g, c in expected.cms.items()}
    assert "aggregated in place" in doc["source"]
    bad = cli.main(["audit", str(tmp_path / "none-*.parquet"), "--group", "race", "--label", "y", "--prediction", "p"])
    assert bad == 2 and "no file matches" in capsys.readouterr().err


def test_upload_reads_a_parquet_file_as_text(rows):
    import io as std_io

    buffer = std_io.BytesIO()
    rows.head(50).assign(code=["007"] * 50).to_parquet(buffer, index=False)
    table = io.read_table(buffer.getvalue(), "log.parquet")
    assert table["code"].iloc[0] == "007" and table["y"].iloc[0] in ("0", "1")
    audit = io.cms_from_predictions(table, "y", "score", ["race"], 1, threshold=0.5)
    assert audit.cms == _in_memory(rows.head(50), groups=["race"]).cms


def test_group_names_follow_the_upload_rules(tmp_path):
    long = pd.DataFrame({"y": [0, 1, 1, 0], "p": [1, 0, 1, 0], "g": ["a", "a", "x" * 201, "x" * 201]})
    long.to_parquet(tmp_path / "long.parquet", index=False)
    with pytest.raises(DataValidationError, match="column 'g': group value of 201 characters; the limit is 200"):
        io.aggregate(tmp_path / "long.parquet", label="y", prediction="p", groups=["g"])
    twins = pd.DataFrame({"y": [0, 1, 1, 0], "p": [1, 0, 1, 0], "g": ["Asian", "Asian", "Asian\u200b", "Asian\u200b"]})
    twins.to_parquet(tmp_path / "twins.parquet", index=False)
    with pytest.raises(DataValidationError, match="two different group values both read as 'Asian'"):
        io.aggregate(tmp_path / "twins.parquet", label="y", prediction="p", groups=["g"])


def _outcome(source, **kw):  # noqa: ANN001, ANN202
    """The per-group counts and the row count, or the message of the refusal."""
    try:
        audit = io.aggregate(source, **kw)
        return audit.cms, audit.source
    except DataValidationError as exc:
        return str(exc)


CASES = ["threshold", "flip", "binary", "binary flip", "text csv", "boolean label", "group named tp", "nan label",
         "missing", "third value", "never occurs", "nan score", "many groups"]


def _case(rows: pd.DataFrame, tmp_path, case: str):  # noqa: ANN001, ANN202
    """A file and aggregate's options for one case, and whether it is valid."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    df = rows.assign(pred=np.where(rows["score"] >= 0.5, 1, 0))
    kw = {"label": "y", "groups": ["race", "sex"], "positive": 1, "prediction": "pred"}
    if case in ("threshold", "flip", "nan score"):
        kw.update(prediction="score", threshold=0.5)
    kw["positive_is"] = "harm" if case in ("flip", "binary flip") else None
    if case == "text csv":      # every cell text, as an upload: yes/no labels, high/low predictions
        df = df.assign(y=df["y"].map({1: "yes", 0: "no"}), pred=df["pred"].map({1: "high", 0: "low"}))
        df.to_csv(tmp_path / "log.csv", index=False)
        return tmp_path / "log.csv", {**kw, "positive": "yes", "positive_prediction": "high"}, True
    if case == "boolean label":
        df = df.assign(y=df["y"].astype(bool))
        kw["positive"] = True
    if case == "group named tp":
        df = df.rename(columns={"race": "tp"})
        kw["groups"] = ["tp", "sex"]
    if case == "many groups":
        df = df.assign(race=[f"g{k % 600}" for k in range(len(df))])
    if case == "never occurs":
        kw["positive"] = 7
    if case == "missing":
        df["pred"] = df["pred"].astype("float64")
        df.loc[[4], "pred"] = None
        df.loc[[6, 7], "sex"] = None
    if case == "third value":
        df.loc[[1], "pred"] = 5
    table = pa.Table.from_pandas(df, preserve_index=False)
    if case in ("nan label", "nan score"):   # NaN itself, not a null: pandas would write a null
        column = "y" if case == "nan label" else "score"
        values = df[column].to_numpy(dtype="float64").copy()
        values[[2, 9]] = np.nan
        table = table.set_column(table.schema.get_field_index(column), column, pa.array(values, from_pandas=False))
    pq.write_table(table, tmp_path / "log.parquet")
    valid = case in ("threshold", "flip", "binary", "binary flip", "boolean label", "group named tp")
    return tmp_path / "log.parquet", kw, valid


@pytest.mark.parametrize("case", CASES)
def test_one_pass_over_the_cells_answers_as_the_two_passes_do(rows, tmp_path, monkeypatch, case):
    """aggregate counts the cells (per group, y × ŷ and what is missing, with each cell's smallest and largest label
    and prediction) in one pass; with MAX_CELLS at 0 it takes the two passes of before (the checks, then the
    counts). Same counts and row count, or the same message."""
    from fairness_core.services.io import warehouse

    path, kw, valid = _case(rows, tmp_path, case)
    one = _outcome(path, **kw)
    monkeypatch.setattr(warehouse, "MAX_CELLS", 0)
    two = _outcome(path, **kw)
    assert one == two
    if not valid:
        assert isinstance(one, str), one
        return
    df = pd.read_csv(path, dtype=str) if path.suffix == ".csv" else pd.read_parquet(path)
    expected = io.cms_from_predictions(df, "y", kw["prediction"], kw["groups"], kw["positive"],
                                       kw.get("positive_prediction"), threshold=kw.get("threshold"),
                                       positive_is=kw["positive_is"])
    assert one[0] == expected.cms and f"{len(df):,} rows" in one[1]


def test_the_messages_of_the_cases_refused(rows, tmp_path):
    said = {}
    for case in CASES:
        (tmp_path / case).mkdir()
        path, kw, valid = _case(rows, tmp_path / case, case)
        if not valid:
            said[case] = _outcome(path, **kw)
    assert "column 'y': missing label in 2 row(s)" in said["nan label"]     # as an upload says it
    assert "missing prediction in 1 row(s)" in said["missing"] and "missing group value in 2 row(s)" in said["missing"]
    assert "column 'pred': 3 distinct values; the prediction must be binary" in said["third value"]
    assert "the chosen positive value 7 does not occur" in said["never occurs"]
    assert "column 'score': missing prediction in 2 row(s)" in said["nan score"]
    assert "more than 500 groups" in said["many groups"]
    for case, words in (("nan label", "missing label in 2 row(s)"), ("nan score", "missing prediction in 2 row(s)")):
        path, kw, _ = _case(rows, tmp_path / case, case)      # the in-memory upload path says the same
        with pytest.raises(DataValidationError, match=re.escape(words)):
            io.cms_from_predictions(pd.read_parquet(path), "y", kw["prediction"], kw["groups"], kw["positive"],
                                    threshold=kw.get("threshold"))


def test_a_score_without_a_threshold_is_refused_with_its_count_of_values(rows, tmp_path):
    df = rows.assign(score=np.random.default_rng(0).random(len(rows)))
    df.to_parquet(tmp_path / "log.parquet", index=False)
    with pytest.raises(DataValidationError, match=f"{len(df)} distinct values; the prediction must be binary"):
        io.aggregate(tmp_path / "log.parquet", label="y", prediction="score", groups=["race"])
