"""pytorch/examples word_language_model and gcn, in scripts written here in their idioms: under ``taugrad run``
they print PyTorch's numbers from the same weights (float64), through saving and reloading the whole model,
the ONNX export (checked with ONNX Runtime against PyTorch's output) and sparse graph products."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).parent / "scripts"
TAUGRAD = [sys.executable, "-m", "taugrad.cli"]
WORDS = "the cat sat on a mat and dog ran to red house".split()


def _run(cmd):
    return subprocess.run([str(c) for c in cmd], cwd=SCRIPTS, capture_output=True, text=True, timeout=300)


def corpus(folder: Path) -> Path:
    """train.txt, valid.txt and test.txt of a few lines of words, as word_language_model reads them."""
    rng = np.random.default_rng(1)
    folder.mkdir()
    for name, lines in (("train", 8), ("valid", 3), ("test", 3)):
        text = "\n".join(" ".join(rng.choice(WORDS, 6)) for _ in range(lines)) + "\n"
        (folder / f"{name}.txt").write_text(text)
    return folder


def cora(folder: Path, n: int = 24, n_words: int = 6, n_cites: int = 40) -> Path:
    """cora.content (paper id, 0/1 word flags, class name; one paper without words) and cora.cites."""
    rng = np.random.default_rng(3)
    folder.mkdir()
    ids = rng.choice(np.arange(100, 1000), n, replace=False)
    labels = rng.integers(0, 3, n)
    names = ["Theory", "Neural_Networks", "Case_Based"]
    rows = []
    for i in range(n):
        words = (rng.random(n_words) < 0.4).astype(int) * (i != 5)
        rows.append("\t".join([str(ids[i]), *map(str, words), names[labels[i]]]))
    (folder / "cora.content").write_text("\n".join(rows) + "\n")
    pairs = [rng.choice(n, 2, replace=False) for _ in range(n_cites)]
    (folder / "cora.cites").write_text("".join(f"{ids[a]}\t{ids[b]}\n" for a, b in pairs))
    return folder


@pytest.mark.parametrize("model, flags", [("LSTM", []), ("GRU", ["--tied"]), ("Transformer", [])])
def test_word_language_model_trains_saves_reloads_as_torch(tmp_path, model, flags):
    data = corpus(tmp_path / "corpus")
    common = ["word_lm_tiny.py", "--data", data, "--model", model, *flags]
    with_torch = _run([sys.executable, *common, "--save", tmp_path / "torch.pt"])
    with_taugrad = _run(TAUGRAD + ["run", *common, "--save", tmp_path / "taugrad.pt"])
    assert with_torch.returncode == 0, with_torch.stderr
    assert with_taugrad.returncode == 0, with_taugrad.stderr
    assert with_taugrad.stdout == with_torch.stdout
    assert with_taugrad.stdout.count("batch ") == 4 and "reloaded" in with_taugrad.stdout
    assert ("tied True" in with_taugrad.stdout) == bool(flags)


@pytest.mark.parametrize("model", ["LSTM", "GRU"])
def test_the_reloaded_word_language_model_exports_to_onnx_with_torchs_output(tmp_path, model):
    ort = pytest.importorskip("onnxruntime")
    data = corpus(tmp_path / "corpus")
    common = ["word_lm_tiny.py", "--data", data, "--model", model]
    with_torch = _run([sys.executable, *common, "--save", tmp_path / "torch.pt", "--dump", tmp_path / "torch.npy"])
    with_taugrad = _run(TAUGRAD + ["run", *common, "--save", tmp_path / "taugrad.pt",
                                   "--onnx-export", tmp_path / "model.onnx"])
    assert with_torch.returncode == 0 and with_taugrad.returncode == 0, with_taugrad.stderr
    assert with_taugrad.stdout.endswith("exported to ONNX\n")
    session = ort.InferenceSession(str(tmp_path / "model.onnx"))
    feeds = {i.name: np.zeros(i.shape, dtype=np.int64 if "int64" in i.type else np.float32)
             for i in session.get_inputs()}
    log_probs = session.run(None, feeds)[0]
    np.testing.assert_allclose(log_probs, np.load(tmp_path / "torch.npy"), rtol=1e-5, atol=1e-6)


def test_gcn_on_a_cora_format_graph_prints_torchs_numbers(tmp_path):
    data = cora(tmp_path / "cora")
    with_torch = _run([sys.executable, "gcn_tiny.py", "--data", data])
    with_taugrad = _run(TAUGRAD + ["run", "gcn_tiny.py", "--data", data])
    assert with_torch.returncode == 0, with_torch.stderr
    assert with_taugrad.returncode == 0, with_taugrad.stderr
    assert with_taugrad.stdout == with_torch.stdout
    assert with_taugrad.stdout.count("epoch ") == 5 and "adjacency nnz" in with_taugrad.stdout
