"""Counterfactual tests: change only the name (or the pronouns, or one attribute) and count what the model changes.

Each base case — a résumé, an applicant's record — is answered once per group, with only the group's words
swapped, so the groups differ in nothing else and the right statistics are **paired** ones
(:mod:`fairness_core.statistics.paired`; docs/methods.md, "Counterfactual tests"):

1. :func:`variants` writes each base text once per group from a swap table (columns = groups, rows = aligned words,
   the base texts written in the first column's words); :func:`example_swaps` is the first names of Bertrand &
   Mullainathan (2004), :func:`null_swap` adds a baseline column (other names of the same group).
2. :func:`run` sends the variants through a Python callable in batches, with the job runner's progress and cancel
   (:mod:`fairness_core.progress`); :func:`flip_column` does the same for a tabular model, one attribute swapped.
3. :func:`audit` reads the results (one row per case and group) into a :class:`PairedAudit`: ``by_group()``,
   ``pairs()`` (every pair: discordant counts, flip rate, the paired difference with Tango's interval, the exact
   McNemar test and the conditional odds ratio, Holm across pairs, a verdict) and ``omnibus()``.

>>> import pandas as pd
>>> base = pd.DataFrame({"resume": ["Emily Walsh. She led the team; her manager praised Emily's work."]})
>>> swaps = pd.DataFrame({"F": ["Emily", "Walsh", "she", "her"], "M": ["Greg", "Baker", "he", "his"]})
>>> v = variants(base, "resume", swaps)
>>> v["text"].tolist()[1]
"Greg Baker. He led the team; his manager praised Greg's work."
>>> v.loc[1, "changed"]
'Emily→Greg, Walsh→Baker, She→He, her→his'
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .common.progress import Cancelled, ProgressCallback, Stage, ignore
from .common.vocabulary import DEFAULT_ALPHA, adjustment, check_alpha, resolve_positive_is
from .statistics import paired

#: The columns :func:`variants` writes before the base table's own.
VARIANT_COLUMNS = ("case_id", "group", "text", "changed", "n_changed")
#: How :func:`null_swap` names its column: the group's name and this.
NULL_SUFFIX = " (null swap)"
#: The example swap table shipped in assets/ (assets/PROVENANCE.md).
EXAMPLE_SWAPS = Path(__file__).resolve().parents[1] / "assets" / "bertrand_mullainathan_2004_first_names.csv"
#: Pronouns and their case forms, one column per set; a base text must be written in a set whose words are
#: distinct ("she" has "her" twice — object and possessive — so a text in "she" words cannot be swapped safely).
PRONOUNS = pd.DataFrame({"he": ["he", "him", "his", "his", "himself"],
                         "she": ["she", "her", "her", "hers", "herself"],
                         "they": ["they", "them", "their", "theirs", "themselves"]})
#: English words that are also given names: a swap table's name among them is flagged (a sentence's "Will" would be
#: swapped too). Lower-case occurrences are never swapped for a capitalized name, and any name whose lower-case
#: form occurs in the base texts is flagged as well.
COMMON_WORDS = frozenset("""
amber april art august autumn bill bishop bob brook buck candy carol chance chase cherry chip christian cliff coral
crystal daisy dale dawn dean destiny drew earl faith frank gene ginger glen grace grant guy hazel heath herb holly
honey hope hunter iris ivy jack jade jasmine joy june justice king lance lane liberty lily major mark mason max may
melody miles norm olive page pat patience pearl penny precious prince ray reed rich river rob robin rose ruby rusty
sandy sky star sterling stone summer sunny victor violet wade will winter young""".split())
_SEP = "\x00"
_YES_NO = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0}


def example_swaps() -> pd.DataFrame:
    """The first names of Bertrand & Mullainathan, *Are Emily and Greg More Employable than Lakisha and Jamal?*
    (2004), as a swap table: 9 names per group (White female, Black female, White male, Black male), each column
    alphabetical — rows aligned by that order only, which carries no meaning. Provenance: assets/PROVENANCE.md."""
    return pd.read_csv(EXAMPLE_SWAPS, dtype=str)


def null_swap(swaps: pd.DataFrame | Mapping[str, Sequence[str]], group: str, shift: int = 1) -> pd.DataFrame:
    """``swaps`` with a baseline column ``group + NULL_SUFFIX``: the group's names (its capitalized words) moved
    ``shift`` places down among themselves, other words unchanged — a swap that changes the name but not the group.
    Its flip rate against ``group`` is what the model changes when nothing meaningful changes (``audit(baseline=)``)."""
    table = _swap_table(swaps)
    if group not in table.columns:
        raise ValueError(f"no group {group!r} in the swap table; its groups are {', '.join(map(repr, table.columns))}")
    words = table[group].to_numpy(dtype=object)
    names = np.flatnonzero([w[:1].isupper() for w in words])
    if names.size < 2:
        raise ValueError(f"group {group!r} has {names.size} name(s); a null swap needs at least two")
    out = table.copy()
    column = words.copy()
    column[names] = words[np.roll(names, -shift)]
    out[group + NULL_SUFFIX] = column
    return out


def _swap_table(swaps: pd.DataFrame | Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """The user's swap table checked: at least two groups, each with words, no empty cell, no word ambiguous in the
    first column, no word listed for two groups (a null swap's column may repeat its own group's words)."""
    if isinstance(swaps, Mapping) and not isinstance(swaps, pd.DataFrame):
        lengths = {str(g): len(list(w)) for g, w in swaps.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError("swaps: every group needs as many words as the others (row k of each is swapped for "
                             f"row k of the others); lengths: {lengths}")
        swaps = pd.DataFrame({str(g): list(w) for g, w in swaps.items()})
    if not isinstance(swaps, pd.DataFrame):
        raise ValueError("swaps must be a DataFrame (columns = groups, rows = aligned words) or a mapping group → "
                         f"words, got {type(swaps).__name__}")
    table = swaps.reset_index(drop=True).copy()
    table.columns = [str(c).strip() for c in table.columns]
    if table.shape[1] < 2 or len(set(table.columns)) < table.shape[1] or "" in table.columns:
        raise ValueError(f"swaps needs at least two groups with distinct, non-empty names, got {list(table.columns)}")
    for group in table.columns:
        cells = table[group].map(lambda w: w.strip() if isinstance(w, str) else w)
        if cells.map(lambda w: not isinstance(w, str) or not w).all():
            raise ValueError(f"swaps: group {group!r} has no words")
        bad = cells.map(lambda w: not isinstance(w, str) or not w).to_numpy()
        if bad.any():
            raise ValueError(f"swaps: column {group!r}, row {int(np.argmax(bad))} is empty; every row needs a word "
                             "for every group")
        table[group] = cells
    source = table.columns[0]
    folded = table[source].str.casefold()
    repeated = folded[folded.duplicated(keep=False)]
    if len(repeated):
        rows = repeated.index[repeated == repeated.iloc[0]].tolist()
        raise ValueError(f"swaps: {table[source][rows[0]]!r} appears in rows {rows} of the first column "
                         f"({source!r}), whose words the base texts are written in, so what it becomes is ambiguous; "
                         "write the base texts in a column whose words are distinct (e.g. 'he' or 'they' pronouns)")
    long = table.stack().rename("word").reset_index().rename(columns={"level_0": "row", "level_1": "group"})
    long["key"] = long["word"].str.casefold()
    rows = long.groupby(["key", "group"], sort=False)["row"].agg(frozenset).reset_index()
    clash = rows.merge(rows, on="key")
    clash = clash[(clash["group_x"].str.removesuffix(NULL_SUFFIX) != clash["group_y"].str.removesuffix(NULL_SUFFIX))
                  & (clash["row_x"] != clash["row_y"])]
    if len(clash):
        c = clash.iloc[0]
        raise ValueError(f"swaps: {c['key']!r} is listed for group {c['group_x']!r} (row {min(c['row_x'])}) and for "
                         f"group {c['group_y']!r} (row {min(c['row_y'])}) in different rows; a name may stand for "
                         "one group only (a word shared by groups, like a pronoun, sits in the same rows)")
    return table


def _first_upper(word: str) -> str:
    return word[:1].upper() + word[1:]


def _forms(word: str) -> tuple[str, ...]:
    """The written forms of a table word that are swapped: as written, first letter capitalized, ALL CAPS."""
    return word, _first_upper(word), word.upper()


def _pattern(words: Sequence[str], as_written: bool = False) -> re.Pattern[str]:
    """Whole words only: not inside another word ("he" in "Theodore"), a hyphenated name ("Jean-Paul") or after an
    apostrophe within a word ("O'Neil"); a possessive or contraction after it is kept ("Jamal's", "he'll"). The
    first-letter class in front lets the engine skip every other position cheaply."""
    forms = set(words) if as_written else {f for w in words for f in _forms(w)}
    alternatives = sorted({re.escape(f).replace(r"\ ", r"\s+") for f in forms}, key=len, reverse=True)
    first = "".join(sorted({re.escape(f[0]) for f in forms}))
    return re.compile(rf"(?=[{first}])(?<![\w\-])(?<!\w['’])(" + "|".join(alternatives) + r")(?!\w)(?!-\w)")


def _warn_common_words(table: pd.DataFrame, corpus: str) -> None:
    names = {w for g in table.columns for w in table[g] if w[:1].isupper() and not w.isupper()}
    flagged = sorted(w for w in names if w.casefold() in COMMON_WORDS)
    lower = sorted(names - set(flagged))
    if lower:
        found = _pattern([w.lower() for w in lower], as_written=True).search(corpus)
        flagged += [] if found is None else [_first_upper(found.group())]
    if flagged:
        warnings.warn(f"swaps: {', '.join(map(repr, sorted(set(flagged))))} "
                      f"{'is' if len(set(flagged)) == 1 else 'are'} also common English word(s): a capitalized or "
                      "ALL-CAPS use (a sentence's first word, a heading) is swapped too; check the variants' "
                      "'changed' column", UserWarning, stacklevel=3)


def variants(df: pd.DataFrame | Sequence[str], text: str, swaps: pd.DataFrame | Mapping[str, Sequence[str]],
             case: str | None = None) -> pd.DataFrame:
    """One row per base row and group, the group's words swapped into the text.

    ``swaps``: columns = groups, rows = aligned words (first, last or full names, pronouns and their case forms);
    each base text is written in the first column's words, and each such word becomes the same row's word of the
    group. Matching is by whole word (never inside another word), in three written forms — as in the table, with a
    capital first letter ("He" → "She"), ALL CAPS ("EMILY" → "LAKISHA") — each swapped into the same form;
    possessives follow ("Jamal's"). Columns: ``case_id`` (``df[case]``, or the row's position), ``group``, ``text``,
    ``changed`` (the swaps made, "Emily→Lakisha, she→he"), ``n_changed``, then the base table's other columns.
    Warnings: a name that is also an English word; base texts with none of the first column's words (their
    variants are identical), or with another group's words (left as they are)."""
    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame({text: list(df)})
    if text not in df.columns:
        raise ValueError(f"no text column {text!r}; the columns are {', '.join(map(repr, df.columns))}")
    table = _swap_table(swaps)
    values = df[text].to_numpy(dtype=object)
    bad = np.flatnonzero([not isinstance(t, str) for t in values])
    if bad.size:
        raise ValueError(f"column {text!r}, row {bad[0]}: {values[bad[0]]!r} is not a text")
    if case is None:
        case_ids = np.arange(len(df))
    else:
        if case not in df.columns:
            raise ValueError(f"no case column {case!r}; the columns are {', '.join(map(repr, df.columns))}")
        ids = df[case]
        for row in np.flatnonzero(ids.isna().to_numpy() | ids.duplicated().to_numpy())[:1]:
            raise ValueError(f"column {case!r}, row {row}: the case id {ids.iloc[row]!r} is "
                             f"{'missing' if pd.isna(ids.iloc[row]) else 'repeated'}; each base text needs its own")
        case_ids = ids.to_numpy()
    for column in [c for c in df.columns if c in VARIANT_COLUMNS and c not in (text, case)][:1]:
        raise ValueError(f"the base table's column {column!r} would be overwritten; rename it")
    _where(df[text], np.array([_SEP in t for t in values]), "holds a NUL character")
    corpus = _SEP.join(values)
    _warn_common_words(table, corpus)
    source, groups = table.columns[0], list(table.columns)
    lookup = {form: (row, kind) for row, word in enumerate(table[source]) for kind, form in enumerate(_forms(word))}
    pieces = _pattern(table[source].tolist()).split(corpus)
    codes, uniques = pd.factorize(np.array(pieces[1::2], dtype=object))
    uniques = np.asarray(uniques, dtype=object)
    where = [lookup[u if u in lookup else " ".join(u.split())] for u in uniques]
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    starts = (np.cumsum(lengths) - lengths)[1::2]
    sizes = np.fromiter(map(len, values), dtype=np.int64, count=len(values)) + 1
    text_of = np.searchsorted(np.cumsum(sizes) - sizes, starts, side="right") - 1
    n, k = len(values), len(groups)
    out_text, out_changed = np.empty(n * k, dtype=object), np.full(n * k, "", dtype=object)
    out_count = np.zeros(n * k, dtype=np.int64)
    shape = (lambda w: w, _first_upper, str.upper)
    for g, group in enumerate(groups):
        targets = table[group].tolist()
        new = np.array([shape[kind](targets[row]) for row, kind in where], dtype=object)
        swapped = list(pieces)
        swapped[1::2] = new[codes].tolist()
        out_text[g::k] = "".join(swapped).split(_SEP)
        hit = (new != uniques)[codes]
        out_count[g::k] = np.bincount(text_of[hit], minlength=n)
        said = pd.DataFrame({"text": text_of[hit], "label": (uniques + "→" + new)[codes[hit]]}).drop_duplicates()
        if len(said):      # rows come in text order: one join, split where the text changes
            at = said["text"].to_numpy()
            joined = np.empty(2 * len(at), dtype=object)
            joined[0::2] = np.array([_SEP, ", "], dtype=object)[np.r_[False, at[1:] == at[:-1]].astype(np.intp)]
            joined[1::2] = said["label"].to_numpy()
            out_changed[g::k][np.unique(at)] = "".join(joined[1:].tolist()).split(_SEP)
    touched = np.bincount(text_of, minlength=n) > 0
    if (~touched).any():
        rows = np.flatnonzero(~touched)
        warnings.warn(f"{rows.size:,} base text(s) contain none of the first column's words ({source!r}), so their "
                      f"variants are all alike: rows {', '.join(map(str, rows[:5]))}{' …' if rows.size > 5 else ''}",
                      UserWarning, stacklevel=2)
    others = [w for g in groups[1:] for w in table[g] if w.casefold() not in set(table[source].str.casefold())]
    if others:
        stray = _pattern(others).search(corpus)
        if stray is not None:
            row = corpus.count(_SEP, 0, stray.start())
            warnings.warn(f"column {text!r}, row {row}: {stray.group()!r} is another group's word and is left as it "
                          f"is; base texts should be written in the first column's words ({source!r})",
                          UserWarning, stacklevel=2)
    rest = df.drop(columns=[c for c in (text, case) if c is not None]).reset_index(drop=True)
    frame = pd.DataFrame({"case_id": np.repeat(case_ids, k), "group": np.tile(np.array(groups, dtype=object), n),
                          "text": out_text, "changed": out_changed, "n_changed": out_count})
    return pd.concat([frame, rest.loc[rest.index.repeat(k)].reset_index(drop=True)], axis=1)


