"""Text for people: numbers for many values at once, and user text made inert where it is shown.

Numbers (NumPy string ufuncs, no Python loop per value) are used where tables or figures need
hundreds of thousands of formatted numbers: the verdict explanations of every pair and the
heatmap hover texts.

User text (group names, column names, sources) reaches two places that would otherwise read it
as instructions: Plotly figures, whose labels are HTML-like markup (:func:`plotly_text`), and
terminals, which obey control characters and escape sequences (:func:`terminal_safe`).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

STR = np.dtypes.StringDType()


def fixed(x: np.ndarray, decimals: int = 3, signed: bool = False) -> np.ndarray:
    """``x`` with ``decimals`` places as a StringDType array ("-" for negatives, "+" when ``signed``).

    Non-finite values format as 0; callers replace them.

    >>> fixed(np.array([1.23456, -0.5, 0.0004]), 3, signed=True).tolist()
    ['+1.235', '-0.500', '+0.000']
    """
    x = np.asarray(x, dtype=float)
    scale = 10 ** decimals
    r = np.round(np.abs(np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)) * scale).astype(np.int64)
    whole = (r // scale).astype(STR)
    out = whole if decimals == 0 else whole + "." + np.strings.zfill((r % scale).astype(STR), decimals)
    negative = (x < 0) & (r > 0)
    sign = np.where(negative, "-", "+" if signed else "").astype(STR)
    return sign + out


def p_values(p: np.ndarray) -> np.ndarray:
    """"p = 0.012", "p < 0.001" or "p undefined" (NaN), vectorized.

    >>> p_values(np.array([0.0123, 1e-9, np.nan])).tolist()
    ['p = 0.012', 'p < 0.001', 'p undefined']
    """
    p = np.asarray(p, dtype=float)
    out = "p = " + fixed(np.minimum(p, 1.0))
    out[p < 0.001] = "p < 0.001"
    out[np.isnan(p)] = "p undefined"
    return out


def bound(x: float, null: float | tuple[float, ...], decimals: int = 3, signed: bool = False) -> str:
    """An interval end with ``decimals`` places, or more where fewer would print the ``null`` value it differs
    from (a bound of 0.9996 beside a test of DI = 1 prints "0.9996", not "1.00"); ``null`` may be several values
    the bound is judged against (an impact ratio's 0.8, 1 and 1.25).

    >>> bound(0.99962, 1.0, 2), bound(1.0, 1.0, 2), bound(0.0004, 0.0, 3, signed=True), bound(0.5, 0.0, 3)
    ('0.9996', '1.00', '+0.0004', '0.500')
    >>> bound(0.7996, (0.8, 1.0, 1.25), 2), bound(1.002, (0.8, 1.0, 1.25), 2)
    ('0.7996', '1.002')
    """
    if not np.isfinite(x):
        return "∞" if x > 0 else ("−∞" if x < 0 else "undefined")
    nulls = null if isinstance(null, tuple) else (null,)
    places = decimals
    while places < 10 and any(x != n and round(x, places) == round(n, places) for n in nulls):
        places += 1
    return f"{x:+.{places}f}" if signed else f"{x:.{places}f}"


#: The values an impact ratio's interval is judged against: the four-fifths band [0.8, 1.25] and 1.
RATIO_NULLS = (0.8, 1.0, 1.25)


def ratio_text(d: float, lo: float, hi: float) -> str:
    """A ratio with its interval, "0.62 [0.46, 0.83]", the bounds as :func:`bound` prints them against the values
    an impact ratio is judged by (:data:`RATIO_NULLS`: four fifths, 1 and five fourths), so that every text prints
    one bound alike; "undefined (0/0)" where the interval is; an unbounded upper end as ∞.

    >>> ratio_text(0.6217, 0.4612, 0.8345), ratio_text(float("nan"), float("nan"), float("nan"))
    ('0.62 [0.46, 0.83]', 'undefined (0/0)')
    """
    if np.isnan(lo):
        return "undefined (0/0)"
    top = "∞" if np.isinf(hi) else bound(hi, RATIO_NULLS, 2)
    return f"{'undefined' if np.isnan(d) else f'{d:.2f}'} [{bound(lo, RATIO_NULLS, 2)}, {top}]"


def counts(x: np.ndarray) -> np.ndarray:
    """Whole numbers below 10^12 with thousands separators, vectorized ("1,234,567"); NaN and inf as 0.

    >>> counts(np.array([0, 7, 1234, 1007005, 999999999999])).tolist()
    ['0', '7', '1,234', '1,007,005', '999,999,999,999']
    """
    v = np.nan_to_num(np.asarray(x, dtype=float), nan=0.0, posinf=0.0, neginf=0.0).astype(np.int64)
    return _thousands(v)


def _thousands(v: np.ndarray) -> np.ndarray:
    parts = [(v // 10 ** (3 * k)) % 1000 for k in range(4)]          # units, thousands, millions, billions
    out = parts[0].astype(STR)
    for k in range(1, 4):
        above = v >= 10 ** (3 * k)
        if not above.any():
            break
        padded = np.strings.zfill(out, 3 * k + (k - 1))                # "7" → "007" (and "1,234" keeps its comma)
        out = np.where(above, parts[k].astype(STR) + "," + padded, out)
    return out.astype(STR)


# --- user text made inert ---------------------------------------------------------------------

#: What Plotly would read as markup in a label, and the character reference it shows as itself:
#: ``<`` ``>`` ``&`` (tags such as ``<a href>`` and ``<span style>``, and entities), ``%`` (``%{…}``
#: templates in hover texts and titles) and ``$`` (LaTeX where MathJax is loaded). Plotly decodes
#: numeric character references in every label it draws (titles, ticks, legends, hover, annotations).
_PLOTLY_SPECIAL = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "%": "&#37;", "$": "&#36;"}
_PLOTLY_PATTERN = re.compile("[&<>%$]")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, singular for one: "1 pair", "3 pairs", "1 pair of groups" (the noun's first word is the
    one made plural).

    >>> counted(1, "pair of groups"), counted(28, "pair of groups"), counted(2, "case", "cases")
    ('1 pair of groups', '28 pairs of groups', '2 cases')
    """
    if n == 1:
        return f"1 {noun}"
    if plural is None:
        head, sep, rest = noun.partition(" ")
        plural = f"{head}s{sep}{rest}"
    return f"{n:,} {plural}"


def plotly_text(value: object) -> str:
    """User text for any Plotly label (title, axis title, tick, legend, hover text or template,
    annotation): shown exactly as typed, never as markup, a link, styled text or a template field.

    Every string built from user data that reaches a figure goes through this one function; the
    figure's own markup (``<br>``, ``<sup>``) is written around the escaped text.

    >>> plotly_text('<a href="https://x.example">50%{y}</a> & $x$')
    '&lt;a href="https://x.example"&gt;50&#37;{y}&lt;/a&gt; &amp; &#36;x&#36;'
    """
    return _PLOTLY_PATTERN.sub(lambda m: _PLOTLY_SPECIAL[m.group()], str(value))


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if unicodedata.category(char) == "Cc":  # C0, DEL and C1: ESC becomes \x1b, NEL \x85
        return f"\\x{code:02x}"
    return f"⟨U+{code:04X}⟩"              # format characters (bidi controls, zero-width), line separators


def terminal_safe(text: object) -> str:
    r"""``text`` as one line a terminal shows literally: every control character written out
    (``\x1b``, ``\n``, ``\t``), every other character :func:`hidden_characters` finds (direction
    marks and overrides, zero-width and line separators) as ``⟨U+202E⟩``. No escape sequence
    reaches the terminal (a name cannot clear the screen or colour the output) and no name starts
    a new line (it cannot forge a CI annotation such as ``::error``).

    >>> terminal_safe("A\x1b[2J and B\n::error file=x::forged \u202eevil")
    'A\\x1b[2J and B\\n::error file=x::forged ⟨U+202E⟩evil'
    """
    return _HIDDEN.sub(lambda m: _visible(m.group()), str(text))


#: Characters that print as nothing or reorder what follows, so that two different names print the same
#: ("Black" and "Black" + U+200E) or a name reverses the rest of a sentence (U+202E): controls (C0, DEL, C1),
#: format characters (direction marks, embeddings, overrides and isolates, invisible operators), line and
#: paragraph separators, the rest of Unicode's default-ignorable code points (combining grapheme joiner,
#: Hangul fillers, variation selectors, tags), and letters and symbols drawn as a blank (the Braille blank
#: U+2800, the Khitan filler U+16FE4, the null notehead U+1D159). Spaces are not here: :func:`fold_spaces`
#: makes every kind of space a plain one.
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                     "\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
                     "\U00016fe4\U0001bca0-\U0001bca3\U0001d159\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def hidden_characters(name: str) -> str | None:
    """``name`` with every hidden character written out (``Black⟨U+200E⟩``), or None when it has none.

    >>> hidden_characters("Black\u200e"), hidden_characters("Black")
    ('Black⟨U+200E⟩', None)
    """
    if not _HIDDEN.search(name):
        return None
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", name)


#: Unicode's space separators (category Zs) but the plain space: no-break U+00A0, Ogham U+1680, the quads and
#: fixed-width spaces U+2000–U+200A (thin U+2009, hair U+200A), narrow no-break U+202F, mathematical U+205F and
#: ideographic U+3000. Each prints as a gap, like a plain space (tests/test_hostile_names.py checks the list
#: against ``unicodedata``).
SPACE_SEPARATORS = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
#: What :func:`fold_spaces` replaces: a run of two or more spaces of any kind, or one space that is not plain.
_SPACE_FOLD = re.compile(f"[ {SPACE_SEPARATORS}]{{2,}}|[{SPACE_SEPARATORS}]")


def fold_spaces(name: str) -> str:
    """``name`` with every space separator a plain space and every run of spaces one space: what HTML and
    markdown print, so that "Black Male" written with a no-break, thin or ideographic space, or with two
    spaces, is the name it looks like.

    >>> fold_spaces("Black\u00a0Male"), fold_spaces("Black \u3000 Male"), fold_spaces("Black  Male")
    ('Black Male', 'Black Male', 'Black Male')
    """
    return _SPACE_FOLD.sub(" ", name)


def folded_spaces(name: str) -> str | None:
    """``name`` with every space :func:`fold_spaces` changes written out (``Black⟨U+00A0⟩Male``), or None when
    it changes none. A run shows each of its spaces, a plain one as ⟨U+0020⟩.

    >>> folded_spaces("Black\u2009Male"), folded_spaces("Black  Male"), folded_spaces("Black Male")
    ('Black⟨U+2009⟩Male', 'Black⟨U+0020⟩⟨U+0020⟩Male', None)
    """
    if not _SPACE_FOLD.search(name):
        return None
    return _SPACE_FOLD.sub(lambda m: "".join(f"⟨U+{ord(c):04X}⟩" for c in m.group()), name)


# --- user text made a file name -----------------------------------------------------------------

#: Longest stem (the name before its suffix) :func:`safe_file_name` gives, in characters and in UTF-8 bytes: most
#: file systems take 255 bytes, which 80 four-byte letters with a suffix would pass.
MAX_FILE_STEM = 80
MAX_FILE_STEM_BYTES = 200
#: Device names Windows opens whatever the extension ("CON.csv" is the console), compared in upper case.
_WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", *(f"{d}{k}" for d in ("COM", "LPT") for k in range(10))})
_SEPARATORS = re.compile(r"\s")            # tabs, newlines, line separators and spaces: a gap between words
_NOT_WORD = re.compile(r"[^\w.-]")         # what no file name keeps but a combining mark (its letter's accent)
_RUNS = re.compile(r"_{2,}")
_DOTS = re.compile(r"\.{2,}")
_SUFFIX = re.compile(r"(\.[A-Za-z0-9]{1,10})*")


def _slug(name: str) -> str:
    s = unicodedata.normalize("NFKC", name)       # fullwidth "．．／" is "../", and a letter with its accent one letter
    s = _HIDDEN.sub("", _SEPARATORS.sub("_", s))
    s = _NOT_WORD.sub(lambda m: m.group() if unicodedata.category(m.group())[0] == "M" else "_", s)
    return _DOTS.sub(".", _RUNS.sub("_", s)).lstrip("._-").rstrip("._")


def _cut(stem: str, room: int) -> str:
    """``stem`` at most ``room`` characters (and ``room`` x :data:`MAX_FILE_STEM_BYTES` / :data:`MAX_FILE_STEM`
    UTF-8 bytes), cut before a letter whose accents would otherwise be cut from it."""
    cut = min(len(stem), room)
    byte_room = room * MAX_FILE_STEM_BYTES // MAX_FILE_STEM
    while cut > 0 and (len(stem[:cut].encode("utf-8")) > byte_room
                       or (cut < len(stem) and unicodedata.category(stem[cut])[0] == "M")):
        cut -= 1
    return stem[:cut].rstrip("._")


def safe_file_name(name: str, suffix: str = "", taken: set[str] | None = None) -> str:
    """A file or archive entry name built from ``name`` (text that may hold a user's group, attribute, score or
    audit name) and the program's own ``suffix`` (``".csv"``): safe on every system that unpacks or saves it.

    Letters and digits of any script, ``_``, ``-`` and ``.`` are kept, fullwidth and compatibility forms read as
    their plain letters (NFKC); hidden characters (controls, direction marks and overrides, zero-width characters:
    :func:`hidden_characters`) are dropped; every other run of characters (``/``, ``\\``, ``:``, ``<>"|?*``,
    spaces, newlines, markup) is one ``_``. No ``..``, no leading ``.`` ``_`` ``-`` (a hidden file, an option), no
    Windows device name (``CON``, ``NUL``, ``COM1``… get a ``_``), at most :data:`MAX_FILE_STEM` characters and
    :data:`MAX_FILE_STEM_BYTES` bytes before the suffix; "unnamed" when nothing is left.

    ``taken`` holds the names already given in the same archive or set of downloads, case-folded (two names that
    differ only in case are one file on Windows and macOS): a name already there gets ``-2``, ``-3``… before its
    suffix, and the name returned is added. The slug loses what it replaces, so whoever writes the file keeps
    ``name`` inside it.

    >>> safe_file_name("verdicts by Race/Ethnicity alone", ".csv")
    'verdicts_by_Race_Ethnicity_alone.csv'
    >>> taken = set()
    >>> [safe_file_name(n, ".csv", taken) for n in ("a/b", "a\\\\b", "A b", "../..", "CON", "\\u202e\\u200b")]
    ['a_b.csv', 'a_b-2.csv', 'A_b-3.csv', 'unnamed.csv', 'CON_.csv', 'unnamed-2.csv']
    """
    if not _SUFFIX.fullmatch(suffix):
        raise ValueError(f"suffix {suffix!r} is not an extension such as '.csv'")
    stem = _cut(_slug(str(name)), MAX_FILE_STEM) or "unnamed"
    first, _, rest = stem.partition(".")
    if first.upper() in _WINDOWS_DEVICES:
        rest = _cut(rest, MAX_FILE_STEM - len(first) - 2)
        stem = first + "_" + ("." + rest if rest else "")
    if taken is None:
        return stem + suffix
    out, k = stem + suffix, 1
    while out.casefold() in taken:
        k += 1
        out = (_cut(stem, MAX_FILE_STEM - len(f"-{k}")) or "unnamed") + f"-{k}" + suffix
    taken.add(out.casefold())
    return out


_CODE = re.compile(r"^[A-Za-z]{0,3}[-_]?\d+(\.\d+)?$")
_GENERIC = {"yes", "no", "true", "false", "y", "n", "t", "f", "other", "unknown", "none", "na", "n/a", "missing"}


def says_nothing_alone(value: str) -> bool:
    """Whether an attribute's value says nothing alone ("A92", "1", "yes"): then its name carries the attribute.

    >>> says_nothing_alone("A92"), says_nothing_alone("Female")
    (True, False)
    """
    v = value.strip()
    return len(v) <= 1 or bool(_CODE.match(v)) or v.lower() in _GENERIC
