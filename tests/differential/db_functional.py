"""taugrad.nn.functional: every function with sample calls in the forms torch accepts.

The first call of an entry is also run with every argument given by keyword (torch's names);
the others add each keyword torch takes, the legacy ``size_average``/``reduce`` of the losses,
``inplace=True`` (the mutated input is compared) and torch's refusals.
"""
from __future__ import annotations

import numpy as np

from .common import Arr
from .infos import C, F64, FnInfo, const, ints, pos, probs, signs, x

LEGACY = "legacy size_average/reduce: torch maps them to reduction"


def loss2(name, make_target=None, extra=(), shape=(3, 4), make_input=None, **uncovered):
    """An elementwise loss(input, target) entry with every reduction and the legacy flags."""
    target = make_target or (lambda: x(*shape, grad=False))
    inp = make_input or (lambda: x(*shape))
    calls = [
        C(inp(), target()),
        C(inp(), target(), reduction="sum"),
        C(inp(), target(), reduction="none"),
        C(inp(), target(), size_average=False),
        C(inp(), target(), reduce=False),
        C(inp(), target(), size_average=True, reduce=True),
        *extra,
    ]
    return FnInfo(name, calls, uncovered=dict(uncovered))


def activation(name, *extra, inplace=True, lo=-2.0, hi=2.0):
    calls = [C(x(3, 4, lo=lo, hi=hi)), C(x(2, 3, 2, lo=lo, hi=hi)), *extra]
    if inplace:
        calls += [C(x(3, 4, lo=lo, hi=hi), inplace=True, id="inplace"),
                  C(x(3, 4, lo=lo, hi=hi, leaf=True), inplace=True, id="inplace_leaf_refused", error=True)]
    return FnInfo(name, calls)


IMG = (2, 3, 5, 5)

