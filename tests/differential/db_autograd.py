"""taugrad.autograd: backward, grad, Function, grad modes, as torch code calls them."""
from __future__ import annotations

from .scenarios import arr, raises, scenario

ENTRIES: list = []


def _leaves(L):
    a = L.root.tensor(arr("aga", 3), requires_grad=True)
    b = L.root.tensor(arr("agb", 3), requires_grad=True)
    return a, b


@scenario(ENTRIES, "backward", "forms", ("tensors", "grad_tensors", "retain_graph", "create_graph", "inputs"))
def _(L):
    a, b = _leaves(L)
    y = (a * b).sin()
    L.autograd.backward(y.sum(), retain_graph=True)
    first = a.grad.clone(), b.grad.clone()
    L.autograd.backward(tensors=[y], grad_tensors=[L.root.tensor(arr("gt", 3))], retain_graph=True, create_graph=False,
                        inputs=[a])
    return first, a.grad, b.grad


@scenario(ENTRIES, "backward", "tensor_method_inputs")
def _(L):
    a, b = _leaves(L)
    (a * b).sum().backward(inputs=[b])
    return a.grad, b.grad


@scenario(ENTRIES, "grad", "forms", ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph",
                                      "allow_unused"))
def _(L):
    a, b = _leaves(L)
    c = L.root.tensor(arr("agc", 3), requires_grad=True)
    y = (a * a * b).sum()
    (ga,) = L.autograd.grad(y, a, create_graph=True)
    (gga,) = L.autograd.grad(ga.sum(), a, retain_graph=True)
    unused = L.autograd.grad(outputs=[y], inputs=[a, c], grad_outputs=[L.root.tensor(2.0)], retain_graph=True,
                             create_graph=False, allow_unused=True)
    return ga, gga, list(unused), raises(lambda: L.autograd.grad(y, c, retain_graph=True))


@scenario(ENTRIES, "grad", "legacy_and_batched_keywords", ("only_inputs", "is_grads_batched"))
def _(L):
    a, b = _leaves(L)
    return list(L.autograd.grad((a * b).sum(), [a], only_inputs=True, is_grads_batched=False))


@scenario(ENTRIES, "grad", "materialize_grads", ("materialize_grads",))
def _(L):
    a, b = _leaves(L)
    return list(L.autograd.grad((a * 2).sum(), [a, b], allow_unused=True, materialize_grads=True))


@scenario(ENTRIES, "Function", "custom_function")
def _(L):
    class Cube(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2 * ctx.k, None

    a, _ = _leaves(L)
    out = Cube.apply(a, 2.0)
    out.sum().backward()
    return out, a.grad


@scenario(ENTRIES, "FunctionCtx", "mark_non_differentiable_and_needs_input_grad")
def _(L):
    class SortAndIdx(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            assert isinstance(ctx, L.autograd.function.FunctionCtx) if L.name == "torch" else isinstance(ctx, L.autograd.FunctionCtx)
            ctx.flags = tuple(ctx.needs_input_grad)
            idx = (x > 0).to(L.root.int64)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(y)
            return x * y, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (y,) = ctx.saved_tensors
            return g * y, None

    a, b = _leaves(L)
    out, idx = SortAndIdx.apply(a, b.detach())
    out.sum().backward()
    return out, idx, idx.requires_grad, a.grad


@scenario(ENTRIES, "once_differentiable", "decorated_backward")
def _(L):
    class Double(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @L.autograd.function.once_differentiable if L.name == "torch" else L.autograd.once_differentiable
        def backward(ctx, g):
            return g * 2

    a, _ = _leaves(L)
    out = Double.apply(a)
    (g,) = L.autograd.grad(out.sum(), a, create_graph=True)
    return out, g, g.requires_grad


@scenario(ENTRIES, "no_grad", "context_and_decorator")
def _(L):
    a, _ = _leaves(L)
    with L.autograd.no_grad():
        y = a * 2

    @L.autograd.no_grad()
    def f(x):
        return x * 3

    return y.requires_grad, f(a).requires_grad, (a * 2).requires_grad


@scenario(ENTRIES, "enable_grad", "inside_no_grad")
def _(L):
    a, _ = _leaves(L)
    with L.autograd.no_grad():
        with L.autograd.enable_grad():
            y = a * 2
        z = a * 2
    return y.requires_grad, z.requires_grad


@scenario(ENTRIES, "set_grad_enabled", "context_and_call", ("mode",))
def _(L):
    a, _ = _leaves(L)
    with L.autograd.set_grad_enabled(False):
        y = a * 2
    with L.autograd.set_grad_enabled(mode=True):
        z = a * 2
    return y.requires_grad, z.requires_grad


@scenario(ENTRIES, "is_grad_enabled", "inside_modes")
def _(L):
    is_enabled = L.autograd.is_grad_enabled if L.name == "taugrad" else L.root.is_grad_enabled  # torch's lives there
    with L.autograd.no_grad():
        inside = is_enabled()
    return inside, is_enabled()


@scenario(ENTRIES, "Variable", "legacy_wrapper")
def _(L):
    v = L.autograd.Variable(L.root.tensor(arr("var", 3)), requires_grad=True)
    (v * v).sum().backward()
    return v.grad, v.requires_grad, isinstance(v, L.Tensor)
