"""taugrad.nn containers, Module, Parameter: scenarios of their methods as torch code uses them."""
from __future__ import annotations

from .scenarios import arr, fill, kinds, raises, scenario

ENTRIES: list = []


def _seq(L):
    return L.nn.Sequential(L.nn.Linear(4, 3, dtype=L.root.float64), L.nn.ReLU(), L.nn.Linear(3, 2, dtype=L.root.float64))


@scenario(ENTRIES, "Sequential", "forward_backward")
def _(L):
    model = fill(L, _seq(L))
    x = L.root.tensor(arr("seqx", 5, 4), requires_grad=True)
    out = model(x)
    out.pow(2).sum().backward()
    return out, x.grad, [p.grad for p in model.parameters()], list(model.state_dict())


@scenario(ENTRIES, "Sequential", "ordered_dict_and_indexing")
def _(L):
    import collections
    model = L.nn.Sequential(collections.OrderedDict([("fc", L.nn.Linear(2, 2)), ("act", L.nn.Tanh())]))
    return list(model.state_dict()), kinds(model), type(model[0]).__name__, kinds(model[1:]), len(model), \
        type(model[-1]).__name__, type(model.fc).__name__


@scenario(ENTRIES, "Sequential", "mutation")
def _(L):
    model = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.ReLU(), L.nn.Linear(2, 2))
    model[1] = L.nn.Tanh()
    del model[2]
    model.append(L.nn.Sigmoid())
    model.insert(1, L.nn.Identity())
    model.extend([L.nn.ReLU(), L.nn.ReLU6()])
    popped = model.pop(0)
    joined = model + L.nn.Sequential(L.nn.GELU())
    return kinds(model), type(popped).__name__, kinds(joined), list(model.state_dict())


@scenario(ENTRIES, "ModuleList", "mutation")
def _(L):
    ml = L.nn.ModuleList([L.nn.Linear(2, 2), L.nn.ReLU()])
    ml.append(L.nn.Tanh())
    ml.extend([L.nn.Sigmoid()])
    ml.insert(0, L.nn.Identity())
    ml[1] = L.nn.GELU()
    del ml[2]
    popped = ml.pop(-1)
    joined = ml + L.nn.ModuleList([L.nn.ReLU6()])
    return kinds(ml), kinds(ml[1:]), type(popped).__name__, kinds(joined), len(ml), list(L.nn.Sequential(*ml).state_dict())


@scenario(ENTRIES, "ModuleList", "parameters_registered")
def _(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = L.nn.ModuleList(L.nn.Linear(3, 3, dtype=L.root.float64) for _ in range(2))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    net = fill(L, Net())
    return [n for n, _ in net.named_parameters()], net(L.root.tensor(arr("mlx", 2, 3)))


@scenario(ENTRIES, "ModuleDict", "methods")
def _(L):
    md = L.nn.ModuleDict({"b": L.nn.ReLU(), "a": L.nn.Linear(2, 2)})
    md.update([("c", L.nn.Tanh())])
    md["d"] = L.nn.Sigmoid()
    popped = md.pop("b")
    pairs = L.nn.ModuleDict([("z", L.nn.ReLU()), ("y", L.nn.ReLU6())])
    return list(md.keys()), kinds(md.values()), [k for k, _ in md.items()], "a" in md, len(md), \
        type(popped).__name__, list(pairs), list(md.state_dict())


@scenario(ENTRIES, "ParameterList", "methods")
def _(L):
    P = L.nn.Parameter
    pl = L.nn.ParameterList([P(L.root.tensor(arr("pl0", 2))), P(L.root.tensor(arr("pl1", 3)))])
    pl.append(P(L.root.tensor(arr("pl2", 1))))
    pl.extend([P(L.root.tensor(arr("pl3", 2)))])
    holder = L.nn.Module()
    holder.params = pl
    return list(pl), len(pl), [n for n, _ in holder.named_parameters()], list(pl[1:3]), pl[-1]


@scenario(ENTRIES, "ParameterDict", "methods")
def _(L):
    P = L.nn.Parameter
    pd = L.nn.ParameterDict({"b": P(L.root.tensor(arr("pdb", 2))), "a": P(L.root.tensor(arr("pda", 3)))})
    pd.update({"c": P(L.root.tensor(arr("pdc", 1)))})
    holder = L.nn.Module()
    holder.params = pd
    got = pd.get("a"), pd.get("missing"), "b" in pd, len(pd)
    popped = pd.pop("c")
    return list(pd.keys()), [n for n, _ in holder.named_parameters()], list(holder.state_dict()), got, popped


@scenario(ENTRIES, "Parameter", "construction")
def _(L):
    p = L.nn.Parameter(L.root.tensor(arr("par", 2, 3)))
    q = L.nn.Parameter(L.root.tensor(arr("parq", 2)), requires_grad=False)
    (p * p).sum().backward()
    return p.requires_grad, q.requires_grad, p.grad, isinstance(p, L.Tensor), p.is_leaf, tuple(L.nn.Parameter().shape)


class _Holder:
    """Builds the same small module in either library: a Linear, a BatchNorm, a buffer, a child."""

    @staticmethod
    def make(L):
        class Block(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = L.nn.Linear(3, 2, dtype=L.root.float64)
                self.bn = L.nn.BatchNorm1d(2, dtype=L.root.float64)
                self.register_buffer("scale", L.root.tensor(arr("scale", 2)))
                self.register_buffer("scratch", L.root.zeros(2, dtype=L.root.float64), persistent=False)
                self.register_parameter("extra", L.nn.Parameter(L.root.tensor(arr("extra", 2))))

            def forward(self, x, shift=0.0):
                return self.bn(self.fc(x)) * self.scale + self.extra + shift

        return fill(L, Block())


@scenario(ENTRIES, "Module", "registration_and_traversal")
def _(L):
    m = _Holder.make(L)
    m.add_module("head", L.nn.Linear(2, 1))
    return ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()], [n for n, _ in m.named_modules()],
            [n for n, _ in m.named_children()], kinds(m.children()), [n for n, _ in m.named_parameters(prefix="p", recurse=False)],
            list(m.state_dict()), list(m.state_dict(prefix="root.")), len(list(m.parameters(recurse=False))),
            type(m.get_submodule("bn")).__name__, tuple(m.get_parameter("fc.weight").shape))