def run(predict: Callable[[list[str]], Any], variants: pd.DataFrame, batch_size: int = 64,
        on_progress: ProgressCallback | None = None, should_stop: Callable[[], bool] | None = None,
        text: str = "text", output: str = "decision", errors: str = "raise") -> pd.DataFrame:
    """``predict`` (a list of texts → one output each: a decision, a score or a rank) run over the variants'
    ``text`` column in batches of ``batch_size``: the job runner's protocol (:mod:`fairness_core.services.jobs`) —
    one :class:`~fairness_core.progress.Stage` record per batch through ``on_progress`` (phase "scoring variants"),
    ``should_stop()`` asked before each batch (:class:`~fairness_core.progress.Cancelled` when it says so). A page
    submits ``lambda on_progress, should_stop: run(predict, v, on_progress=on_progress, should_stop=should_stop)``.
    Returns ``case_id``, ``group`` and ``output``. ``errors="record"``: a failing batch's rows get a missing output
    and the error in an ``error`` column (the audit counts those cases as incomplete); "raise" (default) stops."""
    for bad, message in ((not callable(predict), f"predict must be a callable taking a list of texts, got {predict!r}"),
                         (not isinstance(batch_size, int) or batch_size < 1, f"batch_size must be >= 1, got {batch_size!r}"),
                         (errors not in ("raise", "record"), f"errors must be 'raise' or 'record', got {errors!r}")):
        if bad:
            raise ValueError(message)
    for column in ("case_id", "group", text):
        if column not in variants.columns:
            raise ValueError(f"the variants have no column {column!r} (made by counterfactual.variants?)")
    report, stop = on_progress or ignore, should_stop or (lambda: False)
    texts = variants[text].tolist()
    total = len(texts)
    results, failures = np.full(total, None, dtype=object), np.full(total, "", dtype=object)
    for start in range(0, total, batch_size):
        if stop():
            raise Cancelled(f"cancelled after {start:,} of {total:,} variants")
        batch = texts[start:start + batch_size]
        try:
            got = list(predict(batch))
            if len(got) != len(batch):
                raise ValueError(f"predict returned {len(got)} outputs for a batch of {len(batch)} texts")
            results[start:start + len(batch)] = got
        except Exception as error:
            if errors == "raise":
                raise
            failures[start:start + len(batch)] = f"{type(error).__name__}: {error}"
        done = min(start + batch_size, total)
        report(Stage(done=done, total=total, message=f"scored {done:,} of {total:,} variants", phase="scoring variants"))
    out = variants[["case_id", "group"]].reset_index(drop=True).copy()
    out[output] = pd.Series(results, dtype=object).infer_objects()
    if errors == "record":
        out["error"] = failures
    return out


