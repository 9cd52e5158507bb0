"""The documentation site builds offline with ``mkdocs build --strict``.

Strict mode turns every warning into a failure: a link to a missing page or
heading, a page left out of the nav, an API reference entry that does not
resolve or a docstring mkdocstrings cannot parse.
"""
from __future__ import annotations

import subprocess
import sys

from docblocks import ROOT


def test_mkdocs_build_strict_passes_offline(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_MKDOCS_2_WARNING": "1",
           # any attempt to reach the network fails at once instead of hanging
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "api" / "index.html").exists()
