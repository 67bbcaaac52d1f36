"""Reading one pair of the verdict table whatever its orientation (group_j is the more-selected group)."""

import pandas as pd


def pair(verdicts: pd.DataFrame, a: str, b: str) -> pd.Series:
    """The row of groups ``a`` and ``b`` with OFI and its intervals as B_a − B_b (other columns as stored)."""
    hit = verdicts[((verdicts["group_i"] == a) & (verdicts["group_j"] == b))
                   | ((verdicts["group_i"] == b) & (verdicts["group_j"] == a))]
    assert len(hit) == 1, f"no single row for {a!r} and {b!r}"
    row = hit.iloc[0].copy()
    if row["group_i"] == b:
        row["ofi"] = -row["ofi"]
        for kind in ("", "_unadjusted"):
            low, high = row[f"ofi_ci_low{kind}"], row[f"ofi_ci_high{kind}"]
            row[f"ofi_ci_low{kind}"], row[f"ofi_ci_high{kind}"] = -high, -low
    return row
