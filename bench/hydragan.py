"""Benchmark: Conditional HydraGAN training steps/s, sampling rows/s and realism on CPU.

Training: generator steps per second on the Adult rows (condition race × sex, 3 critic
steps with gradient penalty each), with torch on 1 thread (what the app uses in its server)
and on all threads. Sampling: rows per second for 10^6 rows at the model's batch size (8,192),
against the same generator sampled in training-sized batches of 256 (the baseline, run in
the same process). Goal (issue 6): >= 10^5 rows/s sampling.

Realism (issue 18), on COMPAS and Adult at the Synthetic Data page's default budget (condition: the
first protected attribute, label target at the pooled real shares, 1,500 steps, one thread):
the classifier two-sample test AUC of the synthetic rows against the 30 % held-out real rows,
beside another sample of real rows and rows with independent columns per group × label; and, if
the ``ctgan`` package is installed (``pip install ctgan``; not a dependency of the app), CTGAN
trained on the same rows for the same wall time, judged the same way. Goal: AUC <= 0.58 and below
CTGAN's. Prints tables and a JSON last line.

    python bench/hydragan.py [--steps 200] [--rows 1000000] [--no-realism]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from fairness_core import datasets, realism  # noqa: E402
from models import experiment as E  # noqa: E402
from models import hydragan as H  # noqa: E402

REALISM_GOAL = 0.58


def ctgan_auc(train_df: pd.DataFrame, test_df: pd.DataFrame, label: str, groups: list[str],
              seconds: float) -> dict[str, float] | None:
    """CTGAN for ``seconds`` of training on the same rows (epochs from a timed short fit), sampled
    and judged like HydraGAN: at the held-out rows' mix of groups × label, numeric columns clipped to
    the training range and whole-number columns rounded as HydraGAN's are. None without ctgan."""
    try:
        from ctgan import CTGAN
    except ImportError:
        return None
    discrete = [c for c in train_df.columns if not pd.api.types.is_numeric_dtype(train_df[c])] + [label]
    CTGAN(epochs=1).fit(train_df, discrete)  # warm up
    start = time.perf_counter()
    CTGAN(epochs=2).fit(train_df, discrete)
    two = time.perf_counter() - start
    start = time.perf_counter()
    CTGAN(epochs=6).fit(train_df, discrete)
    per_epoch = (time.perf_counter() - start - two) / 4
    epochs = max(1, int((seconds - (two - 2 * per_epoch)) / per_epoch))
    start = time.perf_counter()
    model = CTGAN(epochs=epochs)
    model.fit(train_df, discrete)
    took = time.perf_counter() - start
    pool = model.sample(6 * len(test_df))
    pool[label] = pool[label].astype(test_df[label].dtype)
    for col in train_df.columns:  # HydraGAN's own output rule: clipped to the training range, integers rounded
        if col not in discrete and pd.api.types.is_numeric_dtype(train_df[col]):
            v = pool[col].astype(float).clip(train_df[col].min(), train_df[col].max())
            whole = bool((train_df[col] == train_df[col].round()).all())
            pool[col] = v.round().astype(train_df[col].dtype) if whole else v
    synthetic, kept = E.matched_from_pool(pool, test_df, groups, label)
    result = realism.c2st(kept, synthetic)
    return {"auc": result.auc, "low": result.low, "high": result.high, "epochs": epochs, "train_s": took}


