"""``import torchvision`` in a process started by a script under ``taugrad run`` (a ``spawn`` child, say).

As ``torch`` beside it: installs taugrad's alias if the process has none yet
and puts :mod:`taugrad.vision` in ``torchvision``'s place.
"""
import sys

from taugrad.run import alias_in_child

sys.modules[__name__] = alias_in_child(__name__)
