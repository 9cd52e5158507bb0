r"""One LSTM (or GRU) layer over a whole (unpacked) sequence as a single op, with its backward written out.

Built from taugrad ops, a step is a dozen nodes, and each slice of the gates
allocates a full-size zero gradient on the way back.  This op runs the same
recurrence on arrays and differentiates it by hand (back-propagation through
time); with ``G_t`` the gates' gradient (pre-activation) at step ``t``::

    dh_t  = dout_t + G_{t+1} W_hh                    (dh_T = dh_n)
    dc_t  = dc_{t+1} * f_{t+1} + dh_t * o_t * (1 - tanh(c_t)^2)      (dc_T = dc_n)
    G_t   = [dc_t g_t i_t (1 - i_t),  dc_t c_{t-1} f_t (1 - f_t),
             dc_t i_t (1 - g_t^2),    dh_t tanh(c_t) o_t (1 - o_t)]
    dW_hh = sum_t G_t^T h_{t-1}   (one product over all steps)
    dxg_t = G_t,  dh_0 = G_0 W_hh,  dc_0 = dc_0 f_0

Under ``create_graph=True`` the backward instead rebuilds the step-by-step
graph from the op's inputs and differentiates that, so higher derivatives are
exact too.
"""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np

from taugrad.grad_mode import is_grad_enabled
from taugrad.tensors.core.backend import array_module
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.custom_function import Function
from taugrad.tensors.engine import grad as _grad

__all__ = ["LSTMSequence", "GRUSequence", "lstm_sequence", "gru_sequence"]


def _sigmoid_(v, xp) -> None:
    """``v <- 1 / (1 + exp(-v))`` in place (exp overflowing to inf gives the exact limit 0)."""
    xp.negative(v, out=v)
    xp.exp(v, out=v)
    v += 1.0
    xp.reciprocal(v, out=v)


class LSTMSequence(Function):
    """``(out, h_n, c_n)`` of one LSTM layer: ``xg`` (T, B, 4H) is ``x W_ih^T + b_ih + b_hh`` for every step,
    ``h0``, ``c0`` (B, H) the initial state, ``w_hh`` (4H, H).  ``composed(xg, h0, c0, w_hh)`` must compute the
    same thing from taugrad ops (used for higher derivatives)."""

    @staticmethod
    def forward(ctx, xg: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, composed: Callable):
        x = xg._data
        xp = array_module(x)
        T, B, G = x.shape
        H = G // 4
        acts = xp.empty((T, B, G), dtype=x.dtype)  # i, f, g, o after their activations
        hs = xp.empty((T + 1, B, H), dtype=x.dtype)
        cs = xp.empty((T + 1, B, H), dtype=x.dtype)
        tcs = xp.empty((T, B, H), dtype=x.dtype)
        hs[0] = h0._data
        cs[0] = c0._data
        w_t = w_hh._data.T
        with np.errstate(over="ignore"):
            for t in range(T):
                a = acts[t]
                xp.matmul(hs[t], w_t, out=a)
                a += x[t]
                _sigmoid_(a[:, :2 * H], xp)
                xp.tanh(a[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])
                _sigmoid_(a[:, 3 * H:], xp)
                c = cs[t + 1]
                xp.multiply(a[:, H:2 * H], cs[t], out=c)
                c += a[:, :H] * a[:, 2 * H:3 * H]
                xp.tanh(c, out=tcs[t])
                xp.multiply(a[:, 3 * H:], tcs[t], out=hs[t + 1])
        ctx.arrays = (acts, hs, cs, tcs, w_hh._data)
        ctx.composed = composed
        ctx.save_for_backward(xg, h0, c0, w_hh)
        return Tensor(hs[1:]), Tensor(hs[T].copy()), Tensor(cs[T].copy())

    @staticmethod
    def backward(ctx, g_out: Tensor, g_hn: Tensor, g_cn: Tensor):
        if is_grad_enabled():  # create_graph: differentiate the step-by-step graph instead
            inputs = ctx.saved_tensors
            out, h_n, c_n = ctx.composed(*inputs)
            wanted = [k for k, t in enumerate(inputs) if t.requires_grad]
            found = _grad([out, h_n, c_n], [inputs[k] for k in wanted], [g_out, g_hn, g_cn], create_graph=True,
                          allow_unused=True)
            grads = [None] * (len(inputs) + 1)
            for k, g in zip(wanted, found):
                grads[k] = g
            return tuple(grads)
        acts, hs, cs, tcs, w = ctx.arrays
        xp = array_module(acts)
        T, B, G = acts.shape
        H = G // 4
        dout = g_out._data
        dh = g_hn._data.astype(acts.dtype, copy=True)
        dc = g_cn._data.astype(acts.dtype, copy=True)
        dG = xp.empty_like(acts)
        for t in reversed(range(T)):
            a, d = acts[t], dG[t]
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            tc = tcs[t]
            dh += dout[t]
            # output gate: dh * tanh(c) * o (1 - o)
            do = d[:, 3 * H:]
            xp.multiply(dh, tc, out=do)
            do *= o
            do *= 1.0 - o
            # the cell: dc += dh * o * (1 - tanh(c)^2)
            dc += dh * o * (1.0 - tc * tc)
            di, df, dg = d[:, :H], d[:, H:2 * H], d[:, 2 * H:3 * H]
            xp.multiply(dc, g, out=di)
            di *= i
            di *= 1.0 - i
            xp.multiply(dc, cs[t], out=df)
            df *= f
            df *= 1.0 - f
            xp.multiply(dc, i, out=dg)
            dg *= 1.0 - g * g
            dc *= f
            xp.matmul(d, w, out=dh)
        d_w = dG.reshape(T * B, G).T @ hs[:T].reshape(T * B, H)
        return dG, dh, dc, d_w, None


