"""``taugrad.random``: the seeding functions of ``torch.random`` (the same as ``taugrad.manual_seed``...)."""
from taugrad.tensors.core.generator import (
    default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)

__all__ = ["default_generator", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]
