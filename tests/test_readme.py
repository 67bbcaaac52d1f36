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
