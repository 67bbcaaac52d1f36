"""Probabilistic Parallel Time Network (Briscoe 2024, ch. 5): a DARTS hypermodel searched by a genetic
algorithm, trained on the ordered CRPS, judged against two baselines by skill scores.

==================  ===========================================================================
``ptn.loss``        the ordered CRPS (eqs. 5.5–5.9)
``ptn.space``       Table 5.1 and the genetic operators of Algorithm 2
``ptn.layers``      the mixed operations' candidates, the hypermodel :class:`PTN`, :func:`derive`,
                    the TiDE-style baseline
``ptn.fit``         first-order DARTS and plain AdamW loops, prediction, the quantile fan
``ptn.search``      the genetic search with successive halving, its low-fidelity fitness, and the
                    incumbent (the baseline's point) that a chosen agent must beat beyond noise
``ptn.final``       the derived architecture retrained and the baseline trained, per seed
``ptn.scoring``     the normal baseline, skill scores, the verdict, test forecasts to browse (per group)
``ptn.groups``      the test forecasts audited by site or regime against both baselines (issue 55)
``ptn.progress``    the typed progress records and the run's one progress counter
``ptn.config``      :class:`PTNConfig`, the run's settings, and its presets ``DEMO``, ``GPU`` and ``PAPER``
``ptn.budget``      budgets in steps: the device's step costs timed once, the seconds turned into steps
``ptn.run``         :class:`PTNResult` and :func:`train`, the whole run
==================  ===========================================================================

Every public name stays importable from ``models.ptn`` itself.
"""

from .fit import (FAN_LEVELS, MIN_LR, STABLE_BETA2, WARM_LR, build, device_for, error_scale, fan, inherit,
                  predict, subsample, tensors, train_darts, train_plain)
from .layers import (COST_ORDER, MIXED_OPS, Attention, BiGRU, CausalConv, Collapse2D, CollapseDense, CollapseMLP,
                     DenseEncoderDecoder, DenseResidual, GaussianNoise, MixedOp, ParallelTime, PTN, TiDE, derive)
from .loss import OMEGA, crps, crps_numpy, loss, ordering_penalty
from .progress import (AgentFitness, BaselineEpoch, Counter, DataStage, Done, FinalEpoch, SearchEpoch,
                       agent_frame, latest_architecture, latest_fan, loss_frame, probe)
from .config import DEMO, GPU, PAPER, PTNConfig
from .budget import LEAVE_STEPS, StepBudget, StepCosts, budgeted, measure, plan, search_cost, search_shape, step_costs
from .run import (BASE_MB, BYTES_PER_INPUT, BYTES_PER_QUANTILE, LORENZ_WINDOWS, WEATHER_WINDOWS, PTNResult,
                  chosen_words, estimate, memory_mb, start_words, train)
from .scoring import (SEED_TABLE_5_2, examples, examples_of, normal_quantiles, skill_table, verdict,
                      verdict_text)
from .groups import BASELINE_NAMES, GroupView, group_view, lead_rows
from .search import (BASELINE_KEEP, BASELINE_POINT, BENCH_FIDELITY, CLEARLY_BETTER_ALPHA, SEARCH_ARCH_STEPS,
                     SEARCH_WEIGHT_STEPS, Agent, SearchOutcome, batch_means, choose, clearly_better,
                     fidelity_correlation, fidelity_words, genetic_search)
from .space import DENSE_WIDTHS, HEADS, ODD15, Param, crossover, mutate, mutation_rate, random_hparams, space
