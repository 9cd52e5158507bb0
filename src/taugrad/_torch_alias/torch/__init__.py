"""``import torch`` in a process started by a script under ``taugrad run`` (a ``spawn`` child, say).

``taugrad run`` puts the folder above this one first on ``sys.path``, and
multiprocessing hands that path to the processes it spawns: their
``import torch`` lands here, which installs the same alias as the parent's
(:class:`taugrad.run.TorchAlias`) and puts taugrad in ``torch``'s place.
"""
import sys

import taugrad
from taugrad.run import TorchAlias

if not any(isinstance(finder, TorchAlias) for finder in sys.meta_path):
    sys.meta_path.insert(0, TorchAlias())
sys.modules[__name__] = taugrad
