"""Files of a counterfactual test (issue 54), for the page and the command line alike: the base texts, the swap table
and the model's results read from a CSV/TSV/XLSX/Parquet upload (every cell as text, :func:`~.io.read_table`), the
variants written as a formula-safe CSV and as JSON Lines, the library's refusals named by the file's row, and the
synthetic demo.

The library (:mod:`fairness_core.counterfactual`) names a bad row by its position in the table, counted from 0; a
file's rows are counted from 1 at the first row below the header, as every other upload's are ("row 1 (file line
2)"): :func:`in_file_rows` says the library's sentence in the file's rows.

>>> in_file_rows("column 'group', row 3: 'X' is not a group (rows 0 and 3)")
"column 'group', row 4 (file line 5): 'X' is not a group (rows 1 and 4)"
"""

from __future__ import annotations

import argparse
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import counterfactual
from ..common.vocabulary import DEFAULT_ALPHA
from ..statistics.inference import ADJUSTMENTS
from ..statistics.verdicts import DEFAULT_OFI_TOLERANCE
from .io import read_table, to_safe_csv

#: The synthetic demo's results (scripts/make_counterfactual_demo.py; assets/PROVENANCE.md).
DEMO_RESULTS = counterfactual.EXAMPLE_SWAPS.parent / "demo_counterfactual_screening_synthetic.csv"


@dataclass(frozen=True)
class DemoSettings:
    """How the demo's results are read: its columns and the positive decision (its null swaps are found by name:
    each "X (null swap)" is X's baseline)."""

    case: str = "case_id"
    group: str = "group"
    decision: str = "advanced"
    positive: str = "Yes"
    score: str = "score"
    source: str = "synthetic demo: 400 résumés × 8 name groups (assets/demo_counterfactual_screening_synthetic.csv)"


DEMO = DemoSettings()

#: Three short base résumés written in the example swap table's first column (White female first names), with no
#: pronoun (the example table swaps first names only): the page's starting text.
DEMO_BASE = (
    "Allison Walsh\nOperations analyst, 6 years. Allison cut invoice processing time by 30 % and trained a team of "
    "five.\nB.Sc. Economics.",
    "Anne Baker\nSoftware engineer, 4 years (Python, SQL). Anne led the migration of a billing system to the "
    "cloud.\nAnne's references are available on request.",
    "Carrie Murphy\nSales associate, 3 years. Carrie exceeded quarterly targets in 10 of 12 quarters.\nFluent in "
    "Spanish.",
)
#: The separator between pasted base texts (a line of its own).
SEPARATOR = "---"

_ROW = re.compile(r"\brow (\d+)\b")
_ROWS = re.compile(r"\brows \[?(\d+(?:(?:, | and )\d+)*)\]?")


def in_file_rows(message: str) -> str:
    """The library's sentence with its rows (positions counted from 0) said as a file's rows: "row 3" → "row 4
    (file line 5)", "rows [0, 3]" and "rows 0 and 3" → "rows 1, 4" and "rows 1 and 4"."""
    def many(m: re.Match[str]) -> str:
        return "rows " + re.sub(r"\d+", lambda d: str(int(d.group()) + 1), m.group(1))

    text = _ROWS.sub(many, message)
    return _ROW.sub(lambda m: f"row {int(m.group(1)) + 1} (file line {int(m.group(1)) + 2})", text)


def read(data: bytes, name: str) -> pd.DataFrame:
    """A CSV/TSV/XLSX/Parquet upload as a table of text (:func:`~.io.read_table`; its refusals as it gives them)."""
    return read_table(data, name)


def texts_from_paste(text: str) -> pd.DataFrame:
    """Base texts pasted as one block, separated by lines holding only :data:`SEPARATOR`: a table with one column,
    ``text``, one row per non-empty text."""
    parts = [p.strip() for p in re.split(rf"(?m)^\s*{re.escape(SEPARATOR)}\s*$", text.replace("\r\n", "\n"))]
    return pd.DataFrame({"text": [p for p in parts if p]})


def swaps_from_paste(text: str) -> pd.DataFrame:
    """A swap table pasted as CSV (a header row of group names, then one row of aligned words per line)."""
    return read_table(text.encode("utf-8"), "swaps.csv")


