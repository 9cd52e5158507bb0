"""makemore lectures 1-5 (bigrams, MLP, BatchNorm, manual backprop, WaveNet) with ``import taugrad as torch``.

Each program below is written as in the lectures (the same torch calls, in the same order), as a
function of the library, run once with taugrad and once with torch on the same generated names
from the same initial weights (drawn with NumPy, since the two random streams differ) and the same
minibatches; the losses must agree step by step.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
import taugrad.nn.functional as tF
import torch.nn.functional as pF

from ._compare import assert_close_steps

LIBS = [(taugrad, tF), (torch, pF)]


def make_words(n=200, seed=0):
    """Name-like words: a few hundred strings of 2-8 lowercase letters (the shape of names.txt)."""
    rng = np.random.default_rng(seed)
    syllables = ["an", "el", "ma", "ri", "jo", "ka", "ly", "sa", "be", "th", "o", "z", "ia", "qu", "ex"]
    return ["".join(rng.choice(syllables, size=rng.integers(1, 4))) for _ in range(n)]


WORDS = make_words()
CHARS = sorted(set("".join(WORDS)))
STOI = {s: i + 1 for i, s in enumerate(CHARS)}
STOI["."] = 0
V = len(STOI)


# -- lecture 1: bigram counts and the one-layer neural net -------------------------------------------

def bigram_program(torch, F, W0, steps=5):
    N = torch.zeros((V, V), dtype=torch.int32)
    for w in WORDS:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[STOI[ch1], STOI[ch2]] += 1
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    log_likelihood = 0.0
    n = 0
    for w in WORDS:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            log_likelihood += torch.log(P[STOI[ch1], STOI[ch2]])
            n += 1
    losses = [(-log_likelihood / n).item()]

    xs, ys = [], []
    for w in WORDS:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            xs.append(STOI[ch1])
            ys.append(STOI[ch2])
    xs, ys = torch.tensor(xs), torch.tensor(ys)
    num = xs.nelement()
    W = torch.tensor(W0, requires_grad=True)
    for k in range(steps):
        xenc = F.one_hot(xs, num_classes=V).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
        losses.append(loss.item())
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad
    return losses


def test_lecture1_bigrams_counts_and_neural_net():
    W0 = np.random.default_rng(1).standard_normal((V, V)).astype(np.float32)
    ours, theirs = (bigram_program(lib, F, W0) for lib, F in LIBS)
    assert_close_steps(ours, theirs)


# -- lecture 2: the MLP on character contexts -------------------------------------------------------

def build_dataset(torch, words, block_size=3):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = STOI[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


def mlp_init(seed=2, n_embd=2, n_hidden=50):
    rng = np.random.default_rng(seed)
    r = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {"C": r(V, n_embd), "W1": r(3 * n_embd, n_hidden), "b1": r(n_hidden),
            "W2": r(n_hidden, V), "b2": r(V)}


def mlp_program(torch, F, init, batches):
    Xtr, Ytr = build_dataset(torch, WORDS[:160])
    Xdev, Ydev = build_dataset(torch, WORDS[160:])
    C, W1, b1, W2, b2 = (torch.tensor(init[k]) for k in ("C", "W1", "b1", "W2", "b2"))
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    lossi = []
    for i, ix in enumerate(batches):
        ix = torch.tensor(ix)
        emb = C[Xtr[ix]]
        h = torch.tanh(emb.view(-1, W1.shape[0]) @ W1 + b1)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Ytr[ix])
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < len(batches) // 2 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.log10().item())
    emb = C[Xdev]
    h = torch.tanh(emb.view(-1, W1.shape[0]) @ W1 + b1)
    lossi.append(F.cross_entropy(h @ W2 + b2, Ydev).item())
    return lossi


def test_lecture2_mlp_training_and_dev_loss():
    n = len(build_dataset(torch, WORDS[:160])[1])
    batches = np.random.default_rng(3).integers(0, n, (20, 32))
    init = mlp_init()
    ours, theirs = (mlp_program(lib, F, init, batches) for lib, F in LIBS)
    assert_close_steps(ours, theirs)


# -- lecture 3: hand-written layers with BatchNorm, retain_grad and update-to-data ratios --------------

def bn_layers(torch):
    """The lecture's own layer classes, over the given library."""

    class Linear:
        def __init__(self, weight, bias=None):
            self.weight = torch.tensor(weight)
            self.bias = None if bias is None else torch.tensor(bias)

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps, self.momentum, self.training = eps, momentum, True
            self.gamma, self.beta = torch.ones(dim), torch.zeros(dim)
            self.running_mean, self.running_var = torch.zeros(dim), torch.ones(dim)

        def __call__(self, x):
            if self.training:
                xmean = x.mean(0, keepdim=True)
                xvar = x.var(0, keepdim=True)
            else:
                xmean, xvar = self.running_mean, self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    return Linear, BatchNorm1d, Tanh


