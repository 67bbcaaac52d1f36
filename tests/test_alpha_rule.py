"""One rule for α (issue 51, part 4): every public callable of docs/api.md's modules that takes ``alpha`` refuses
α ≥ 0.5 (a confidence level given where the error rate belongs), α ≤ 0, NaN, bools and non-numbers with the one
sentence of :data:`fairness_core.vocabulary.ALPHA_RULE`; the command line and the store say the same.

The callables are found, not listed: docs/api.md names the modules, ``inspect.signature`` finds the ``alpha``
parameters (functions, and the public methods of the classes each module defines). Each is called with its
other arguments built from small valid objects (:data:`ARGS`, :data:`INSTANCES`); only those in
:data:`NOT_AN_ERROR_RATE` (an ``alpha`` that means something else) and :data:`RECORDS` (a result that records the
α it was computed at) are left out, each with its reason, and a test pins what they are.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

import fairness_core
from fairness_core import ConfusionMatrix as CM
from fairness_core._names import SHORT_NAMES, real_name
from fairness_core.statistics import paired
from fairness_core.vocabulary import ALPHA_RULE, Reference, alpha_refusal, check_alpha, check_alphas

ROOT = Path(__file__).resolve().parents[1]
API = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
#: The audit objects at the package root (fairness_core/__init__.py's floor of them).
ROOT_MODULES = ("audit", "compare", "results", "trend", "regulatory", "continuous", "multiclass", "counterfactual",
                "forecasts")

#: ``alpha`` parameters that are not an error rate: the generalized entropy index's α (0 is the mean log
#: deviation, 1 Theil's index, 2 half the squared coefficient of variation; docs/methods.md).
NOT_AN_ERROR_RATE = {
    "fairness_core.statistics.entropy": "the generalized entropy index's own α, any real number",
    "fairness_core.presentation.plots.inequality.gei_landscape": "the generalized entropy index's α, drawn",
}
#: The floors that draw and word results (plots, the report, the readings): they are handed an α with the table
#: a computation made at it, and are the pages' and the report's; the computations below them are checked here.
DRAWN_OR_WORDED = ("fairness_core.presentation", "fairness_core.wording")
#: The one check itself, and the sentence it builds.
THE_CHECK = "fairness_core.common.vocabulary"
#: Results and records that hold the α they were computed at; the computation that made them checked it.
RECORDS = {
    "OFIArrays.__init__", "DIArrays.__init__",      # inference's typed results
    "Trend.__init__",                               # series_changes' result
    "SavedAudit.__init__",                          # a row read back from the store (AuditStore.save checked it)
    "ScoreAnalysis.__init__",                       # score_analysis' result
}

A = CM(300, 20, 90, 590)
B = CM(250, 120, 40, 590)
C = CM(20, 5, 3, 30)


def _audit() -> Any:
    from fairness_core.audit import Audit

    return Audit({"a": A, "b": B, "c": C}, positive_is="benefit")


def _rows() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.clip(y * 0.3 + rng.uniform(size=300) * 0.7, 0, 1)
    return {"y": y, "s": s, "pred": (s >= 0.5).astype(int), "g": np.array(["a", "b", "c"] * 100)}


def _continuous() -> Any:
    from fairness_core.continuous import ContinuousAudit

    r = _rows()
    return ContinuousAudit.from_predictions(1000 + 100 * r["s"], 1000 + 90 * r["s"] + r["y"], r["g"],
                                            positive_is="benefit")


def _multiclass() -> Any:
    from fairness_core.multiclass import MulticlassAudit

    r = _rows()
    tiers = np.array(["Low", "Medium", "High"])
    return MulticlassAudit.from_predictions(tiers[(r["s"] * 2.99).astype(int)], tiers[(r["y"] * 2)], r["g"],
                                            order=["Low", "Medium", "High"], favourable="High")


def _paired() -> Any:
    from fairness_core import counterfactual

    rng = np.random.default_rng(1)
    cases = np.repeat(np.arange(60), 2)
    df = pd.DataFrame({"case_id": cases, "group": ["x", "y"] * 60, "decision": rng.integers(0, 2, 120)})
    return counterfactual.audit(df, positive_is="benefit")


def _forecasts() -> Any:
    from fairness_core import forecasts

    rng = np.random.default_rng(2)
    y = rng.normal(size=120)
    q = y[:, None] + rng.normal(size=(120, 1)) + np.array([-1.0, 0.0, 1.0])
    return forecasts.audit(y, q, [0.2, 0.5, 0.8], np.repeat(["a", "b"], 60), baselines=y + 1.0,
                           positive_is="benefit")


def _comparison() -> Any:
    from fairness_core.compare import Comparison

    r = _rows()
    return Comparison.from_predictions(r["y"], {"m1": r["pred"], "m2": (r["s"] >= 0.6).astype(int)}, r["g"],
                                       positive_is="benefit")


def _store() -> Any:
    from fairness_core.store import AuditStore

    return AuditStore("sqlite://")


def _saved() -> Any:
    store = _store()
    return store.load(store.save(_audit(), name="Q1"))


#: An instance of each class whose methods take ``alpha``.
INSTANCES: dict[str, Callable[[], Any]] = {
    "Audit": _audit, "Comparison": _comparison, "ContinuousAudit": _continuous, "MulticlassAudit": _multiclass,
    "PairedAudit": _paired, "AuditStore": _store, "SavedAudit": _saved, "ForecastAudit": _forecasts,
}

_R = _rows()
#: Every other argument, by name: small valid values.
ARGS: dict[str, Callable[[], Any]] = {
    "cm_i": lambda: A, "cm_j": lambda: B,
    "fp_i": lambda: [90], "fn_i": lambda: [20], "n_i": lambda: [1000], "fp_j": lambda: [40], "fn_j": lambda: [120],
    "n_j": lambda: [1000], "sel_i": lambda: [390], "sel_j": lambda: [290], "band": lambda: (0.8, 1.25),
    "only_first": lambda: [10], "only_second": lambda: [2], "n": lambda: [100], "se": lambda: [0.01],
    "before_i": lambda: [[30, 5, 5, 60]], "before_j": lambda: [[30, 5, 9, 60]], "after_i": lambda: [[30, 5, 5, 60]],
    "after_j": lambda: [[30, 5, 9, 60]],
    "history": lambda: [("Q1", _audit()), ("Q2", _audit())],
    "y_true": lambda: _R["y"], "y_pred": lambda: _R["pred"], "s": lambda: _R["s"], "groups": lambda: _R["g"],
    "threshold": lambda: 0.5, "successes": lambda: [3, 5], "trials": lambda: [10, 10], "x": lambda: np.array([3, 5]),
    "audit": _audit, "audit_or_rows": _audit, "name": lambda: "Q1", "tolerance": lambda: 0.05,
    "names": lambda: ["a", "b"], "cells": lambda: np.array([A.as_array(), B.as_array()], dtype=float),
    "p_values": lambda: [0.01, 0.04], "adjust": lambda: "holm", "a": lambda: "m1", "b": lambda: "m2",
    "reference": lambda: Reference.REST, "method": lambda: "exact", "reference_is": lambda: "sample",
    "pairs": lambda: paired.PairedDifferences([10, 3], [2, 4], [100, 100]),
    "selected": lambda: np.array([[1, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1]] * 10, dtype=float),
    "observed": lambda: np.ones((40, 3)), "g0": lambda: 0, "g1": lambda: 1, "i": lambda: np.array([0, 2]),
    "j": lambda: np.array([2, 1]), "only_i": lambda: [10, 3], "only_j": lambda: [2, 4], "both": lambda: [30, 5],
    "neither": lambda: [58, 88],
}
#: Where one callable reads an argument's name otherwise: the MATCH table's names are metrics.
OVERRIDES: dict[str, dict[str, Callable[[], Any]]] = {"audit_table": {"names": lambda: ["PPR", "B"]},
                                                      "MulticlassAudit.class_rates": {"cls": lambda: "Medium"}}


def _documented_modules() -> list[str]:
    """The modules docs/api.md names: the short names and root modules it mentions, and dotted paths it gives."""
    found = set()
    for name in (*SHORT_NAMES, *ROOT_MODULES):
        if re.search(rf"fairness_core\.{name}\b|import [^\n]*\b{name}\b|`{name}\.|\b{name}\.[a-z_]+\(", API):
            found.add(real_name(f"fairness_core.{name}"))
    for dotted in re.findall(r"fairness_core((?:\.[a-z_]+)+)", API):
        parts = dotted.strip(".").split(".")
        for k in range(len(parts), 0, -1):        # the longest prefix that is a module
            name = real_name("fairness_core." + ".".join(parts[:k]))
            try:
                __import__(name)
            except ImportError:
                continue
            found.add(name)
            break
    return sorted(found)


def _submodules(name: str) -> list[str]:
    """``name`` and, for a package, its public submodules (inference's typed intervals live in inference.intervals)."""
    import pkgutil

    module = sys.modules[name] if name in sys.modules else __import__(name, fromlist=["_"])
    names = [name]
    for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
        if not info.name.startswith("_"):
            names += _submodules(f"{name}.{info.name}")
    return names


def _alpha_callables() -> list[tuple[str, str, Any]]:
    """(module, qualified name, callable) for every public callable with an ``alpha`` parameter."""
    out: dict[tuple[str, str], Any] = {}
    for top in _documented_modules():
        for name in _submodules(top):
            module = __import__(name, fromlist=["_"])
            for attr in getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]:
                obj = getattr(module, attr, None)
                if not str(getattr(obj, "__module__", "")).startswith("fairness_core"):
                    continue
                members = ([(f"{obj.__qualname__}.{m}", f) for m, f in vars(obj).items()
                            if (not m.startswith("_") or m == "__init__") and callable(f)]
                           if inspect.isclass(obj) else [(obj.__qualname__, obj)] if callable(obj) else [])
                if inspect.isclass(obj):
                    members += [(f"{obj.__qualname__}.{m}", getattr(obj, m)) for m, f in vars(obj).items()
                                if isinstance(f, classmethod)]
                for qualname, f in members:
                    try:
                        params = inspect.signature(f).parameters
                    except (TypeError, ValueError):
                        continue
                    if "alpha" in params:
                        out.setdefault((f.__module__ if hasattr(f, "__module__") else name, qualname), f)
    return [(m, q, f) for (m, q), f in sorted(out.items())]


