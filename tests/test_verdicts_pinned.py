"""The verdict tables do not change when their computation gets faster.

Two guards. ``tests/data/verdicts_pinned.json`` holds a digest of every column of the verdict tables (and of the
raw OFI/DI pair bounds and p-values) of a set of audits, written by the code as it was before the 500-group
speed work (``python tests/test_verdicts_pinned.py --write`` rewrites it, which a behaviour change must
say in its commit); every value must come back bit for bit. And each row of a small table is
recomputed on its own, pair by pair, from :func:`inference.ofi_pairs` and :func:`inference.di_pairs` of
that one pair at the table's levels: the vectorized table's intervals, p-values and verdicts are the
per-pair ones.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core import ConfusionMatrix, inference, verdicts
from fairness_core.audit import Audit

PINNED = Path(__file__).parent / "data" / "verdicts_pinned.json"


def random_cells(k: int, seed: int, low: float = 1, high: float = 5000) -> np.ndarray:
    """``k`` groups of log-uniform size in [low, high] with random rates, some with empty cells."""
    rng = np.random.default_rng(seed)
    sizes = np.exp(rng.uniform(np.log(low), np.log(high), k)).astype(int)
    cells = np.array([rng.multinomial(n, rng.dirichlet([6, 2, 2, 6])) for n in sizes], dtype=float)
    if k >= 6:            # corners: nobody selected, everybody selected, one row, no errors
        cells[0] = [0, 3, 0, 9]
        cells[1] = [4, 0, 7, 0]
        cells[2] = [1, 0, 0, 0]
        cells[3] = [30, 0, 0, 40]
    return cells


def names_of(k: int) -> list[str]:
    return [f"g{g:03d}" for g in range(k)]


#: (name, groups, seed, tolerance, alpha, adjust, ofi_method, di_method, reference index or None)
TABLES = [
    ("auto holm", 12, 1, 0.05, 0.05, "holm", "auto", "auto", None),
    ("auto bh ref", 12, 2, 0.02, 0.1, "bh", "auto", "auto", 5),
    ("none exact", 9, 3, 0.1, 0.05, "none", "auto", "exact", None),
    ("adjusted score", 10, 4, 0.05, 0.01, "holm", "adjusted", "score", None),
    ("wald", 8, 5, 0.05, 0.05, "bh", "wald", "auto", 0),
    ("small groups", 14, 6, 0.05, 0.05, "holm", "auto", "auto", None),
    ("forty groups", 40, 7, 0.03, 0.05, "holm", "auto", "auto", None),
    ("many groups", 160, 8, 0.05, 0.05, "holm", "auto", "auto", None),
]


def pair_table(name: str, k: int, seed: int, tol: float, alpha: float, adjust: str, ofi_m: str, di_m: str,
               ref: int | None) -> pd.DataFrame:
    high = 60 if name == "small groups" else 5000
    cells, names = random_cells(k, seed, high=high), names_of(k)
    if ofi_m == "wald":   # Wald needs no empty group cells to stay finite; the corners stay for the others
        cells = cells + 1
    return verdicts.pair_verdicts(names, cells, tol, alpha, adjust, ofi_m, di_m,
                                  None if ref is None else names[ref])


def selection_table(k: int, seed: int, alpha: float, adjust: str, di_m: str, ref: int | None) -> pd.DataFrame:
    cells, names = random_cells(k, seed), names_of(k)
    return verdicts.selection_verdicts(names, cells[:, 0] + cells[:, 2], cells.sum(axis=1), alpha, adjust, di_m,
                                       None if ref is None else names[ref])


def raw_pairs() -> pd.DataFrame:
    """OFI and DI of 3,000 unrelated pairs (a simulation's shape: nearly every pair brings two new groups, so the
    per-group limits are computed on demand, not tabulated) at two levels and three nulls."""
    rng = np.random.default_rng(11)
    m = 3000
    n_i, n_j = rng.integers(3, 400, m).astype(float), rng.integers(3, 400, m).astype(float)
    fp_i, fp_j = rng.binomial(n_i.astype(int), 0.15).astype(float), rng.binomial(n_j.astype(int), 0.2).astype(float)
    fn_i = rng.binomial((n_i - fp_i).astype(int), 0.1).astype(float)
    fn_j = rng.binomial((n_j - fp_j).astype(int), 0.12).astype(float)
    sel_i = rng.binomial(n_i.astype(int), 0.3).astype(float)
    sel_j = rng.binomial(n_j.astype(int), 0.4).astype(float)
    out = {}
    o = inference.ofi_pairs(fp_i, fn_i, n_i, fp_j, fn_j, n_j)
    d = inference.di_pairs(sel_i, n_i, sel_j, n_j)
    for gamma in (0.025, 0.0004):
        out[f"ofi_low_{gamma}"], out[f"ofi_high_{gamma}"] = o.bounds(gamma)
        out[f"di_low_{gamma}"], out[f"di_high_{gamma}"] = d.bounds(gamma)
    for null in (-0.05, 0.0, 0.05):
        out[f"ofi_p_{null}"] = o.p_value(null)
        out[f"ofi_above_{null}"] = o.p_value(null, "above")
    for null in (0.8, 1.0, 1.25):
        out[f"di_p_{null}"] = d.p_value(null)
        out[f"di_below_{null}"] = d.p_value(null, "below")
    return pd.DataFrame(out)


def all_tables() -> dict[str, pd.DataFrame]:
    tables = {f"pairs {t[0]}": pair_table(*t) for t in TABLES}
    tables["selection holm"] = selection_table(12, 1, 0.05, "holm", "auto", None)
    tables["selection bh ref exact"] = selection_table(10, 3, 0.1, "bh", "exact", 4)
    audit = Audit({name: ConfusionMatrix(*row) for name, row in zip(names_of(30), random_cells(30, 9))})
    tables["audit verdicts"] = audit.verdicts(0.05)
    tables["error-rate gaps"] = verdicts.error_rate_gaps(names_of(40), random_cells(40, 7), 0.05)
    tables["raw pairs"] = raw_pairs()
    return tables


def as_text(tables: dict[str, pd.DataFrame]) -> dict[str, dict[str, list[str]]]:
    """Every column of every table as text: floats by ``repr`` (17 significant digits: exact), others by ``str``."""
    return {name: {column: [repr(float(v)) if df[column].dtype.kind == "f" else str(v) for v in df[column].to_numpy()]
                   for column in df.columns}
            for name, df in tables.items()}


def digests(tables: dict[str, pd.DataFrame]) -> dict[str, dict[str, str]]:
    """SHA-256 of each column's values as text (:func:`as_text`), with its row count: ``"rows:digest"``."""
    return {name: {column: f"{len(values)}:" + hashlib.sha256("\n".join(values).encode()).hexdigest()
                   for column, values in columns.items()}
            for name, columns in as_text(tables).items()}