@scenario(ENTRIES, "Module", "state_dict_keep_vars_and_load")
def _(L):
    m = _Holder.make(L)
    sd = m.state_dict(keep_vars=True)
    other = _Holder.make(L)
    with L.root.no_grad():
        for p in other.parameters():
            p.mul_(0.0)
    result = other.load_state_dict({k: v.detach() for k, v in sd.items() if k != "scale"}, strict=False)
    return sd["fc.weight"].requires_grad, list(result.missing_keys), list(result.unexpected_keys), \
        [p for p in other.parameters()]


@scenario(ENTRIES, "Module", "remove_duplicate_false")
def _(L):
    shared = L.nn.Linear(2, 2)
    m = L.nn.Sequential(shared, shared)
    return [n for n, _ in m.named_parameters(remove_duplicate=False)], [n for n, _ in m.named_modules(remove_duplicate=False)]


@scenario(ENTRIES, "Module", "train_eval_apply_requires_grad")
def _(L):
    m = _Holder.make(L)
    m.eval()
    flags = [mod.training for mod in m.modules()]
    m.train()
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    m.requires_grad_(False)
    return flags, [mod.training for mod in m.modules()], seen, [p.requires_grad for p in m.parameters()]


@scenario(ENTRIES, "Module", "forward_hooks")
def _(L):
    m = _Holder.make(L)
    log = []

    def pre(mod, args):
        log.append("pre")
        return (args[0] * 2.0,)

    def post(mod, args, kwargs, out):
        log.append(sorted(kwargs))
        return out + 1.0

    h1 = m.register_forward_pre_hook(pre)
    h2 = m.register_forward_hook(post, with_kwargs=True)
    x = L.root.tensor(arr("hookx", 4, 3))
    first = m(x, shift=0.5)
    h1.remove()
    h2.remove()
    return first, m(x, shift=0.5), log


@scenario(ENTRIES, "Module", "full_backward_hook")
def _(L):
    m = _Holder.make(L)
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append([None if g is None else g.detach().clone() for g in grad_output])
        return None

    m.register_full_backward_hook(hook)
    x = L.root.tensor(arr("bhx", 4, 3), requires_grad=True)
    m(x).pow(2).sum().backward()
    return seen, x.grad


@scenario(ENTRIES, "Module", "zero_grad_and_double")
def _(L):
    m = fill(L, L.nn.Linear(3, 2).double())
    m(L.root.tensor(arr("zgx", 2, 3))).sum().backward()
    before = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    return before, [p.grad for p in m.parameters()], str(m.weight.dtype).split(".")[-1]


@scenario(ENTRIES, "StateDictError", "strict_load_refused")
def _(L):
    m = L.nn.Linear(2, 2)
    missing = raises(lambda: m.load_state_dict({"weight": L.root.zeros(2, 2)}))
    wrong_shape = raises(lambda: m.load_state_dict({"weight": L.root.zeros(3, 2), "bias": L.root.zeros(2)}))
    try:
        m.load_state_dict({})
    except RuntimeError as err:  # torch raises RuntimeError; taugrad's error must be one too
        kind = "RuntimeError"
    return missing, wrong_shape, kind