def _left_out(module: str, qualname: str) -> str | None:
    if module.startswith(DRAWN_OR_WORDED):
        return "draws or words an α checked by the computation that made its table"
    if module == THE_CHECK:
        return "the check itself"
    for where, why in NOT_AN_ERROR_RATE.items():
        if module == where or f"{module}.{qualname}" == where:
            return why
    return "a record of the α it was computed at" if qualname in RECORDS else None


CALLABLES = _alpha_callables()
CHECKED = [(m, q, f) for m, q, f in CALLABLES if _left_out(m, q) is None]


def _call(qualname: str, f: Any, alpha: Any) -> Any:
    """``f`` called with ``alpha`` and its other required arguments from :data:`ARGS` (on an instance from
    :data:`INSTANCES` for a method)."""
    owner = qualname.split(".")[0] if "." in qualname else None
    params = list(inspect.signature(f).parameters.values())
    if qualname.endswith(".__init__"):          # a class: called itself
        f = getattr(sys.modules[f.__module__], owner)
        params = params[1:]
    elif owner is not None and params and params[0].name == "self":
        f = getattr(INSTANCES[owner](), qualname.split(".")[-1])
        params = params[1:]
    kwargs: dict[str, Any] = {"alpha": alpha}
    for p in params:
        if p.name == "alpha" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        kwargs[p.name] = OVERRIDES.get(qualname, {}).get(p.name, ARGS.get(p.name))()
    return f(**kwargs)


