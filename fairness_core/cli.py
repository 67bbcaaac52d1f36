"""Command line: ``python -m fairness_core audit DATA.csv --group COL [...]``, and ``python -m fairness_core apply
RULE.json DATA.csv --score COL --group COL --out OUT.csv`` (a saved threshold rule's decisions on the file's raw
scores, turned as the rule was fitted; exit 0, or 2 when the rule or the data are refused, scores mostly outside the
fitted range included unless ``--allow-out-of-range``, nothing written: :mod:`fairness_core.services.apply`).

Writes the same report the Bias Audit page downloads (HTML, or JSON with ``--json``) and
exits non-zero when a chosen threshold is crossed, so a scheduled job or CI pipeline can gate
on it. Exit codes: 0 no threshold crossed, 1 a threshold crossed, 2 bad input or usage.

``--kind continuous`` audits amounts (a premium, a salary: :class:`~fairness_core.continuous.ContinuousAudit`;
``--tolerance`` in the outcome's units, named by ``--unit``) and ``--kind multiclass`` ordered or unordered classes
(risk tiers: :class:`~fairness_core.multiclass.MulticlassAudit`; ``--order Low,Medium,High`` and the good end
``--favourable Low``, or ``--positive-is harm``: the order's last class is the harm); ``--kind binary`` is the
default and unchanged.
``counterfactual variants|audit``: a counterfactual test's variants, and its paired audit (docs/guide.md).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Sequence, TextIO

from .presentation import report as report_mod
from .audit import Audit
from .statistics.verdicts import DEFAULT_OFI_TOLERANCE
from .common.vocabulary import DEFAULT_ALPHA, check_alpha
from .statistics.inference import ADJUSTMENTS
from .statistics.verdicts import VerdictSettings
from .services.io.warehouse import is_glob
from .services.io import (DataValidationError, Problem, aggregate, aggregate_amounts, audit_from_decisions,
                          cms_from_predictions, cms_from_table, find_count_columns, read_table)
from .common.text import terminal_safe

EXIT_OK, EXIT_THRESHOLD, EXIT_BAD_INPUT = 0, 1, 2
#: Exit code after SIGTERM (128 + 15), with nothing half-written.
EXIT_TERMINATED = 143


def _finite(low: float, high: float, what: str):  # type: ignore[no-untyped-def]
    """An argparse type: a finite number in [low, high] (so "nan" or "inf" is a usage error, exit 2)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"{what} must be a finite number in [{low:g}, {high:g}], got {text!r}")
        return value
    return parse