def batchnorm_program(torch, F, init, batches, n_embd=4, n_hidden=16):
    Linear, BatchNorm1d, Tanh = bn_layers(torch)
    Xtr, Ytr = build_dataset(torch, WORDS)
    C = torch.tensor(init["C"])
    layers = [
        Linear(init["W1"] / (3 * n_embd) ** 0.5), BatchNorm1d(n_hidden), Tanh(),
        Linear(init["W2"] / n_hidden ** 0.5), BatchNorm1d(V),
    ]
    with torch.no_grad():
        layers[-1].gamma *= 0.1
        for layer in layers[:-1]:
            if isinstance(layer, Linear):
                layer.weight *= 5 / 3
    parameters = [C] + [p for layer in layers for p in layer.parameters()]
    for p in parameters:
        p.requires_grad = True
    lossi, ud = [], []
    for i, ix in enumerate(batches):
        ix = torch.tensor(ix)
        x = C[Xtr[ix]].view(len(ix), -1)
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(x, Ytr[ix])
        for layer in layers:
            layer.out.retain_grad()
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
        with torch.no_grad():
            ud.append([((0.1 * p.grad).std() / p.data.std()).log10().item() for p in parameters])
        lossi.append(loss.item())
    saturation = (layers[2].out.abs() > 0.97).float().mean().item()
    grads = [layer.out.grad.std().item() for layer in layers]
    for layer in layers:
        layer.training = False
    with torch.no_grad():
        x = C[Xtr].view(Xtr.shape[0], -1)
        for layer in layers:
            x = layer(x)
        lossi.append(F.cross_entropy(x, Ytr).item())
    return lossi + [saturation] + grads + [r for row in ud for r in row]


def test_lecture3_batchnorm_layers_statistics_and_ratios():
    rng = np.random.default_rng(4)
    init = {"C": rng.standard_normal((V, 4)).astype(np.float32),
            "W1": rng.standard_normal((12, 16)).astype(np.float32),
            "W2": rng.standard_normal((16, V)).astype(np.float32)}
    n = len(build_dataset(torch, WORDS)[1])
    batches = rng.integers(0, n, (10, 32))
    ours, theirs = (batchnorm_program(lib, F, init, batches) for lib, F in LIBS)
    assert_close_steps(ours, theirs)


# -- lecture 4: backprop by hand, checked against autograd -----------------------------------------

def manual_backprop_program(torch, F, init, ix):
    """Forward in small steps, then each step's gradient written by hand; returns the max differences
    between the hand-written gradients and autograd's, and the values of both."""
    Xtr, Ytr = build_dataset(torch, WORDS)
    C, W1, b1, W2, b2, bngain, bnbias = (torch.tensor(init[k]) for k in ("C", "W1", "b1", "W2", "b2", "g", "b"))
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    ix = torch.tensor(ix)
    Xb, Yb = Xtr[ix], Ytr[ix]
    n = Xb.shape[0]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h,
              hpreact, bnraw, bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani, embcat, emb]:
        t.retain_grad()
    loss.backward()

    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum ** -2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h ** 2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnraw = bngain * dhpreact
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbndiff = bnvar_inv * dbnraw
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
    dbnvar = (-0.5 * (bnvar + 1e-5) ** -1.5) * dbnvar_inv
    dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
    dbndiff += (2 * bndiff) * dbndiff2
    dhprebn = dbndiff.clone()
    dbnmeani = (-dbndiff).sum(0)
    dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            dC[Xb[k, j]] += demb[k, j]

    # the fused cross-entropy and batchnorm backward of the exercises 2 and 3
    dlogits_fused = F.softmax(logits, 1)
    dlogits_fused[range(n), Yb] -= 1
    dlogits_fused /= n
    dhprebn_fused = bngain * bnvar_inv / n * (
        n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))

    pairs = [(dlogprobs, logprobs), (dprobs, probs), (dcounts, counts), (dlogits, logits), (dh, h),
             (dW2, W2), (db2, b2), (dhpreact, hpreact), (dbngain, bngain), (dbnbias, bnbias),
             (dbnvar, bnvar), (dhprebn, hprebn), (dW1, W1), (db1, b1), (demb, emb), (dC, C),
             (dlogits_fused, logits), (dhprebn_fused, hprebn)]
    values = [loss.item()] + [d.sum().item() for d, _ in pairs]
    return values, [(d - t.grad).abs().max().item() for d, t in pairs]


