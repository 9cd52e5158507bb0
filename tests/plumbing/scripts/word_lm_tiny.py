"""A word language model trained, saved whole, reloaded and exported, in word_language_model's idiom.

``python word_lm_tiny.py --data DIR --model LSTM`` with PyTorch, or ``taugrad run word_lm_tiny.py ...``:
the weights come from NumPy with a fixed seed, so both print the same numbers.  ``--dump F`` writes the
reloaded model's output for the export's dummy input to ``F`` (a .npy, the model in float32, as ONNX Runtime's
recurrent kernels want it); ``--onnx-export F`` exports it.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.onnx

from word_lm_model import PositionalEncoding, RNNModel, TransformerModel

parser = argparse.ArgumentParser()
parser.add_argument('--data', type=str, required=True)
parser.add_argument('--model', type=str, default='LSTM')
parser.add_argument('--tied', action='store_true')
parser.add_argument('--save', type=str, default='model.pt')
parser.add_argument('--onnx-export', type=str, default='')
parser.add_argument('--dump', type=str, default='')
args = parser.parse_args()
torch.set_default_dtype(torch.float64)
bptt, batch_size, eval_batch_size = 5, 3, 2


def tokenize(path, dictionary):
    ids = []
    with open(path, 'r', encoding="utf8") as f:
        for line in f:
            for word in line.split() + ['<eos>']:
                dictionary.setdefault(word, len(dictionary))
                ids.append(dictionary[word])
    return torch.tensor(ids).type(torch.int64)


dictionary = {}
train_ids, valid_ids, test_ids = (tokenize(os.path.join(args.data, f'{n}.txt'), dictionary)
                                  for n in ('train', 'valid', 'test'))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


train_data = batchify(train_ids, batch_size)
val_data = batchify(valid_ids, eval_batch_size)
test_data = batchify(test_ids, eval_batch_size)
ntokens = len(dictionary)
if args.model == 'Transformer':
    model = TransformerModel(ntokens, 8, 2, 8, 2, dropout=0.0)
else:
    model = RNNModel(args.model, ntokens, 8, 8, 2, dropout=0.0, tie_weights=args.tied)
rng = np.random.default_rng(0)
with torch.no_grad():
    for name, p in sorted(model.named_parameters()):
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, tuple(p.shape))))
criterion = nn.NLLLoss()


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    if args.model != 'Transformer':
        hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            if args.model == 'Transformer':
                output = model(data).view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


model.train()
lr = 5.0
if args.model != 'Transformer':
    hidden = model.init_hidden(batch_size)
for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
    data, targets = get_batch(train_data, i)
    model.zero_grad()
    if args.model == 'Transformer':
        output = model(data).view(-1, ntokens)
    else:
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    print(f'batch {batch}: loss {loss.item():.8f} grad norm {float(norm):.8f}')
val_loss = evaluate(val_data)
print(f'valid loss {val_loss:.8f}')
with open(args.save, 'wb') as f:
    torch.save(model, f)

with open(args.save, 'rb') as f:
    safe_globals = [PositionalEncoding, RNNModel, TransformerModel, torch.nn.functional.relu,
                    torch.nn.modules.activation.MultiheadAttention, torch.nn.modules.container.ModuleList,
                    torch.nn.modules.dropout.Dropout, torch.nn.modules.linear.Linear,
                    torch.nn.modules.linear.NonDynamicallyQuantizableLinear,
                    torch.nn.modules.normalization.LayerNorm, torch.nn.modules.sparse.Embedding,
                    torch.nn.modules.rnn.GRU, torch.nn.modules.rnn.LSTM, torch.nn.modules.rnn.RNN,
                    torch.nn.modules.transformer.TransformerEncoder,
                    torch.nn.modules.transformer.TransformerEncoderLayer]
    with torch.serialization.safe_globals(safe_globals):
        model = torch.load(f)
    if args.model in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
        model.rnn.flatten_parameters()
print(f'reloaded {type(model).__name__}, tied {model.decoder.weight is model.encoder.weight}'
      if args.model != 'Transformer' else f'reloaded {type(model).__name__}')
print(f'test loss {evaluate(test_data):.8f}')

if args.model != 'Transformer':
    model = model.float()  # ONNX Runtime's LSTM and GRU kernels take float32 only
    model.eval()
    dummy_input = torch.LongTensor(bptt * 1).zero_().view(-1, 1)
    hidden = model.init_hidden(1)
    if args.dump:
        with torch.no_grad():
            np.save(args.dump, model(dummy_input, hidden)[0].numpy())
    if args.onnx_export:
        torch.onnx.export(model, (dummy_input, hidden), args.onnx_export)
        print('exported to ONNX')