def flip_column(predict: Callable[[pd.DataFrame], Any], X: pd.DataFrame, column: str = "sex",
                values: Sequence[Any] | None = None, output: str = "decision") -> pd.DataFrame:
    """A tabular counterfactual test: every row of ``X`` predicted once per value of ``column`` (everything else
    fixed), in one call of ``predict`` on the stacked copies. Returns ``case_id`` (the row's position), ``group``
    (the value set), ``original`` (the row's own value) and ``output``, ready for :func:`audit`."""
    if column not in X.columns:
        raise ValueError(f"no column {column!r}; the columns are {', '.join(map(repr, X.columns))}")
    values = list(pd.unique(X[column].dropna())) if values is None else list(values)
    if len(set(map(repr, values))) < 2 or len(set(map(repr, values))) < len(values):
        raise ValueError(f"values must hold at least two distinct values of {column!r}, got {values!r}")
    n, k = len(X), len(values)
    stacked = pd.concat([X] * k, ignore_index=True)
    stacked[column] = pd.Series(np.repeat(np.array(values, dtype=object), n)).astype(X[column].dtype, errors="ignore")
    got = np.asarray(predict(stacked))
    if got.shape[0] != n * k:
        raise ValueError(f"predict returned {got.shape[0]} outputs for {n * k} rows")
    return pd.DataFrame({"case_id": np.tile(np.arange(n), k), "group": np.repeat(np.array(values, dtype=object), n),
                         "original": np.tile(X[column].to_numpy(dtype=object), k), output: got})


