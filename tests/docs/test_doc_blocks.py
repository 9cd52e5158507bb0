"""Every code block of every docs page runs, and every output shown is what it prints.

The convention (which block runs, how shown output is written, how a block is
marked not to run) is in ``docblocks.py`` and docs/contributing.md.  README.md's
blocks are run by ``test_readme.py``; its no-run marks are counted here with the rest.
"""
from __future__ import annotations

import re

import pytest

from docblocks import REFUSED, ROOT, RUNNABLE, blocks, output_matches, pages, run_page

DOC_PAGES = [p for p in pages() if p.name != "README.md" or p.parent != ROOT]
#: Blocks that may be marked no-run across README and docs: each installs
#: something, needs a GPU or takes minutes, or is an excerpt of the source.
MAX_NO_RUN = 14


@pytest.mark.parametrize("page", DOC_PAGES, ids=[str(p.relative_to(ROOT)) for p in DOC_PAGES])
def test_the_blocks_of_the_page_run_and_print_what_it_shows(page):
    failures = run_page(blocks(page))
    assert not failures, "\n\n".join(failures)


def test_no_block_escapes_by_its_language():
    wrong = [f"{b.where}: ```{b.lang}" for page in pages() for b in blocks(page) if b.lang in REFUSED]
    assert not wrong, f"write ```python or ```bash so the block runs (or mark it no-run): {wrong}"


def test_no_run_blocks_are_few_and_each_says_why():
    marked = [b for page in pages() for b in blocks(page) if b.no_run is not None and b.lang in RUNNABLE]
    unexplained = [b.where for b in marked if not b.no_run]
    assert not unexplained, f"no-run marks without a reason: {unexplained}"
    assert len(marked) <= MAX_NO_RUN, "\n".join(f"{b.where}: {b.no_run}" for b in marked)


def test_every_page_has_a_block_that_runs_or_none_at_all():
    """A page whose blocks are all marked no-run shows code nobody checks."""
    for page in pages():
        code = [b for b in blocks(page) if b.lang in RUNNABLE]
        if code:
            assert any(b.no_run is None for b in code), f"{page}: every code block is marked no-run"


@pytest.mark.parametrize("expected, actual, same", [
    ("a\nb\n", "a\nb\n", True),
    ("a\nb\n", "a\nc\n", False),
    ("a  \n\nb\n\n", "\na\n\nb", True),
    ("a\n...\nd\n", "a\nb\nc\nd\n", True),
    ("a\n...\nd\n", "a\nd\n", True),
    ("a\n...\nd\n", "a\nb\n", False),
    ("x = 1.0\n", "x = 1.00\n", False),
])
def test_the_output_comparison(expected, actual, same):
    assert output_matches(expected, actual) is same


def test_the_extractor_pairs_outputs_and_marks(tmp_path, monkeypatch):
    import docblocks

    monkeypatch.setattr(docblocks, "ROOT", tmp_path)
    page = tmp_path / "p.md"
    page.write_text("# t\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\n<!-- no-run: needs a GPU -->\n"
                    "```bash\nnvidia-smi\n```\nprose\n\n```text\nnot an output\n```\n")
    found = blocks(page)
    assert [(b.lang, b.no_run, b.output) for b in found] == [
        ("python", None, "1\n"), ("bash", "needs a GPU", None), ("text", None, None)]
    assert run_page(found) == []
    page.write_text("```python\nprint(2)\n```\n```text\n1\n```\n")
    assert "differs" in run_page(blocks(page))[0]


def test_no_page_tells_history():
    """A figure is stated with the command that makes it, never as a change over time."""
    pattern = re.compile(r"\b(went from|before the change|after the change|since stop|used to be|no longer|"
                         r"previously|at commit|clean clone of|was added|were added|fixed in)\b", re.IGNORECASE)
    found = [f"{page.relative_to(ROOT)}: {m.group(0)!r}" for page in pages()
             for m in pattern.finditer(page.read_text())]
    assert not found, found
