"""Module registries against torch.nn.Module: shared submodules and tensors, and reassignment order."""
import numpy as np
import torch

from taugrad import nn
from taugrad.tensors.core.node import Tensor


def names(pairs):
    return [name for name, _ in pairs]


# ---------------------------------------------------------------------------
# a submodule or tensor registered twice
# ---------------------------------------------------------------------------


def twice_shared_pair():
    """The same Linear registered twice, nested once, in taugrad and in torch."""
    ours_lin, theirs_lin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    ours = nn.Sequential(ours_lin, nn.Sequential(ours_lin), ours_lin)
    theirs = torch.nn.Sequential(theirs_lin, torch.nn.Sequential(theirs_lin), theirs_lin)
    return ours, theirs


def test_state_dict_lists_a_shared_submodule_under_every_name_as_torch():
    ours, theirs = twice_shared_pair()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert list(ours.state_dict()) == ["0.weight", "0.bias", "1.0.weight", "1.0.bias", "2.weight", "2.bias"]


def test_traversals_still_list_a_shared_submodule_once_as_torch():
    ours, theirs = twice_shared_pair()
    assert names(ours.named_parameters()) == names(theirs.named_parameters())
    assert len(list(ours.parameters())) == len(list(theirs.parameters())) == 2
    assert names(ours.named_modules()) == names(theirs.named_modules())


def test_load_state_dict_takes_torchs_keys_for_a_shared_submodule_and_round_trips_its_own():
    ours, theirs = twice_shared_pair()
    result = ours.load_state_dict(theirs.state_dict())  # strict: every key of torch's dict must fit
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, mine), (_, torchs) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(mine.detach().numpy(), torchs.detach().numpy(), err_msg=name)

    copy, _ = twice_shared_pair()
    copy.load_state_dict({key: value.detach().numpy().copy() for key, value in ours.state_dict().items()})
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(copy.state_dict()[key].detach().numpy(), value.detach().numpy(), err_msg=key)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2)
        self.b.weight = self.a.weight


class TorchTied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(2, 2)
        self.b = torch.nn.Linear(2, 2)
        self.b.weight = self.a.weight


def test_tied_weights_appear_in_the_state_dict_under_both_names_as_torch():
    ours, theirs = Tied(), TorchTied()
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]
    assert names(ours.named_parameters()) == names(theirs.named_parameters()) == ["a.weight", "a.bias", "b.bias"]
    ours.load_state_dict(theirs.state_dict())
    assert ours.b.weight is ours.a.weight
    np.testing.assert_array_equal(ours.a.weight.detach().numpy(), theirs.a.weight.detach().numpy())


# ---------------------------------------------------------------------------
# reassigning an existing name keeps its place in the order
# ---------------------------------------------------------------------------


def test_reassigned_parameter_keeps_its_position_as_torch():
    ours, theirs = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    ours.weight = nn.Parameter(np.ones((2, 2), np.float32))
    theirs.weight = torch.nn.Parameter(torch.ones(2, 2))
    assert names(ours.named_parameters()) == names(theirs.named_parameters()) == ["weight", "bias"]
    assert list(ours.state_dict()) == list(theirs.state_dict())

    ours.register_parameter("weight", nn.Parameter(np.zeros((2, 2), np.float32)))
    theirs.register_parameter("weight", torch.nn.Parameter(torch.zeros(2, 2)))
    assert names(ours.named_parameters()) == names(theirs.named_parameters())


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("first", Tensor(np.zeros(2)))
        self.register_buffer("second", Tensor(np.zeros(2)))


class TorchWithBuffers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("first", torch.zeros(2))
        self.register_buffer("second", torch.zeros(2))


def test_reregistered_or_reassigned_buffer_keeps_its_position_as_torch():
    ours, theirs = WithBuffers(), TorchWithBuffers()
    ours.register_buffer("first", Tensor(np.ones(2)))
    theirs.register_buffer("first", torch.ones(2))
    assert names(ours.named_buffers()) == names(theirs.named_buffers()) == ["first", "second"]
    ours.first = Tensor(np.full(2, 2.0))
    theirs.first = torch.full((2,), 2.0)
    assert names(ours.named_buffers()) == names(theirs.named_buffers())
    # turning a buffer non-persistent in place drops it from the state dict without moving it
    ours.register_buffer("first", Tensor(np.ones(2)), persistent=False)
    theirs.register_buffer("first", torch.ones(2), persistent=False)
    assert names(ours.named_buffers()) == names(theirs.named_buffers()) == ["first", "second"]
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["second"]


def test_reassigned_submodule_keeps_its_position_as_torch():
    ours = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 2))
    setattr(ours, "0", nn.Linear(2, 2))
    setattr(theirs, "0", torch.nn.Linear(2, 2))
    ours.add_module("1", nn.Tanh())
    theirs.add_module("1", torch.nn.Tanh())
    assert names(ours.named_children()) == names(theirs.named_children()) == ["0", "1", "2"]
    assert isinstance(ours[1], nn.Tanh)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_a_name_that_changes_kind_moves_to_the_end_of_its_new_registry_as_torch():
    ours, theirs = WithBuffers(), TorchWithBuffers()
    ours.bias = nn.Parameter(np.zeros(1))
    theirs.bias = torch.nn.Parameter(torch.zeros(1))
    ours.first = nn.Parameter(np.zeros(2))  # a buffer becomes a parameter
    theirs.first = torch.nn.Parameter(torch.zeros(2))
    assert names(ours.named_parameters()) == names(theirs.named_parameters()) == ["bias", "first"]
    assert names(ours.named_buffers()) == names(theirs.named_buffers()) == ["second"]
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_children_of_a_shared_submodule_are_listed_once_as_torch():
    lin, tlin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    ours, theirs = nn.Sequential(lin, lin), torch.nn.Sequential(tlin, tlin)
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert len(list(ours.children())) == len(list(theirs.children())) == 1
    assert list(ours.state_dict()) == list(theirs.state_dict())
