"""taugrad: a small, readable and real automatic-differentiation engine.

* ``Value``: the scalar engine of "Build a Tiny Autograd Engine" (micrograd-compatible).
* ``Tensor``: the same engine over NumPy arrays, with a PyTorch-shaped API.

Both share one traversal (:mod:`taugrad.autograd`): iterative topological order
plus reverse accumulation of local derivative rules.
"""
from taugrad.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from taugrad.gradcheck import GradcheckError, gradcheck
from taugrad.scalar import Value

# --- tensor engine (issue 3) ---
# --- nn / optim / data / checkpoints (issue 4) ---
from taugrad import data, optim
from taugrad.serialization import CheckpointError, load, save
# --- learner tools (issue 5) ---
from taugrad.expr import ExpressionError
from taugrad.viz import draw_dot
# --- higher-order (issue 6) ---
# --- debugging (issue 7) ---

__version__ = "0.1.0"