def make_variants(base: pd.DataFrame, text: str, swaps: pd.DataFrame, case: str | None = None,
                  null_swap_of: str | Sequence[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """:func:`fairness_core.counterfactual.variants` of ``base`` with ``swaps`` (plus the null swap of each group
    of ``null_swap_of``: each pair of groups is read against its own two groups' null swaps, so every group should
    have one), and the warnings it gave, said in the file's rows. Refusals are ValueErrors whose sentence names
    the column and the file's row."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            table = swaps
            for group in [null_swap_of] if isinstance(null_swap_of, str) else (null_swap_of or []):
                table = counterfactual.null_swap(table, group)
            v = counterfactual.variants(base.reset_index(drop=True), text, table, case=case)
        except ValueError as e:
            raise ValueError(in_file_rows(str(e))) from None
    return v, [in_file_rows(str(w.message)) for w in caught if issubclass(w.category, UserWarning)]


def variants_csv(v: pd.DataFrame) -> bytes:
    """The variants as CSV, every text cell that a spreadsheet could run as a formula (starting with = + - @)
    neutralized with a leading quote, as every CSV the workbench writes. Send :func:`variants_jsonl` to a model:
    it keeps every text exactly."""
    return to_safe_csv(v, index=False, na_rep="")


def variants_jsonl(v: pd.DataFrame) -> bytes:
    """The variants as JSON Lines: one object per variant, every text exactly as written (nothing neutralized: no
    spreadsheet runs JSON), missing values as null."""
    records = v.astype(object).where(v.notna(), None).to_dict(orient="records")
    return "".join(json.dumps(r, ensure_ascii=False, default=_plain) + "\n" for r in records).encode("utf-8")


def add_commands(sub: Any, tolerance_type: Any, alpha_type: Any) -> None:
    """The command line's ``counterfactual variants`` and ``counterfactual audit`` (docs/guide.md, "Counterfactual
    tests"), added to ``sub`` (argparse's subparsers); ``tolerance_type`` and ``alpha_type`` are the command line's
    checked number types (argparse ``type=``)."""
    steps = sub.add_parser("counterfactual", help="a counterfactual test: write the variants of base texts (only the "
                           "group's words swapped), or audit a model's answers to them as pairs").add_subparsers(
        dest="step", required=True)
    v = steps.add_parser("variants", help="write each base text once per group, the group's words swapped in")
    v.add_argument("base", type=Path, help="the base texts (CSV/TSV/XLSX/Parquet), one row per case")
    v.add_argument("--text", required=True, metavar="COL", help="the base texts' column")
    v.add_argument("--case", metavar="COL", help="the case id column (default: the row's position, from 0)")
    swaps = v.add_mutually_exclusive_group(required=True)
    swaps.add_argument("--swaps", type=Path, help="the swap table: a column per group, a row per aligned word")
    swaps.add_argument("--example-swaps", action="store_true", help="the first names of Bertrand & Mullainathan 2004")
    v.add_argument("--null-swap", metavar="GROUP", action="append", help="add GROUP's null swap (its baseline in "
                   "the audit); repeat it for each group, as every pair is read against its own groups' null swaps")
    v.add_argument("--out", type=Path, required=True, help="variants.csv (spreadsheet-safe) or variants.jsonl (exact)")
    a = steps.add_parser("audit", help="audit a model's answers to the variants: one row per case and group")
    a.add_argument("results", type=Path, help="the results (CSV/TSV/XLSX/Parquet), one row per case and group")
    a.add_argument("--case", default="case_id", metavar="COL", help="the case id column (default case_id)")
    a.add_argument("--group", default="group", metavar="COL", help="the group column (default group)")
    output = a.add_mutually_exclusive_group()
    output.add_argument("--decision", metavar="COL", help="a yes/no decision (default: the column 'decision')")
    output.add_argument("--score", metavar="COL", help="a score, higher = the benefit (--tolerance in its units)")
    output.add_argument("--rank", metavar="COL", help="a position in a ranked list, 1 = first")
    a.add_argument("--positive", help="--decision: the positive value, unless 0/1, true/false or yes/no")
    a.add_argument("--positive-is", choices=["benefit", "harm"], help="--decision: what the positive value is")
    a.add_argument("--baseline", metavar="GROUP", help="a null swap named otherwise than 'X (null swap)' (those are "
                   "found by name), e.g. 'White male (null swap)'")
    a.add_argument("--tolerance", type=tolerance_type, help="the smallest difference that matters: "
                   "of rates as a share (default 0.05 = 5 points, at most 1), of mean scores in their units")
    a.add_argument("--unit", help="--score: the score's unit")
    a.add_argument("--alpha", type=alpha_type, default=DEFAULT_ALPHA, help="the error rate, in (0, 0.5) (default 0.05)")
    a.add_argument("--adjust", choices=list(ADJUSTMENTS), default="holm", help="across pairs: holm, bh or none")
    a.add_argument("--out", type=Path, help="write the report here (HTML, or JSON with --json)")
    a.add_argument("--json", action="store_true", help="write JSON instead of HTML")
    a.add_argument("--fail-material", action="store_true", help="exit 1 when some pair differs materially")
    for flag in ("--save", "--model", "--model-version", "--period", "--user", "--store"):
        a.add_argument(flag, help=f"{flag} as for the audit command (the store keeps answer patterns, never texts)")


def variants_file(base: Path, text: str, swaps: Path | None, out: Path, case: str | None = None,
                  null_swap_of: str | Sequence[str] | None = None) -> list[str]:
    """``counterfactual variants``: the variants of the base texts in ``base`` with the swap table in ``swaps``
    (None: :func:`~fairness_core.counterfactual.example_swaps`) written to ``out`` (.csv or .jsonl) beside it, then
    renamed, so an interrupted run leaves nothing; returns what to print (warnings first, "warning: …"). Raises
    ValueError (a sentence naming the column and the file's row) or OSError."""
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise ValueError(f"--out {out}: end the name in .csv or .jsonl")
    table = read(base.read_bytes(), base.name)
    swap_table = counterfactual.example_swaps() if swaps is None else read(swaps.read_bytes(), swaps.name)
    v, warned = make_variants(table, text, swap_table, case=case, null_swap_of=null_swap_of)
    tmp = out.with_name(f".{out.name}.part")
    try:
        tmp.write_bytes(variants_jsonl(v) if suffix == ".jsonl" else variants_csv(v))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    k = v["group"].nunique()
    return [*(f"warning: {w}" for w in warned),
            f"wrote {out}: {len(v):,} variants ({len(v) // max(k, 1):,} cases × {k} groups)"]


def audit_arguments(args: argparse.Namespace) -> str | None:
    """Why ``counterfactual audit``'s arguments do not go together, or None (then the tolerance's default is set)."""
    if args.score and args.tolerance is None:
        return ("--score needs --tolerance in the score's units: the smallest difference of mean scores that matters "
                "(e.g. --tolerance 2 for 2 points)")
    if not args.score and args.tolerance is not None and args.tolerance > 1:
        return f"--tolerance is a difference of two rates, at most 1 (0.05 = 5 percentage points), got {args.tolerance:g}"
    if (args.positive or args.positive_is) and (args.score or args.rank):
        return "--positive and --positive-is go with --decision"
    if args.unit and not args.score:
        return "--unit goes with --score"
    if args.save is None and any((args.model, args.model_version, args.period, args.user, args.store)):
        return "--model, --model-version, --period, --user and --store go with --save NAME"
    args.tolerance = DEFAULT_OFI_TOLERANCE if args.tolerance is None else args.tolerance
    return None


def audit_file(args: argparse.Namespace) -> counterfactual.PairedAudit:
    """``counterfactual audit``'s paired audit of ``args.results`` (its refusals in the file's rows)."""
    decision = None if (args.score or args.rank) else (args.decision or "decision")
    return audit_results(read(args.results.read_bytes(), args.results.name), args.case, args.group,
                         decision=decision, score=args.score, rank=args.rank, positive=args.positive,
                         positive_is=args.positive_is or ("benefit" if decision else None), baseline=args.baseline)


def assumed(args: argparse.Namespace) -> tuple[str, ...]:
    """What ``counterfactual audit`` assumed that was not said: the direction of a decision."""
    if args.score or args.rank or args.positive_is:
        return ()
    return ("--positive-is not given: the positive decision is assumed to be a benefit for the person (hired, "
            "advanced); if it is a harm, say --positive-is harm",)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else str(value)


def demo_results() -> pd.DataFrame:
    """The synthetic demo's results as text, as an upload of the file would read."""
    return read_table(Path(DEMO_RESULTS).read_bytes(), DEMO_RESULTS.name)


def audit_results(results: pd.DataFrame, case: str, group: str, *, decision: str | None = None,
                  score: str | None = None, rank: str | None = None, positive: Any = None,
                  positive_is: str | None = None, baseline: str | None = None,
                  swaps: Any = None) -> counterfactual.PairedAudit:
    """:func:`fairness_core.counterfactual.audit` of an uploaded table of results, its refusals said in the file's
    rows (a ValueError naming the column and the row). ``positive`` is matched as text (every cell of an upload is
    text), unless the decisions are 0/1, True/False or Yes/No."""
    chosen = [c for c in (decision, score, rank) if c]
    if len(chosen) != 1:
        raise ValueError("give one output column: a decision, a score or a rank")
    kwargs: dict[str, Any] = {"score": score} if score else {"rank": rank} if rank else {"decision": decision}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return counterfactual.audit(results, case=case, group=group, positive_is=positive_is,
                                        positive=None if positive in (None, "") else str(positive),
                                        baseline=baseline or None, swaps=swaps, **kwargs)
    except ValueError as e:
        raise ValueError(in_file_rows(str(e))) from None


__all__ = ["DEMO", "DEMO_BASE", "DEMO_RESULTS", "DemoSettings", "SEPARATOR", "add_commands", "audit_arguments",
           "assumed", "audit_file", "audit_results", "demo_results", "in_file_rows", "make_variants", "read", "swaps_from_paste",
           "texts_from_paste", "variants_csv", "variants_file", "variants_jsonl"]
