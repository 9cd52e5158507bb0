"""The PyTorch ``.pth`` reader refuses every malformed file with one line, and never reads outside a storage.

Files are built from a real ``torch.save`` archive: its members are kept and
``data.pkl`` is replaced by a pickle written here in torch's own format
(``_rebuild_tensor_v2(storage, offset, size, stride, ...)`` with a
persistent id per storage), with the offsets, sizes, strides, dtypes and
opcodes a corrupt or hostile file could hold; then the storage and the zip
itself are truncated, and the pickle is mutated byte by byte (a fixed
corpus, so each run tries the same files).  Each file either loads with the
values torch would give or raises :class:`taugrad.CheckpointError` with a
one-line message.
"""
import collections
import io
import pickle
import zipfile

import numpy as np
import pytest
import torch

import taugrad
from taugrad import CheckpointError

VALUES = np.arange(12, dtype=np.float32) * 1.5


def _real_archive() -> dict:
    """The members of ``torch.save({"w": tensor of 12 float32})``: name -> bytes."""
    buffer = io.BytesIO()
    torch.save({"w": torch.tensor(VALUES)}, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


MEMBERS = _real_archive()
PICKLE = next(name for name in MEMBERS if name.endswith("data.pkl"))
PREFIX = PICKLE[: -len("data.pkl")]
STORAGE = next(name for name in MEMBERS if name.startswith(PREFIX + "data/"))


class Storage:
    """A storage reference, pickled as torch pickles one: a persistent id."""

    def __init__(self, storage_type=torch.FloatStorage, key="0", numel=12):
        self.storage_type, self.key, self.numel = storage_type, key, numel


class Rebuilt:
    """A tensor, pickled as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, {})``."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce__(self):
        return torch._utils._rebuild_tensor_v2, self.args


class TorchPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", obj.storage_type, obj.key, "cpu", obj.numel)
        return None


def torch_pickle(obj) -> bytes:
    buffer = io.BytesIO()
    TorchPickler(buffer, protocol=2).dump(obj)
    return buffer.getvalue()


def tensor_pickle(offset, size, stride, storage=None) -> bytes:
    return torch_pickle({"w": Rebuilt(storage or Storage(), offset, size, stride)})


def archive(pickled=None, storage_bytes=None, drop=()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as out:
        for name, data in MEMBERS.items():
            if name in drop:
                continue
            if name == PICKLE and pickled is not None:
                data = pickled
            if name == STORAGE and storage_bytes is not None:
                data = storage_bytes
            out.writestr(name, data)
    return buffer.getvalue()


def load(data: bytes, tmp_path, name="f.pth"):
    path = tmp_path / name
    path.write_bytes(data)
    return taugrad.load(path)


def assert_refused(data: bytes, tmp_path):
    with pytest.raises(CheckpointError) as info:
        load(data, tmp_path)
    assert "\n" not in str(info.value) and str(info.value)


def test_the_crafted_pickle_is_torchs_format(tmp_path):
    """The writer above makes files torch itself loads: a test of the test."""
    data = archive(tensor_pickle(2, (2, 3), (3, 1)))
    theirs = torch.load(io.BytesIO(data))["w"]
    np.testing.assert_array_equal(load(data, tmp_path)["w"].numpy(), theirs.numpy())
    np.testing.assert_array_equal(theirs.numpy(), VALUES[2:8].reshape(2, 3))


@pytest.mark.parametrize("offset, size, stride", [
    (0, (12,), (1,)), (6, (6,), (1,)), (11, (1,), (1,)), (0, (3, 4), (4, 1)), (0, (4, 3), (1, 4)),
    (1, (2, 3), (5, 1)), (0, (2, 6), (0, 1)), (3, (), ()), (12, (0,), (1,)), (1, (6,), (2,)),
])
def test_tensors_that_end_inside_their_storage_load_as_torch_loads_them(offset, size, stride, tmp_path):
    data = archive(tensor_pickle(offset, size, stride))
    theirs = torch.load(io.BytesIO(data))["w"]
    ours = load(data, tmp_path)["w"]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("offset, size, stride", [
    (7, (6,), (1,)),        # offset + size = 13: one element past the 12
    (12, (1,), (1,)),       # starts at the end
    (0, (13,), (1,)),
    (0, (3, 5), (4, 1)),    # last element at 2*4 + 4 = 12
    (0, (2, 7), (6, 1)),    # 6 + 6 = 12
    (2, (6,), (2,)),        # 2 + 5*2 = 12
    (0, (1 << 40,), (1,)),
    (0, (2, 2), (1 << 62, 1)),
    (-1, (2,), (1,)), (0, (-2,), (1,)), (0, (2,), (-1,)),
    (1.5, (2,), (1,)), (0, [2], [1]), (0, (2, 2), (1,)), (0, ("2",), (1,)), (None, (2,), (1,)),
    (True, (2,), (1,)),
])
def test_offsets_sizes_and_strides_that_leave_the_storage_or_make_no_sense_are_refused(offset, size, stride,
                                                                                        tmp_path):
    assert_refused(archive(tensor_pickle(offset, size, stride)), tmp_path)


def test_a_storage_shorter_than_its_numel_is_refused(tmp_path):
    assert_refused(archive(tensor_pickle(0, (12,), (1,)), storage_bytes=MEMBERS[STORAGE][:-1]), tmp_path)
    assert_refused(archive(tensor_pickle(0, (12,), (1,), Storage(numel=13))), tmp_path)
    assert_refused(archive(tensor_pickle(0, (2,), (1,), Storage(numel=1 << 60))), tmp_path)
    assert_refused(archive(tensor_pickle(0, (2,), (1,), Storage(key="7"))), tmp_path)  # no such member
    assert_refused(archive(drop=(STORAGE,)), tmp_path)


def test_a_huge_broadcast_tensor_is_refused_not_allocated(tmp_path):
    """Stride 0 repeats one element (torch saves an expanded tensor so): a size no memory holds is refused."""
    assert_refused(archive(tensor_pickle(0, (1 << 25, 1 << 25), (0, 0))), tmp_path)


@pytest.mark.parametrize("storage_type", ["ComplexFloatStorage", "QInt8Storage", "UntypedStorage", "Tensor"])
def test_storages_of_other_dtypes_are_refused(storage_type, tmp_path):
    pickled = tensor_pickle(0, (2,), (1,)).replace(b"FloatStorage", storage_type.encode())
    assert_refused(archive(pickled), tmp_path)


HOSTILE = [
    b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.",           # os.system("true")
    b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.",                                 # eval
    b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(X\x01\x00\x00\x00aK\x00)\x85R.",     # no storage
    b"\x80\x02}q\x00(X\x01\x00\x00\x00wq\x01K\x01u",                                       # no STOP
    b"\x80\x02K\x01K\x02.",                                                                 # two items left
    b"\x80\x02h\x05.",                                                                      # memo never set
    b"\x80\x02e.",                                                                          # APPENDS, no mark
    b"\x80\x02}(]K\x01u.",                                                                  # a list as a dict key
    b"\x80\x02K\x01s.",                                                                     # SETITEM, empty stack
    b"\x80\x02ccollections\nOrderedDict\nK\x01\x85R.",                                     # OrderedDict(1)
    b"\x80\x02}K\x01b.",                                                                    # BUILD on a dict
    b"\x80\x02X\x01\x00\x00\x00a\x85Q.",                                                    # BINPERSID not a storage
    b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x93.",     # STACK_GLOBAL os.system
    b"\x80\x02N\x82\x01\x00\x00.",                                                          # EXT1
    b"\x80\x02(i__main__\nX\n.",                                                            # INST
    b"",                                                                                    # empty
    b"\xff\xfe\xfd",                                                                        # junk
]


@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_hostile_and_broken_pickles_are_refused(index, tmp_path):
    assert_refused(archive(HOSTILE[index]), tmp_path)


def test_truncated_and_corrupted_zips_are_refused(tmp_path):
    whole = archive()
    assert load(whole, tmp_path)["w"].numpy().tolist() == VALUES.tolist()
    for cut in (len(whole) - 1, len(whole) - 22, len(whole) // 2, 100, 30, 4):
        assert_refused(whole[:cut], tmp_path)
    corrupted = bytearray(whole)
    start = whole.index(MEMBERS[STORAGE])
    corrupted[start + 5] ^= 0xFF  # inside the storage: the member's CRC no longer matches
    assert_refused(bytes(corrupted), tmp_path)


def test_a_fixed_corpus_of_mutated_pickles_loads_or_is_refused_in_one_line(tmp_path):
    """Every position of a real data.pkl changed to a few byte values: what loads holds only the storage's values."""
    base = tensor_pickle(2, (2, 3), (3, 1))
    rng = np.random.default_rng(0)
    outcomes = {"loaded": 0, "refused": 0}
    for position in range(len(base)):
        for value in {0, 255, int(rng.integers(256)), base[position] ^ 1}:
            mutated = base[:position] + bytes([value]) + base[position + 1:]
            try:
                result = load(archive(mutated), tmp_path)
            except CheckpointError as err:
                assert "\n" not in str(err)
                outcomes["refused"] += 1
                continue
            outcomes["loaded"] += 1
            for item in (result.values() if isinstance(result, dict) else [result]):
                if isinstance(item, taugrad.Tensor) and item.dtype == taugrad.float32:
                    assert set(item.detach().numpy().ravel().tolist()) <= set(VALUES.tolist()), "read outside the storage"
    assert outcomes["refused"] > 0 and outcomes["loaded"] > 0
