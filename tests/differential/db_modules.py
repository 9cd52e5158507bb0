"""taugrad.nn modules: every layer with constructor forms and inputs, as torch takes them.

Each module is built in torch and in taugrad with the same arguments, torch's initial state is
loaded into taugrad's (from NumPy), and the forward runs in training and in evaluation mode.
Containers, ``Module`` and ``Parameter`` are compared by scenarios in db_containers.py.
"""
from __future__ import annotations

import numpy as np

from .common import Arr, ByLib
from .infos import F64, M, ModInfo, ints, pos, probs, signs, x

IMG = (2, 3, 5, 5)
CPU = "cpu"
LEGACY_LOSS = dict(size_average=False, reduce=True)


def act(name, *extra, inplace=True, lo=-2.0, hi=2.0):
    calls = [M(inputs=(x(3, 4, lo=lo, hi=hi),)), *extra]
    if inplace:
        calls.append(M(inplace=True, inputs=(x(3, 4, lo=lo, hi=hi),), id="inplace"))
    return ModInfo(name, calls)


def loss(name, make_inputs, *extra, legacy=True, **uncovered):
    calls = [M(inputs=make_inputs()), M(reduction="sum", inputs=make_inputs()),
             M(reduction="none", inputs=make_inputs())]
    if legacy:
        calls += [M(size_average=False, inputs=make_inputs(), id="size_average"),
                  M(reduce=False, inputs=make_inputs(), id="reduce")]
    return ModInfo(name, calls + list(extra), uncovered=dict(uncovered))


def two():
    return (x(3, 4), x(3, 4, grad=False))


