"""Random number generators, as ``torch.Generator`` and ``torch.manual_seed``.

Every random op (``randn``, ``rand``, ``multinomial``, ``dropout``,
``normal_``...) takes an optional ``generator``; without one it draws from
:data:`default_generator`, which ``taugrad.manual_seed(seed)`` reseeds for
reproducible runs.  Each CUDA device has its own default generator
(:func:`cuda_generator`), seeded by ``manual_seed`` too; all draw on the host
and the draws are moved to the device.  A :class:`Generator` wraps NumPy's PCG64 bit generator:
the same seed gives the same numbers in taugrad, but not PyTorch's numbers
(PyTorch's Mersenne-Twister stream and its sampling algorithms are not
reproduced).

The state (``get_state``) is a uint8 tensor, as in PyTorch, holding the seed
and the PCG64 state; it round-trips through ``set_state`` and is not
interchangeable with a PyTorch state.
"""
from __future__ import annotations

import numpy as np

from taugrad.tensors.core.device import check_device, device
from taugrad.tensors.core.node import Tensor

#: the seed of a new ``Generator()``, PyTorch's default seed
DEFAULT_SEED = 67280421310721

_U64 = 1 << 64
_STATE_FIELDS = ((8, "seed"), (16, "state"), (16, "inc"), (8, "has_uint32"), (8, "uinteger"))
STATE_SIZE = sum(n for n, _ in _STATE_FIELDS)


def _check_seed(seed, op: str) -> int:
    """``seed`` as PyTorch stores it: an int in [-2**63, 2**64), negatives taken modulo 2**64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{op}: seed must be an int, got {seed!r}")
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError(f"{op}: seed must be in [-2**63, 2**64), got {seed}")
    return seed % _U64


def _fresh_seed() -> int:
    """A non-deterministic 64-bit seed (from the operating system's entropy)."""
    return int(np.random.SeedSequence().entropy) % _U64


class Generator:
    """A seedable random number generator: ``Generator(device='cpu')``.

    ``g = taugrad.Generator().manual_seed(2147483647)`` then
    ``taugrad.randn(27, 27, generator=g)`` draws a reproducible stream, as
    in PyTorch (the numbers differ from PyTorch's).
    """

    def __init__(self, device=None) -> None:
        self.device = check_device(device, "Generator")
        self._seed = DEFAULT_SEED
        self._rng = np.random.Generator(np.random.PCG64(DEFAULT_SEED))

    @classmethod
    def _unchecked(cls, dev) -> "Generator":
        """A generator for ``dev`` made without asking for its backend (seeding works without a GPU)."""
        gen = cls.__new__(cls)
        gen.device = dev
        gen._seed = DEFAULT_SEED
        gen._rng = np.random.Generator(np.random.PCG64(DEFAULT_SEED))
        return gen

    def manual_seed(self, seed) -> "Generator":
        """Restart the stream from ``seed``; returns the generator (so it chains)."""
        self._seed = _check_seed(seed, "manual_seed")
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Reseed from a non-deterministic seed and return that seed."""
        self.manual_seed(_fresh_seed())
        return self._seed

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor (give it to :meth:`set_state` to replay)."""
        inner = self._rng.bit_generator.state
        values = {"seed": self._seed, "state": inner["state"]["state"], "inc": inner["state"]["inc"],
                  "has_uint32": inner["has_uint32"], "uinteger": inner["uinteger"]}
        raw = b"".join(int(values[name]).to_bytes(n, "little") for n, name in _STATE_FIELDS)
        return Tensor(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        """Restore a state from :meth:`get_state`; returns the generator."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"set_state: expected a uint8 Tensor from get_state(), got {type(new_state).__name__}")
        raw = new_state._data
        if raw.dtype != np.uint8 or raw.shape != (STATE_SIZE,):
            raise RuntimeError(f"set_state: expected a uint8 tensor of {STATE_SIZE} bytes from get_state(), got "
                               f"dtype {raw.dtype} and shape {tuple(raw.shape)}")
        raw, values, at = raw.tobytes(), {}, 0
        for n, name in _STATE_FIELDS:
            values[name] = int.from_bytes(raw[at:at + n], "little")
            at += n
        bits = np.random.PCG64()
        bits.state = {"bit_generator": "PCG64", "state": {"state": values["state"], "inc": values["inc"]},
                      "has_uint32": values["has_uint32"], "uinteger": values["uinteger"]}
        self._seed, self._rng = values["seed"], np.random.Generator(bits)
        return self

    def __repr__(self) -> str:
        return f"<taugrad.Generator object at {id(self):#x}>"


#: the generator random ops use when none is passed (``torch.default_generator``)
default_generator = Generator()
default_generator.seed()  # a fresh stream per process, as PyTorch's default generator

#: CUDA device index -> the default generator of draws made for that device (made on first use)
cuda_generators: dict = {}

#: the seed of the CUDA generators not made yet: the last ``manual_seed``'s, or None for a fresh one
_CUDA_SEED = [None]


def cuda_generator(index: int = 0) -> Generator:
    """The default generator of CUDA device ``index`` (``torch.cuda.default_generators[index]``).

    It draws on the host with the same PCG64 algorithm as the CPU's, so after
    ``manual_seed(s)`` a CUDA run draws the numbers a CPU run draws.
    """
    gen = cuda_generators.get(index)
    if gen is None:
        gen = cuda_generators[index] = Generator._unchecked(device("cuda", index))
        if _CUDA_SEED[0] is None:
            gen.seed()
        else:
            gen.manual_seed(_CUDA_SEED[0])
    return gen


def manual_seed_cuda(seed, op: str = "cuda.manual_seed_all") -> None:
    """Reseed every CUDA generator (and those made later) with ``seed``."""
    _CUDA_SEED[0] = _check_seed(seed, op)
    for gen in cuda_generators.values():
        gen.manual_seed(_CUDA_SEED[0])


def manual_seed(seed) -> Generator:
    """Reseed the default generator and the CUDA ones (returns the CPU's): the same seed gives the same numbers."""
    manual_seed_cuda(seed, "manual_seed")
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Reseed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator last started from."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)


def get_generator(generator=None, dev=None) -> np.random.Generator:
    """The NumPy generator to draw from: ``generator``'s, or the default one of device ``dev`` (the CPU's).

    A ``numpy.random.Generator`` is accepted too (it draws directly).  Draws
    are made on the host; a device op moves them (see ``backend.move_like``).
    """
    if generator is None:
        if dev is None or dev.type == "cpu":
            return default_generator._rng
        return cuda_generator(dev.index or 0)._rng
    if isinstance(generator, Generator):
        return generator._rng
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a taugrad.Generator, got {type(generator).__name__}")