def _alpha(text: str) -> float:
    """An argparse type: the error rate, refused as the library refuses it (:func:`~fairness_core.vocabulary.check_alpha`,
    one sentence; a usage error, exit 2)."""
    try:
        value: object = float(text)
    except ValueError:
        value = text
    try:
        return check_alpha(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _print(text: object, file: TextIO | None = None) -> None:
    """Print one line of output as text: group and column names, sources and values from the data reach the
    terminal through :func:`fairness_core.common.text.terminal_safe`, so an escape sequence in a name cannot clear the
    screen or colour the output and a newline in a name cannot start a line of its own (a forged ``::error``
    annotation in CI)."""
    print(terminal_safe(text), file=file)


class _Terminated(Exception):
    """Raised by the SIGTERM handler so the run unwinds without writing a partial report."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fairness_core", description="Fairness audits from a terminal.")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("audit", help="audit a CSV/TSV/XLSX/Parquet of per-group confusion matrices or row-level "
                                     "predictions")
    a.add_argument("data", help="the file: columns TP, FN, FP, TN per group, or one row per individual; for row-level "
                                "Parquet or CSV, a path or glob of any size ('logs/*.parquet'), counted in place by "
                                "DuckDB")
    a.add_argument("--group", action="append", required=True, metavar="COL",
                   help="group column (repeat for intersections)")
    a.add_argument("--kind", choices=list(KINDS), default="binary",
                   help="binary (default: a yes/no decision), continuous (an amount: a premium, a salary; --label and "
                        "--prediction are numbers, --tolerance is in their units) or multiclass (classes such as risk "
                        "tiers; with --order, the cut-wise impact ratios and the ordinal OFI)")
    a.add_argument("--order", metavar="C1,C2,...",
                   help="--kind multiclass: the classes from one end of the scale to the other, comma-separated "
                        "(e.g. Low,Medium,High); without it the classes are unordered")
    a.add_argument("--favourable", metavar="CLASS[,CLASS]",
                   help="--kind multiclass: the class that is good for the person (with --order: one end of it); "
                        "without an order, one or several good classes")
    a.add_argument("--unit", help="--kind continuous: the outcome's unit, named beside every amount (e.g. '$')")
    a.add_argument("--label", help="row-level data: the actual outcome column")
    a.add_argument("--decisions-only", action="store_true", dest="decisions_only",
                   help="row-level data without an outcome column: audit the --prediction decisions alone (selection "
                        "rates, impact ratios, the four-fifths rule, Local Law 144; blank and declined group values "
                        "are counted as unknown)")
    a.add_argument("--prediction", help="row-level data: the prediction column")
    a.add_argument("--positive", default="1", help="row-level data: the positive value (default 1)")
    a.add_argument("--threshold", type=_finite(-1e300, 1e300, "--threshold"),
                   help="row-level data: the prediction is a score; positive when >= this")
    a.add_argument("--positive-is", choices=["benefit", "harm"], dest="positive_is",
                   help="what the positive value is for the person: a benefit (approved, hired) or a harm (flagged "
                        "as likely to reoffend: label and prediction are flipped). It decides every verdict's "
                        "direction; without it a benefit is assumed and the output says so")
    a.add_argument("--reference", help="reference group for the one-vs-reference table (default: the largest)")
    a.add_argument("--tolerance", type=_finite(0, 1e300, "--tolerance"),
                   help="|OFI| counted as 0 (default 0.05; in [0, 2] for binary and multiclass, where it is in tiers; "
                        "required with --kind continuous, in the outcome's units: 200 for $200)")
    a.add_argument("--out", type=Path, help="write the report here (default: print a summary only)")
    a.add_argument("--json", action="store_true", help="write JSON instead of HTML")
    a.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA,
                   help="the verdicts' error rate, in (0, 0.5) (default 0.05: 95 %% intervals); every claim keeps it across the pairs "
                        "under --adjust, and the intervals printed are at the matching adjusted level")
    a.add_argument("--adjust", choices=list(ADJUSTMENTS), default="holm",
                   help="multiplicity adjustment across pairs: holm (family-wise error, default), bh "
                        "(Benjamini–Hochberg false discovery rate) or none")
    a.add_argument("--fail-ofi", type=_finite(0, 1e300, "--fail-ofi"), metavar="T",
                   help="exit 1 when some pair's multiplicity-adjusted OFI interval (the one printed beside its "
                        "verdict) lies entirely beyond ±T: a shown exceedance, not a point estimate above T (T in "
                        "[0, 2], or in the outcome's units with --kind continuous)")
    a.add_argument("--fail-four-fifths", action="store_true",
                   help="exit 1 when some pair's multiplicity-adjusted DI interval lies entirely outside the "
                        "four-fifths band [0.8, 1.25]")
    a.add_argument("--save", metavar="NAME",
                   help="save the audit (its confusion matrices, what positive means, the settings; not the rows) "
                        "in the audit store under this name and print its id; a scheduled audit with --model and "
                        "--period joins that model's series")
    a.add_argument("--model", help="with --save: the model's name (audits of one model form a series over periods)")
    a.add_argument("--model-version", dest="model_version", help="with --save: the model's version")
    a.add_argument("--period", help="with --save: the period the data cover, e.g. 2026-Q3")
    a.add_argument("--user", metavar="NAME",
                   help="with --save: the local user NAME owns the saved audit (the identity local|NAME, never a "
                        "signed-in user's; default: the single local analyst, local|local). On a team server, hand it "
                        "to a signed-in user afterwards with AuditStore.transfer")
    a.add_argument("--store", metavar="URL",
                   help="with --save: the store's SQLAlchemy URL (default: FAIRNESS_AUDIT_STORE, else a SQLite file "
                        "in FAIRNESS_DATA_DIR or ./data)")
    from .services.counterfactual_files import add_commands   # counterfactual variants|audit (issue 54)
    add_commands(sub, _finite(0, 1e300, "--tolerance"), _alpha)
    ap = sub.add_parser("apply", help="apply a threshold rule saved from the Compare and Mitigate page (or "
                                      "ThresholdRule.to_json) to a CSV/TSV/XLSX/Parquet file")
    ap.add_argument("rule", type=Path, help="the rule file (JSON)")
    ap.add_argument("data", type=Path, help="the rows to decide: one row per individual, with the score and groups")
    ap.add_argument("--score", required=True, metavar="COL", help="the score column the rule thresholds")
    ap.add_argument("--group", action="append", required=True, metavar="COL",
                    help="group column (repeat for intersections, in the order the rule was fitted with)")
    ap.add_argument("--out", type=Path, required=True, help="write the input's columns and the decisions here (CSV, "
                                                             "or Parquet when it ends in .parquet)")
    ap.add_argument("--column", default="decision", help="name of the decisions' column (default: decision)")
    ap.add_argument("--seed", type=int, help="a randomized rule's draws (default: a random seed, printed)")
    ap.add_argument("--allow-out-of-range", action="store_true", dest="allow_out_of_range",
                    help="apply the rule even when most of the file's scores lie outside the range it was fitted on "
                         "(refused by default: a negated, rescaled or other model's score; a warning is printed)")
    return p


def _apply(args: argparse.Namespace) -> int:
    """The apply command: decisions written, or the reason printed and nothing written (exit 2)."""
    from .services.apply import ApplyError, apply_file   # late: the audit command does not need it

    try:
        lines = apply_file(args.rule, args.data, args.score, args.group, args.out, args.column, args.seed,
                           args.allow_out_of_range)
    except DataValidationError as exc:
        return _rejected(exc)
    except ApplyError as exc:
        _print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for line in lines:
        _print(line, file=sys.stderr if line.startswith("warning: ") else None)
    return EXIT_OK


def _coerce(value: str):  # type: ignore[no-untyped-def]
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 threshold crossed, 2 bad input or usage,
    143 stopped by SIGTERM)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    previous = None
    if threading.current_thread() is threading.main_thread():
        def on_term(signum, frame):  # type: ignore[no-untyped-def]
            raise _Terminated()
        previous = signal.signal(signal.SIGTERM, on_term)
    try:
        if args.command == "counterfactual":
            return _counterfactual(args)
        return _apply(args) if args.command == "apply" else _run(args)
    except _Terminated:
        _print("stopped by SIGTERM; no report was written", file=sys.stderr)
        return EXIT_TERMINATED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _check_out(path: Path) -> str | None:
    """Why the report cannot be written to ``path``, or None."""
    if path.is_dir():
        return f"--out {path} is a directory; give a file name such as {path / 'report.html'}"
    if not path.parent.is_dir():
        return f"--out {path}: the folder {path.parent} does not exist"
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"--out {path}: not writable"
    return None


#: Row-level files above this size are counted in place (DuckDB) rather than read into memory.
IN_PLACE_BYTES = 256 * 2**20


def _in_place(path: str, row_level: bool) -> bool:
    """Whether to count the data where it lies: a glob, Parquet, or a big file of row-level data."""
    if not row_level:
        return False
    if is_glob(path):
        return True
    p = Path(path)
    return p.suffix.lower() in (".parquet", ".pq") or (p.is_file() and p.stat().st_size > IN_PLACE_BYTES)


def _bounded(args: argparse.Namespace) -> str | None:
    """Why --tolerance or --fail-ofi is out of range for a share or a number of tiers (binary, multiclass), or None."""
    for flag, value in (("--tolerance", args.tolerance), ("--fail-ofi", args.fail_ofi)):
        if value is not None and value > 2:
            return f"{flag} must be a finite number in [0, 2] for --kind {args.kind}, got {value:g}"
    return None


def _run(args: argparse.Namespace) -> int:
    if args.kind != "binary":
        return _run_kind(args)
    if (why := _bounded(args)) or (why := _kind_flags(args)):
        _print(f"error: {why}", file=sys.stderr)
        return EXIT_BAD_INPUT
    args.tolerance = DEFAULT_OFI_TOLERANCE if args.tolerance is None else args.tolerance
    if args.positive_is is None:
        _print("note: --positive-is not given: assuming a positive prediction is a benefit for the person; if it is "
              "a harm (e.g. 'likely to reoffend'), every verdict's direction is reversed", file=sys.stderr)
    if args.out is not None and (why := _check_out(args.out)):
        _print(f"error: {why}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.save is None and any(getattr(args, k) for k in ("model", "model_version", "period", "user", "store")):
        _print("error: --model, --model-version, --period, --user and --store go with --save NAME", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.decisions_only and (args.label or not args.prediction):
        _print("error: --decisions-only audits the --prediction column alone: give --prediction and no --label",
               file=sys.stderr)
        return EXIT_BAD_INPUT
    row_level = bool(args.label and args.prediction)
    if args.decisions_only and args.fail_ofi is not None:
        _print("error: --fail-ofi needs outcomes; decisions alone have no OFI (use --fail-four-fifths)",
               file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.decisions_only and _in_place(args.data, row_level):
        try:
            audit = aggregate(args.data, label=args.label, prediction=args.prediction, groups=args.group,
                              positive=_coerce(args.positive), threshold=args.threshold,
                              positive_is=args.positive_is,
                              name=args.data if is_glob(args.data) else Path(args.data).name)
        except DataValidationError as exc:
            return _rejected(exc)
        return _report(args, audit)
    path = Path(args.data)
    try:
        data = path.read_bytes()
    except OSError as exc:
        _print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        table = read_table(data, path.name)
        if args.decisions_only:
            audit = audit_from_decisions(table, args.prediction, args.group, _coerce(args.positive),
                                         threshold=args.threshold, positive_is=args.positive_is, source=path.name)
        elif len(find_count_columns(table.columns)) == 4 and not args.label:
            audit = cms_from_table(table, args.group, source=path.name, positive_is=args.positive_is)
        else:
            if not (args.label and args.prediction):
                _print("error: no TP/FN/FP/TN columns, so give --label and --prediction for row-level data (or "
                       "--prediction with --decisions-only when no outcome was observed)", file=sys.stderr)
                return EXIT_BAD_INPUT
            audit = cms_from_predictions(table, args.label, args.prediction, args.group, _coerce(args.positive),
                                         positive_is=args.positive_is, threshold=args.threshold, source=path.name)
    except DataValidationError as exc:
        return _rejected(exc)
    return _report(args, audit)


def _save(args: argparse.Namespace, audit: Any) -> int:
    """Save ``audit`` in the store (--save NAME, --model, --period …) and print its id, or say why not."""
    from .services.store import LOCAL_USER, AuditStore, StoreError, local_user   # late: saving needs SQLAlchemy

    try:
        owner = LOCAL_USER if args.user is None else local_user(args.user)   # --user names a local user
        store = AuditStore(args.store)
        audit_id = store.save(audit, args.save, args.model, args.period, model_version=args.model_version,
                              user=owner, tolerance=args.tolerance, alpha=args.alpha,
                              adjust=args.adjust, **({"unit": args.unit or ""} if args.kind == "continuous" else {}))
    except (StoreError, ValueError) as exc:
        _print(f"error: the audit was not saved: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print(f"saved as {audit_id} in {store.where}")
    return EXIT_OK


def _rejected(exc: DataValidationError) -> int:
    """Print every problem (the first 20) and return the bad-input exit code."""
    _print("error: the data was rejected:", file=sys.stderr)
    for problem in exc.problems[:20]:
        _print(f"  - {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _report(args: argparse.Namespace, audit: Audit) -> int:
    """Build the report of ``audit``, print the summary, write ``--out`` and apply the fail thresholds."""
    try:
        rep = report_mod.build(audit, reference=args.reference,
                               settings=VerdictSettings(args.tolerance, args.alpha, args.adjust))
    except DataValidationError as exc:
        return _rejected(exc)
    except ValueError as exc:
        _print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    summary = rep.summary()
    _print(f"{audit.source}: {audit.direction}")
    ofi = f"; max |OFI| = {summary['max |OFI|']}" if audit.has_outcomes else "; decisions alone (OFI needs outcomes)"
    _print(f"{audit.source}: {len(audit.groups)} groups, n = {audit.total().n:,}, {summary['pairs']} pairs; "
          + ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items())
          + f"{ofi}; four-fifths violations "
            f"{summary['four-fifths violations (significant)']} significant "
            f"({summary['four-fifths violations (point estimate)']} by point estimate)")
    for question, answer in summary["three questions"].items():
        _print(f"{question} {answer}")
    _print(summary["findings"])
    if (code := _write(args, rep)) != EXIT_OK:
        return code
    if args.save is not None and (code := _save(args, audit)) != EXIT_OK:
        return code
    crossed = []
    bound = summary.get("max |OFI| lower bound")
    if args.fail_ofi is not None and bound is not None and bound > args.fail_ofi:
        crossed.append(f"some pair's adjusted OFI interval lies entirely beyond ±{args.fail_ofi} (|OFI| >= {bound:.4f} "
                       f"at the verdicts' adjusted level {summary['OFI interval level']})")
    if args.fail_four_fifths and summary["four-fifths violations (significant)"]:
        crossed.append(f"four-fifths rule significantly violated in {summary['four-fifths violations (significant)']} "
                       "pairs")
    if crossed:
        _print("threshold crossed: " + "; ".join(crossed), file=sys.stderr)
        return EXIT_THRESHOLD
    return EXIT_OK


def _write(args: argparse.Namespace, rep: Any) -> int:
    """Write the report to ``--out`` (HTML, or JSON with ``--json``) beside its target, then rename it there: an
    interrupted run never leaves half a report."""
    if not args.out:
        return EXIT_OK
    text = rep.to_json() if args.json else rep.html()
    tmp = args.out.with_name(f".{args.out.name}.part")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, args.out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        _print(f"error: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print(f"wrote {args.out}")
    return EXIT_OK


# --------------------------------------------------------------------------- amounts and classes (issue 53)

#: The kinds of audit ``--kind`` chooses (the store's kinds).
KINDS = ("binary", "continuous", "multiclass")
#: A library problem that names an array and a position, "y_true[3]: ...".
_AT = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<k>\d+)\]: ?(?P<message>.*)$", re.S)


def _kind_flags(args: argparse.Namespace) -> str | None:
    """Why a flag of another kind was given, or None."""
    own = {"continuous": ("unit",), "multiclass": ("order", "favourable")}
    for flag in ("unit", "order", "favourable"):
        if getattr(args, flag) is not None and flag not in own.get(args.kind, ()):
            kinds = [k for k, v in own.items() if flag in v]
            return f"--{flag} goes with --kind {kinds[0]}, not --kind {args.kind}"
    if args.kind != "binary" and args.threshold is not None:
        return "--threshold is for yes/no decisions (--kind binary)"
    if args.kind != "binary" and args.positive != "1":
        return "--positive is for yes/no decisions (--kind binary)"
    return None


def _located(exc: DataValidationError, columns: dict[str, str]) -> DataValidationError:
    """The library's problems ("y_true[3]: ...") named by the file's column and row, as the binary audit names them."""
    located = []
    for problem in exc.problems:
        hit = _AT.match(problem.message) if problem.row is None else None
        if hit and hit["name"] in columns:
            located.append(Problem(hit["message"], row=int(hit["k"]) + 1, column=columns[hit["name"]]))
        else:
            located.append(problem)
    return DataValidationError(located)


def _kind_audit(args: argparse.Namespace) -> Any:
    """The audit of amounts or of classes of ``args.data``; raises DataValidationError (problems named by column and
    row) or ValueError (a sentence)."""
    from .continuous import ContinuousAudit
    from .multiclass import MulticlassAudit

    columns = {"y_true": args.label or "", "y_pred": args.prediction or "", **{g: g for g in args.group}}
    if args.kind == "continuous" and _in_place(args.data, True):
        return aggregate_amounts(args.data, label=args.label, prediction=args.prediction, groups=args.group,
                                 positive_is=args.positive_is,
                                 name=args.data if is_glob(args.data) else Path(args.data).name)
    path = Path(args.data)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    wanted = [c for c in (args.label, args.prediction, *args.group) if c]
    table = read_table(data, path.name, columns=wanted if path.suffix.lower() in (".parquet", ".pq") else None)
    if missing := [c for c in wanted if c not in table.columns]:
        raise DataValidationError([Problem(f"no such column; the file's columns are {', '.join(map(str, table.columns))}",
                                           column=c) for c in missing])
    groups = {g: table[g].to_numpy(dtype=object) for g in args.group}
    try:
        if args.kind == "continuous":
            return ContinuousAudit.from_predictions(table[args.label].to_numpy(dtype=object),
                                                    table[args.prediction].to_numpy(dtype=object), groups,
                                                    positive_is=args.positive_is, source=path.name)
        order = [c.strip() for c in args.order.split(",")] if args.order else None
        favourable = _favourable(args, order)
        y = None if args.decisions_only else table[args.label].to_numpy(dtype=object)
        return MulticlassAudit.from_predictions(y, table[args.prediction].to_numpy(dtype=object), groups, order,
                                                favourable=favourable, source=path.name)
    except DataValidationError as exc:
        raise _located(exc, columns) from None


def _favourable(args: argparse.Namespace, order: list[str] | None) -> Any:
    """The favourable class(es): --favourable, or with an order the end --positive-is names (benefit: a higher class
    is good, so the last; harm: the first)."""
    if args.favourable is not None and args.positive_is is not None:
        raise ValueError("give --favourable or --positive-is for classes, not both")
    if args.favourable is not None:
        named = [c.strip() for c in args.favourable.split(",") if c.strip()]
        return named[0] if order and len(named) == 1 else named
    if order is None:
        if args.positive_is is not None:
            raise ValueError("--positive-is needs --order for classes (which end is higher); without an order name the "
                             "good classes with --favourable")
        return None
    if args.positive_is is None:
        raise ValueError(f"--order needs the end that is good for the person: --favourable {order[0]} (or "
                         f"{order[-1]}), or --positive-is harm (the last class, {order[-1]}, is the harm)")
    return order[-1] if args.positive_is == "benefit" else order[0]


def _run_kind(args: argparse.Namespace) -> int:
    """``audit --kind continuous|multiclass``: checks, the audit, the report, the summary, the gates, --save."""
    from .presentation.report_kinds import build
    from .wording.kind_answers import amount_text

    problem = _kind_flags(args)
    if args.kind == "continuous":
        if problem is None and not (args.label and args.prediction):
            problem = "--kind continuous needs --label (the observed amount) and --prediction (the predicted one)"
        if problem is None and args.decisions_only:
            problem = "--decisions-only is for yes/no decisions and classes: an amount's audit needs the outcome"
        if problem is None and args.tolerance is None:
            problem = ("--kind continuous needs --tolerance in the outcome's units: the smallest gap in mean benefit "
                       "that matters (e.g. --tolerance 200 --unit '$' for $200)")
        if problem is None and args.tolerance == 0:
            problem = "--tolerance must be above 0 for amounts"
    else:
        problem = problem or _bounded(args)
        if problem is None and not args.prediction:
            problem = "--kind multiclass needs --prediction (the class given) and --label (the observed class)"
        if problem is None and not args.label and not args.decisions_only:
            problem = ("--kind multiclass needs --label (the observed class), or --decisions-only when no outcome "
                       "was observed")
        if problem is None and args.label and args.decisions_only:
            problem = "--decisions-only audits the --prediction column alone: give --prediction and no --label"
        args.tolerance = DEFAULT_OFI_TOLERANCE if args.tolerance is None else args.tolerance
    if problem is None and args.out is not None:
        problem = _check_out(args.out)
    if problem is None and args.save is None and any(getattr(args, k) for k in ("model", "model_version", "period",
                                                                                  "user", "store")):
        problem = "--model, --model-version, --period, --user and --store go with --save NAME"
    if problem is not None:
        _print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.kind == "continuous" and args.positive_is is None:
        _print("note: --positive-is not given: assuming a larger predicted amount is a benefit for the person (a "
               "credit limit, a salary); for a premium or a price say --positive-is harm", file=sys.stderr)
    try:
        with warnings.catch_warnings():   # the assumption is said above, once, as a note
            warnings.simplefilter("ignore", UserWarning)
            audit = _kind_audit(args)
        settings = VerdictSettings(args.tolerance, args.alpha, args.adjust, amounts=args.kind == "continuous")
        rep = build(audit, reference=args.reference, settings=settings, unit=args.unit or "")
    except DataValidationError as exc:
        return _rejected(exc)
    except ValueError as exc:
        _print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    summary = rep.summary()
    n = int(audit.n.sum()) if args.kind == "continuous" else int(audit.counts.sum())
    ofi = (f"; max |OFI| = {amount_text(summary['max |OFI|'], rep.unit)}" if summary.get("max |OFI|") is not None
           else "")
    _print(f"{audit.source}: {audit.direction}")
    _print(f"{audit.source}: {len(audit.groups)} groups, n = {n:,}, {summary['pairs']} comparisons; "
           + ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items())
           + f"{ofi}; ratios beyond the band {summary['band violations (significant)']} significant")
    for question, answer in summary["three questions"].items():
        _print(f"{question} {answer}")
    if (code := _write(args, rep)) != EXIT_OK:
        return code
    if args.save is not None and (code := _save(args, audit)) != EXIT_OK:
        return code
    crossed = []
    if args.fail_ofi is not None:
        if "max |OFI| lower bound" not in summary:
            _print("error: --fail-ofi needs an OFI: classes without an order or without outcomes have none (use "
                   "--fail-four-fifths)", file=sys.stderr)
            return EXIT_BAD_INPUT
        bound = summary["max |OFI| lower bound"]
        if bound > args.fail_ofi:
            crossed.append(f"some pair's adjusted OFI interval lies entirely beyond ±{args.fail_ofi:g} (|OFI| >= "
                           f"{bound:.6g} at the verdicts' adjusted level {summary['OFI interval level']})")
    if args.fail_four_fifths and summary["band violations (significant)"]:
        crossed.append(f"a ratio's adjusted interval lies entirely outside its band in "
                       f"{summary['band violations (significant)']} comparisons")
    if crossed:
        _print("threshold crossed: " + "; ".join(crossed), file=sys.stderr)
        return EXIT_THRESHOLD
    return EXIT_OK



# --------------------------------------------------------------------------- counterfactual tests (issue 54)


def _counterfactual(args: argparse.Namespace) -> int:
    """``counterfactual variants|audit``: exit 0, 1 (--fail-material crossed) or 2 (bad input, said in one sentence
    naming the column and the file's row)."""
    from .services import counterfactual_files as files

    try:
        if args.step == "variants":
            for line in files.variants_file(args.base, args.text, args.swaps, args.out, args.case, args.null_swap):
                _print(line, file=sys.stderr if line.startswith("warning: ") else None)
            return EXIT_OK
        if (problem := files.audit_arguments(args) or (args.out and _check_out(args.out))):
            raise ValueError(problem)
        audit = files.audit_file(args)
        settings = VerdictSettings(args.tolerance, args.alpha, args.adjust, amounts=bool(args.score))
        rep = report_mod.build(audit, settings=settings, source=args.results.name, unit=args.unit or "",
                               notes=files.assumed(args))
    except DataValidationError as exc:
        return _rejected(exc)
    except (OSError, ValueError) as exc:
        _print(f"error: {exc if isinstance(exc, ValueError) else f'{exc.filename}: {exc.strerror}'}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for line in rep.lines():
        _print(line)
    args.kind, args.tolerance = "paired", settings
    if (code := _write(args, rep)) != EXIT_OK or (args.save and (code := _save(args, audit)) != EXIT_OK):
        return code
    material = rep.summary()["verdicts"]["material difference"]
    if args.fail_material and material:
        _print(f"threshold crossed: {material} pair(s) differ materially", file=sys.stderr)
        return EXIT_THRESHOLD
    return EXIT_OK