def _plain(value: Any) -> Any:  # a NumPy scalar as the plain Python value it prints as
    return value.item() if isinstance(value, np.generic) else value


def _where(series: pd.Series, bad: np.ndarray, what: str) -> None:
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"column {series.name!r}, row {row}: {_plain(series.iloc[row])!r} {what}")


def _outputs(series: pd.Series, kind: str, positive: Any, k: int) -> np.ndarray:
    """The output column as float (NaN: the model gave no answer), refused by its first bad row."""
    missing = series.isna().to_numpy()
    if kind == "decision":
        codes, uniques = pd.factorize(series)
        u = uniques.to_numpy(dtype=object)
        if positive is not None:
            value = np.array([x == positive for x in u], dtype=float)
            if not value.any():
                raise ValueError(f"column {series.name!r}: the positive value {positive!r} does not occur")
            others = np.flatnonzero(value == 0)
            _where(series, np.isin(codes, others[1:]), "is a third value; a decision has two")
        else:
            value = np.array([float(x) if isinstance(x, (bool, np.bool_, int, float, np.number)) and x in (0, 1)
                              else _YES_NO.get(str(x).strip().casefold(), np.nan) for x in u], dtype=float)
            _where(series, ~missing & np.isnan(value[np.maximum(codes, 0)]), "is not a decision (0/1, True/False, "
                   "Yes/No; or say which value is the positive one with positive=)")
        return np.where(missing, np.nan, value[np.maximum(codes, 0)])
    x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    _where(series, ~missing & ~np.isfinite(x), "is not a number")
    if kind == "rank":
        _where(series, ~missing & ((x != np.round(x)) | (x < 1) | (x > k)), f"is not a rank from 1 to {k}")
    return x


