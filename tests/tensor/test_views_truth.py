"""Views tell the truth, as PyTorch's: memory sharing, strides, contiguity, and ``view``'s refusals.

For each op PyTorch documents as a view, the result must share memory with
its base (writing through it changes the base), and ``stride()`` (in
elements) and ``is_contiguous()`` must be PyTorch's.  ``view`` refuses, with
PyTorch's one-line RuntimeError, a shape its input's strides cannot give;
``reshape`` copies then.  ``contiguous()`` is the tensor itself when it is
contiguous, else a row-major copy linked to the graph (``CloneBackward0``).
"""
import numpy as np
import pytest
import torch

import taugrad

BASE = np.arange(24.0).reshape(4, 6)

#: name -> the same view op written for either library
VIEWS = {
    "view": lambda x: x.view(6, 4),
    "view -1": lambda x: x.view(-1),
    "view of a slice": lambda x: x[1:3].view(2, 2, 3),
    "view keeps a strided dim": lambda x: x[:, ::2].view(4, 3, 1),
    "view_as": lambda x: x.view_as(x.reshape(8, 3)),
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "expand": lambda x: x[:1].expand(3, 6),
    "narrow": lambda x: x.narrow(1, 2, 3),
    "select": lambda x: x.select(1, 2),
    "basic slices": lambda x: x[1:, ::2],
    "int index": lambda x: x[2],
    "ellipsis": lambda x: x[..., 1],
    "None index": lambda x: x[None],
    "None inside": lambda x: x[:, None],
    "unsqueeze": lambda x: x.unsqueeze(1),
    "unsqueeze 0": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x[:1].squeeze(),
    "squeeze dim": lambda x: x[:1].squeeze(0),
    "flatten": lambda x: x.flatten(),
    "flatten keeps a view": lambda x: x[1:].flatten(),
    "reshape": lambda x: x.reshape(3, 8),
    "unflatten": lambda x: x.unflatten(1, (2, 3)),
    "diagonal": lambda x: x.diagonal(),
    "diagonal offset": lambda x: x.diagonal(1),
    "diagonal of the transpose": lambda x: x.t().diagonal(-1),
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(2, 0)[1],
    "unbind": lambda x: x.unbind(1)[2],
    "detach": lambda x: x.detach(),
    "contiguous of a contiguous tensor": lambda x: x.contiguous(),
    "t of a slice": lambda x: x[:, 1:].t(),
}

#: ops that copy (in both libraries): not views, row-major results
COPIES = {
    "reshape of a transpose": lambda x: x.t().reshape(-1),
    "flatten of a transpose": lambda x: x.t().flatten(),
    "contiguous of a transpose": lambda x: x.t().contiguous(),
    "contiguous of a slice": lambda x: x[:, ::2].contiguous(),
}


def _both(op):
    ours_base, theirs_base = taugrad.tensor(BASE.copy()), torch.tensor(BASE.copy())
    return ours_base, op(ours_base), theirs_base, op(theirs_base)


def _torch_shares(view, base):
    return view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_view_has_torch_strides_contiguity_and_shares_memory(name):
    ours_base, ours, theirs_base, theirs = _both(VIEWS[name])
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert _torch_shares(theirs, theirs_base)
    assert np.shares_memory(ours.numpy(), ours_base.numpy())


@pytest.mark.parametrize("name", sorted(set(VIEWS) - {"expand"}))
def test_writing_through_a_view_changes_its_base_as_in_torch(name):
    ours_base, ours, theirs_base, theirs = _both(VIEWS[name])
    with taugrad.no_grad():
        ours.mul_(-1)
    with torch.no_grad():
        theirs.mul_(-1)
    np.testing.assert_array_equal(ours_base.numpy(), theirs_base.numpy())
    ours.data.add_(100)  # through .data too
    theirs.data.add_(100)
    np.testing.assert_array_equal(ours_base.numpy(), theirs_base.numpy())


@pytest.mark.parametrize("name", sorted(COPIES))
def test_an_op_that_must_copy_gives_a_contiguous_copy(name):
    ours_base, ours, theirs_base, theirs = _both(COPIES[name])
    assert not _torch_shares(theirs, theirs_base)
    assert not np.shares_memory(ours.numpy(), ours_base.numpy())
    assert ours.stride() == theirs.stride() and ours.is_contiguous() and theirs.is_contiguous()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("op", [lambda x: x.t().view(-1), lambda x: x.t().view(24), lambda x: x[:, :3].view(-1),
                                lambda x: x.t().view(2, 12), lambda x: x.permute(1, 0).view(3, 8)])
def test_view_refuses_strides_it_cannot_follow_with_torch_error(op):
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride") as theirs:
        op(torch.tensor(BASE))
    with pytest.raises(RuntimeError) as ours:
        op(taugrad.tensor(BASE))
    assert str(ours.value).splitlines()[0].startswith(str(theirs.value).splitlines()[0][:60])
    assert "\n" not in str(ours.value)


def test_reshape_views_when_it_can_and_copies_when_it_must():
    x = taugrad.tensor(BASE.copy())
    assert np.shares_memory(x.reshape(2, 12).numpy(), x.numpy())
    assert not np.shares_memory(x.t().reshape(24).numpy(), x.numpy())


def test_contiguous_returns_self_when_contiguous_else_a_copy_with_a_clone_node():
    x = taugrad.tensor(BASE.copy(), requires_grad=True)
    assert x.contiguous() is x
    tx = torch.tensor(BASE.copy(), requires_grad=True)
    ours, theirs = x.t().contiguous(), tx.t().contiguous()
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "CloneBackward0"
    assert ours.grad_fn.next_functions[0][0].name() == theirs.grad_fn.next_functions[0][0].name()
    assert ours.stride() == theirs.stride() == (4, 1)
    weights = np.arange(24.0).reshape(6, 4)
    (ours * taugrad.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("shape, make", [
    ((6, 1), lambda lib, t: t.reshape(6, 1)),
    ((1, 6), lambda lib, t: t[None]),
    ((2, 1, 3), lambda lib, t: t.reshape(2, 3)[:, None]),
    ((2, 3, 1), lambda lib, t: t.reshape(2, 3)[..., None]),
    ((3, 1), lambda lib, t: t.reshape(2, 3).t()[:, :1]),
    ((0, 3), lambda lib, t: t[:0].reshape(0, 3)),
])
def test_strides_of_size_one_and_empty_dims_are_torch(shape, make):
    ours = make(taugrad, taugrad.tensor(np.arange(6.0)))
    theirs = make(torch, torch.arange(6.0, dtype=torch.float64))
    assert tuple(ours.shape) == tuple(theirs.shape) == shape
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()


def test_stride_of_one_dim_and_strides_count_elements_not_bytes():
    for dtype, tdtype in ((np.float32, torch.float32), (np.int64, torch.int64), (np.float16, torch.float16)):
        ours = taugrad.tensor(np.zeros((3, 5), dtype=dtype)).t()
        theirs = torch.zeros((3, 5), dtype=tdtype).t()
        assert ours.stride() == theirs.stride() == (1, 5)
        assert ours.stride(0) == theirs.stride(0) and ours.stride(-1) == theirs.stride(-1)


def test_a_view_of_a_view_shares_the_first_base_and_sees_in_place_changes():
    x = taugrad.tensor(BASE.copy())
    v = x.t()[1:].narrow(1, 0, 2)
    with taugrad.no_grad():
        x.zero_()
    assert (v.numpy() == 0).all()
