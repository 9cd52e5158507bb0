#!/usr/bin/env bash
# The GPU checks in one go, for a machine with a CUDA GPU and CuPy (cupy-cuda13x):
#   1. the GPU suite: every op-table row and the MLP, CNN and GPT training steps on real CuPy
#      against the NumPy results (tests under tests/backend marked `cuda`);
#   2. the benchmark against torch CUDA eager (benchmarks/bench_cuda.py);
#   3. where the host-bound steps (GPT, small MLP) spend their time: cProfile's top 25 each.
# Usage: scripts/gpu_check.sh [python]   (default: .venv/bin/python if present, else python3)
#   PYTEST_ARGS: more pytest arguments (e.g. "-n 8 --timeout 120" with pytest-xdist and pytest-timeout)
#   BENCH_ARGS:  the benchmark's arguments (default "--rounds 15 --number 10")
# Exit status: the test suite's (the benchmark's table is for reading).
set -u
cd "$(dirname "$0")/.."
PY="${1:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX (a DLPack test) would take 75% of the GPU at its first use

echo "== environment"
"$PY" - <<'PY'
import sys
import taugrad
try:
    import cupy
    print("CuPy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())
except Exception as error:  # the suite below reports the skip reason too
    print("CuPy missing or broken:", error)
print("taugrad.cuda.is_available():", taugrad.cuda.is_available(), "devices:", taugrad.cuda.device_count())
PY

echo "== GPU suite (pytest -m cuda tests/backend)"
"$PY" -m pytest -p no:cacheprovider -q -rfEs --tb=short -m cuda ${PYTEST_ARGS:-} tests/backend
status=$?

echo "== benchmark: taugrad on CuPy vs torch CUDA eager"
"$PY" benchmarks/bench_cuda.py ${BENCH_ARGS:---rounds 15 --number 10} || echo "(benchmark failed with status $?)"

for case in gpt mlp; do
  echo "== host time of taugrad's $case step on CuPy (cProfile, 20 steps, top 25 by own time)"
  "$PY" benchmarks/bench_cuda.py --profile "$case" --number 20 || echo "(profile failed with status $?)"
done
exit $status
