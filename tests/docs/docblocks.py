"""Find the code blocks of a Markdown page, run them, and compare what they print.

The convention every page follows (docs/contributing.md says the same for writers):

* A fenced ```python block is run; every ```python block of a page runs in
  order in one namespace, in a fresh temporary directory, in a subprocess
  (so nothing leaks between pages).
* A fenced ```bash block is run with ``bash -e -o pipefail`` in the same
  directory, with this interpreter's ``bin`` folder first on ``PATH`` (so
  ``taugrad`` and ``python`` are the installed ones).  The directory holds
  links to the repository's ``examples/``, ``benchmarks/``, ``scripts/``, ``src/`` and ``tests/``, so a
  page can run ``python examples/newton.py`` as a reader would from the root.  A command shown failing on purpose
  is written ``cmd || echo "exit $?"``.
* A ```text block right after a ```python or ```bash block (only blank lines
  between) is what that block prints: stdout for Python, stdout and stderr
  together for bash.  It must match exactly, except that trailing spaces and
  leading/trailing blank lines are ignored and a line that is only ``...``
  stands for any number of lines (for output that changes from run to run).
* A block that must not run (it installs things, needs a GPU, takes minutes,
  or is an excerpt of the source) has ``<!-- no-run: reason -->`` on the line
  before it.  ``test_doc_blocks.py`` counts them and requires a reason.
* Other fences (```text alone, plain ```, ```dot ...) are not run; the
  languages that look runnable but are not (``py``, ``sh``, ``console``,
  ``shell``, ``pycon``) are refused, so a block cannot escape by its spelling.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = ("python", "bash")
SHARED = ("examples", "benchmarks", "scripts", "src", "tests")
REFUSED = ("py", "python3", "sh", "shell", "console", "pycon", "zsh")
NO_RUN = re.compile(r"^<!--\s*no-run:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```\s*([A-Za-z0-9_+-]*)\s*$")


@dataclasses.dataclass
class Block:
    page: str
    line: int                     # 1-based line of the opening fence
    lang: str
    code: str
    no_run: Optional[str] = None  # the reason, when marked
    output: Optional[str] = None  # the ```text block that follows, if any

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> List[Block]:
    """Every fenced block of the page, with its no-run mark and the output shown after it."""
    lines = path.read_text().splitlines()
    page = str(path.relative_to(ROOT))
    found: List[Block] = []
    i, pending_reason, last_code, blank_since_code = 0, None, None, True
    while i < len(lines):
        line = lines[i]
        opening = FENCE.match(line)
        mark = NO_RUN.match(line.strip())
        if mark:
            pending_reason = mark.group(1) or ""
            i += 1
            continue
        if not opening:
            if line.strip():
                pending_reason = None
                last_code = None
            i += 1
            continue
        lang = opening.group(1).lower()
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{page}:{i + 1}: a fence that is never closed")
        code = "\n".join(lines[i + 1:end]) + "\n"
        if lang == "text" and last_code is not None:
            last_code.output = code
            last_code = None
        else:
            block = Block(page, i + 1, lang, code, pending_reason)
            found.append(block)
            last_code = block if lang in RUNNABLE else None
        pending_reason = None
        i = end + 1
    return found


def output_matches(expected: str, actual: str) -> bool:
    """``actual`` equals ``expected`` up to trailing spaces and blank edges; a line ``...`` matches any lines."""
    def clean(text: str) -> List[str]:
        rows = [row.rstrip() for row in text.splitlines()]
        while rows and not rows[0]:
            rows.pop(0)
        while rows and not rows[-1]:
            rows.pop()
        return rows

    pattern = "".join("(?:[^\n]*\n)*?" if row.strip() == "..." else re.escape(row) + "\n"
                      for row in clean(expected))
    return re.fullmatch(pattern, "".join(row + "\n" for row in clean(actual))) is not None


DRIVER = r'''
import contextlib, io, json, os, subprocess, sys, traceback
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__main__"}
results = []
for block in blocks:
    if block["lang"] == "python":
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(block["code"], block["where"], "exec"), namespace)
            results.append({"ok": True, "output": out.getvalue()})
        except BaseException:
            results.append({"ok": False, "output": out.getvalue(), "error": traceback.format_exc()})
    else:
        run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block["code"]],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        results.append({"ok": run.returncode == 0, "output": run.stdout,
                        "error": f"exit status {run.returncode}"})
    if not results[-1]["ok"]:
        break
json.dump(results, open(sys.argv[2], "w"))
'''


def run_page(page_blocks: List[Block], timeout: float = 600) -> List[str]:
    """Run the page's runnable blocks in order; return one message per failure (empty: all good)."""
    todo = [b for b in page_blocks if b.lang in RUNNABLE and b.no_run is None]
    if not todo:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        spec, result = Path(tmp, ".blocks.json"), Path(tmp, ".results.json")
        spec.write_text(json.dumps([{"lang": b.lang, "code": b.code, "where": b.where} for b in todo]))
        env = dict(os.environ, MPLBACKEND="Agg", COLUMNS="100", NO_COLOR="1", PYTHONHASHSEED="0",
                   PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
        for folder in SHARED:
            Path(tmp, folder).symlink_to(ROOT / folder, target_is_directory=True)
        driver = Path(tmp, ".driver.py")
        driver.write_text(DRIVER)
        run = subprocess.run([sys.executable, str(driver), str(spec), str(result)], cwd=tmp, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if run.returncode != 0 or not result.exists():
            return [f"{todo[0].page}: the block runner failed:\n{run.stdout}"]
        results = json.loads(result.read_text())
    failures = []
    for block, got in zip(todo, results):
        if not got["ok"]:
            failures.append(f"{block.where}: {block.lang} block failed ({got.get('error')})\n"
                            f"--- code\n{block.code}--- output\n{got['output']}")
        elif block.output is not None and not output_matches(block.output, got["output"]):
            failures.append(f"{block.where}: the output shown differs from what the block prints\n"
                            f"--- shown\n{block.output}--- printed\n{got['output']}")
    return failures


def pages() -> List[Path]:
    """README.md and every Markdown page under docs/."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
