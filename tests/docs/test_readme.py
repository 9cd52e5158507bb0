"""README.md is the front door: short, its code runs, its links lead somewhere."""
from __future__ import annotations

import re

from docblocks import ROOT, blocks, run_page

README = ROOT / "README.md"
TEXT = README.read_text()
DEMO = 'python3 -m venv .venv && .venv/bin/pip install -e ".[demo]" && .venv/bin/taugrad demo'
TESTS = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest'


def test_the_readme_is_at_most_200_lines():
    assert len(TEXT.splitlines()) <= 200


def test_the_readme_code_runs_and_prints_what_it_shows():
    found = blocks(README)
    assert [b for b in found if b.lang == "python" and b.no_run is None], "README shows no Python that runs"
    failures = run_page(found)
    assert not failures, "\n\n".join(failures)


def test_the_two_commands_are_on_the_front_page_and_ci_runs_the_second():
    assert DEMO in TEXT and TESTS in TEXT
    assert TESTS in (ROOT / ".ci" / "run").read_text()


def test_every_relative_link_leads_to_a_file():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXT)
    local = [link for link in links if "://" not in link]
    missing = [link for link in local if not (ROOT / link).exists()]
    assert local and not missing, f"README links to missing files: {missing}"


def test_no_history_on_the_front_page():
    """A figure is stated with the command that makes it, never as a change over time."""
    words = re.findall(r"\b(went from|before the change|after the change|since stop|earlier|used to|"
                       r"no longer|previous(?:ly)?)\b", TEXT, flags=re.IGNORECASE)
    assert not words, f"README tells history: {words}"


def test_each_exercise_command_is_run_on_the_chapter_page():
    """The README lists the commands; docs/tutorial.md runs each and shows its output."""
    table = TEXT[TEXT.index("## The chapter's six exercises"):TEXT.index("## Headline figures")]
    commands = re.findall(r"^\| \d\. [^|]*\| `(taugrad [^`]*)` \|", table, flags=re.MULTILINE)
    assert len(commands) == 6, commands
    run = [b.code for b in blocks(ROOT / "docs" / "tutorial.md") if b.lang == "bash" and b.no_run is None]
    missing = [c for c in commands if not any(c in code for code in run)]
    assert not missing, f"exercise commands no block of docs/tutorial.md runs: {missing}"


def _slug(heading: str) -> str:
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def test_every_link_to_a_heading_finds_it():
    for page, anchor in re.findall(r"\]\((docs/[^)#\s]+)#([^)\s]+)\)", TEXT):
        headings = re.findall(r"^#+ (.*)$", (ROOT / page).read_text(), flags=re.MULTILINE)
        assert anchor in {_slug(h) for h in headings}, f"{page} has no heading #{anchor}"


def test_at_most_five_headline_figures_each_with_its_command():
    table = TEXT[TEXT.index("## Headline figures"):TEXT.index("## Documentation")]
    rows = [row for row in table.splitlines() if row.startswith("| [")]
    assert 1 <= len(rows) <= 5
    for row in rows:
        assert re.search(r"\| `[^`]*python[^`]*` \|$", row), f"a figure without its command: {row}"


def test_every_extra_of_pyproject_is_named():
    # pyproject's table read with a regex: tomllib needs Python 3.11, taugrad supports 3.10
    table = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras = re.findall(r"^([a-z0-9_-]+) = \[", table, flags=re.MULTILINE)
    assert "demo" in extras and "docs" in extras, extras
    missing = [name for name in extras if name != "test" and f"`{name}`" not in TEXT]
    assert not missing, f"README does not name the extras {missing}"