ENTRIES = [
    act("ReLU"), act("ReLU6"), act("SELU"), act("SiLU"), act("Mish"),
    act("ELU", M(0.5, inputs=(x(3, 4),)), M(alpha=0.3, inputs=(x(3, 4),))),
    act("CELU", M(alpha=0.5, inputs=(x(3, 4),))),
    act("Hardsigmoid", lo=-4, hi=4), act("Hardswish", lo=-4, hi=4),
    act("Hardtanh", M(-0.5, 0.7, inputs=(x(3, 4),)), M(min_val=-0.2, max_val=0.4, inputs=(x(3, 4),)),
        M(min_value=-0.2, max_value=0.4, inputs=(x(3, 4),), id="deprecated_names")),
    act("LeakyReLU", M(0.2, inputs=(x(3, 4),)), M(negative_slope=0.3, inputs=(x(3, 4),))),
    ModInfo("Threshold", [M(0.1, 2.0, inputs=(x(3, 4),)), M(threshold=0.1, value=-1.0, inplace=True, inputs=(x(3, 4),))]),
    ModInfo("RReLU", [M(inputs=(x(3, 4),), modes=("eval",)), M(0.1, 0.4, inputs=(x(3, 4),), modes=("eval",)),
                      M(lower=0.2, upper=0.3, inplace=True, inputs=(x(3, 4),), modes=("eval",))]),
    ModInfo("PixelShuffle", [M(2, inputs=(x(1, 8, 2, 3),)), M(upscale_factor=3, inputs=(x(2, 9, 2, 2),))]),
    ModInfo("PixelUnshuffle", [M(2, inputs=(x(1, 2, 4, 6),)), M(downscale_factor=3, inputs=(x(2, 1, 6, 3),))]),
    ModInfo("PReLU", [M(inputs=(x(3, 4),)), M(num_parameters=4, init=0.1, device=CPU, dtype=F64, inputs=(x(3, 4),))]),
    ModInfo("GELU", [M(inputs=(x(3, 4),)), M(approximate="tanh", inputs=(x(3, 4),))]),
    ModInfo("GLU", [M(inputs=(x(3, 4),)), M(dim=0, inputs=(x(4, 3),))]),
    ModInfo("Hardshrink", [M(inputs=(x(3, 4),)), M(lambd=0.3, inputs=(x(3, 4),))]),
    ModInfo("Softshrink", [M(inputs=(x(3, 4),)), M(lambd=0.3, inputs=(x(3, 4),))]),
    ModInfo("Softplus", [M(inputs=(x(3, 4),)), M(beta=2.0, threshold=1.0, inputs=(x(3, 4),))]),
    ModInfo("LogSigmoid", [M(inputs=(x(3, 4),))]), ModInfo("Sigmoid", [M(inputs=(x(3, 4),))]),
    ModInfo("Tanh", [M(inputs=(x(3, 4),))]), ModInfo("Softsign", [M(inputs=(x(3, 4),))]),
    ModInfo("Tanhshrink", [M(inputs=(x(3, 4),))]), ModInfo("Identity", [M(inputs=(x(3, 4),)), M(3, k=2, inputs=(x(3),), id="ignored_args")]),
    ModInfo("Softmax", [M(1, inputs=(x(3, 4),)), M(dim=0, inputs=(x(3, 4),)), M(inputs=(x(2, 3, 4),), id="implicit_dim")]),
    ModInfo("Softmin", [M(1, inputs=(x(3, 4),)), M(dim=0, inputs=(x(3, 4),))]),
    ModInfo("LogSoftmax", [M(1, inputs=(x(3, 4),)), M(dim=-1, inputs=(x(2, 3, 4),)), M(inputs=(x(2, 3, 4),), id="implicit_dim")]),
    # ----- layers with parameters ------------------------------------------------------------
    ModInfo("Linear", [M(4, 3, inputs=(x(2, 4),)), M(in_features=4, out_features=3, bias=False, device=CPU, dtype=F64,
                                                      inputs=(x(2, 5, 4),)), M(4, 3, inputs=(x(4),), id="vector_input")]),
    ModInfo("Conv1d", [M(3, 4, 3, inputs=(x(2, 3, 7),)),
                       M(in_channels=4, out_channels=4, kernel_size=3, stride=2, padding=1, dilation=2, groups=2,
                         bias=False, padding_mode="zeros", device=CPU, dtype=F64, inputs=(x(2, 4, 9),)),
                       M(3, 2, 3, padding="same", padding_mode="reflect", inputs=(x(2, 3, 7),)),
                       M(3, 2, 3, padding=1, padding_mode="circular", inputs=(x(2, 3, 7),)),
                       M(3, 2, 3, padding=1, padding_mode="replicate", inputs=(x(2, 3, 7),))]),
    ModInfo("Conv2d", [M(3, 4, 3, inputs=(x(*IMG),)),
                       M(in_channels=4, out_channels=2, kernel_size=(2, 3), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                         groups=2, bias=True, padding_mode="zeros", device=CPU, dtype=F64, inputs=(x(2, 4, 6, 6),)),
                       M(3, 2, 3, padding="same", inputs=(x(*IMG),)),
                       M(3, 2, 3, padding=1, padding_mode="reflect", inputs=(x(*IMG),))]),
    ModInfo("ConvTranspose2d", [M(3, 2, 3, inputs=(x(2, 3, 4, 4),)),
                                M(in_channels=4, out_channels=2, kernel_size=3, stride=2, padding=1, output_padding=1,
                                  groups=2, bias=False, dilation=1, padding_mode="zeros", device=CPU, dtype=F64,
                                  inputs=(x(2, 4, 3, 3),)),
                                M(3, 2, 3, stride=2, inputs=(x(1, 3, 3, 3),), forward=dict(output_size=(8, 8)))]),
    ModInfo("Embedding", [M(5, 3, inputs=(ints(5, 2, 3),)),
                          M(num_embeddings=5, embedding_dim=3, padding_idx=1, max_norm=None, norm_type=2.0,
                            scale_grad_by_freq=True, sparse=False, device=CPU, dtype=F64, inputs=(ints(5, 6),)),
                          M(5, 3, padding_idx=-1, inputs=(ints(5, 6),), id="padding_idx_negative"),
                          M(5, 3, max_norm=0.5, inputs=(ints(5, 6),), modes=("eval",), id="max_norm")],
            uncovered={"_weight": "private constructor argument", "_freeze": "private constructor argument"}),
    ModInfo("BatchNorm1d", [M(3, inputs=(x(4, 3),)),
                            M(num_features=3, eps=1e-3, momentum=0.3, affine=True, track_running_stats=True, device=CPU,
                              dtype=F64, bias=True, inputs=(x(4, 3, 2),)),
                            M(3, affine=False, inputs=(x(4, 3),), id="affine_false"),
                            M(3, momentum=None, inputs=(x(4, 3),), id="cumulative_average"),
                            M(3, track_running_stats=False, inputs=(x(4, 3),), id="no_running_stats"),
                            M(3, bias=False, inputs=(x(4, 3),), id="no_bias")]),
    ModInfo("BatchNorm2d", [M(3, inputs=(x(2, 3, 2, 2),)), M(3, affine=False, inputs=(x(2, 3, 2, 2),), id="affine_false"),
                            M(num_features=3, eps=1e-3, momentum=0.2, affine=True, track_running_stats=True, device=CPU,
                              dtype=F64, bias=True, inputs=(x(2, 3, 2, 2),))]),
    ModInfo("InstanceNorm1d", [M(3, inputs=(x(2, 3, 5),)),
                               M(num_features=3, eps=1e-3, momentum=0.2, affine=True, track_running_stats=True, device=CPU,
                                 dtype=F64, bias=True, inputs=(x(2, 3, 5),))]),
    ModInfo("InstanceNorm2d", [M(3, inputs=(x(2, 3, 4, 4),)), M(3, affine=True, track_running_stats=True, inputs=(x(2, 3, 4, 4),)),
                               M(num_features=3, eps=1e-3, momentum=0.2, affine=True, track_running_stats=False, device=CPU,
                                 dtype=F64, bias=True, inputs=(x(2, 3, 4, 4),))]),
    ModInfo("LayerNorm", [M(4, inputs=(x(3, 4),)), M([3, 4], inputs=(x(2, 3, 4),)),
                          M(normalized_shape=(4,), eps=1e-3, elementwise_affine=True, bias=False, device=CPU, dtype=F64,
                            inputs=(x(3, 4),)), M(4, elementwise_affine=False, inputs=(x(3, 4),))]),
    ModInfo("RMSNorm", [M(4, inputs=(x(3, 4),)), M(normalized_shape=[3, 4], eps=1e-3, elementwise_affine=True,
                                                    device=CPU, dtype=F64, inputs=(x(2, 3, 4),))]),
    ModInfo("GroupNorm", [M(2, 4, inputs=(x(2, 4, 3),)),
                          M(num_groups=3, num_channels=6, eps=1e-3, affine=True, device=CPU, dtype=F64, bias=True,
                            inputs=(x(2, 6, 2, 2),)), M(2, 4, affine=False, inputs=(x(2, 4, 3),))]),
    ModInfo("MultiheadAttention", [
        M(4, 2, inputs=(x(3, 2, 4), x(5, 2, 4), x(5, 2, 4))),
        M(embed_dim=4, num_heads=2, dropout=0.0, bias=True, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5,
          batch_first=True, device=CPU, dtype=F64, inputs=(x(2, 3, 4), x(2, 5, 3), x(2, 5, 5)),
          forward=dict(key_padding_mask=Arr(np.array([[False] * 4 + [True], [False] * 5])), need_weights=True,
                       attn_mask=None, average_attn_weights=False, is_causal=False)),
        M(4, 2, batch_first=True, inputs=(x(2, 3, 4), x(2, 3, 4), x(2, 3, 4)),
          forward=dict(attn_mask=Arr(np.triu(np.ones((3, 3), dtype=bool), 1)), is_causal=True, need_weights=False))]),
    # ----- shape, pooling, distance ------------------------------------------------------------
    ModInfo("Flatten", [M(inputs=(x(2, 3, 4),)), M(start_dim=0, end_dim=1, inputs=(x(2, 3, 4),))]),
    ModInfo("Unflatten", [M(1, (2, 2), inputs=(x(3, 4),)), M(dim=-1, unflattened_size=(2, -1), inputs=(x(3, 4),))]),
    ModInfo("Upsample", [M(5, inputs=(x(1, 2, 3, 3),)), M(scale_factor=2, mode="nearest", inputs=(x(1, 2, 3, 3),)),
                         M(size=(4, 5), mode="bilinear", align_corners=True, inputs=(x(1, 2, 3, 3),)),
                         M(scale_factor=1.5, mode="bilinear", align_corners=False, recompute_scale_factor=True,
                           inputs=(x(1, 2, 3, 3),))]),
    ModInfo("MaxPool1d", [M(2, inputs=(x(2, 3, 8),)),
                          M(kernel_size=3, stride=2, padding=1, dilation=1, return_indices=True, ceil_mode=True,
                            inputs=(x(2, 3, 9),))]),
    ModInfo("MaxPool2d", [M(2, inputs=(x(*IMG),)),
                          M(kernel_size=3, stride=2, padding=1, dilation=1, return_indices=True, ceil_mode=True,
                            inputs=(x(*IMG),))]),
    ModInfo("AvgPool2d", [M(2, inputs=(x(*IMG),)),
                          M(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False,
                            divisor_override=None, inputs=(x(*IMG),)), M(2, divisor_override=3, inputs=(x(*IMG),))]),
    ModInfo("AdaptiveAvgPool2d", [M(2, inputs=(x(*IMG),)), M(output_size=(3, 1), inputs=(x(*IMG),))]),
    ModInfo("AdaptiveMaxPool2d", [M(2, inputs=(x(*IMG),)), M(output_size=(3, 1), return_indices=True, inputs=(x(*IMG),))]),
    ModInfo("CosineSimilarity", [M(inputs=(x(3, 4), x(3, 4))), M(dim=0, eps=1e-6, inputs=(x(3, 4), x(3, 4)))]),
    ModInfo("PairwiseDistance", [M(inputs=(x(3, 4), x(3, 4))), M(p=1.0, eps=1e-3, keepdim=True, inputs=(x(3, 4), x(3, 4)))]),
    # ----- random layers: exact in eval mode and at p=0 (contracts in test_random_contracts.py) ----
    ModInfo("Dropout", [M(inputs=(x(3, 4),), modes=("eval",)), M(p=0.0, inputs=(x(3, 4),)),
                        M(0.3, True, inputs=(x(3, 4),), modes=("eval",), id="inplace_eval"),
                        M(p=0.0, inplace=True, inputs=(x(3, 4),), id="inplace_p0")]),
    ModInfo("Dropout2d", [M(inputs=(x(2, 3, 4, 4),), modes=("eval",)), M(p=0.0, inputs=(x(2, 3, 4, 4),)),
                          M(p=0.3, inplace=True, inputs=(x(2, 3, 4, 4),), modes=("eval",), id="inplace_eval")]),
    # ----- losses --------------------------------------------------------------------------------
    loss("MSELoss", two), loss("L1Loss", two),
    loss("SmoothL1Loss", two, M(beta=0.5, inputs=two())),
    ModInfo("HuberLoss", [M(inputs=two()), M(reduction="sum", delta=0.5, inputs=two())]),
    loss("BCELoss", lambda: (probs(3, 4, grad=True), probs(3, 4)), M(weight=pos(3, 4, grad=False), inputs=(probs(3, 4, grad=True), probs(3, 4)))),
    loss("BCEWithLogitsLoss", lambda: (x(3, 4), probs(3, 4)),
         M(weight=pos(3, 4, grad=False), pos_weight=pos(4, grad=False), inputs=(x(3, 4), probs(3, 4)))),
    loss("SoftMarginLoss", lambda: (x(3, 4), signs(3, 4))),
    loss("MultiLabelSoftMarginLoss", lambda: (x(3, 4), Arr(np.eye(3, 4), grad=False)),
         M(weight=pos(4, grad=False), inputs=(x(3, 4), Arr(np.eye(3, 4), grad=False)))),
    loss("KLDivLoss", lambda: (x(3, 4), probs(3, 4)), M(reduction="batchmean", log_target=True, inputs=(x(3, 4), x(3, 4, grad=False)))),
    loss("HingeEmbeddingLoss", lambda: (x(3, 4), signs(3, 4)), M(margin=0.5, inputs=(x(3, 4), signs(3, 4)))),
    loss("PoissonNLLLoss", lambda: (x(3, 4), pos(3, 4, hi=3.0, grad=False)),
         M(log_input=False, full=True, eps=1e-6, inputs=(pos(3, 4), pos(3, 4, hi=3.0, grad=False)))),
    ModInfo("GaussianNLLLoss", [M(inputs=(x(3, 4), x(3, 4, grad=False), pos(3, 4))),
                                M(full=True, eps=1e-3, reduction="sum", inputs=(x(3, 4), x(3, 4, grad=False), pos(3, 1)))]),
    loss("CrossEntropyLoss", lambda: (x(3, 5), ints(5, 3)),
         M(weight=pos(5, grad=False), ignore_index=1, label_smoothing=0.1, inputs=(x(3, 5, 2), ints(5, 3, 2))),
         M(inputs=(x(3, 5), probs(3, 5)), id="prob_target")),
    loss("NLLLoss", lambda: (x(3, 5), ints(5, 3)),
         M(weight=pos(5, grad=False), ignore_index=1, inputs=(x(3, 5, 2), ints(5, 3, 2)))),
    loss("MultiMarginLoss", lambda: (x(3, 5), ints(5, 3)),
         M(p=2, margin=0.5, weight=pos(5, grad=False), inputs=(x(3, 5), ints(5, 3)))),
    loss("MarginRankingLoss", lambda: (x(4), x(4), signs(4)), M(margin=0.3, inputs=(x(4), x(4), signs(4)))),
    loss("CosineEmbeddingLoss", lambda: (x(3, 4), x(3, 4), signs(3)), M(margin=0.2, inputs=(x(3, 4), x(3, 4), signs(3)))),
    loss("TripletMarginLoss", lambda: (x(3, 4), x(3, 4), x(3, 4)),
         M(margin=0.5, p=1, eps=1e-3, swap=True, inputs=(x(3, 4), x(3, 4), x(3, 4)))),
]

