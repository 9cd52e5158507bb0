"""Every module path that the programs taugrad is tried with import resolves, holds what they use, and the
names torch has there that taugrad lacks are exactly those listed in docs/torch-names.md."""
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("torch_name_gaps", ROOT / "scripts" / "torch_name_gaps.py")
gaps_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gaps_script)

#: what the programs of docs/running-pytorch.md take from each module path (nanoGPT, minGPT, makemore,
#: pytorch/examples, the PyTorch tutorials)
USED = {
    ".utils.data.dataloader": ["DataLoader", "default_collate"],
    ".utils.data.sampler": ["Sampler", "RandomSampler", "SequentialSampler", "BatchSampler", "SubsetRandomSampler",
                            "WeightedRandomSampler"],
    ".utils.data.dataset": ["Dataset", "TensorDataset", "IterableDataset", "Subset", "random_split"],
    ".utils.data.distributed": ["DistributedSampler"],
    ".utils.tensorboard": ["SummaryWriter"],
    ".nn.parallel": ["DataParallel", "DistributedDataParallel", "data_parallel"],
    ".distributed": ["init_process_group", "destroy_process_group", "is_available", "is_initialized", "get_rank",
                     "get_world_size", "barrier", "all_reduce", "ReduceOp"],
    ".backends.cuda": ["matmul", "is_built", "sdp_kernel", "enable_flash_sdp"],
    ".backends.cudnn": ["benchmark", "deterministic", "allow_tf32", "is_available"],
    ".backends.mps": ["is_available"],
    ".cuda.amp": ["GradScaler", "autocast"],
    ".amp": ["GradScaler", "autocast"],
    ".cuda": ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize"],
    ".autograd": ["Variable", "grad", "Function"],
    ".multiprocessing": ["Process", "Queue", "set_start_method", "get_context", "cpu_count"],
    ".nn.utils.rnn": ["pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "PackedSequence"],
    ".distributions": ["Categorical", "Normal", "Bernoulli"],
    ".linalg": ["cross", "norm", "vector_norm"],
    "": ["cross", "autocast", "save", "load", "manual_seed", "multinomial", "no_grad", "Tensor", "FloatTensor",
         "LongTensor"],
}


@pytest.mark.parametrize("suffix", gaps_script.MODULE_PATHS)
def test_every_module_path_imports_and_holds_what_programs_use(suffix):
    torch_module = importlib.import_module("torch" + suffix)
    ours = importlib.import_module("taugrad" + suffix)
    for name in USED.get(suffix, []):
        assert hasattr(torch_module, name), f"the test's own list is wrong: torch{suffix} has no {name}"
        assert hasattr(ours, name), f"taugrad{suffix} lacks {name}, which the programs use"


def test_the_docs_list_exactly_the_names_torch_has_and_taugrad_lacks():
    expected = gaps_script.render(gaps_script.gaps())
    page = gaps_script.PAGE.read_text()
    assert page == expected, "docs/torch-names.md is out of date: run python scripts/torch_name_gaps.py --write"


def test_the_gap_list_sees_a_missing_name(monkeypatch):
    """Taking a name away from taugrad makes it appear in the list (so the check above can fail)."""
    import taugrad.amp

    monkeypatch.delattr(taugrad.amp, "GradScaler")
    assert "GradScaler" in gaps_script.gaps()["torch.amp"]