def realism_run(name: str, steps: int = 1500) -> dict[str, object]:
    data, label, protected = datasets.demo_table(name)
    groups = protected[:1]
    target = data[label].astype(str).value_counts(normalize=True).sort_index().to_dict()
    cfg = H.HydraConfig(condition_columns=groups, diversity_column=label, diversity_target=target, steps=steps,
                        quality_every=0)
    train_idx, test_idx = E.split(data, groups, 0.3, cfg.seed)
    train_df, test_df = data.iloc[train_idx].reset_index(drop=True), data.iloc[test_idx].reset_index(drop=True)
    start = time.perf_counter()
    model = H.train(cfg, train_df)
    seconds = time.perf_counter() - start
    table, marginals, correlations = E.assess_realism(model, train_df, test_df, cfg.seed)
    ct = ctgan_auc(train_df, test_df, label, groups, seconds)
    print(f"\n{name}: {len(train_df):,} training rows, condition {groups[0]}, {steps:,} steps in {seconds:.0f} s")
    print(table.drop(columns="reading").round(3).to_string())
    print(correlations.round(3).to_string())
    print(marginals[["kind", "distance", "its share, real", "its share, synthetic"]].round(3).to_string())
    if ct is not None:
        print(f"CTGAN, {ct['epochs']} epochs in {ct['train_s']:.0f} s: AUC {ct['auc']:.3f} "
              f"({ct['low']:.3f}-{ct['high']:.3f})")
    else:
        print("CTGAN: the ctgan package is not installed; skipped")
    auc = float(table["AUC"].iloc[0])
    return {"train_s": round(seconds, 1), "auc": round(auc, 4), "auc_low": round(float(table["95% low"].iloc[0]), 4),
            "auc_real_reference": round(float(table["AUC"].iloc[1]), 4),
            "auc_independent_columns": round(float(table["AUC"].iloc[2]), 4),
            "ctgan_auc": None if ct is None else round(ct["auc"], 4), "ctgan_epochs": None if ct is None else ct["epochs"],
            "goal_met": auc <= REALISM_GOAL and (ct is None or auc < ct["auc"])}


def steps_per_second(data, steps: int, threads: int) -> float:  # type: ignore[no-untyped-def]
    torch.set_num_threads(threads)
    cfg = H.HydraConfig(condition_columns=["race", "sex"], diversity_column="income_over_50k", steps=steps,
                        quality_every=0)
    start = time.perf_counter()
    H.train(cfg, data)
    return steps / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--no-realism", action="store_true", help="skip the realism runs on COMPAS and Adult")
    args = ap.parse_args()
    data, _, _ = datasets.demo_table("adult")
    cores = torch.get_num_threads()
    one = steps_per_second(data, args.steps, 1)
    many = steps_per_second(data, args.steps, cores)
    torch.set_num_threads(cores)
    model = H.train(H.HydraConfig(condition_columns=["race", "sex"], diversity_column="income_over_50k", steps=20,
                                  quality_every=0), data)
    model.sample(1000)  # warm up
    start = time.perf_counter()
    rows = model.sample(args.rows, seed=1)
    fast = args.rows / (time.perf_counter() - start)
    base_rows = args.rows
    start = time.perf_counter()
    model.sample(base_rows, seed=1, batch=256)
    slow = base_rows / (time.perf_counter() - start)
    print(f"Adult rows: {len(data):,}, {len(model.schema.conditions)} conditions, data dim {model.schema.data_dim}")
    print(f"training   {one:8.1f} steps/s on 1 thread, {many:8.1f} on {cores} threads")
    print(f"sampling   {fast:12,.0f} rows/s (batch 8,192)   baseline {slow:12,.0f} rows/s (batch 256)   "
          f"ratio {fast / slow:.1f}x   goal >= 100,000: {'met' if fast >= 1e5 else 'NOT met'}")
    print(f"cuda: {'available' if torch.cuda.is_available() else 'not available on this machine (CPU only)'}")
    assert len(rows) == args.rows
    realism_results = {}
    if not args.no_realism:
        torch.set_num_threads(1)  # as the page trains
        realism_results = {name: realism_run(name) for name in ("compas", "adult")}
        torch.set_num_threads(cores)
    print(json.dumps({"bench": "hydragan", "steps_per_s_1_thread": round(one, 2), f"steps_per_s_{cores}_threads":
                      round(many, 2), "sample_rows_per_s": round(fast), "baseline_rows_per_s": round(slow),
                      "ratio": round(fast / slow, 2), "goal_met": fast >= 1e5, "realism": realism_results,
                      "realism_goal": REALISM_GOAL}))


if __name__ == "__main__":
    main()