def test_lecture4_manual_backprop_matches_autograd_and_torch():
    rng = np.random.default_rng(5)
    init = {"C": rng.standard_normal((V, 4)), "W1": rng.standard_normal((12, 16)) * 0.3,
            "b1": rng.standard_normal(16) * 0.1, "W2": rng.standard_normal((16, V)) * 0.1,
            "b2": rng.standard_normal(V) * 0.1, "g": 1 + rng.standard_normal((1, 16)) * 0.1,
            "b": rng.standard_normal((1, 16)) * 0.1}
    n = len(build_dataset(torch, WORDS)[1])
    ix = rng.integers(0, n, 32)
    (ours, our_diffs), (theirs, _) = (manual_backprop_program(lib, F, init, ix) for lib, F in LIBS)
    assert_close_steps(ours, theirs, "float64")
    assert max(our_diffs) < 1e-12  # float64: the hand-written gradients equal taugrad's autograd


# -- lecture 5: the WaveNet-style hierarchy with the lecture's own container classes ----------------

def wavenet_layers(torch):
    Linear, _, Tanh = bn_layers(torch)

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps, self.momentum, self.training = eps, momentum, True
            self.gamma, self.beta = torch.ones(dim), torch.zeros(dim)
            self.running_mean, self.running_var = torch.zeros(dim), torch.ones(dim)

        def __call__(self, x):
            if self.training:
                dim = 0 if x.ndim == 2 else (0, 1)
                xmean = x.mean(dim, keepdim=True)
                xvar = x.var(dim, keepdim=True)
            else:
                xmean, xvar = self.running_mean, self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Embedding:
        def __init__(self, weight):
            self.weight = torch.tensor(weight)

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    return Linear, BatchNorm1d, Tanh, Embedding, FlattenConsecutive, Sequential


def wavenet_program(torch, F, init, batches, n_embd=4, n_hidden=12):
    Linear, BatchNorm1d, Tanh, Embedding, FlattenConsecutive, Sequential = wavenet_layers(torch)
    Xtr, Ytr = build_dataset(torch, WORDS, block_size=8)
    model = Sequential([
        Embedding(init["E"]),
        FlattenConsecutive(2), Linear(init["W1"]), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(init["W2"]), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(init["W3"]), BatchNorm1d(n_hidden), Tanh(),
        Linear(init["W4"], init["b4"]),
    ])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1
    parameters = model.parameters()
    for p in parameters:
        p.requires_grad = True
    lossi = []
    for i, ix in enumerate(batches):
        ix = torch.tensor(ix)
        logits = model(Xtr[ix])
        loss = F.cross_entropy(logits, Ytr[ix])
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 6 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.item())
    curve = torch.tensor(lossi).view(-1, 2).mean(1).tolist()
    for layer in model.layers:
        layer.training = False
    with torch.no_grad():
        lossi.append(F.cross_entropy(model(Xtr[:50]), Ytr[:50]).item())
    return lossi + curve


def test_lecture5_wavenet_hierarchy():
    rng = np.random.default_rng(6)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    init = {"E": f(V, 4), "W1": f(8, 12) / 8 ** 0.5, "W2": f(24, 12) / 24 ** 0.5,
            "W3": f(24, 12) / 24 ** 0.5, "W4": f(12, V) / 12 ** 0.5, "b4": np.zeros(V, np.float32)}
    n = len(build_dataset(torch, WORDS, block_size=8)[1])
    batches = rng.integers(0, n, (10, 32))
    ours, theirs = (wavenet_program(lib, F, init, batches) for lib, F in LIBS)
    assert_close_steps(ours, theirs)
