"""The child process of ``taugrad check PATH``: load the learner's file, answer requests.

Run as a script (``python sandbox.py PATH CLASS MEMORY_BYTES CPU_SECONDS PARENT_PID``), never imported by
the grader, so that the learner's code can neither hang nor crash nor patch the
process that grades it.  Only the standard library is used: starting costs
milliseconds, and nothing of taugrad is in reach of the learner's code.

Protocol: one JSON object per line.  The first line written is ``{"ready": info}``
or ``{"fatal": {...}}``; after that each request line read from stdin gets one
answer line.  The answers go to a private copy of the original stdout, while
the learner's own ``print``s go to stderr (which the grader discards) and their
``input()`` reads an empty stdin, so they cannot corrupt the conversation.
"""
import importlib.util
import json
import os
import sys

try:  # only on Unix; elsewhere the time limit still holds
    import resource
except ImportError:  # pragma: no cover
    resource = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _limit(kind: str, soft: int, hard: int) -> None:
    if resource is not None and soft > 0:
        try:
            resource.setrlimit(getattr(resource, kind), (soft, hard))
        except (ValueError, OSError):  # a hard limit already lower than ours: keep it
            pass


def _die_with_parent(parent: int) -> None:
    """Be killed when the grader dies, however it dies (Linux); elsewhere a closed stdin ends the loop."""
    try:
        import ctypes  # noqa: E402 - Linux only, and only here

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the grader died before the request above took effect
        os._exit(1)


def _private_channels():
    """(requests, answers): private copies of stdin/stdout; fds 0 and 1 become /dev/null and stderr."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")
    sys.stdout = sys.stderr
    return requests, answers


def _load(probe_module, path: str, class_name: str):
    """The learner's class, or a ``{"fatal": ...}`` answer saying why not."""
    name = os.path.splitext(os.path.basename(path))[0]
    if not name.isidentifier() or name in sys.modules:
        name = "learner_engine"
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            return None, {"kind": "load", "message": "cannot load it as a Python file (name it something.py)"}
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as err:
        where = f"line {err.lineno}" if err.lineno else "somewhere"
        shown = (err.text or "").strip()
        return None, {"kind": "syntax", "message": f"SyntaxError at {where}: {err.msg}" + (f": {shown}" if shown else "")}
    except SystemExit as err:
        return None, {"kind": "exit", "message": f"the file called sys.exit({err.code!r}) while being imported"}
    except BaseException as err:  # noqa: BLE001 - whatever the learner's module raised is reported, not re-raised
        failure = probe_module.LearnerError("load", err, path)
        return None, {"kind": "raised", "message": f"importing it raised {failure}", "frames": failure.frames}
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        classes = sorted(k for k, v in vars(module).items()
                         if isinstance(v, type) and getattr(v, "__module__", None) == name)
        if classes:
            hint = f"it defines {', '.join(classes)}; choose one with --class NAME"
        else:
            hint = "it defines no classes at all"
        return None, {"kind": "class", "message": f"no class {class_name} ({hint})"}
    return cls, None


def main(argv) -> int:
    path, class_name, memory, cpu_seconds, parent = argv[1], argv[2], int(argv[3]), int(argv[4]), int(argv[5])
    _die_with_parent(parent)
    sys.dont_write_bytecode = True  # leave no __pycache__ beside the learner's file
    _limit("RLIMIT_AS", memory, memory)
    _limit("RLIMIT_CPU", cpu_seconds, cpu_seconds + 1)  # SIGXCPU, then SIGKILL: an endless loop cannot outlive us
    requests, answers = _private_channels()
    sys.path.insert(0, HERE)
    import probe  # noqa: E402 - loaded by path, after the limits are in place
    import trainer  # noqa: E402 - the same: taugrad demo --engine's training loop
    sys.path.remove(HERE)

    def say(obj) -> None:
        answers.write(json.dumps(obj) + "\n")
        answers.flush()

    cls, fatal = _load(probe, path, class_name)
    if fatal is not None:
        say({"fatal": fatal})
        return 0
    try:
        engine = probe.Probe(cls, path)
    except probe.Unusable as err:
        say({"fatal": {"kind": "class", "message": str(err)}})
        return 0
    except probe.LearnerError as err:
        say({"fatal": {"kind": "raised", "message": f"{class_name}(2.0) raised {err}", "frames": err.frames}})
        return 0
    say({"ready": engine.info()})
    training: dict = {}
    for line in requests:
        try:
            request = json.loads(line)
            if request["do"].startswith("train"):
                try:
                    answer = trainer.handle(training, cls, request)
                except SystemExit:
                    raise
                except BaseException as err:  # noqa: BLE001 - the learner's engine failed while training
                    answer = {"error": probe.LearnerError("train", err, path).to_dict()}
            else:
                answer = engine.handle(request)
        except SystemExit as err:
            answer = {"error": {"stage": "exit", "type": "SystemExit",
                                "message": f"the engine called sys.exit({err.code!r})", "frames": []}}
        say(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
