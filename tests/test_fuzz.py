"""Fuzzing: random shapes, dtypes, nan/inf and random bytes against ops, the expression parser and load.

What every example must satisfy:

* it either works or raises one of the documented exceptions (:data:`ALLOWED`,
  the same types ``docs/errors.md`` lists) with a one-line message;
* the exception is raised by taugrad, not from inside NumPy (no NumPy exception
  class, no innermost frame in NumPy's Python code);
* results that work are right: elementwise forward values match NumPy's;
* nothing in the input is ever executed (the parser and ``load`` never run
  code: a sentinel that would be created by executed input never appears).

Derandomized with moderate ``max_examples`` so CI runs the same examples in a
few seconds each.
"""
import io
import os
import traceback
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import taugrad
from taugrad.learn.expr import ExpressionError

#: The exceptions an op, the parser or load may raise on bad input (docs/errors.md).
#: Subclasses count: GraphReleasedError/AnomalyError (RuntimeError),
#: ExpressionError/CheckpointError/StateDictError (ValueError / RuntimeError).
ALLOWED = (TypeError, ValueError, IndexError, RuntimeError)

FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 150)), deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

NUMPY_DIR = os.path.dirname(np.__file__)

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128]


def _assert_clean(err: BaseException) -> None:
    """A documented exception, raised by taugrad itself, with a one-line message."""
    assert isinstance(err, ALLOWED), f"undocumented exception {type(err).__name__}: {err}"
    assert not type(err).__module__.startswith("numpy"), f"NumPy's own exception leaked: {type(err).__name__}: {err}"
    frames = traceback.extract_tb(err.__traceback__)
    assert frames and not frames[-1].filename.startswith(NUMPY_DIR), (
        f"raised inside NumPy ({frames[-1].filename}): {type(err).__name__}: {err}"
    )
    message = str(err)
    assert message and "\n" not in message, f"not a one-line message: {message!r}"