def audit(df: pd.DataFrame, case: str = "case_id", group: str = "group", decision: str = "decision",
          positive_is: str | None = None, *, score: str | None = None, rank: str | None = None,
          positive: Any = None, baseline: str | tuple[str, str] | None = None,
          swaps: pd.DataFrame | Sequence[str] | None = None) -> "PairedAudit":
    """The paired audit of a counterfactual test's results: one row per case and group.

    One output is read: ``decision`` (two values; ``positive`` says which is the positive one unless they are 0/1,
    True/False or Yes/No; ``positive_is="harm"`` reads the other as the benefit), or ``score=`` (a number; a higher
    score is the benefit), or ``rank=`` (1 = first of k; the benefit is being ranked first). A missing output is a
    variant the model failed on: its case is incomplete and is used wherever the pair it belongs to is complete.
    Null swaps are found by name: group ``"X (null swap)"`` is X's baseline, never compared as a group; each
    pair A–B is read against A's and B's own null swaps. ``baseline``: a pair (group, its null swap) named otherwise
    (or ``"X (null swap)"``, checked to be there).
    ``swaps``: the swap table or its group names — a group not among them is refused. Refused, each with its row:
    a missing case or group, a duplicated (case, group), a case with one row, a third decision value."""
    kind = "rank" if rank is not None else "score" if score is not None else "decision"
    output = {"rank": rank, "score": score, "decision": decision}[kind]
    for column in (case, group, output):
        if column not in df.columns:
            raise ValueError(f"no column {column!r}; the columns are {', '.join(map(repr, df.columns))}")
    if kind == "decision":
        positive_is = resolve_positive_is(positive_is, f"{decision} = the positive value")
    case_code, case_ids = pd.factorize(df[case])
    group_code, names = pd.factorize(df[group])
    for column, codes in ((case, case_code), (group, group_code)):
        _where(df[column], codes < 0, "is missing")
    names = [str(n) for n in names]
    if swaps is not None:
        allowed = set(map(str, swaps.columns if isinstance(swaps, pd.DataFrame) else swaps))
        _where(df[group], ~np.isin(np.array(names, dtype=object), list(allowed))[group_code], "is not a group of the "
               f"swap table ({', '.join(sorted(allowed))})")
    k, cases = len(names), len(case_ids)
    orphan = np.array([n.endswith(NULL_SUFFIX) and n.removesuffix(NULL_SUFFIX) not in names for n in names])
    _where(df[group], orphan[group_code], "is a null swap whose own group has no rows; a null swap is read against "
           "its own group (name them 'X' and 'X" + NULL_SUFFIX + "')")
    if k < 2:
        raise ValueError(f"column {group!r}: one group only ({names[0]!r}); a paired audit compares at least two")
    flat = case_code.astype(np.int64) * k + group_code
    seen = np.bincount(flat, minlength=cases * k)
    if seen.max() > 1:
        first = np.flatnonzero(seen[flat] > 1)
        raise ValueError(f"column {group!r}, row {first[1]}: case {_plain(case_ids[case_code[first[1]]])!r} and group "
                         f"{names[group_code[first[1]]]!r} appear twice (rows {first[0]} and {first[1]})")
    per_case = np.bincount(case_code, minlength=cases)
    lone = per_case[case_code] == 1
    _where(df[case], lone, "has one row (one variant); every case needs a variant per group")
    values = _outputs(df[output], kind, positive, k)
    if kind == "decision" and positive_is == "harm":
        values = 1.0 - values
    matrix = np.full((cases, k), np.nan)
    matrix[case_code, group_code] = values
    found = PairedAudit(tuple(names), np.asarray(case_ids), matrix, kind, positive_is or "benefit",
                        _baseline(baseline, names))
    if len(found.real_groups) < 2:
        raise ValueError(f"column {group!r}: fewer than two groups besides the null swaps ({', '.join(names)}); a "
                         "paired audit compares at least two groups, each read against its own null swap")
    return found


