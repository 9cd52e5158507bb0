"""``taugrad check``: is a learner's own autograd engine right, and if not, which rule is wrong?

Grades a ``Value`` class (the chapter's exercise 5) on forward values, local
rules, accumulation, traversal order, depth, a second ``backward()`` and random
expressions against finite differences (exercise 6), and names the likely bug.

Modules: ``probe`` and ``sandbox`` drive the learner's class (standard library
only, in a child process for a file); ``engine`` is the grader's handle on it;
``forms``, ``checks``, ``graphs`` and ``randomized`` are the checks;
``catalogue`` and ``reference`` name wrong numbers; ``shrink`` minimises a
failing expression; ``report`` holds the verdict; ``runner`` ties them together.
"""
from taugrad.learn.check.engine import CheckError
from taugrad.learn.check.report import Check, Report
from taugrad.learn.check.runner import check

__all__ = ["Check", "CheckError", "Report", "check"]
