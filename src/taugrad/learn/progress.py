"""A live training progress display: a rich progress bar, or plain lines.

:class:`TrainingProgress` shows the epoch, loss, accuracy and throughput
(samples per second).  On a terminal with ``rich`` installed (the ``progress``
extra: ``pip install 'taugrad[progress]'``) it is a live bar redrawn in place;
otherwise (rich missing, output redirected to a file or a pipe, as in CI logs)
it prints one plain line every ``every`` epochs and at the last one.
"""
from __future__ import annotations

import sys
from typing import Any, Optional, TextIO

__all__ = ["TrainingProgress", "format_stats", "rich_available"]


def rich_available() -> bool:
    try:
        import rich.progress  # noqa: F401
    except ImportError:
        return False
    return True


def format_stats(loss: float, accuracy: Optional[float], samples_per_second: Optional[float]) -> str:
    """``loss 0.1234  acc 97.50%  12,345 samples/s`` (parts that are ``None`` are left out)."""
    parts = [f"loss {loss:.4f}"]
    if accuracy is not None:
        parts.append(f"acc {100.0 * accuracy:.2f}%")
    if samples_per_second is not None:
        parts.append(f"{samples_per_second:,.0f} samples/s")
    return "  ".join(parts)


class TrainingProgress:
    """Context manager reporting one update per epoch.

    >>> with TrainingProgress(epochs=20) as progress:
    ...     for epoch in range(1, 21):
    ...         ...  # train
    ...         progress.update(epoch, loss, accuracy, samples_per_second)

    ``unit`` names what an update counts (``"epoch"``; ``"step"`` for a run
    reported step by step).  ``use_rich``: ``None`` (default) picks rich when it is installed and
    ``stream`` is a terminal; ``False`` forces plain lines.  ``enabled=False``
    shows nothing.
    """

    def __init__(
        self,
        epochs: int,
        stream: Optional[TextIO] = None,
        use_rich: Optional[bool] = None,
        every: Optional[int] = None,
        enabled: bool = True,
        description: str = "training",
        unit: str = "epoch",
    ) -> None:
        self.epochs = int(epochs)
        self.stream = stream if stream is not None else sys.stdout
        self.enabled = enabled
        self.every = every if every else max(1, self.epochs // 10)
        self.description = description
        self.unit = unit  # what one update counts: "epoch", or "step" for a run measured in steps
        if use_rich is None:
            use_rich = _is_terminal(self.stream) and rich_available()
        self.use_rich = bool(use_rich) and enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> "TrainingProgress":
        if self.use_rich:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                TextColumn(self.unit),
                MofNCompleteColumn(),
                BarColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.epochs, stats="")
        return self

    def update(
        self,
        epoch: int,
        loss: float,
        accuracy: Optional[float] = None,
        samples_per_second: Optional[float] = None,
    ) -> None:
        """Report the end of ``epoch`` (counted from 1)."""
        if not self.enabled:
            return
        stats = format_stats(loss, accuracy, samples_per_second)
        if self._bar is not None:
            self._bar.update(self._task, completed=epoch, stats=stats)
        elif epoch % self.every == 0 or epoch == self.epochs or epoch == 1:
            width = len(str(self.epochs))
            print(f"{self.unit} {epoch:>{width}}/{self.epochs}  {stats}", file=self.stream, flush=True)

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc_info)
            self._bar = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
