"""The README's library example runs as written."""

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_library_example_runs():
    text = README.read_text(encoding="utf-8")
    block = text.split("## The library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    assert round(namespace["bias"].compare("OFI", namespace["i"], namespace["j"]), 4) == -0.0556
    assert set(namespace["stability"].group_table(namespace["rows"]).index) == {"Black", "Hispanic", "White", "all"}


ROOT = README.parent
#: What users read: the app, its pages and helpers, the library, the models, the docs, the README.
PRODUCT = [ROOT / "README.md", ROOT / "app.py", *sorted((ROOT / "docs").glob("*.md")),
           *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py")),
           *sorted((ROOT / "fairness_core").rglob("*.py")), *sorted((ROOT / "models").glob("*.py")),
           ROOT / "assets" / "PROVENANCE.md"]


def test_the_product_points_nowhere_outside_the_repository():
    import re

    outside = re.compile(r"\.\./shared|SCIENCE\.md|API\.md|seeds?/|\bseed[ -]?0\d\d\b|\b00[0-4] (?:§|Fig|Table|Thm|eq|ch\.)")
    hits = [f"{p.relative_to(ROOT)}:{k}: {line.strip()[:80]}" for p in PRODUCT
            for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if outside.search(line)]
    assert hits == []


def test_every_docs_link_in_the_readme_and_app_exists():
    import re

    for path in (README, ROOT / "app.py", ROOT / "pages" / "1_Upload.py"):
        for target in re.findall(r"\b((?:docs|assets)/[\w./-]+\.(?:md|png))", path.read_text(encoding="utf-8")):
            assert (ROOT / target).exists(), f"{path.name} points at missing {target}"
