r"""Recurrent layers (Elman RNN, LSTM, GRU) and their single-step cells, with ``torch.nn``'s API.

For each layer and direction, with ``x_t`` the input and ``h_{t-1}`` the state
(``\sigma`` the logistic sigmoid, ``*`` the elementwise product)::

    RNN   h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)          act = tanh or relu
    LSTM  i, f, g, o = chunks of W_ih x_t + b_ih + W_hh h_{t-1} + b_hh
          c_t = \sigma(f) * c_{t-1} + \sigma(i) * tanh(g)
          h_t = \sigma(o) * tanh(c_t)              (then W_hr h_t with proj_size > 0)
    GRU   r, z, n = chunks;  r = \sigma(r_i + r_h),  z = \sigma(z_i + z_h)
          n_t = tanh(n_i + r * n_h)          (x_i from W_ih x_t + b_ih, x_h from W_hh h_{t-1} + b_hh)
          h_t = (1 - z) * n_t + z * h_{t-1}

The parameter names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``...),
shapes and order are PyTorch's, so state dicts move both ways, and so is the
initialisation: every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

The whole input sequence goes through ``W_ih`` in one matrix product per
layer and direction (it does not depend on the state); only ``W_hh h`` and
the gates run step by step.  An LSTM or GRU layer over an unpacked batch runs
as one op with its backward written out (:mod:`taugrad.nn.rnn_sequence`);
otherwise each step is made of taugrad ops.  Either way gradients of any order
flow through it.  A :class:`~taugrad.nn.utils.rnn.PackedSequence`
runs step ``t`` on the first ``batch_sizes[t]`` rows only: a sequence's last
state is the state after its own last element.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from taugrad.nn import init
from taugrad.nn.layers import factory_kwargs, place
from taugrad.nn.rnn_sequence import gru_sequence, lstm_sequence
from taugrad.nn.module import Module, Parameter
from taugrad.nn.utils.rnn import PackedSequence
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.dropout import dropout as _dropout
from taugrad.tensors.ops.matmul import linear as _linear
from taugrad.tensors.ops.shape import cat, stack

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# ---------------------------------------------------------------------------
# one time step of each kind: ``xg`` is the input's share of the gates
# (W_ih x + b_ih, plus b_hh where it simply adds), ``w_hh_t`` is W_hh^T
# ---------------------------------------------------------------------------


def _rnn_step(xg: Tensor, h: Tensor, w_hh_t: Tensor, relu: bool) -> Tensor:
    pre = xg + h @ w_hh_t
    return pre.relu() if relu else pre.tanh()


def _lstm_step(xg: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor,
               w_hr_t: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    gates = xg + h @ w_hh_t
    H = c.shape[-1]
    # one sigmoid over all four chunks (g's share is thrown away): fewer ops than three
    s = gates.sigmoid()
    c = s[..., H:2 * H] * c + s[..., :H] * gates[..., 2 * H:3 * H].tanh()
    h = s[..., 3 * H:] * c.tanh()
    if w_hr_t is not None:
        h = h @ w_hr_t
    return h, c


def _gru_step(xg: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Optional[Tensor]) -> Tensor:
    gh = h @ w_hh_t
    if b_hh is not None:
        gh = gh + b_hh
    H = h.shape[-1]
    rz = (xg[..., :2 * H] + gh[..., :2 * H]).sigmoid()
    z = rz[..., H:]
    n = (xg[..., 2 * H:] + rz[..., :H] * gh[..., 2 * H:]).tanh()
    return n + z * (h - n)  # (1 - z) * n + z * h


def _lstm_composed(xg: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """The LSTM layer of :func:`lstm_sequence` step by step from taugrad ops: ``(out, h_n, c_n)``."""
    w_hh_t = w_hh.t()
    h, c, outs = h0, c0, []
    for t in range(xg.shape[0]):
        h, c = _lstm_step(xg[t], h, c, w_hh_t, None)
        outs.append(h)
    return stack(outs), h, c


def _gru_composed(xg: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """The GRU layer of :func:`gru_sequence` step by step from taugrad ops: ``(out, h_n)``."""
    w_hh_t = w_hh.t()
    h, outs = h0, []
    for t in range(xg.shape[0]):
        h = _gru_step(xg[t], h, w_hh_t, b_hh)
        outs.append(h)
    return stack(outs), h


def _scan(step, xg: Tensor, sizes: Sequence[int], state: Tuple[Tensor, ...],
          reverse: bool) -> Tuple[Tensor, Tuple[Tensor, ...]]:
    """Run ``state = step(xg_t, *state)`` over the packed rows of ``xg``; the outputs (``state[0]`` per step,
    packed like ``xg``) and each row's final state.

    Going forward, rows whose sequence has ended leave the batch (their state is
    final); going backward, rows join the batch when their sequence starts, from
    their initial state.
    """
    offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    steps = len(sizes)
    outs: List[Optional[Tensor]] = [None] * steps
    if not reverse:
        finished: List[Tuple[Tensor, ...]] = []
        rows = sizes[0] if steps else 0
        for t in range(steps):
            b = sizes[t]
            if b < rows:
                finished.append(tuple(s[b:rows] for s in state))
                state = tuple(s[:b] for s in state)
                rows = b
            state = step(xg[offsets[t]:offsets[t + 1]], *state)
            outs[t] = state[0]
        if finished:
            state = tuple(cat([state[k]] + [f[k] for f in reversed(finished)]) for k in range(len(state)))
    else:
        initial = state
        rows = sizes[-1] if steps else 0
        if steps and rows < initial[0].shape[0]:
            state = tuple(s[:rows] for s in initial)
        for t in reversed(range(steps)):
            b = sizes[t]
            if b > rows:
                state = tuple(cat([s, s0[rows:b]]) for s, s0 in zip(state, initial))
                rows = b
            state = step(xg[offsets[t]:offsets[t + 1]], *state)
            outs[t] = state[0]
    out = cat(outs) if steps else xg[:, :0]
    return out, state


def _check_dropout(dropout: Any) -> float:
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    return float(dropout)


def _check_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be greater than zero")
    return int(value)


class RNNBase(Module):
    """The multi-layer recurrent layer behind :class:`RNN`, :class:`LSTM` and :class:`GRU` (see the module doc).

    Input ``(T, B, input_size)`` (``(B, T, input_size)`` with ``batch_first``),
    unbatched ``(T, input_size)``, or a ``PackedSequence``.  The initial state
    ``hx`` is ``(num_layers * num_directions, B, H_out)`` (zeros when None);
    the output is ``(T, B, num_directions * H_out)`` (or packed like the
    input) together with the final state.  ``dropout`` zeroes the output of
    every layer but the last in training mode.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        dev, floating = factory_kwargs(type(self).__name__, device, dtype)
        self.mode = mode
        self.dropout = _check_dropout(dropout)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        self.input_size = _check_int(input_size, "input_size")
        self.hidden_size = _check_int(hidden_size, "hidden_size")
        self.num_layers = _check_int(num_layers, "num_layers")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if isinstance(proj_size, bool) or not isinstance(proj_size, (int, np.integer)) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.bias = bias
        self.batch_first = batch_first
        self.bidirectional = bidirectional
        self.proj_size = int(proj_size)
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: List[str] = []
        self._all_weights: List[List[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for kind, shape in shapes:
                    setattr(self, kind + suffix, Parameter(np.zeros(shape, dtype=floating)))
                    names.append(kind + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()
        place(self, dev)

    def reset_parameters(self) -> None:
        """Every parameter from ``U(-k, k)``, ``k = 1 / sqrt(hidden_size)`` (PyTorch's)."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights for cuDNN here; taugrad reads them where they are."""

    @property
    def all_weights(self) -> List[List[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward --------------------------------------------------------------

    def _state_shape(self, batch: int, cell: bool) -> Tuple[int, int, int]:
        directions = 2 if self.bidirectional else 1
        size = self.hidden_size if cell or not self.proj_size else self.proj_size
        return (self.num_layers * directions, batch, size)

    def _checked_state(self, hx: Any, shape: Tuple[int, int, int], like: Tensor, msg: str) -> Tensor:
        if hx is None:
            return like.new_zeros(shape)
        hx = _as_tensor(hx)
        if tuple(hx.shape) != shape:
            raise RuntimeError(msg.format(shape, list(hx.shape)))
        if hx.dtype != like.dtype:
            raise ValueError(f"{type(self).__name__}: hx dtype ({hx.dtype}) does not match the input dtype "
                             f"({like.dtype})")
        return hx

    def forward(self, input: Any, hx: Any = None):
        name = type(self).__name__
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        if packed:
            data = _as_tensor(input.data)
            sizes = [int(b) for b in np.asarray(input.batch_sizes.detach().numpy()
                                                if isinstance(input.batch_sizes, Tensor) else input.batch_sizes)]
            batch = sizes[0]
            if data.ndim != 2:
                raise RuntimeError(f"input must have 2 dimensions, got {data.ndim}")
            unbatched = False
        else:
            x = _as_tensor(input)
            if x.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D tensor instead")
            unbatched = x.ndim == 2
            states = hx if (lstm and hx is not None) else (hx,)
            for s in states:
                if s is None:
                    continue
                want = 2 if unbatched else 3
                if _as_tensor(s).ndim != want:
                    kind = "unbatched 2-D" if unbatched else "batched 3-D"
                    raise RuntimeError(f"For {kind} input, hx{' and cx' if lstm else ''} should also be {want}-D "
                                       f"but got {_as_tensor(s).ndim}-D tensor")
            if unbatched:
                x = x.unsqueeze(1)
                if hx is not None:
                    hx = tuple(_as_tensor(s).unsqueeze(1) for s in hx) if lstm else _as_tensor(hx).unsqueeze(1)
            elif self.batch_first:
                x = x.transpose(0, 1)
            steps, batch = x.shape[0], x.shape[1]
            if steps == 0:
                raise RuntimeError(f"{name}: Expected sequence length to be larger than 0 in RNN")
            sizes = [batch] * steps
            data = x.reshape(steps * batch, x.shape[2])
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.shape[-1]}")
        weight = self._parameters[self._flat_weights_names[0]]
        if data.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({data.dtype})")
        if lstm:
            h0, c0 = (None, None) if hx is None else hx
            h0 = self._checked_state(h0, self._state_shape(batch, False), data, "Expected hidden[0] size {}, got {}")
            c0 = self._checked_state(c0, self._state_shape(batch, True), data, "Expected hidden[1] size {}, got {}")
        else:
            h0 = self._checked_state(hx, self._state_shape(batch, False), data, "Expected hidden size {}, got {}")
        if packed and input.sorted_indices is not None:
            h0 = h0.index_select(1, input.sorted_indices)
            if lstm:
                c0 = c0.index_select(1, input.sorted_indices)
        out, finals = self._layers(data, sizes, h0, c0 if lstm else None)
        h_n = stack([f[0] for f in finals])
        c_n = stack([f[1] for f in finals]) if lstm else None
        if packed:
            if input.unsorted_indices is not None:
                h_n = h_n.index_select(1, input.unsorted_indices)
                if lstm:
                    c_n = c_n.index_select(1, input.unsorted_indices)
            output = PackedSequence(out, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        else:
            output = out.reshape(len(sizes), batch, out.shape[-1])
            if unbatched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if lstm else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if lstm else h_n)

    def _layers(self, data: Tensor, sizes: List[int], h0: Tensor, c0: Optional[Tensor]):
        """All layers over the packed rows ``data``: the last layer's output and each (layer, direction)'s final
        state."""
        directions = 2 if self.bidirectional else 1
        params = self._parameters
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                names = self._all_weights[layer * directions + direction]
                w_ih, w_hh = params[names[0]], params[names[1]]
                b_ih, b_hh = (params[names[2]], params[names[3]]) if self.bias else (None, None)
                w_hr = params[names[-1]] if self.proj_size else None
                index = layer * directions + direction
                if self.mode == "GRU":
                    bias, hidden_bias = b_ih, b_hh
                else:  # both biases simply add: fold them into the one product over all steps
                    bias, hidden_bias = (b_ih + b_hh if self.bias else None), None
                xg = _linear(data, w_ih, bias)
                w_hh_t = w_hh.t()
                if self.mode == "LSTM" and w_hr is None and len(set(sizes)) == 1:
                    # every sequence as long as the batch: the whole layer as one op
                    xg3 = xg.reshape(len(sizes), sizes[0], xg.shape[-1])
                    if direction == 1:
                        xg3 = xg3.flip(0)
                    out, h_n, c_n = lstm_sequence(xg3, h0[index], c0[index], w_hh, _lstm_composed)
                    if direction == 1:
                        out = out.flip(0)
                    outs.append(out.reshape(xg.shape[0], out.shape[-1]))
                    finals.append((h_n, c_n))
                    continue
                if self.mode == "GRU" and len(set(sizes)) == 1:
                    xg3 = xg.reshape(len(sizes), sizes[0], xg.shape[-1])
                    if direction == 1:
                        xg3 = xg3.flip(0)
                    out, h_n = gru_sequence(xg3, h0[index], w_hh, hidden_bias, _gru_composed)
                    if direction == 1:
                        out = out.flip(0)
                    outs.append(out.reshape(xg.shape[0], out.shape[-1]))
                    finals.append((h_n,))
                    continue
                if self.mode == "LSTM":
                    w_hr_t = w_hr.t() if w_hr is not None else None

                    def step(x_t, h, c, w_hh_t=w_hh_t, w_hr_t=w_hr_t):
                        return _lstm_step(x_t, h, c, w_hh_t, w_hr_t)
                    state = (h0[index], c0[index])
                elif self.mode == "GRU":
                    def step(x_t, h, w_hh_t=w_hh_t, b_hh=hidden_bias):
                        return (_gru_step(x_t, h, w_hh_t, b_hh),)
                    state = (h0[index],)
                else:
                    relu = self.mode == "RNN_RELU"

                    def step(x_t, h, w_hh_t=w_hh_t, relu=relu):
                        return (_rnn_step(x_t, h, w_hh_t, relu),)
                    state = (h0[index],)
                out, final = _scan(step, xg, sizes, state, reverse=direction == 1)
                outs.append(out)
                finals.append(final)
            data = outs[0] if directions == 1 else cat(outs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                data = _dropout(data, self.dropout, True)
        return data, finals


class RNN(RNNBase):
    r"""Elman RNN: ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (``nonlinearity='relu'``: relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; ``forward(input, hx=None) -> (output, h_n)``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    r"""Long short-term memory (Hochreiter & Schmidhuber, 1997), gates in PyTorch's order ``i, f, g, o``.

    ``forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))``.  With
    ``proj_size = P > 0`` the hidden state is projected, ``h_t = W_hr (o * tanh(c_t))``,
    so ``h`` and the output have ``P`` features and ``c`` keeps ``hidden_size``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    r"""Gated recurrent unit (Cho et al., 2014), gates in PyTorch's order ``r, z, n``; the reset gate multiplies
    ``W_hn h + b_hn`` (PyTorch's variant).  ``forward(input, h_0=None) -> (output, h_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---------------------------------------------------------------------------
# cells: one time step, the same maths
# ---------------------------------------------------------------------------


class RNNCellBase(Module):
    """Parameters ``weight_ih`` ``(G * hidden, input)``, ``weight_hh`` ``(G * hidden, hidden)``, ``bias_ih``,
    ``bias_hh``, all from ``U(-1/sqrt(hidden), 1/sqrt(hidden))`` (G = 1, 4, 3 for RNN, LSTM, GRU cells)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        dev, floating = factory_kwargs(type(self).__name__, device, dtype)
        self.input_size = _check_int(input_size, "input_size")
        self.hidden_size = _check_int(hidden_size, "hidden_size")
        self.bias = bias
        self.weight_ih = Parameter(np.zeros((num_chunks * hidden_size, input_size), dtype=floating))
        self.weight_hh = Parameter(np.zeros((num_chunks * hidden_size, hidden_size), dtype=floating))
        if bias:
            self.bias_ih = Parameter(np.zeros(num_chunks * hidden_size, dtype=floating))
            self.bias_hh = Parameter(np.zeros(num_chunks * hidden_size, dtype=floating))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()
        place(self, dev)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _inputs(self, input: Any, hx: Any, states: int):
        """The input as (B, input_size) and the states as (B, hidden) (zeros when None); whether it was 1-D."""
        name = type(self).__name__
        x = _as_tensor(input)
        if x.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {x.shape[-1]} expected "
                               f"{self.input_size}")
        unbatched = x.ndim == 1
        if unbatched:
            x = x.unsqueeze(0)
        if hx is None:
            hs = [x.new_zeros((x.shape[0], self.hidden_size)) for _ in range(states)]
        else:
            hs = [_as_tensor(h) for h in (hx if states == 2 else (hx,))]
            for k, h in enumerate(hs):
                if h.ndim != (1 if unbatched else 2):
                    raise RuntimeError(f"{name}: Expected hidden to be {1 if unbatched else 2}D, got {h.ndim}D")
                if unbatched:
                    h = h.unsqueeze(0)
                if tuple(h.shape) != (x.shape[0], self.hidden_size):
                    raise RuntimeError(f"{name}: hidden{f'[{k}]' if states == 2 else ''} has inconsistent "
                                       f"hidden_size: got {tuple(h.shape)}, expected "
                                       f"{(x.shape[0], self.hidden_size)}")
                hs[k] = h
        return x, hs, unbatched

    def _gates_of_input(self, x: Tensor, fold_hidden_bias: bool) -> Tensor:
        bias = self.bias_ih
        if bias is not None and fold_hidden_bias:
            bias = bias + self.bias_hh
        return _linear(x, self.weight_ih, bias)


class RNNCell(RNNCellBase):
    r"""One Elman step: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Tensor:
        x, (h,), unbatched = self._inputs(input, hx, 1)
        out = _rnn_step(self._gates_of_input(x, True), h, self.weight_hh.t(), self.nonlinearity == "relu")
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    r"""One LSTM step: ``(h', c')`` from ``x`` and ``(h, c)`` (gates ``i, f, g, o`` as :class:`LSTM`)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Tuple[Tensor, Tensor]:
        x, (h, c), unbatched = self._inputs(input, hx, 2)
        h, c = _lstm_step(self._gates_of_input(x, True), h, c, self.weight_hh.t(), None)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    r"""One GRU step (gates ``r, z, n`` as :class:`GRU`)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Tensor:
        x, (h,), unbatched = self._inputs(input, hx, 1)
        out = _gru_step(self._gates_of_input(x, False), h, self.weight_hh.t(), self.bias_hh)
        return out.squeeze(0) if unbatched else out
