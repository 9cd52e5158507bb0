"""Run an unmodified PyTorch script on taugrad: ``python -m taugrad.run script.py [args...]``.

While the script runs, ``import torch`` gives :mod:`taugrad`, and every
``import torch.X.Y`` gives ``taugrad.X.Y`` (in processes it spawns too): the same module object under both
names, so ``torch.nn.Linear is taugrad.nn.Linear``.  ``import torchvision``
likewise gives :mod:`taugrad.vision` (``torchvision.X`` is ``taugrad.vision.X``).
A module taugrad does not have fails at once with one line naming it, e.g.::

    ModuleNotFoundError: taugrad run: the script imports torch.fx, and taugrad has no taugrad.fx

rather than with a half-imported stub that breaks later.  Nothing else in the
script changes: it runs as ``__main__`` with ``sys.argv`` set to the script
and its arguments, in the script's folder on ``sys.path`` (as ``python
script.py`` would), so its own modules import as usual.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
from contextlib import contextmanager
from types import ModuleType
from typing import Iterator, List, Optional, Sequence

__all__ = ["TorchAlias", "alias_in_child", "torch_is_taugrad", "run_script", "main"]

#: the names a script imports under; ``torch`` maps onto this package
ALIASED = "torch"
TARGET = "taugrad"
#: every aliased top-level name and the taugrad package that answers it
ALIASES = {ALIASED: TARGET, "torchvision": "taugrad.vision"}
#: a folder holding a ``torch`` package that installs the alias: first on ``sys.path`` while a script runs, so
#: processes the script spawns (``multiprocessing`` passes them its ``sys.path``) import taugrad as torch too
ALIAS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_alias")


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system a module that already exists (taugrad's), under torch's name."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec):  # the existing module, not a new one
        return self.module

    def exec_module(self, module) -> None:  # already executed when taugrad imported it
        pass


def _aliased(name: str) -> bool:
    """Whether a module name is one of the aliased packages (``torch``, ``torchvision``) or inside one."""
    return any(name == top or name.startswith(top + ".") for top in ALIASES)


class TorchAlias(importlib.abc.MetaPathFinder):
    """A meta-path finder that answers ``torch``, ``torchvision`` and their submodules with taugrad's modules.

    ``find_spec("torch.nn.functional")`` imports ``taugrad.nn.functional`` and
    returns a spec whose loader hands that module back (``torchvision.X``:
    ``taugrad.vision.X``); a name with no taugrad counterpart raises
    :class:`ModuleNotFoundError` naming both.
    """

    def find_spec(self, fullname: str, path=None, target=None):
        top = fullname.split(".", 1)[0]
        if top not in ALIASES:
            return None
        real = ALIASES[top] + fullname[len(top):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as err:
            if err.name is not None and (err.name == real or real.startswith(err.name + ".")):
                raise ModuleNotFoundError(
                    f"taugrad run: the script imports {fullname}, and taugrad has no {real}",
                    name=fullname) from None
            raise  # a module taugrad has failed to import something else: show that
        # keep the original spec's origin so tracebacks point at taugrad's files
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              origin=getattr(module, "__file__", None))
        if hasattr(module, "__path__"):
            spec.submodule_search_locations = list(module.__path__)
        return spec


def alias_in_child(name: str) -> ModuleType:
    """For the ``_torch_alias`` packages: in a process a script spawned, install the alias if the process
    has none yet and give the taugrad module that answers ``name`` (``torch`` or ``torchvision``; also
    under the package's own name, ``taugrad._torch_alias.torch``, when something imports it as that)."""
    if not any(isinstance(finder, TorchAlias) for finder in sys.meta_path):
        sys.meta_path.insert(0, TorchAlias())
    return importlib.import_module(ALIASES[name.rsplit(".", 1)[-1]])


@contextmanager
def torch_is_taugrad() -> Iterator[None]:
    """Inside this block ``import torch...`` (and ``torchvision...``) resolves to taugrad; afterwards, as before.

    Modules already imported under those names (a real PyTorch, say) are set aside for
    the block and put back after it, so the alias never leaks into the caller.
    """
    finder = TorchAlias()
    saved = {name: mod for name, mod in sys.modules.items() if _aliased(name)}
    for name in saved:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _aliased(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


def run_script(path: str, args: Sequence[str] = ()) -> None:
    """Run the script at ``path`` as ``__main__`` with ``sys.argv = [path, *args]``, torch being taugrad."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"taugrad run: no such script: {path}")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    sys.path[:0] = [ALIAS_PATH, os.path.dirname(os.path.abspath(path))]
    try:
        with torch_is_taugrad():
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m taugrad.run script.py [args...]``: the exit status is the script's."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m taugrad.run SCRIPT [ARGS...]\n\n" + __doc__.split("\n\n")[1], file=sys.stderr)
        return 2 if not argv else 0
    try:
        run_script(argv[0], argv[1:])
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except (FileNotFoundError, ModuleNotFoundError) as err:
        if str(err).startswith("taugrad run:"):
            print(err, file=sys.stderr)
            return 1
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
