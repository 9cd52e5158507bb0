"""``import torchvision`` in a process started by a script under ``taugrad run`` (a ``spawn`` child, say).

As ``torch`` beside it: installs taugrad's alias if the process has none yet
and puts :mod:`taugrad.vision` in ``torchvision``'s place.
"""
import sys

import taugrad.vision
from taugrad.run import TorchAlias

if not any(isinstance(finder, TorchAlias) for finder in sys.meta_path):
    sys.meta_path.insert(0, TorchAlias())
sys.modules[__name__] = taugrad.vision