def test_the_callables_are_found_where_docs_api_md_says():
    found = {q for _, q, _ in CALLABLES}
    assert {"Audit.verdicts", "Audit.difference", "Audit.ratio", "Audit.match_table", "ofi_test", "di_interval",
            "ofi_arrays", "di_arrays", "di_within", "minimum_detectable_ofi", "paired_interval", "Comparison.summary",
            "Comparison.paired", "Comparison.performance", "ofi_changes", "series_changes", "target_measures", "auc",
            "calibration", "ll144_summary", "ContinuousAudit.verdicts", "MulticlassAudit.verdicts",
            "MulticlassAudit.impact_ratios", "PairedAudit.pairs", "PairedAudit.by_group", "AuditStore.save",
            "SavedAudit.verdicts", "VerdictSettings.__init__"} <= found, sorted(found)
    assert len(CHECKED) >= 40


@pytest.mark.parametrize("module, qualname, f", CHECKED, ids=[f"{m}.{q}" for m, q, _ in CHECKED])
def test_every_entry_point_refuses_a_confidence_level_with_the_one_sentence(module, qualname, f):
    with pytest.raises(ValueError) as caught:
        _call(qualname, f, 0.95)
    assert str(caught.value).endswith(f"{ALPHA_RULE} (got 0.95)") or f"{ALPHA_RULE} (got 0.95)" in str(caught.value)


@pytest.mark.parametrize("module, qualname, f", CHECKED, ids=[f"{m}.{q}" for m, q, _ in CHECKED])
def test_every_entry_point_takes_an_error_rate(module, qualname, f):
    """The same calls with alpha=0.05 succeed: the refusal above is α's, not a badly built argument."""
    _call(qualname, f, 0.05)