def _baseline(baseline: str | tuple[str, str] | None, names: list[str]) -> tuple[str, str] | None:
    if baseline is None:
        return None
    pair = (baseline.removesuffix(NULL_SUFFIX), baseline) if isinstance(baseline, str) else tuple(baseline)
    if len(pair) != 2 or pair[0] == pair[1]:
        raise ValueError(f"baseline must name the null swap's group 'X{NULL_SUFFIX}' or a pair (group, null swap), "
                         f"got {baseline!r}")
    for name in pair:
        if name not in names:
            raise ValueError(f"baseline: no group {name!r} in the results; groups are {', '.join(map(repr, names))}")
    return pair  # type: ignore[return-value]


@dataclass(frozen=True)
class PairedAudit:
    """A counterfactual test's results as a cases × groups array (NaN: no answer), read in pairs of groups.

    ``kind``: "decision" (1 = the benefit), "score" or "rank"; ``baseline``: a (group, its null swap) pair named
    without :data:`NULL_SUFFIX`, or None (:attr:`null_swaps` finds the others by name);
    ``values``: the array, one row per case of ``cases`` and one column per group of ``groups``."""

    groups: tuple[str, ...]
    cases: np.ndarray
    values: np.ndarray
    kind: str
    positive_is: str
    baseline: tuple[str, str] | None = None

    @property
    def observed(self) -> np.ndarray:
        return ~np.isnan(self.values)

    @property
    def incomplete(self) -> int:
        """Cases where some group has no answer."""
        return int((~self.observed.all(axis=1)).sum())

    def incomplete_cases(self) -> pd.DataFrame:
        """The incomplete cases and the groups each lacks."""
        seen = self.observed   # once: the property recomputes the whole array on every call
        rows = np.flatnonzero(~seen.all(axis=1))[:10_000]
        names = np.array(self.groups, dtype=object)
        lacks = [", ".join(names[~row]) for row in seen[rows]]
        return pd.DataFrame({"case_id": self.cases[rows], "missing_groups": lacks})

    @property
    def null_swaps(self) -> dict[str, str]:
        """Each group's null swap, the baseline its pairs are read against: the group named "X (null swap)"
        (:data:`NULL_SUFFIX`) of each group X, and the ``baseline`` pair when one was named."""
        named = {g.removesuffix(NULL_SUFFIX): g for g in self.groups if g.endswith(NULL_SUFFIX)}
        out = {g: named[g] for g in self.groups if g in named}
        return out | ({} if self.baseline is None else {self.baseline[0]: self.baseline[1]})

    @property
    def real_groups(self) -> tuple[str, ...]:
        """The groups compared in pairs: every group but the null swaps."""
        return tuple(np.array(self.groups, dtype=object)[self._real()])

    def _real(self) -> np.ndarray:
        """Which groups are real (not a null swap)."""
        nulls = set(self.null_swaps.values())
        return np.array([g not in nulls for g in self.groups])

    def _binary(self) -> np.ndarray:
        """The benefit as 0/1 (ranked first, for ranks); NaN where missing."""
        return np.where(self.values == 1, 1.0, np.where(np.isnan(self.values), np.nan, 0.0)) \
            if self.kind == "rank" else self.values

    def by_group(self, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
        """Each group's rate (decisions: the selection rate; ranks: the share ranked first, with the exact binomial
        p against chance 1/k, and the mean rank; scores: the mean) over the cases where it was answered, with its
        interval at 1 − α — each case is one independent observation of every group, so a group's rate is a plain
        proportion (Clopper–Pearson) or mean (Student's t) over cases — and ``vs_others``: the group's value minus
        the mean of the other real groups on the same complete cases, with a paired t interval of those per-case
        contrasts (the pairing's correlation is in their spread)."""
        check_alpha(alpha)
        y, seen = self._binary() if self.kind != "score" else self.values, self.observed
        n = seen.sum(axis=0).astype(float)
        out = pd.DataFrame({"group": self.groups, "n": n.astype(np.int64)})
        if self.kind != "score":
            hits = np.nansum(y, axis=0)
            low, high = paired.clopper_pearson(hits, n, alpha)
            name = "top_share" if self.kind == "rank" else "rate"
            out["selected" if self.kind == "decision" else "ranked_first"] = hits.astype(np.int64)
            out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = hits / np.maximum(n, 1), low, high
            if self.kind == "rank":
                out["chance"] = 1 / len(self.groups)
                out["top_p"] = paired.binomial_two_sided(hits, n, 1 / len(self.groups))
        if self.kind != "decision":
            name = "mean_rank" if self.kind == "rank" else "mean"
            m = paired.MeanDifferences(np.nansum(self.values, axis=0), np.nansum(self.values ** 2, axis=0), n)
            low, high = m.bounds(alpha / 2)
            out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = m.estimate, low, high
        complete = seen.all(axis=1)
        real = self._real()
        z = (y if self.kind != "score" else self.values)[complete]
        others = (z[:, real].sum(axis=1, keepdims=True) - np.where(real, z, 0)) / (real.sum() - real)
        contrast = z - others
        m = paired.MeanDifferences(contrast.sum(axis=0), (contrast ** 2).sum(axis=0), np.full(len(self.groups),
                                                                                             float(complete.sum())))
        low, high = m.bounds(alpha / 2)
        out["n_complete"], out["vs_others"], out["vs_others_ci_low"], out["vs_others_ci_high"] = (
            int(complete.sum()), m.estimate, low, high)
        return out

    def pairs(self, tolerance: float | None = None, alpha: float = DEFAULT_ALPHA, adjust: str = "holm") -> pd.DataFrame:
        """Every pair of groups (i before j in the groups' order) on the cases complete for both.

        Decisions (and ranks, read as "ranked first"): n, both, only_i, only_j, neither, rate_i, rate_j,
        ``difference`` = rate_i − rate_j with Tango's paired interval at the decision level (``difference_ci_low``,
        ``difference_ci_high``; ``level``) and at 1 − α (``*_unadjusted``), ``difference_p``,
        ``difference_p_adjusted`` (below α exactly when the adjusted interval excludes 0), ``flip_rate`` = (only_i +
        only_j)/n with Clopper–Pearson's interval at 1 − α, ``mcnemar_p`` (exact), ``p_adjusted`` (McNemar's, by
        ``adjust`` across pairs), ``odds_ratio`` = only_i/only_j with the exact interval that excludes 1 exactly when
        ``p_adjusted`` < α, ``verdict`` (:data:`~fairness_core.statistics.paired.PAIRED_VERDICTS`, from the
        difference's adjusted interval against ±``tolerance``, default 0.05) and ``favours``. Null swaps are
        baselines, not groups: with them each pair is read against its own groups' null swaps
        (:class:`~fairness_core.statistics.paired.OwnBaselines`: ``baseline_flip_rate_i``/``_j``, ``flip_excess_i``/
        ``_j`` with Tango's intervals, ``flips_beyond_baseline`` when every side's interval is above 0, the deciding
        side as ``baseline_flip_rate``, ``flip_excess`` and its interval, ``flip_excess_p`` (exact McNemar,
        intersection–union) and ``flip_excess_p_adjusted``). Every interval is at ``level``, one for the table.
        Ranks add mean_rank_i, mean_rank_j, ``rank_difference`` and the Wilcoxon signed-rank p (adjusted); scores
        give mean_i, mean_j, ``difference`` (mean of the paired differences, Student's t interval), the Wilcoxon
        p and the verdict against ``tolerance`` in the score's units (required)."""
        check_alpha(alpha)
        adjustment(adjust)
        if self.kind == "score" and tolerance is None:
            raise ValueError("a score audit's pairs need tolerance= in the score's units: the smallest difference of "
                             "mean scores that matters")
        t = 0.05 if tolerance is None else float(tolerance)
        if not 0 <= t < np.inf:
            raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
        real = np.flatnonzero(self._real())
        names = np.array(self.groups, dtype=object)[real]
        seen = self.observed.astype(float)
        out: dict[str, Any] = {}
        if self.kind != "score":
            where = {g: k for k, g in enumerate(self.groups)}
            null_of = np.array([where.get(self.null_swaps.get(g, ""), -1) for g in self.groups], dtype=np.intp)
            counts, judged, i, j = paired.binary_pairs(np.nan_to_num(self._binary()), seen, real, null_of, t, alpha,
                                                       adjust)
            out.update(group_i=names[i], group_j=names[j], **counts)
        if self.kind != "decision":
            extra, scored, i, j = paired._mean_pairs(np.nan_to_num(self.values)[:, real], seen[:, real], self.kind, t,
                                                    alpha, adjust)
            judged = scored or judged
            out.update({"group_i": names[i], "group_j": names[j]} | extra)
        out.update(verdict=judged.verdict, favours=np.where(judged.differs, np.where(
            judged.low > 0, names[i], names[j]), ""), level=judged.level)
        if self.kind != "score":
            out.update(difference_ci_low_unadjusted=judged.low_unadjusted,
                       difference_ci_high_unadjusted=judged.high_unadjusted)
        return pd.DataFrame(out)

    def omnibus(self) -> paired.OmnibusResult:
        """One test across the real groups (the null swaps left out), on the complete cases: Cochran's Q
        for decisions (exact when few cases are informative), the first places against chance 1/k for ranks (exact
        multinomial when its outcomes are few; cases with exactly one group ranked first), Friedman's chi-square
        for scores (SciPy's)."""
        real = self._real()
        values = self.values[:, real][self.observed[:, real].all(axis=1)]
        if self.kind == "decision":
            return paired.cochrans_q(values)
        if self.kind == "rank":
            first = values == 1
            one = first.sum(axis=1) == 1
            return paired.multinomial_equal_test(first[one].sum(axis=0))
        from scipy import stats
        r = stats.friedmanchisquare(*values.T)
        return paired.OmnibusResult("Friedman", float(r.statistic), float(r.pvalue), int(real.sum()) - 1,
                                    "chi-square", int(values.shape[0]))


__all__ = ["VARIANT_COLUMNS", "NULL_SUFFIX", "EXAMPLE_SWAPS", "PRONOUNS", "COMMON_WORDS", "PairedAudit", "audit",
           "example_swaps", "flip_column", "null_swap", "run", "variants"]