def test_verdict_tables_are_the_pinned_ones_bit_for_bit():
    expected = json.loads(PINNED.read_text())
    got = digests(all_tables())
    assert list(got) == list(expected)
    for table, columns in expected.items():
        assert list(got[table]) == list(columns), table
        changed = [column for column, digest in columns.items() if got[table][column] != digest]
        assert not changed, f"{table}: these columns changed: {changed}"


def close(got, want) -> None:
    """Equal up to the last bits (one pair alone sums in another order than the whole table)."""
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", [t for t in TABLES if t[1] <= 14], ids=lambda t: t[0])
def test_each_row_is_its_pair_computed_alone(case):
    """The vectorized table against one pair at a time: the same intervals, p-values and claims."""
    name, k, seed, tol, alpha, adjust, ofi_m, di_m, ref = case
    table = pair_table(*case)
    levels = table.levels
    a_ofi, a_di = 1 - levels.ofi, 1 - levels.di
    for row in table.itertuples():
        gi, gj = int(row.group_i[1:]), int(row.group_j[1:])
        high = 60 if name == "small groups" else 5000
        cells = random_cells(k, seed, high=high) + (1 if ofi_m == "wald" else 0)
        (tp_i, fn_i, fp_i, tn_i), (tp_j, fn_j, fp_j, tn_j) = cells[gi], cells[gj]
        n_i, n_j = cells[gi].sum(), cells[gj].sum()
        o = inference.ofi_pairs([fp_i], [fn_i], [n_i], [fp_j], [fn_j], [n_j], method=ofi_m)
        lo, hi = o.bounds(a_ofi / 2)
        lo_u, hi_u = o.bounds(alpha / 2)
        close([lo[0], hi[0]], [row.ofi_ci_low, row.ofi_ci_high])
        close([lo_u[0], hi_u[0]], [row.ofi_ci_low_unadjusted, row.ofi_ci_high_unadjusted])
        close(o.p_value(0.0), [row.ofi_p])
        close(o.estimate, [row.ofi])
        d = inference.di_pairs([tp_i + fp_i], [n_i], [tp_j + fp_j], [n_j], method=di_m)
        dlo, dhi = d.bounds(a_di / 2)
        close([dlo[0], dhi[0]], [row.di_ci_low, row.di_ci_high])
        close(d.p_value(1.0), [row.di_p])
        beyond, within = (lo[0] > tol) or (hi[0] < -tol), (lo[0] > -tol) and (hi[0] < tol)
        nonzero = lo[0] > 0 or hi[0] < 0
        nobody = tp_i + fp_i == 0 and tp_j + fp_j == 0
        di_beyond = not nobody and (dhi[0] < 0.8 or dlo[0] > 1.25)
        di_within = nobody or (dlo[0] > 0.8 and dhi[0] < 1.25)
        expected = ("algorithmic bias" if beyond else "materiality unclear" if nonzero and not within
                    else "systemic disparity" if within and di_beyond else "no bias detected" if within and di_within
                    else "inconclusive")
        assert row.verdict == expected, (row.group_i, row.group_j)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_verdicts_pinned.py --write   (rewrites the pinned tables)")
    PINNED.parent.mkdir(exist_ok=True)
    PINNED.write_text(json.dumps(digests(all_tables()), indent=1) + "\n")
    print(f"wrote {PINNED}")