@pytest.mark.parametrize("bad", [0.5, 0.9, 1.0, 0.0, -0.05, math.nan, math.inf, True, "0.05", None, np.float64(0.95)])
def test_the_one_check_refuses_every_bad_alpha_with_the_same_sentence(bad):
    with pytest.raises(ValueError) as caught:
        check_alpha(bad)
    assert str(caught.value).startswith(ALPHA_RULE + " (got ")
    with pytest.raises(ValueError) as arrays:
        check_alphas([0.05, bad])
    assert str(arrays.value).startswith(ALPHA_RULE + " (got ")


def test_the_one_check_keeps_every_error_rate():
    for good in (1e-12, 0.001, 0.05, 0.1, 0.4999, np.float64(0.01), np.float32(0.25)):
        assert check_alpha(good) == pytest.approx(float(good))
    assert check_alpha(np.float64(0.05)).__class__ is float
    np.testing.assert_array_equal(check_alphas([0.05, 0.01]), [0.05, 0.01])


def test_the_left_out_alphas_are_not_error_rates():
    from fairness_core import entropy

    left = {(m, q) for m, q, _ in CALLABLES if _left_out(m, q) is not None}
    assert {q for m, q in left if m.endswith("entropy")} >= {"generalized_entropy_index", "decompose"}
    assert all(m.endswith("entropy") or q in RECORDS or m.startswith((*DRAWN_OR_WORDED, THE_CHECK))
               for m, q in left), sorted(left)
    # GE(α) is defined for α ≥ 0.5 and beyond: α = 2 is half the squared coefficient of variation (Shorrocks).
    b = np.array([1.0, 2.0, 3.0, 6.0])
    assert entropy.index_from_benefits(b, alpha=2.0) == pytest.approx(b.var() / b.mean() ** 2 / 2)


def test_the_command_line_and_the_store_say_the_same(tmp_path, capsys):
    from fairness_core import cli

    data = tmp_path / "cms.csv"
    data.write_text("group,TP,FN,FP,TN\nA,1,0,0,5\nB,7,0,1,10\n")
    assert cli.main(["audit", str(data), "--group", "group", "--alpha", "0.95"]) == cli.EXIT_BAD_INPUT
    assert f"{ALPHA_RULE} (got 0.95)" in capsys.readouterr().err
    store = _store()
    with pytest.raises(ValueError, match=re.escape(f"{ALPHA_RULE} (got 0.95)")):
        store.save(_audit(), name="Q1", alpha=0.95)
    assert store.list().empty


def test_the_package_has_no_deprecation_left():
    """No spelling is kept for a release that never had users: no deprecation warning site in fairness_core."""
    for path in sorted((ROOT / "fairness_core").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "DeprecationWarning" not in text and "deprecat" not in text.lower(), path
    assert not hasattr(fairness_core, "_compat")


def test_the_figures_and_sentences_that_compute_at_alpha_refuse_a_confidence_level_too():
    """The drawing and wording floors are left out of the search above (they are handed tables computed at α), but
    those that compute an interval or a significance at α themselves check it with the same sentence."""
    from fairness_core import plots
    from fairness_core.presentation import report_kinds
    from fairness_core.presentation.plots import counterfactual as cf_plots
    from fairness_core.wording import kinds, paired as paired_words, reading

    audit, paired_audit = _audit(), _paired()
    calls = {
        "plots.clopper_pearson": lambda a: plots.decisions.clopper_pearson(np.array([3]), np.array([10]), a),
        "plots.selection_rates": lambda a: plots.selection_rates(audit, a),
        "plots.match_overview": lambda a: plots.match_overview(audit.match_table(), a),
        "plots.paired_rates": lambda a: cf_plots.paired_rates(paired_audit.by_group(), a),
        "report_kinds.error_size_gaps": lambda a: report_kinds.error_size_gaps(_continuous(), a),
        "wording.kinds.mae_gaps": lambda a: kinds.mae_gaps(_continuous(), a),
        "wording.paired.baseline_sentence": lambda a: paired_words.baseline_sentence(paired_audit.pairs(), None, a),
        "reading.paired_differences": lambda a: reading.paired_differences(_comparison().paired("m1", "m2"), a,
                                                                           "holm"),
    }
    for name, call in calls.items():
        call(0.05)   # an error rate is taken: the refusal below is the check's, not a badly built argument's
        with pytest.raises(ValueError) as refused:
            call(0.95)
        assert str(refused.value) == alpha_refusal(0.95), name
