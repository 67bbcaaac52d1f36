"""Plotly figures for the dashboard, the report and notebooks, by subject.

Each function returns a ``go.Figure``, so tests check a figure's data without a browser and
pages only place it. Every public builder escapes user text (group names, column names) with
:func:`fairness_core.common.text.plotly_text` (re-exported here; a caller building a title from a name
uses it too) and carries plotly's own template, so a figure is the same in the app, in a download
and in the report.

=====================  ====================================================================
``plots.audit``        pairwise heatmaps, benefits, OFI against DI, the forest plot
``plots.sample_size``  distributions over M(n), holes, MATCH, class and group imbalance
``plots.smoothing``    Cross-Prior Smoothing
``plots.inequality``   generalized entropy index, Virny stability
``plots.training``     Conditional HydraGAN and PTN
``plots.compare``      candidate models' trade-off, paired differences, the mitigation frontier
``plots.decisions``    decisions alone: each group's selection rate against four fifths of the highest
``plots.multiclass``   ordered and unordered categories: k × k heatmaps per group, impact ratios at every cut
``plots.amounts``      amounts: each group's benefit distribution with its mean and interval
``plots.counterfactual``  paired counterfactual tests: the discordance matrix, paired differences, per-group rates
``plots.trend``        a model over time: each pair's OFI across saved periods
``plots.forecast``     PTN's search: cheap fitness against end-of-search fitness
``plots.forecasts``    forecasts by group: mean benefit, band coverage, PIT histograms, one group's fan over time
``plots.scores``       a score by group: reliability diagram, ROC curves, the threshold sweep
=====================  ====================================================================

Every public name stays importable from ``fairness_core.plots`` itself.
"""

from ._base import *  # noqa: F403
from ._base import escape_user_text, plotly_text  # noqa: F401
from .amounts import *  # noqa: F403
from .audit import *  # noqa: F403
from .compare import *  # noqa: F403
from .counterfactual import *  # noqa: F403
from .decisions import *  # noqa: F403
from .forecast import *  # noqa: F403
from .forecasts import *  # noqa: F403
from .inequality import *  # noqa: F403
from .multiclass import *  # noqa: F403
from .sample_size import *  # noqa: F403
from .scores import *  # noqa: F403
from .smoothing import *  # noqa: F403
from .training import *  # noqa: F403
from .trend import *  # noqa: F403