# ----- recurrent layers ------------------------------------------------------------------------
SEQ = (5, 2, 3)  # (time, batch, features)
RNN_KW = "torch's RNN/LSTM/GRU take *args, **kwargs: the keywords below are passed by name"

ENTRIES += [
    ModInfo("RNN", [M(3, 4, inputs=(x(*SEQ),)),
                    M(input_size=3, hidden_size=4, num_layers=2, nonlinearity="relu", bias=False, batch_first=True,
                      dropout=0.0, bidirectional=True, device=CPU, dtype=F64, inputs=(x(2, 5, 3),), forward=dict(hx=x(4, 2, 4))),
                    M(3, 4, inputs=(x(5, 3), x(1, 4)), id="unbatched"),
                    M(3, 4, num_layers=2, dropout=0.5, inputs=(x(*SEQ),), modes=("eval",), id="dropout_eval")],
            keyword_form=False),
    ModInfo("LSTM", [M(3, 4, inputs=(x(*SEQ),)),
                     M(input_size=3, hidden_size=4, num_layers=2, bias=True, batch_first=True, dropout=0.0,
                       bidirectional=True, proj_size=2, device=CPU, dtype=F64,
                       inputs=(x(2, 5, 3),), forward=dict(hx=(x(4, 2, 2), x(4, 2, 4)))),
                     M(3, 4, inputs=(x(5, 3), (x(1, 4), x(1, 4))), id="unbatched")], keyword_form=False),
    ModInfo("GRU", [M(3, 4, inputs=(x(*SEQ),)),
                    M(input_size=3, hidden_size=4, num_layers=2, bias=False, batch_first=True, dropout=0.0,
                      bidirectional=True, device=CPU, dtype=F64, inputs=(x(2, 5, 3),), forward=dict(hx=x(4, 2, 4)))],
            keyword_form=False),
    ModInfo("RNNCell", [M(3, 4, inputs=(x(2, 3),)),
                        M(input_size=3, hidden_size=4, bias=False, nonlinearity="relu", device=CPU, dtype=F64,
                          inputs=(x(2, 3),), forward=dict(hx=x(2, 4))), M(3, 4, inputs=(x(3), x(4)), id="unbatched")]),
    ModInfo("LSTMCell", [M(3, 4, inputs=(x(2, 3),)),
                         M(input_size=3, hidden_size=4, bias=False, device=CPU, dtype=F64,
                           inputs=(x(2, 3),), forward=dict(hx=(x(2, 4), x(2, 4)))),
                         M(3, 4, inputs=(x(2, 3), (x(2, 4), x(2, 4))), id="positional_hx")]),
    ModInfo("GRUCell", [M(3, 4, inputs=(x(2, 3),)),
                        M(input_size=3, hidden_size=4, bias=False, device=CPU, dtype=F64, inputs=(x(2, 3),), forward=dict(hx=x(2, 4))),
                        M(3, 4, inputs=(x(2, 3), x(2, 4)), id="positional_hx")]),
]

