"""Second-order rows for the convolutional-network ops (each rule appears in a differentiated graph).

Plain ``(name, fn, shapes)`` tuples: ``op_cases`` turns them into ``OpCase`` rows (no import cycle).
"""
from __future__ import annotations

import numpy as np

import taugrad
import taugrad.functional as F

_RM, _RV = np.array([0.2, -0.1]), np.array([1.5, 0.7])

CNN_ROWS = [
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2).tanh(),
           ((1, 2, 4, 3), (4, 1, 2, 2), (4,))),
    ("conv2d_rows", lambda x, w: F.conv2d(x, w, dilation=(1, 2)) ** 2, ((2, 1, 3, 4), (2, 1, 2, 2))),
    ("conv1d", lambda x, w: F.conv1d(x, w, padding="same") ** 2, ((1, 2, 5), (2, 2, 2))),
    ("conv_transpose2d", lambda y, w, b: F.conv_transpose2d(y, w, b, stride=2, output_padding=1).tanh(),
           ((1, 2, 2, 2), (2, 1, 2, 2), (1,))),
    ("unfold", lambda x: F.unfold(x, 2, padding=1, stride=2) ** 3, ((1, 1, 3, 3),)),
    ("fold", lambda c: F.fold(c, (3, 3), 2) ** 3, ((1, 4, 4),)),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, stride=1) ** 3, ((1, 2, 3, 3),)),
    ("max_pool2d_tiles", lambda x: F.max_pool2d(x, 2) ** 3, ((1, 2, 4, 2),)),
    ("conv2d_channels_last", lambda x, w: F.conv2d(x, w, padding=1).tanh(), ((2, 3, 2, 1), (2, 3, 2, 2))),
    ("max_pool1d", lambda x: F.max_pool1d(x, 2, ceil_mode=True) ** 3, ((1, 1, 5),)),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 2)) ** 3, ((1, 1, 3, 3),)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2, padding=1, count_include_pad=False) ** 3, ((1, 1, 3, 3),)),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 2)) ** 3, ((1, 1, 3, 3),)),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True) ** 3,
           ((3, 2, 2), (2,), (2,))),
    ("batch_norm_eval", lambda x, w: F.batch_norm(x, taugrad.tensor(_RM), taugrad.tensor(_RV), w) ** 3,
           ((3, 2), (2,))),
    ("group_norm", lambda x, w: F.group_norm(x, 2, w) ** 3, ((2, 4, 2), (4,))),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (2, 3), w, b) ** 3, ((2, 2, 3), (2, 3), (2, 3))),
    ("layer_norm_plain", lambda x: F.layer_norm(x, 4) ** 3, ((3, 4),)),
    ("interpolate", lambda x: F.interpolate(x, size=(3, 5), mode="bilinear", align_corners=False) ** 3,
           ((1, 1, 2, 3),)),
]
