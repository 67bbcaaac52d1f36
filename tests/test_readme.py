"""The README and docs: their examples run as written, every link they hold leads somewhere."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
GUIDE = README.parent / "docs" / "guide.md"


def _python_block(path: Path, heading: str) -> str:
    return path.read_text(encoding="utf-8").split(heading, 1)[1].split("```python", 1)[1].split("```", 1)[0]


def test_readme_library_example_runs():
    namespace: dict = {}
    exec(compile(_python_block(README, "## The library"), "README.md", "exec"), namespace)  # noqa: S102 - our docs
    assert round(namespace["bias"].compare("OFI", namespace["i"], namespace["j"]), 4) == -0.0556
    assert namespace["sample_size"].holes("MCC", 10) == 40


def test_guide_library_tour_runs():
    namespace: dict = {}
    exec(compile(_python_block(GUIDE, "## The library, a tour"), "docs/guide.md", "exec"), namespace)  # noqa: S102
    assert round(namespace["bias"].compare("OFI", namespace["i"], namespace["j"]), 4) == -0.0556
    assert set(namespace["stability"].group_table(namespace["rows"]).index) == {"Black", "Hispanic", "White", "all"}


def test_readme_is_short_and_points_at_the_docs():
    """A newcomer's page: what it is, the two commands, the pages, the library in a few lines, the docs."""
    text = README.read_text(encoding="utf-8")
    assert len(text) < 8_000
    assert "```bash\npip install -r requirements.txt && streamlit run app.py\n```" in text
    assert "```bash\npython -m pytest -q\n```" in text
    for doc in sorted((README.parent / "docs").glob("*.md")):
        assert f"(docs/{doc.name})" in text, f"README does not link docs/{doc.name}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def test_every_link_in_the_readme_and_docs_leads_somewhere():
    """Relative links point at files that exist (and at headings that exist, for #anchors); none leaves the
    repository."""
    root = README.parent
    broken = []
    for page in [README, *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                broken.append(f"{page.name}: {target} leaves the repository")
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), flags=re.M)
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_link_check_catches_a_broken_link(tmp_path):
    text = "see [the guide](docs/guide.md) and [gone](docs/gone.md)"
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert targets == ["docs/guide.md", "docs/gone.md"]
    assert [t for t in targets if not (README.parent / t).exists()] == ["docs/gone.md"]
    assert _slug("Synthetic data: Conditional HydraGAN on the demo data") == \
        "synthetic-data-conditional-hydragan-on-the-demo-data"


ROOT = README.parent
#: What users read: the app, its pages and helpers, the library, the models, the docs, the README.
PRODUCT = [ROOT / "README.md", ROOT / "app.py", *sorted((ROOT / "docs").glob("*.md")),
           *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py")),
           *sorted((ROOT / "fairness_core").rglob("*.py")), *sorted((ROOT / "models").rglob("*.py")),
           ROOT / "assets" / "PROVENANCE.md"]


def test_the_product_points_nowhere_outside_the_repository():
    import re

    outside = re.compile(r"\.\./shared|SCIENCE\.md|API\.md|seeds?/|\bseed[ -]?0\d\d\b|\b00[0-4] (?:§|Fig|Table|Thm|eq|ch\.)")
    hits = [f"{p.relative_to(ROOT)}:{k}: {line.strip()[:80]}" for p in PRODUCT
            for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if outside.search(line)]
    assert hits == []


def test_every_docs_link_in_the_readme_and_app_exists():
    import re

    for path in (README, ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "docs").glob("*.md"))):
        for target in re.findall(r"\b((?:docs|assets)/[\w./-]+\.(?:md|png))", path.read_text(encoding="utf-8")):
            assert (ROOT / target).exists(), f"{path.name} points at missing {target}"
