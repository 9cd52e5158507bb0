"""torch.multiprocessing's hogwild pattern: parameters in shared memory, trained by child processes."""
import pickle

import numpy as np
import pytest

import taugrad
import taugrad.multiprocessing as mp

from . import hogwild_worker


def test_share_memory_keeps_values_and_marks_the_tensor_shared():
    x = taugrad.arange(6.0).reshape(2, 3)
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared()
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
    x.share_memory_()  # a second call changes nothing
    assert x.is_shared()


def test_an_ordinary_pickle_of_a_shared_tensor_holds_its_values():
    x = taugrad.tensor([1.0, 2.0]).share_memory_()
    y = pickle.loads(pickle.dumps(x))
    assert not y.is_shared()
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_updates_made_in_children_are_seen_by_the_parent(method):
    ctx = mp.get_context(method)
    model = taugrad.nn.Linear(3, 1, dtype=taugrad.float64)
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())
    before = model.weight.detach().numpy().copy()
    workers = [ctx.Process(target=hogwild_worker.train_steps, args=(model, 5, seed)) for seed in (1, 2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert [w.exitcode for w in workers] == [0, 0]
    after = model.weight.detach().numpy()
    assert not np.allclose(before, after)
    # both children moved the weights towards the target y = x1 + x2 + x3
    assert np.abs(after - 1.0).sum() < np.abs(before - 1.0).sum()


def test_a_tensor_sent_to_a_spawned_child_and_one_sent_back_share_memory():
    ctx = mp.get_context("spawn")
    x = taugrad.zeros(4).share_memory_()
    queue, received = ctx.Queue(), ctx.Event()
    child = ctx.Process(target=hogwild_worker.add_one, args=(x, queue, received))
    child.start()
    reply, shared = queue.get(timeout=120), queue.get(timeout=120)
    received.set()
    child.join(timeout=120)
    assert child.exitcode == 0
    np.testing.assert_array_equal(x.numpy(), np.ones(4))
    np.testing.assert_array_equal(reply.numpy(), np.full(3, 7.0))
    assert shared is True


def test_sharing_strategies_are_torchs_names():
    import torch.multiprocessing as tmp

    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("nonsense")
    assert {"Process", "Queue", "set_start_method", "get_context"} <= set(mp.__all__)
