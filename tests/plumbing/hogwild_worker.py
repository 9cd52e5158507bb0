"""Worker functions for the multiprocessing tests: importable by a spawned child, as a user's train.py is."""
import taugrad


def train_steps(model, steps, seed):
    """A few SGD steps on the shared model (mnist_hogwild's pattern), from the child process."""
    taugrad.manual_seed(seed)
    optimizer = taugrad.optim.SGD(model.parameters(), lr=0.1)
    x = taugrad.randn(16, 3, dtype=taugrad.float64)
    y = x.sum(dim=1, keepdim=True)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()


def add_one(tensor, queue, received):
    """Write into a tensor received from the parent, then send a new shared tensor back.

    As with torch, the process that made a shared block keeps it alive until the
    other side has it (``received``): its block is unlinked when its tensor goes.
    """
    with taugrad.no_grad():
        tensor += 1.0
    reply = taugrad.full((3,), 7.0).share_memory_()
    queue.put(reply)
    queue.put(reply.is_shared())
    received.wait(timeout=120)
