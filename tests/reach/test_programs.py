"""The models of pytorch/examples that use these modules, written once against a library ``lib`` (torch or
taugrad) as the examples write them, run from the same weights: the same losses and gradients (float64)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import taugrad as tg

RNG = np.random.default_rng(3)


def rnn_model(lib, rnn_type, ntoken, ninp, nhid, nlayers):
    """word_language_model's RNNModel (encoder, recurrent core, decoder; dropout off for comparison)."""
    nn = lib.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.0)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=0.0)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, ntoken)
            return lib.nn.functional.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if rnn_type == "LSTM":
                return (weight.new_zeros((nlayers, bsz, nhid)), weight.new_zeros((nlayers, bsz, nhid)))
            return weight.new_zeros((nlayers, bsz, nhid))

    return RNNModel()


def transformer_model(lib, ntoken, ninp, nhead, nhid, nlayers):
    """word_language_model's TransformerModel: a subclass of nn.Transformer that replaces its decoder."""
    nn = lib.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=50):
            super().__init__()
            self.dropout = nn.Dropout(p=0.0)
            pe = lib.zeros(max_len, d_model)
            position = lib.arange(0, max_len, dtype=lib.float).unsqueeze(1)
            div_term = lib.exp(lib.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = lib.sin(position * div_term)
            pe[:, 1::2] = lib.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        def __init__(self):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                             dropout=0.0)
            self.model_type = "Transformer"
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)

        def _generate_square_subsequent_mask(self, sz):
            return lib.log(lib.tril(lib.ones(sz, sz)))

        def forward(self, src):
            mask = self._generate_square_subsequent_mask(len(src)).double()
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=mask)
            output = self.decoder(output)
            return lib.nn.functional.log_softmax(output, dim=-1)

    return TransformerModel()


def load(ours, theirs):
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def compare_grads(ours, theirs):
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        if q.grad is None:
            assert p.grad is None, name
            continue
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-11, err_msg=name)


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU", "RNN"])
def test_word_language_model_rnn(rnn_type):
    torch.manual_seed(0)
    theirs = rnn_model(torch, rnn_type, 30, 8, 12, 2).double()
    ours = rnn_model(tg, rnn_type, 30, 8, 12, 2).double()
    load(ours, theirs)
    data = RNG.integers(0, 30, (7, 3))
    targets = RNG.integers(0, 30, 21)
    h_t, h_o = theirs.init_hidden(3), ours.init_hidden(3)
    for _ in range(2):  # two batches, the hidden state carried over (detached, as repackage_hidden does)
        out_t, h_t = theirs(torch.tensor(data), h_t)
        out_o, h_o = ours(tg.tensor(data), h_o)
        loss_t = torch.nn.functional.nll_loss(out_t, torch.tensor(targets))
        loss_o = tg.nn.functional.nll_loss(out_o, tg.tensor(targets))
        assert abs(float(loss_t) - float(loss_o)) < 1e-12
        theirs.zero_grad()
        ours.zero_grad()
        loss_t.backward()
        loss_o.backward()
        compare_grads(ours, theirs)
        h_t = tuple(h.detach() for h in h_t) if rnn_type == "LSTM" else h_t.detach()
        h_o = tuple(h.detach() for h in h_o) if rnn_type == "LSTM" else h_o.detach()


def test_word_language_model_transformer():
    torch.manual_seed(0)
    theirs = transformer_model(torch, 30, 8, 2, 16, 2).double()
    ours = transformer_model(tg, 30, 8, 2, 16, 2).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load(ours, theirs)
    data = RNG.integers(0, 30, (6, 2))
    targets = RNG.integers(0, 30, 12)
    out_t = theirs(torch.tensor(data)).view(-1, 30)
    out_o = ours(tg.tensor(data)).view(-1, 30)
    loss_t = torch.nn.functional.nll_loss(out_t, torch.tensor(targets))
    loss_o = tg.nn.functional.nll_loss(out_o, tg.tensor(targets))
    assert abs(float(loss_t) - float(loss_o)) < 1e-12
    loss_t.backward()
    loss_o.backward()
    compare_grads(ours, theirs)


def test_time_sequence_prediction_lstm_cells():
    """time_sequence_prediction's Sequence: two LSTMCells and a Linear, unrolled, then predicting ahead."""

    def sequence(lib):
        nn = lib.nn

        class Sequence(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm1 = nn.LSTMCell(1, 12)
                self.lstm2 = nn.LSTMCell(12, 12)
                self.linear = nn.Linear(12, 1)

            def forward(self, input, future=0):
                outputs = []
                h_t = lib.zeros(input.size(0), 12, dtype=lib.double)
                c_t = lib.zeros(input.size(0), 12, dtype=lib.double)
                h_t2 = lib.zeros(input.size(0), 12, dtype=lib.double)
                c_t2 = lib.zeros(input.size(0), 12, dtype=lib.double)
                for input_t in input.split(1, dim=1):
                    h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                    h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                    output = self.linear(h_t2)
                    outputs += [output]
                for _ in range(future):
                    h_t, c_t = self.lstm1(output, (h_t, c_t))
                    h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                    output = self.linear(h_t2)
                    outputs += [output]
                return lib.cat(outputs, dim=1)

        return Sequence()

    torch.manual_seed(0)
    theirs = sequence(torch).double()
    ours = sequence(tg).double()
    load(ours, theirs)
    x = np.sin(np.arange(10)[None, :] / 3.0 + RNG.uniform(0, 3, (3, 1)))
    out_t = theirs(torch.tensor(x), future=4)
    out_o = ours(tg.tensor(x), future=4)
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    ((out_t[:, :-4] - torch.tensor(x)) ** 2).mean().backward()
    ((out_o[:, :-4] - tg.tensor(x)) ** 2).mean().backward()
    compare_grads(ours, theirs)


def test_reinforce_policy_gradient():
    """reinforcement_learning/reinforce.py's update: -log_prob(action) * return, summed, backward."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).double()
    ours = tg.nn.Sequential(tg.nn.Linear(4, 16), tg.nn.ReLU(), tg.nn.Linear(16, 2)).double()
    load(ours, theirs)
    states = RNG.standard_normal((5, 4))
    returns = RNG.standard_normal(5)
    tg.manual_seed(0)
    policy = tg.distributions.Categorical(logits=ours(tg.tensor(states)))
    actions = policy.sample()
    assert set(actions.numpy().tolist()) <= {0, 1}
    loss_o = (-policy.log_prob(actions) * tg.tensor(returns)).sum()
    probs_t = torch.softmax(theirs(torch.tensor(states)), dim=-1)  # the example builds Categorical(probs)
    policy_t = torch.distributions.Categorical(probs_t)
    loss_t = (-policy_t.log_prob(torch.tensor(actions.numpy())) * torch.tensor(returns)).sum()
    assert abs(float(loss_o) - float(loss_t)) < 1e-12
    loss_o.backward()
    loss_t.backward()
    compare_grads(ours, theirs)