def _attempt(fn, *args, **kwargs):
    """``fn(*args)`` or None when it raised a clean, documented error."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - checked right here
        _assert_clean(err)
        return None


def arrays(dtypes=DTYPES, max_dims=3):
    return st.sampled_from(dtypes).flatmap(
        lambda dtype: hnp.arrays(
            dtype, hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=4),
            elements=_elements(np.dtype(dtype)),
        )
    )


def _elements(dtype):
    if dtype.kind == "f":
        return st.floats(width=8 * dtype.itemsize if dtype.itemsize < 8 else 64, allow_nan=True,
                         allow_infinity=True, min_value=None, max_value=None) | st.sampled_from([0.0, -0.0, 1.0])
    if dtype.kind == "c":
        part = st.floats(allow_nan=True, allow_infinity=True, width=32 if dtype.itemsize == 8 else 64)
        return st.builds(complex, part, part)
    return None  # NumPy's default elements for ints and bools


def _to_tensor(array, requires_grad):
    requires_grad = requires_grad and array.dtype.kind in "fc"
    return taugrad.Tensor(array, requires_grad=requires_grad)


# ---------------------------------------------------------------------------
# ops
# ---------------------------------------------------------------------------

#: elementwise ops with their NumPy reference (forward values must match)
UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "abs": np.abs, "neg": np.negative, "log1p": np.log1p,
    "relu": lambda a: np.maximum(a, 0), "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
}

#: other single-tensor ops, checked for clean errors and working backward
SHAPE_OPS = {
    "sum": lambda t, d: t.sum(dim=d), "mean": lambda t, d: t.mean(dim=d), "max": lambda t, d: t.amax(dim=d),
    "var": lambda t, d: t.var(dim=d), "logsumexp": lambda t, d: t.logsumexp(dim=d if d is not None else 0),
    "softmax": lambda t, d: taugrad.softmax(t, dim=d if d is not None else -1),
    "log_softmax": lambda t, d: taugrad.log_softmax(t, dim=d if d is not None else -1),
    "transpose": lambda t, d: t.transpose(0, d if d is not None else -1),
    "unsqueeze": lambda t, d: t.unsqueeze(d if d is not None else 0),
    "squeeze": lambda t, d: t.squeeze(d) if d is not None else t.squeeze(),
    "flatten": lambda t, d: t.flatten(),
    "reshape": lambda t, d: t.reshape(-1, d if d else 1),
    "getitem": lambda t, d: t[d if d is not None else ...],
    "argmax": lambda t, d: t.argmax(dim=d),
    "clip": lambda t, d: t.clip(-1.0, d if d is not None else 1.0),
    "pow": lambda t, d: t ** (d if d is not None else 0.5),
    "cumulative": lambda t, d: taugrad.cat([t, t], dim=d if d is not None else 0),
}

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b, "matmul": lambda a, b: a @ b, "maximum": taugrad.maximum,
    "minimum": taugrad.minimum, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
    "where": lambda a, b: taugrad.where(a > 0, a, b), "stack": lambda a, b: taugrad.stack([a, b]),
}


def _backward_if_possible(out):
    if isinstance(out, taugrad.Tensor) and out.requires_grad:
        _attempt(lambda: out.sum().backward() if out.dtype.kind == "f" else out.abs().sum().backward())


@FUZZ
@given(arrays(), st.sampled_from(sorted(UNARY)), st.booleans())
def test_unary_ops_match_numpy_or_refuse_cleanly(array, name, requires_grad):
    t = _attempt(_to_tensor, array, requires_grad)
    if t is None:
        return
    out = _attempt(getattr(taugrad.Tensor, name) if name != "neg" else (lambda x: -x), t)
    if out is None:
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = UNARY[name](array)
    assert out.shape == np.shape(expected)
    if array.dtype.kind in "fc":
        got = out.detach().numpy().astype(np.complex128) if out.dtype.kind == "c" else out.detach().numpy().astype(np.float64)
        want = np.asarray(expected).astype(got.dtype)
        close = np.isclose(got, want, rtol=2e-3, atol=1e-6, equal_nan=True) | (np.isnan(got) & np.isnan(want))
        assert close.all(), f"{name} of {array!r} gave {out.detach().numpy()!r}, NumPy says {expected!r}"
    _backward_if_possible(out)


@FUZZ
@given(arrays(), st.sampled_from(sorted(SHAPE_OPS)), st.one_of(st.none(), st.integers(-4, 4)), st.booleans())
def test_reductions_and_shape_ops_refuse_cleanly(array, name, dim, requires_grad):
    t = _attempt(_to_tensor, array, requires_grad)
    if t is None:
        return
    out = _attempt(SHAPE_OPS[name], t, dim)
    _backward_if_possible(out)


@FUZZ
@given(arrays(max_dims=2), arrays(max_dims=2), st.sampled_from(sorted(BINARY)), st.booleans())
def test_binary_ops_refuse_cleanly(a, b, name, requires_grad):
    ta = _attempt(_to_tensor, a, requires_grad)
    tb = _attempt(_to_tensor, b, False)
    if ta is None or tb is None:
        return
    out = _attempt(BINARY[name], ta, tb)
    _backward_if_possible(out)
    _attempt(BINARY[name], ta, b)  # a raw array as the other operand


PYTHON_JUNK = st.one_of(
    st.none(), st.text(max_size=5), st.binary(max_size=5), st.complex_numbers(), st.floats(),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.lists(st.integers(), max_size=3),
    st.lists(st.lists(st.floats(), max_size=2), max_size=3), st.just(object()), st.just([[1, 2], [3]]),
    st.just(np.array([1, None], dtype=object)), st.just(np.array(["a", "b"])), st.just({"a": 1}),
)


@FUZZ
@given(PYTHON_JUNK, st.booleans())
def test_tensor_constructor_refuses_junk_cleanly(junk, requires_grad):
    t = _attempt(taugrad.Tensor, junk, requires_grad=requires_grad)
    if t is not None:
        assert t.dtype.kind in "biufc"


@FUZZ
@given(arrays(dtypes=[np.float32, np.float64], max_dims=2), PYTHON_JUNK, st.sampled_from(sorted(BINARY)))
def test_ops_with_junk_operands_refuse_cleanly(array, junk, name):
    t = taugrad.Tensor(array, requires_grad=True)
    _attempt(BINARY[name], t, junk)
    _attempt(SHAPE_OPS["sum"], t, junk)
    _attempt(lambda: t[junk])
    _attempt(lambda: t.reshape(junk))


# ---------------------------------------------------------------------------
# the expression parser
# ---------------------------------------------------------------------------

SENTINEL = "taugrad_fuzz_was_executed"
TOKENS = ["a", "b", "x1", "2", "0.5", "1e308", "1e-320", "+", "-", "*", "/", "**", "(", ")", ",",
          "relu", "tanh", "exp", "log", "sigmoid", "__import__", "'os'", ".", "system", "[", "]",
          "lambda", ":", "=", "==", "if", "else", "\\", "\n", " ", "#", "\x00", "\u2028", "\ud800", "é",
          f"open('{SENTINEL}', 'w')", f"__import__('pathlib').Path('{SENTINEL}').touch()"]


@pytest.fixture(scope="module")
def parser_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_parser")


@FUZZ
@given(text=st.one_of(st.text(max_size=60), st.lists(st.sampled_from(TOKENS), max_size=25).map("".join)),
       value=st.floats(allow_nan=True, allow_infinity=True))
def test_expression_parser_never_executes_and_refuses_cleanly(parser_dir, text, value):
    cwd = os.getcwd()
    os.chdir(parser_dir)
    try:
        try:
            expression = taugrad.learn.expr.parse(text)
        except ExpressionError as err:
            _assert_clean(err)
            return
        values = {name: value for name in expression.names}
        _attempt(lambda: expression.build(values).root.backward())
        assert not os.path.exists(SENTINEL)
    finally:
        os.chdir(cwd)


def test_expression_parser_refuses_executable_input():
    for text in TOKENS[-2:]:
        with pytest.raises(ExpressionError):
            taugrad.learn.expr.parse(text)


# ---------------------------------------------------------------------------
# taugrad.load
# ---------------------------------------------------------------------------

LOAD_ERRORS = (taugrad.CheckpointError,)


def _valid_checkpoint_bytes(tmp_path) -> bytes:
    path = tmp_path / "good.npz"
    taugrad.save({"model": {"w": taugrad.ones(2, 3), "b": np.zeros(3)}, "step": 3, "lr": 0.5,
                  "history": [1.0, float("nan")], "name": "run"}, path)
    return path.read_bytes()


def _load_bytes(tmp_path, data: bytes):
    path = tmp_path / "fuzzed.npz"
    path.write_bytes(data)
    try:
        return taugrad.load(path)
    except LOAD_ERRORS as err:
        _assert_clean(err)
        return None


@pytest.fixture(scope="module")
def checkpoint_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_load")


@FUZZ
@given(data=st.binary(max_size=300))
def test_load_refuses_random_bytes_cleanly(checkpoint_dir, data):
    _load_bytes(checkpoint_dir, data)


@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, 10 ** 6)))
def test_load_refuses_corrupted_checkpoints_cleanly(checkpoint_dir, flips, cut):
    data = bytearray(_valid_checkpoint_bytes(checkpoint_dir))
    for position, byte in flips:
        data[position % len(data)] = byte
    if cut is not None:
        data = data[: cut % len(data)]
    loaded = _load_bytes(checkpoint_dir, bytes(data))
    if loaded is not None:
        assert isinstance(loaded, dict)


@FUZZ
@given(entries=st.dictionaries(st.text(max_size=8), arrays(max_dims=2), max_size=3))
def test_load_of_plain_npz_archives_with_random_names_and_dtypes(checkpoint_dir, entries):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in entries.items():
            with archive.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    loaded = _load_bytes(checkpoint_dir, buffer.getvalue())
    if loaded is not None:
        assert all(isinstance(v, taugrad.Tensor) for v in loaded.values())


def test_load_never_unpickles(tmp_path):
    """An archive holding a pickled object array (which would run code) is refused."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        with archive.open("evil.npy", "w") as member:
            np.lib.format.write_array(member, np.array([os.system], dtype=object), allow_pickle=True)
    with pytest.raises(taugrad.CheckpointError, match="pickle"):
        _load_bytes_strict(tmp_path, buffer.getvalue())


def _load_bytes_strict(tmp_path, data):
    path = tmp_path / "evil.npz"
    path.write_bytes(data)
    return taugrad.load(path)
