"""docs/architecture.md and the README's layout describe the tree as it is."""
from __future__ import annotations

import re
from pathlib import Path

import taugrad

PACKAGE_DIR = Path(taugrad.__file__).resolve().parent
ROOT = PACKAGE_DIR.parent.parent
MAP = (ROOT / "docs" / "architecture.md").read_text()


def mentioned_paths(text: str) -> set:
    """Paths like ``tensors/core/node.py`` or ``scalar/`` written in backticks or a table cell."""
    return set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`", text))


def exists(path: str) -> bool:
    """A path as the docs write it: from src/taugrad, from one of its packages, or from the repository root."""
    bases = [PACKAGE_DIR, ROOT, ROOT / "src", PACKAGE_DIR / "tensors" / "ops", PACKAGE_DIR / "tensors" / "core"]
    bases += [d for d in PACKAGE_DIR.iterdir() if d.is_dir()]
    return any((base / path).exists() for base in bases)


def test_every_path_the_map_names_exists():
    missing = sorted(p for p in mentioned_paths(MAP) if not exists(p))
    assert not missing, f"docs/architecture.md names paths that do not exist under src/taugrad: {missing}"


def test_every_top_level_part_of_the_package_is_on_the_map():
    parts = {p.name + "/" for p in PACKAGE_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts |= {p.name for p in PACKAGE_DIR.glob("*.py") if p.name != "__init__.py"}
    named = {p.split("/")[0] + ("/" if "/" in p else "") for p in mentioned_paths(MAP)}
    missing = sorted(parts - named)
    assert not missing, f"parts of src/taugrad missing from docs/architecture.md: {missing}"


def test_every_tensor_module_is_on_the_map():
    modules = {f"tensors/{p.relative_to(PACKAGE_DIR / 'tensors').as_posix()}"
               for folder in ("", "core") for p in (PACKAGE_DIR / "tensors" / folder).glob("*.py")
               if p.name != "__init__.py"}
    missing = sorted(m for m in modules if m not in MAP)
    assert not missing, f"tensor engine modules missing from docs/architecture.md: {missing}"


def test_the_readme_layout_names_existing_paths():
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Project layout"):]
    layout = layout[: layout.index("```", layout.index("```") + 3)]
    words = set(re.findall(r"\b([a-z_]+(?:\.py|/))", layout))
    missing = sorted(w for w in words if not exists(w))
    assert not missing, f"README's layout names paths that do not exist: {missing}"


def test_the_worked_example_is_the_real_code():
    """The ``atan2`` the map shows is the one in the source, line for line."""
    block = MAP[MAP.index("## Adding an op"):]
    code = block[block.index("```python") + len("```python"):block.index("```", block.index("```python") + 9)]
    home = next(p for p in sorted((PACKAGE_DIR / "tensors" / "ops").glob("*.py")) if "def atan2(" in p.read_text())
    assert f"`tensors/ops/{home.name}`" in block, f"the map should say atan2 lives in tensors/ops/{home.name}"
    source = home.read_text()
    missing = [line for line in code.strip().splitlines() if line.strip() and line not in source]
    assert not missing, f"lines of the example that are not in tensors/ops/{home.name}: {missing}"
