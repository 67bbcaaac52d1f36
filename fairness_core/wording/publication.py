"""The sentences of the Local Law 144 summary an employer publishes: which data the audit used (the user's
declaration, never assumed), what the rate is, why a category is left out of the impact ratios, and the unknowns.

The rules (6 RCNY § 5-301, § 5-303): a bias audit uses **historical data** of the employer's own use of the tool;
it may use **test data** only where historical data are insufficient, and then the summary explains why historical
data were not used and how the test data were made. A category under 2 % of the data may be excluded from the
impact ratios, with the auditor's justification and the category's count and rate in the summary. Individuals of
an unknown category are counted.

Names and values are returned as given: escape them for wherever the text goes.
"""

from __future__ import annotations

import math

#: The declarations of the data an audit used: the user's choice (never a default).
HISTORICAL, TEST = "historical", "test"
DATA_USED = {HISTORICAL: "historical data: the employer's own use of the tool",
             TEST: "test data (historical data were insufficient)"}
#: What an undeclared choice (or an unset field) reads.
NOT_DECLARED, NOT_GIVEN = "not declared", "not given"


def data_used_text(kind: str | None, reason: str = "") -> str:
    """Which data the audit used, from the user's declaration: "not declared" when there is none.

    >>> data_used_text(None), data_used_text("historical")
    ('not declared', "historical data: the employer's own use of the tool")
    >>> data_used_text("test", "the tool is new; résumés from a 2024 pilot, anonymized")
    'test data (historical data were insufficient): the tool is new; résumés from a 2024 pilot, anonymized'
    >>> data_used_text("test")
    'test data (historical data were insufficient): why, and how the test data were made, not given'
    """
    if kind is None or kind == "":
        return NOT_DECLARED
    if kind not in DATA_USED:
        raise ValueError(f"data used must be one of {', '.join(DATA_USED)} or None (not declared), got {kind!r}")
    if kind == HISTORICAL:
        return DATA_USED[HISTORICAL]
    reason = reason.strip()
    return f"{DATA_USED[TEST]}: " + (reason or "why, and how the test data were made, not given")


def rate_definition(rate: str, median: float | None = None, score: str | None = None) -> str:
    """What the summary's rate is, in one sentence (``rate``: "selection rate" or "scoring rate")."""
    if rate == "scoring rate":
        of = f" “{score}”" if score else ""
        at = f" ({median:.6g})" if median is not None and math.isfinite(median) else ""
        return (f"Scoring rate: the share of a category's applicants whose score{of} is above the median score of "
                f"all applicants{at}. Impact ratio: a category's scoring rate divided by the highest scoring rate "
                "among the categories in the ratios.")
    return ("Selection rate: the share of a category's applicants the tool selected (moved forward). Impact ratio: "
            "a category's selection rate divided by the highest selection rate among the categories in the ratios.")


def exclusion_text(share: float, excluded: list[tuple[str, str, int, float]], shown: int = 8) -> str:
    """The justification of the 2 % rule and the categories it leaves out, each with its count and share of the
    applicants (the first ``shown``; the tables mark every one): ``excluded`` holds (categories of, category, n,
    share of the data). A share is printed with the decimals that keep it under the threshold (1.97 %, not 2.0 %).

    >>> text = exclusion_text(0.02, [("race", "Pacific Islander", 36, 0.012), ("sex × race", "F & Two", 59, 0.01967)])
    >>> text.split("Excluded: ")[1]
    'Pacific Islander (race): 36 applicants, 1.2 %; F & Two (sex × race): 59 applicants, 1.97 %.'
    """
    rule = (f"Categories with fewer than {share * 100:g} % of the applicants are too small for a stable ratio and are "
            "left out of the impact ratios, as the rule allows; they are listed with their count and rate.")
    if not excluded:
        return rule + " No category was excluded."
    items = "; ".join(f"{cat} ({of}): {n:,} applicant{'s' if n != 1 else ''}, {_percent(s, share)}"
                      for of, cat, n, s in excluded[:shown])
    more = len(excluded) - shown
    return f"{rule} Excluded: {items}" + (f"; and {more:,} more, marked “excluded” in the tables." if more > 0 else ".")


def _percent(x: float, below: float) -> str:
    """``x`` as a percentage with one decimal, or more where one would print the threshold ``below`` it lies under."""
    for places in range(1, 6):
        shown = f"{x * 100:.{places}f}"
        if not (x < below <= float(shown) / 100):
            return f"{shown} %"
    return f"{x * 100:.6f} %"


def unknown_text(unknowns: list[tuple[str, int]]) -> str:
    """How many applicants of an unknown category each attribute has (``unknowns``: (categories of, n))."""
    if not unknowns:
        return "No applicant's category is unknown."
    return ("Applicants of an unknown category (blank, declined or not recorded) are counted but are not in the "
            "impact ratios: " + "; ".join(f"{n:,} for {of}" for of, n in unknowns) + ".")


__all__ = ["HISTORICAL", "TEST", "DATA_USED", "NOT_DECLARED", "NOT_GIVEN", "data_used_text", "rate_definition",
           "exclusion_text", "unknown_text"]
