"""taugrad.optim: every optimizer with its option sets, as torch takes them.

Every option set runs the plain 20-step loop; the last option set of each optimizer (the one
with the most state to carry) also runs every loop feature of test_optim_loops.py.
"""
from __future__ import annotations

import dataclasses

from .common import ByLib

IMPLEMENTATION_FLAGS = {
    "capturable": "CUDA-graph capture flag of torch's kernels; no meaning without CUDA graphs",
    "differentiable": "differentiating through the step (functorch); not part of taugrad's optimizers",
    "fused": "torch's fused CUDA/CPU kernel choice; the numbers are the same by contract",
}


@dataclasses.dataclass
class OptInfo:
    name: str
    option_sets: list
    uncovered: dict = dataclasses.field(default_factory=lambda: dict(IMPLEMENTATION_FLAGS))
    needs_closure: bool = False
    # LBFGS runs several inner iterations a step, each a two-loop recursion over the saved pairs
    # and a line search: a different summation order in the dot products grows to a few 1e-10
    # relative over 20 steps (its options keep it away from convergence, where 1 / (y.s) would
    # amplify roundoff without bound)
    rtol: float = 1e-10


LR_TENSOR = ByLib(lambda L: L.root.tensor(0.01))

ENTRIES = [
    OptInfo("SGD", [dict(lr=0.05), dict(lr=0.05, momentum=0.9), dict(lr=0.05, momentum=0.9, nesterov=True),
                    dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1),
                    dict(lr=LR_TENSOR, momentum=0.5, foreach=False),
                    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01, maximize=True)]),
    OptInfo("Adam", [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
                     dict(lr=0.01, amsgrad=True), dict(lr=LR_TENSOR, foreach=False),
                     dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
                     dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True)]),
    OptInfo("AdamW", [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
                      dict(lr=LR_TENSOR, foreach=False), dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True)]),
    OptInfo("Adagrad", [dict(), dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, foreach=False),
                        dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True)]),
    OptInfo("Adadelta", [dict(), dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, foreach=False),
                         dict(lr=0.5, maximize=True)]),
    OptInfo("Adamax", [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, foreach=False),
                       dict(lr=0.01, maximize=True)]),
    OptInfo("NAdam", [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, momentum_decay=0.01, weight_decay=0.1, foreach=False),
                      dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)]),
    OptInfo("RMSprop", [dict(), dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, foreach=False),
                        dict(lr=0.01, momentum=0.9), dict(lr=0.01, centered=True, momentum=0.5, maximize=True)]),
    OptInfo("RAdam", [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, foreach=False),
                      dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)]),
    OptInfo("Rprop", [dict(), dict(lr=0.02, etas=(0.4, 1.3), step_sizes=(1e-5, 1.0), foreach=False, maximize=True)]),
    OptInfo("ASGD", [dict(), dict(lr=0.02, lambd=1e-3, alpha=0.7, t0=5.0, weight_decay=0.1, foreach=False, maximize=True)]),
    OptInfo("LBFGS", [dict(lr=0.01, max_iter=5), dict(lr=0.1, max_iter=2, max_eval=4, tolerance_grad=1e-5, tolerance_change=1e-6,
                                                  history_size=3, line_search_fn="strong_wolfe")],
            uncovered={}, needs_closure=True, rtol=1e-8),
]

FEATURES = ["add_param_group", "state_dict_reload", "frozen_and_tied", "zero_grad_keep", "sometimes_no_grad",
            "closure", "param_group_dicts", "generator_params", "named_params"]
