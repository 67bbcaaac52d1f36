"""The app's pages, once: script, navigation label (also the page's title), icon, and what the home page says
to lead there. The sidebar, the home page's links and the tests read this list (tests/test_pages.py checks
that it names every script in ``pages/`` and that each page's title is its label)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Page:
    """One page of the app."""

    script: str        #: path from the repository root, as st.page_link and AppTest.switch_page take it
    label: str         #: the navigation label and the title page_setup gives the page
    icon: str          #: a Material icon
    summary: str = ""  #: the home page's link to it ("" for none)


#: The navigation, in order. Streamlit serves ``pages/`` itself (its multipage folder, which logs no warning);
#: the sidebar links are ours so the labels read well ("Home", not the entry file's name).
PAGES: tuple[Page, ...] = (
    Page("app.py", "Home", ":material/home:"),
    Page("pages/1_Upload.py", "Upload", ":material/upload_file:",
         "Load your own data (CSV, Excel, row-level predictions, typed)"),
    Page("pages/2_Bias_Audit.py", "Bias Audit", ":material/balance:",
         "Open the bias audit: OFI and DI heatmaps, verdicts, all metrics, inequality across individuals, "
         "stability and uncertainty, the shareable report"),
    Page("pages/3_Sample_Size_Explorer.py", "Sample-Size Explorer", ":material/scatter_plot:",
         "Can the numbers be trusted at these group sizes? MATCH, exact distributions, holes"),
    Page("pages/4_Smoothing.py", "Smoothing", ":material/blur_linear:",
         "Smooth small groups' scores (Cross-Prior Smoothing) and see the error it removes"),
    Page("pages/5_Synthetic_Data.py", "Synthetic Data", ":material/auto_awesome:",
         "Generate synthetic rows with group quotas (Conditional HydraGAN) and check with OFI whether they "
         "reduce bias"),
    Page("pages/6_Forecasting.py", "Forecasting", ":material/ssid_chart:",
         "Probabilistic forecasts with quantile fans (PTN) against two baselines"),
    Page("pages/7_Compare_and_Mitigate.py", "Compare and Mitigate", ":material/compare_arrows:",
         "Compare candidate models (which is fairer, at what cost) and mitigate by per-group thresholds, "
         "measured on held-out rows"),
    Page("pages/10_Counterfactual_Test.py", "Counterfactual test", ":material/swap_horiz:",
         "Counterfactual test: change only the name in each résumé and count what the model changes (paired "
         "audits of LLM screeners and any model, against a null swap)"),
    Page("pages/8_Saved_Audits.py", "Saved audits", ":material/bookmarks:"),
    Page("pages/9_Methods.py", "Methods", ":material/menu_book:",
         "Methods: the statistics behind every verdict and the papers cited; data formats and limits; the "
         "Python library"),
)

#: The same list as (script, label, icon) triples, the shape the sidebar iterates.
NAVIGATION: tuple[tuple[str, str, str], ...] = tuple((p.script, p.label, p.icon) for p in PAGES)


def page(script: str) -> Page:
    """The registry entry of ``script``: a path as in :data:`PAGES`, or a page's own ``__file__``."""
    root = Path(__file__).resolve().parents[1]
    path = Path(script)
    wanted = path.resolve().relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    for p in PAGES:
        if p.script == wanted:
            return p
    raise KeyError(f"{script!r} is not a page of the app; pages are {', '.join(p.script for p in PAGES)}")