def lstm_sequence(xg: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor,
                  composed: Callable) -> Tuple[Tensor, Tensor, Tensor]:
    """:class:`LSTMSequence` applied: ``(out (T, B, H), h_n, c_n)``."""
    return LSTMSequence.apply(xg, h0, c0, w_hh, composed)


class GRUSequence(Function):
    r"""``(out, h_n)`` of one GRU layer over a whole unpacked sequence, as :class:`LSTMSequence` does for the LSTM.

    ``xg`` (T, B, 3H) is ``x W_ih^T + b_ih``, ``gh_t = h_{t-1} W_hh^T + b_hh``; per step
    ``r, z = sigmoid(xg_{r,z} + gh_{r,z})``, ``n = tanh(xg_n + r gh_n)``, ``h_t = n + z (h_{t-1} - n)``.
    Backward, with ``dh_t`` the gradient reaching ``h_t``::

        dn~ = dh (1 - z) (1 - n^2),   dr~ = dn~ gh_n r (1 - r),   dz~ = dh (h_{t-1} - n) z (1 - z)
        dxg_t = [dr~, dz~, dn~],      dgh_t = [dr~, dz~, dn~ r]
        dh_{t-1} = dh z + dgh_t W_hh,  dW_hh = sum_t dgh_t^T h_{t-1},  db_hh = sum_t dgh_t
    """

    @staticmethod
    def forward(ctx, xg: Tensor, h0: Tensor, w_hh: Tensor, b_hh, composed: Callable):
        x = xg._data
        xp = array_module(x)
        T, B, G = x.shape
        H = G // 3
        hs = xp.empty((T + 1, B, H), dtype=x.dtype)
        gates = xp.empty((T, B, G), dtype=x.dtype)  # r, z, n after their activations
        ghn = xp.empty((T, B, H), dtype=x.dtype)    # W_hn h + b_hn, which r multiplies
        hs[0] = h0._data
        w_t = w_hh._data.T
        bias = None if b_hh is None else b_hh._data
        gh = xp.empty((B, G), dtype=x.dtype)
        with np.errstate(over="ignore"):
            for t in range(T):
                xp.matmul(hs[t], w_t, out=gh)
                if bias is not None:
                    gh += bias
                a = gates[t]
                xp.add(x[t, :, :2 * H], gh[:, :2 * H], out=a[:, :2 * H])
                _sigmoid_(a[:, :2 * H], xp)
                ghn[t] = gh[:, 2 * H:]
                n = a[:, 2 * H:]
                xp.multiply(a[:, :H], ghn[t], out=n)
                n += x[t, :, 2 * H:]
                xp.tanh(n, out=n)
                h = hs[t + 1]
                xp.subtract(hs[t], n, out=h)
                h *= a[:, H:2 * H]
                h += n
        ctx.arrays = (gates, ghn, hs, w_hh._data)
        ctx.composed = composed
        ctx.has_bias = b_hh is not None
        ctx.save_for_backward(xg, h0, w_hh, b_hh)
        return Tensor(hs[1:]), Tensor(hs[T].copy())

    @staticmethod
    def backward(ctx, g_out: Tensor, g_hn: Tensor):
        if is_grad_enabled():  # create_graph: differentiate the step-by-step graph instead
            inputs = ctx.saved_tensors
            out, h_n = ctx.composed(*inputs)
            wanted = [k for k, t in enumerate(inputs) if t is not None and t.requires_grad]
            found = _grad([out, h_n], [inputs[k] for k in wanted], [g_out, g_hn], create_graph=True,
                          allow_unused=True)
            grads = [None] * (len(inputs) + 1)
            for k, g in zip(wanted, found):
                grads[k] = g
            return tuple(grads)
        gates, ghn, hs, w = ctx.arrays
        xp = array_module(gates)
        T, B, G = gates.shape
        H = G // 3
        dout = g_out._data
        dh = g_hn._data.astype(gates.dtype, copy=True)
        dx = xp.empty_like(gates)
        dgh = xp.empty_like(gates)
        for t in reversed(range(T)):
            a = gates[t]
            r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
            dh += dout[t]
            d, e = dx[t], dgh[t]
            dn = d[:, 2 * H:]
            xp.multiply(dh, 1.0 - z, out=dn)
            dn *= 1.0 - n * n
            dr = d[:, :H]
            xp.multiply(dn, ghn[t], out=dr)
            dr *= r
            dr *= 1.0 - r
            dz = d[:, H:2 * H]
            xp.subtract(hs[t], n, out=dz)
            dz *= dh
            dz *= z
            dz *= 1.0 - z
            e[:, :2 * H] = d[:, :2 * H]
            xp.multiply(dn, r, out=e[:, 2 * H:])
            dh *= z
            dh += e @ w
        d_w = dgh.reshape(T * B, G).T @ hs[:T].reshape(T * B, H)
        d_b = dgh.reshape(T * B, G).sum(0) if ctx.has_bias else None
        return dx, dh, d_w, d_b, None


def gru_sequence(xg: Tensor, h0: Tensor, w_hh: Tensor, b_hh, composed: Callable) -> Tuple[Tensor, Tensor]:
    """:class:`GRUSequence` applied: ``(out (T, B, H), h_n)``."""
    return GRUSequence.apply(xg, h0, w_hh, b_hh, composed)
