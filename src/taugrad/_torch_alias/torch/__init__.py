"""``import torch`` in a process started by a script under ``taugrad run`` (a ``spawn`` child, say).

``taugrad run`` puts the folder above this one first on ``sys.path``, and
multiprocessing hands that path to the processes it spawns: their
``import torch`` lands here, which installs the same alias as the parent's
(:class:`taugrad.run.TorchAlias`) and puts taugrad in ``torch``'s place.
"""
import sys

from taugrad.run import alias_in_child

sys.modules[__name__] = alias_in_child(__name__)