ENTRIES = [
    # ----- activations -------------------------------------------------------------
    activation("relu"),
    activation("relu6"),
    activation("elu", C(x(3, 4), alpha=0.5), C(x(3, 4), 0.7, True, id="positional_inplace")),
    activation("celu", C(x(3, 4), alpha=0.5)),
    activation("selu"),
    activation("silu"),
    activation("mish"),
    activation("hardsigmoid", lo=-4.0, hi=4.0),
    activation("hardswish", lo=-4.0, hi=4.0),
    activation("hardtanh", C(x(3, 4, lo=-2, hi=2), min_val=-0.5, max_val=0.7), C(x(3, 4, lo=-2, hi=2), -0.3, 0.4)),
    activation("leaky_relu", C(x(3, 4), negative_slope=0.2), C(x(3, 4), 0.3, True, id="positional_inplace")),
    FnInfo("threshold", [
        C(x(3, 4), 0.1, 20.0), C(x(3, 4), threshold=-0.2, value=-1.0),
        C(x(3, 4), 0.1, 2.0, inplace=True, id="inplace"),
        C(x(3, 4, leaf=True), 0.1, 2.0, inplace=True, id="inplace_leaf_refused", error=True)]),
    FnInfo("rrelu", [C(x(3, 4)), C(x(3, 4), lower=0.1, upper=0.4, training=False),
                     C(x(3, 4), 0.2, 0.25, False, True, id="positional_inplace"),
                     C(x(3, 4), inplace=True, id="inplace")]),
    FnInfo("gelu", [C(x(3, 4, lo=-3, hi=3)), C(x(3, 4, lo=-3, hi=3), approximate="tanh")]),
    FnInfo("glu", [C(x(3, 4)), C(x(4, 3), dim=0), C(x(2, 2, 4), -1)]),
    FnInfo("hardshrink", [C(x(3, 4)), C(x(3, 4), lambd=0.3), C(x(3, 4), 0.2)]),
    FnInfo("softshrink", [C(x(3, 4)), C(x(3, 4), lambd=0.3), C(x(3, 4), 0.2)]),
    FnInfo("logsigmoid", [C(x(3, 4, lo=-5, hi=5))]),
    FnInfo("sigmoid", [C(x(3, 4, lo=-5, hi=5))]),
    FnInfo("tanh", [C(x(3, 4, lo=-3, hi=3))]),
    FnInfo("softsign", [C(x(3, 4, lo=-3, hi=3))]),
    FnInfo("tanhshrink", [C(x(3, 4, lo=-3, hi=3))]),
    FnInfo("softplus", [C(x(3, 4, lo=-3, hi=3)), C(x(3, 4, lo=-3, hi=3), beta=2.0, threshold=1.0),
                        C(x(3, 4, lo=-3, hi=3), 0.5, 2.0)]),
    FnInfo("softmax", [C(x(3, 4), dim=1), C(x(3, 4), 0), C(x(2, 3, 4), dim=-1, dtype=F64),
                       C(x(2, 3, 4), id="implicit_dim_3d"), C(x(3, 4), id="implicit_dim_2d"),
                       C(x(5), id="implicit_dim_1d")]),
    FnInfo("log_softmax", [C(x(3, 4), dim=1), C(x(3, 4), 0), C(x(2, 3, 4), dim=-1, dtype=F64),
                           C(x(2, 3, 4), id="implicit_dim_3d"), C(x(3, 4), id="implicit_dim_2d"),
                           C(x(5), id="implicit_dim_1d")]),
    FnInfo("softmin", [C(x(3, 4), dim=1), C(x(3, 4), 0), C(x(2, 3, 4), dim=-1, dtype=F64),
                       C(x(2, 3, 4), id="implicit_dim_3d")]),
    # ----- linear, convolution, pooling ------------------------------------------------
    FnInfo("linear", [C(x(3, 4), x(5, 4), x(5)), C(x(2, 3, 4), x(5, 4)), C(x(4), x(5, 4), bias=x(5))]),
    FnInfo("conv1d", [C(x(2, 3, 7), x(4, 3, 3), x(4)),
                      C(x(2, 4, 9), x(4, 2, 3), bias=None, stride=2, padding=1, dilation=2, groups=2),
                      C(x(2, 3, 7), x(4, 3, 3), padding="same"), C(x(2, 3, 7), x(4, 3, 3), padding="valid")]),
    FnInfo("conv2d", [C(x(*IMG), x(4, 3, 3, 3), x(4)),
                      C(x(2, 4, 6, 6), x(4, 2, 2, 3), bias=x(4), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
                      C(x(*IMG), x(4, 3, 3, 3), padding="same"), C(x(1, 3, 5, 5), x(2, 3, 3, 3), None, 1, 1, 1, 1)]),
    FnInfo("conv_transpose2d", [C(x(2, 3, 4, 4), x(3, 2, 3, 3), x(2)),
                                C(x(2, 4, 3, 3), x(4, 1, 2, 3), bias=x(2), stride=2, padding=1,
                                  output_padding=1, groups=2, dilation=1),
                                C(x(1, 2, 3, 3), x(2, 2, 3, 3), None, 1, 0, 0, 1, 2)]),
    FnInfo("max_pool1d", [C(x(2, 3, 8), 2), C(x(2, 3, 9), kernel_size=3, stride=2, padding=1, dilation=1,
                                                 ceil_mode=True, return_indices=True),
                          C(x(2, 3, 9), 2, dilation=2, return_indices=False)]),
    FnInfo("max_pool2d", [C(x(*IMG), 2), C(x(*IMG), kernel_size=3, stride=2, padding=1, dilation=1,
                                              ceil_mode=True, return_indices=True),
                          C(x(*IMG), (2, 3), (1, 2), 0, 2)]),
    FnInfo("avg_pool1d", [C(x(2, 3, 8), 2), C(x(2, 3, 9), kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                                 count_include_pad=False)]),
    FnInfo("avg_pool2d", [C(x(*IMG), 2), C(x(*IMG), kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                              count_include_pad=False, divisor_override=None),
                          C(x(*IMG), 2, divisor_override=3)]),
    FnInfo("adaptive_avg_pool2d", [C(x(*IMG), 2), C(x(*IMG), output_size=(3, 1)), C(x(*IMG), (None, 2))]),
    FnInfo("adaptive_max_pool2d", [C(x(*IMG), 2), C(x(*IMG), output_size=(3, 1), return_indices=True)]),
    FnInfo("fold", [C(x(2, 12, 9), (4, 4), 2), C(x(2, 12, 9), output_size=(5, 5), kernel_size=2, dilation=1,
                                                     padding=1, stride=2)]),
    FnInfo("unfold", [C(x(*IMG), 2), C(x(*IMG), kernel_size=(2, 3), dilation=1, padding=1, stride=2)]),
    FnInfo("pad", [C(x(2, 3, 4), (1, 2)), C(x(2, 3, 4), pad=(1, 0, 2, 1), mode="constant", value=0.5),
                   C(x(2, 3, 4), (2, 1), mode="reflect"), C(x(2, 3, 4), (2, 1), mode="replicate"),
                   C(x(2, 3, 4), (2, 1), mode="circular"), C(x(2, 3, 4), (-1, 2), id="negative_width"),
                   C(x(2, 3, 4), (1, -2, 0, -1), id="negative_widths_2d")]),
    FnInfo("interpolate", [C(x(1, 2, 3, 3), 5), C(x(1, 2, 3, 3), scale_factor=2, mode="nearest"),
                           C(x(1, 2, 3, 3), size=(4, 5), mode="bilinear", align_corners=False),
                           C(x(1, 2, 3, 3), size=(4, 5), mode="bilinear", align_corners=True),
                           C(x(1, 2, 5), scale_factor=1.5, mode="linear", recompute_scale_factor=True),
                           C(x(1, 2, 3, 3), size=(5, 4), mode="bicubic", align_corners=False),
                           C(x(1, 2, 6, 6), size=(4, 3), mode="area"),
                           C(x(1, 2, 3, 3), size=(5, 4), mode="nearest-exact"),
                           C(x(1, 2, 4, 4), size=(3, 3), mode="bilinear", antialias=False)]),
    FnInfo("one_hot", [C(ints(4, 5)), C(ints(3, 2, 3), num_classes=5)], params=["input", "num_classes"]),
    FnInfo("embedding", [C(ints(5, 2, 3), x(5, 3)), C(ints(5, 4), x(5, 3), padding_idx=1),
                         C(ints(5, 4), x(5, 3), padding_idx=-1, id="padding_idx_negative"),
                         C(ints(5, 6), x(5, 3), max_norm=0.5, norm_type=1.0, grad=False),
                         C(ints(5, 6), x(5, 3), scale_grad_by_freq=True, sparse=False)]),
    # ----- normalisation ---------------------------------------------------------------
    FnInfo("batch_norm", [C(x(4, 3), const(np.zeros(3)), const(np.ones(3)), training=True),
                          C(x(4, 3, 2), const(np.zeros(3)), const(np.ones(3)), weight=x(3), bias=x(3),
                            training=True, momentum=0.3, eps=1e-3),
                          C(x(4, 3, 2, 2), pos(3, grad=False), pos(3, grad=False), x(3), x(3), False),
                          C(x(4, 3), None, None, training=True, id="no_running_stats")]),
    FnInfo("instance_norm", [C(x(2, 3, 5)), C(x(2, 3, 4, 4), running_mean=const(np.zeros(3)),
                                               running_var=const(np.ones(3)), weight=x(3), bias=x(3),
                                               use_input_stats=True, momentum=0.2, eps=1e-3)]),
    FnInfo("layer_norm", [C(x(3, 4), (4,)), C(x(2, 3, 4), normalized_shape=[3, 4], weight=x(3, 4), bias=x(3, 4),
                                               eps=1e-3)]),
    FnInfo("group_norm", [C(x(2, 4, 3), 2), C(x(2, 6, 2, 2), num_groups=3, weight=x(6), bias=x(6), eps=1e-3)]),
    FnInfo("rms_norm", [C(x(3, 4), (4,)), C(x(2, 3, 4), normalized_shape=[3, 4], weight=x(3, 4), eps=1e-3)]),
    FnInfo("normalize", [C(x(3, 4)), C(x(3, 4), p=1.0, dim=0, eps=1e-6),
                         C(Arr(np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])), id="zero_row"),
                         C(x(3, 4), 3.0, -1)], uncovered={"out": "out= writes into a given tensor; not a differentiable form"}),
    # ----- attention -------------------------------------------------------------------
    FnInfo("scaled_dot_product_attention", [
        C(x(2, 3, 4), x(2, 5, 4), x(2, 5, 2)),
        C(x(2, 3, 4), x(2, 5, 4), x(2, 5, 2), attn_mask=Arr(np.random.default_rng(1).uniform(size=(3, 5)) < 0.7),
          dropout_p=0.0, is_causal=False, scale=0.3, enable_gqa=False),
        C(x(2, 3, 4), x(2, 5, 4), x(2, 5, 2), is_causal=True, id="causal_3q_5k"),
        C(x(2, 5, 4), x(2, 3, 4), x(2, 3, 2), is_causal=True, id="causal_5q_3k"),
        C(x(2, 3, 4), x(2, 5, 4), x(2, 5, 2), attn_mask=x(3, 5, grad=False), id="float_mask"),
        C(x(1, 3, 4), x(1, 3, 4), x(1, 3, 2),
          attn_mask=Arr(np.array([[True, True, False], [False, False, False], [True, False, True]])),
          id="fully_masked_row"),
        C(x(1, 4, 3, 2), x(1, 2, 5, 2), x(1, 2, 5, 3), enable_gqa=True, id="gqa")]),
    # ----- distances -------------------------------------------------------------------
    FnInfo("cosine_similarity", [C(x(3, 4), x(3, 4)), C(x(3, 4), x(1, 4), dim=1, eps=1e-6), C(x(3, 4), x(3, 4), 0)]),
    FnInfo("pairwise_distance", [C(x(3, 4), x(3, 4)), C(x(3, 4), x(3, 4), p=1.0, eps=1e-3, keepdim=True),
                                 C(x(3, 4), x(4), 3.0)]),
    # ----- losses ----------------------------------------------------------------------
    loss2("mse_loss", extra=[C(x(3, 4), x(4, grad=False), id="broadcast_target"),
                             C(x(3, 4), x(3, 4, grad=False), weight=pos(3, 4, grad=False))]),
    loss2("l1_loss", extra=[C(x(3, 4), x(3, 4, grad=False), weight=pos(3, 4, grad=False))]),
    loss2("smooth_l1_loss", extra=[C(x(3, 4, lo=-3, hi=3), x(3, 4, grad=False), beta=0.5)]),
    FnInfo("huber_loss", [C(x(3, 4, lo=-3, hi=3), x(3, 4, grad=False)),
                          C(x(3, 4, lo=-3, hi=3), x(3, 4, grad=False), reduction="sum", delta=0.5),
                          C(x(3, 4), x(3, 4, grad=False), "none", 0.3, pos(3, 4, grad=False)),
                          C(x(3, 4), x(3, 4, grad=False), weight=pos(3, 4, grad=False))]),
    loss2("binary_cross_entropy", make_target=lambda: probs(3, 4), make_input=lambda: probs(3, 4, grad=True),
          extra=[C(probs(3, 4, grad=True), probs(3, 4), weight=pos(3, 4, grad=False))]),
    loss2("binary_cross_entropy_with_logits", make_target=lambda: probs(3, 4),
          extra=[C(x(3, 4), probs(3, 4), weight=pos(3, 4, grad=False), pos_weight=pos(4, grad=False))]),
    loss2("soft_margin_loss", make_target=lambda: signs(3, 4)),
    loss2("multilabel_soft_margin_loss", make_target=lambda: Arr((np.random.default_rng(3).uniform(size=(3, 4)) < 0.5) * 1.0, grad=False),
          extra=[C(x(3, 4), Arr(np.eye(3, 4), grad=False), weight=pos(4, grad=False))]),
    loss2("kl_div", extra=[C(x(3, 4), x(3, 4, grad=False), log_target=True, reduction="batchmean")],
          make_target=lambda: probs(3, 4)),
    loss2("hinge_embedding_loss", make_target=lambda: signs(3, 4),
          extra=[C(x(3, 4), signs(3, 4), margin=0.5)]),
    loss2("poisson_nll_loss", make_target=lambda: pos(3, 4, hi=3.0, grad=False),
          extra=[C(pos(3, 4), pos(3, 4, hi=3.0, grad=False), log_input=False, full=True, eps=1e-6),
                 C(x(3, 4), pos(3, 4, hi=3.0, grad=False), True, True)]),
    FnInfo("gaussian_nll_loss", [C(x(3, 4), x(3, 4, grad=False), pos(3, 4)),
                                 C(x(3, 4), x(3, 4, grad=False), pos(3, 1), full=True, eps=1e-3, reduction="sum"),
                                 C(x(3, 4), x(3, 4, grad=False), 0.5, reduction="none", id="float_var")]),
    FnInfo("cross_entropy", [C(x(3, 5), ints(5, 3)), C(x(3, 5), probs(3, 5), id="prob_target"),
                             C(x(3, 5, 2), ints(5, 3, 2), weight=pos(5, grad=False), ignore_index=1,
                               reduction="sum", label_smoothing=0.1),
                             C(x(3, 5), ints(5, 3), size_average=False), C(x(3, 5), ints(5, 3), reduce=False),
                             C(x(3, 5), ints(5, 3), reduction="none", label_smoothing=0.2)]),
    FnInfo("nll_loss", [C(x(3, 5), ints(5, 3)),
                        C(x(3, 5, 2), ints(5, 3, 2), weight=pos(5, grad=False), ignore_index=1, reduction="sum"),
                        C(x(3, 5), ints(5, 3), size_average=False), C(x(3, 5), ints(5, 3), reduce=False)]),
    FnInfo("multi_margin_loss", [C(x(3, 5), ints(5, 3)),
                                 C(x(3, 5), ints(5, 3), p=2, margin=0.5, weight=pos(5, grad=False), reduction="sum"),
                                 C(x(3, 5), ints(5, 3), size_average=False), C(x(3, 5), ints(5, 3), reduce=False)]),
    FnInfo("margin_ranking_loss", [C(x(4), x(4), signs(4)), C(x(4), x(4), signs(4), margin=0.3, reduction="sum"),
                                   C(x(4), x(4), signs(4), size_average=False), C(x(4), x(4), signs(4), reduce=False)]),
    FnInfo("cosine_embedding_loss", [C(x(3, 4), x(3, 4), signs(3)),
                                     C(x(3, 4), x(3, 4), signs(3), margin=0.2, reduction="none"),
                                     C(x(3, 4), x(3, 4), signs(3), size_average=False),
                                     C(x(3, 4), x(3, 4), signs(3), reduce=False)]),
    FnInfo("triplet_margin_loss", [C(x(3, 4), x(3, 4), x(3, 4)),
                                   C(x(3, 4), x(3, 4), x(3, 4), margin=0.5, p=1, eps=1e-3, swap=True, reduction="sum"),
                                   C(x(3, 4), x(3, 4), x(3, 4), size_average=False),
                                   C(x(3, 4), x(3, 4), x(3, 4), reduce=False)]),
    # ----- random: exact where no randomness is drawn (contracts in test_random_contracts.py) ---
    FnInfo("dropout", [C(x(3, 4), training=False), C(x(3, 4), 0.0), C(x(3, 4), p=0.3, training=False, inplace=True),
                       C(x(3, 4), 0.0, True, True, id="positional_p0_inplace")]),
    FnInfo("dropout2d", [C(x(2, 3, 4, 4), training=False), C(x(2, 3, 4, 4), p=0.0),
                         C(x(2, 3, 4, 4), 0.4, False, True, id="positional_eval_inplace"),
                         C(x(2, 3, 4, 4), p=0.4, training=False, inplace=True, id="eval_inplace")]),
    FnInfo("pixel_shuffle", [C(x(1, 8, 2, 3), 2), C(x(2, 9, 2, 2), upscale_factor=3)]),
    FnInfo("pixel_unshuffle", [C(x(1, 2, 4, 6), 2), C(x(2, 1, 6, 3), downscale_factor=3)]),
    FnInfo("prelu", [C(x(3, 4), x(1)), C(x(2, 3, 4), x(3)), C(x(2, 3), weight=x(3))]),
    # ----- the in-place forms: the input holds the result --------------------------------------------------------
    FnInfo("relu_", [C(x(3, 4))]),
    FnInfo("leaky_relu_", [C(x(3, 4)), C(x(3, 4), 0.2), C(x(3, 4), negative_slope=0.3)]),
    FnInfo("elu_", [C(x(3, 4)), C(x(3, 4), alpha=0.5)]),
    FnInfo("celu_", [C(x(3, 4)), C(x(3, 4), alpha=0.5)]),
    FnInfo("selu_", [C(x(3, 4))]),
    FnInfo("hardtanh_", [C(x(3, 4)), C(x(3, 4), -0.5, 0.7), C(x(3, 4), min_val=-0.2, max_val=0.4)]),
    FnInfo("threshold_", [C(x(3, 4), 0.1, 2.0), C(x(3, 4), threshold=-0.2, value=-1.0)]),
    FnInfo("rrelu_", [C(x(3, 4)), C(x(3, 4), 0.2, 0.3), C(x(3, 4), lower=0.1, upper=0.4, training=False)]),
]