# ----- transformer layers (dropout 0 where they run in training mode) --------------------------------
CAUSAL = Arr(np.triu(np.full((3, 3), float("-inf")), 1), grad=False)
PAD = Arr(np.array([[False, False, True], [False, False, False]]))


def enc_layer(**kw):
    return ByLib(lambda L: L.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, **kw))


def dec_layer(**kw):
    return ByLib(lambda L: L.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, **kw))


ENTRIES += [
    ModInfo("TransformerEncoderLayer", [
        M(4, 2, 6, 0.0, inputs=(x(3, 2, 4),)),
        M(4, 2, inputs=(x(3, 2, 4),), modes=("eval",), id="default_dropout_eval"),
        M(d_model=4, nhead=2, dim_feedforward=6, dropout=0.0, activation="gelu", layer_norm_eps=1e-3, batch_first=True,
          norm_first=True, bias=False, device=CPU, dtype=F64, inputs=(x(2, 3, 4),),
          forward=dict(src_mask=CAUSAL, src_key_padding_mask=None, is_causal=True)),
        M(4, 2, 6, 0.0, activation=ByLib(lambda L: L.F.gelu), batch_first=True, inputs=(x(2, 3, 4),),
          forward=dict(src_key_padding_mask=PAD), id="callable_activation_padding")]),
    ModInfo("TransformerDecoderLayer", [
        M(4, 2, 6, 0.0, inputs=(x(3, 2, 4), x(5, 2, 4))),
        M(d_model=4, nhead=2, dim_feedforward=6, dropout=0.0, activation="gelu", layer_norm_eps=1e-3, batch_first=True,
          norm_first=True, bias=True, device=CPU, dtype=F64, inputs=(x(2, 3, 4), x(2, 3, 4)),
          forward=dict(tgt_mask=CAUSAL, memory_mask=None, tgt_key_padding_mask=PAD, memory_key_padding_mask=None,
                       tgt_is_causal=True, memory_is_causal=False))]),
    ModInfo("TransformerEncoder", [
        M(enc_layer(), 2, inputs=(x(3, 2, 4),)),
        M(encoder_layer=enc_layer(batch_first=True), num_layers=2, norm=ByLib(lambda L: L.nn.LayerNorm(4)),
          enable_nested_tensor=False, mask_check=True, inputs=(x(2, 3, 4),),
          forward=dict(mask=CAUSAL, src_key_padding_mask=None, is_causal=True))]),
    ModInfo("TransformerDecoder", [
        M(dec_layer(), 2, inputs=(x(3, 2, 4), x(4, 2, 4))),
        M(decoder_layer=dec_layer(batch_first=True), num_layers=2, norm=ByLib(lambda L: L.nn.LayerNorm(4)),
          inputs=(x(2, 3, 4), x(2, 4, 4)),
          forward=dict(tgt_mask=CAUSAL, memory_mask=None, tgt_key_padding_mask=PAD, memory_key_padding_mask=None,
                       tgt_is_causal=True, memory_is_causal=False))]),
    ModInfo("Transformer", [
        M(4, 2, 1, 1, 6, 0.0, inputs=(x(3, 2, 4), x(2, 2, 4))),
        M(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=6, dropout=0.0,
          activation="gelu", layer_norm_eps=1e-3, batch_first=True, norm_first=True, bias=True, device=CPU, dtype=F64,
          inputs=(x(2, 3, 4), x(2, 3, 4)),
          forward=dict(src_mask=None, tgt_mask=CAUSAL, memory_mask=None, src_key_padding_mask=PAD,
                       tgt_key_padding_mask=None, memory_key_padding_mask=PAD, src_is_causal=False,
                       tgt_is_causal=True, memory_is_causal=False))],
            uncovered={"custom_encoder": "a module argument; TransformerEncoder has its own entry",
                       "custom_decoder": "a module argument; TransformerDecoder has its own entry"}),
    ModInfo("DataParallel", [M(ByLib(lambda L: L.nn.Linear(3, 2)), inputs=(x(4, 3),)),
                             M(module=ByLib(lambda L: L.nn.Linear(3, 2)), device_ids=None, output_device=None, dim=0,
                               inputs=(x(4, 3),))]),
]
