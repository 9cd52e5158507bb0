"""examples/chapter.ipynb executes top to bottom in a Jupyter kernel running this interpreter."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "chapter.ipynb"
KERNEL = "taugrad-test-python"


def _kernel_for_this_interpreter(folder: Path) -> None:
    """A kernel spec whose argv is sys.executable, found first through JUPYTER_PATH,
    so the notebook runs in the test's environment (the .venv) whatever the
    machine's own kernel specs say."""
    spec_dir = folder / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "taugrad tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_chapter_notebook_executes(tmp_path, monkeypatch):
    _kernel_for_this_interpreter(tmp_path / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    client = NotebookClient(nb, timeout=120, kernel_name=KERNEL, resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError if any cell fails (the cells assert their results)

    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert _text(code_cells[-1]).strip() == sys.executable
    everything = "\n".join(_text(c) for c in code_cells)
    assert "L = 10" in everything
    assert "a.grad += b.data * g = 3 * 1 -> 3" in everything
    assert "a lost gradient" in everything  # Break
    assert "t1's rule ran with t1.grad = 0" in everything  # Predict
    assert "40 of 40 expressions agree with finite differences" in everything  # Investigate
    assert "step 39" in everything  # the MLP trained to the end
    assert "TODO left in __pow__: using examples/solutions/exercise5_value.py until you fill it in" in everything
    assert "same at every step" in everything  # exercise 6 with the learner's engine, beside taugrad's
    assert "digraph {" in everything or any("image/svg+xml" in o.get("data", {}) for c in code_cells
                                           for o in c.get("outputs", []))  # the graph cell displayed


def test_notebook_is_committed_without_errors_or_stale_kernel():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error"


def test_exercise_5_is_a_skeleton_and_its_solution_kept_apart_passes_the_grader():
    from taugrad.learn.check import check

    nb = nbformat.read(NOTEBOOK, as_version=4)
    (skeleton,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("class MiniValue")]
    assert skeleton.source.count("# TODO") == 5 and "NotImplementedError" in skeleton.source
    assert "other.data * out.grad" not in skeleton.source.replace("self.grad += other.data * out.grad, and", "")
    solution = ROOT / "examples" / "solutions" / "exercise5_value.py"
    for seed in (0, 1):
        report = check(solution, seed=seed)
        assert report.ok and report.ops == ["add", "mul", "pow", "relu"], str(report)


def test_notebook_shows_no_stale_outputs():
    """Every output a reader sees comes from running it (the test above does): none is stored."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_a_notebook_extra_installs_jupyter():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.split(">")[0].split("=")[0] in ("jupyterlab", "notebook") for req in extras["notebook"])
