"""A graph convolutional network on a Cora-format data set, in pytorch/examples gcn's idiom.

``python gcn_tiny.py --data DIR`` with PyTorch, or ``taugrad run gcn_tiny.py --data DIR``: DIR holds
cora.content and cora.cites.  Weights and the split come from NumPy with a fixed seed, dropout is 0 and
everything is float64, so both print the same numbers.
"""
import argparse
import os

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.optim import Adam


class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=False):
        super(GraphConv, self).__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel)
        output = torch.spmm(adj_mat, support)
        if self.bias is not None:
            output = output + self.bias
        return output


class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super(GCN, self).__init__()
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x)
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def load_cora(path, device='cpu'):
    content_tensor = np.genfromtxt(os.path.join(path, 'cora.content'), dtype=np.dtype(str))
    cites_tensor = np.genfromtxt(os.path.join(path, 'cora.cites'), dtype=np.int32)

    features = torch.from_numpy(content_tensor[:, 1:-1].astype(np.float64))
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float('inf')] = 0
    scale_vector = torch.diag(scale_vector).to_sparse()
    features = scale_vector @ features

    classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)
    labels = torch.LongTensor(labels)

    idx = content_tensor[:, 0].astype(np.int32)
    idx_map = {id: pos for pos, id in enumerate(idx)}
    edges = np.array(list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]], cites_tensor)), dtype=np.int32)

    V = len(idx)
    E = edges.shape[0]
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj_mat = torch.eye(V) + adj_mat

    degree_mat = torch.sum(adj_mat, dim=1)
    degree_mat = torch.sqrt(1 / degree_mat)
    degree_mat[degree_mat == float('inf')] = 0
    degree_mat = torch.diag(degree_mat).to_sparse()

    adj_mat = degree_mat @ adj_mat @ degree_mat
    return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


parser = argparse.ArgumentParser()
parser.add_argument('--data', type=str, required=True)
parser.add_argument('--epochs', type=int, default=5)
args = parser.parse_args()
torch.set_default_dtype(torch.float64)
device = torch.device('cpu')

features, labels, adj_mat = load_cora(args.data, device=device)
rng = np.random.default_rng(0)
idx = torch.from_numpy(rng.permutation(len(labels))).to(device)
idx_test, idx_val, idx_train = idx[:6], idx[6:10], idx[10:]

gcn = GCN(features.shape[1], 4, labels.max().item() + 1, True, 0.0).to(device)
with torch.no_grad():
    for name, p in sorted(gcn.named_parameters()):
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
optimizer = Adam(gcn.parameters(), lr=0.05, weight_decay=5e-4)
criterion = nn.NLLLoss()

for epoch in range(args.epochs):
    gcn.train()
    optimizer.zero_grad()
    output = gcn(features, adj_mat)
    loss = criterion(output[idx_train], labels[idx_train])
    loss.backward()
    optimizer.step()
    loss_val, acc_val = test(gcn, criterion, (features, adj_mat), labels, idx_val)
    print(f'epoch {epoch + 1}: loss_train {loss.item():.8f} kernel grad {gcn.gc1.kernel.grad.abs().sum().item():.8f} '
          f'loss_val {loss_val:.8f} acc_val {acc_val:.4f}')
loss_test, acc_test = test(gcn, criterion, (features, adj_mat), labels, idx_test)
print(f'test loss {loss_test:.8f} accuracy {acc_test:.4f} adjacency nnz {adj_mat._nnz()}')
