"""Process-level speed tricks of the ``mcmc`` command, each with what it buys and the bench that shows it.

Everything here changes how the *process* behaves, not what it computes, and
each trick stays only while its benchmark still shows it paying (rerun the
bench named beside it after upgrading NumPy, Typer, rich or glibc).
:func:`apply` is the one call, made by :func:`mcmc.cli.app.main` before the
app is built; tests calling ``main([...])`` get the same process set-up.

Applied at start-up
-------------------
:func:`keep_freed_memory` (glibc ``mallopt`` through ctypes), for ``mcmc diagnose`` only
    About 0.2 s of system time per ``mcmc diagnose`` on 4 x 1000 x 1000 draws
    (80 000 page faults avoided): ``bench/diagnose.py``, "glibc's allocator"
    in ``docs/benchmarks.md``. Not for ``mcmc lda``, whose peak memory it
    raised by 40 % (:data:`KEEP_FREED_MEMORY`).
:func:`defer_rich_markdown` (a stand-in ``rich.markdown`` module)
    About 60 ms of a 0.2-0.3 s ``mcmc --help`` (markdown-it and pygments not
    imported): best of 5 ``time mcmc --help``.
:func:`defer_numba_blas_probe` (numba's import without SciPy's linear algebra), for ``lda``, ``sample`` and ``compare``
    0.15 to 0.2 s of every ``mcmc lda`` start (``python -X importtime``; a
    one-sweep ``mcmc lda`` on AP, six runs interleaved with and without it:
    median 1.11 s against 1.26 s); it counts at small K on small corpora,
    where ``bench/lda.py --whole-process`` compares whole processes of 1.5 to 3 s.
:func:`defer_numba_checks` (numba's import without SciPy's version check and without PyYAML), for the same
    About 26 ms of CPU of each of those starts (``scipy`` 16 ms, ``yaml`` 10 ms, each the
    best of seven ``import`` after NumPy), about 5 % of a one-sweep ``mcmc lda`` on ten documents.

Used by the option definitions
------------------------------
:func:`lazy_choice` (choices loaded from a registry when first shown or checked)
    About 1 ms of every ``mcmc diagnose`` and ``mcmc lda`` start: the sampler
    registry (``python -X importtime``), which only ``sample`` and ``compare`` read.

Kept elsewhere, noted here so they are found in one place
---------------------------------------------------------
The ``typer>=0.28,<0.29`` pin (``pyproject.toml``)
    Typer 0.29 imports pydantic in every command: about 100 ms on each
    ``mcmc diagnose`` (``bench/diagnose.py``) and on ``mcmc --help``.
The hand-written normal quantile (:func:`mcmc.diagnostics.stats._ranks.norm_ppf`, Wichura's AS241)
    ``mcmc diagnose`` never imports SciPy (about 0.1-0.2 s): ``bench/diagnose.py``.
SciPy's assignment solver loaded alone (:mod:`mcmc.core.assignment`)
    About 0.25 s of CPU of every ``mcmc lda`` (its topics matched across
    chains) and ``mcmc diagnose`` of an LDA chains file: ``scipy.optimize``'s
    package (linear programming, FFT, ``scipy.linalg``, ``scipy.special``) is
    not imported; ``bench/startup.py``.
Lazy imports in the subcommand modules and one subcommand registered per run (:mod:`mcmc.cli.app`)
    ``mcmc --help`` stays under 0.3 s; a ``diagnose`` run does not pay about
    60 ms for building the other commands' options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "apply", "defer_numba_blas_probe", "defer_numba_checks", "defer_rich_markdown", "keep_freed_memory", "lazy_choice",
]  # fmt: skip


#: Subcommands whose runs :func:`keep_freed_memory` speeds up. Not ``lda``: a fit frees large arrays of many
#: sizes, and with them kept in the heap its peak resident memory grew by 40 % (400 -> 560 MB at K = 500 on
#: 20 Newsgroups, ``bench/lda.py --whole-process``).
KEEP_FREED_MEMORY = frozenset({"diagnose"})


#: Subcommands that load numba kernels (LDA sweeps, compiled targets and trajectories).
NUMBA_COMMANDS = frozenset({"lda", "sample", "compare"})


def apply(command: str | None = None) -> None:
    """Apply the start-up tricks of this module for a run of ``command`` (each is idempotent)."""
    if command in KEEP_FREED_MEMORY:
        keep_freed_memory()
    if command in NUMBA_COMMANDS:
        defer_numba_blas_probe()
        defer_numba_checks()
    defer_rich_markdown()


def keep_freed_memory() -> None:
    """Let glibc reuse the memory of freed NumPy temporaries instead of unmapping it.

    glibc serves blocks above a dynamic threshold (128 KiB to 32 MiB) with
    fresh mappings and trims the top of the heap beyond twice that, so each
    multi-megabyte temporary of a batched statistic faults its pages in again:
    on 4 x 1000 x 1000 draws, 80 000 page faults and a quarter of the time of
    ``mcmc diagnose``. With the thresholds raised, freed blocks below 64 MiB
    stay in the heap for the next temporary (at most 256 MiB kept). A user's
    own ``MALLOC_*`` settings win; other C libraries are left alone.
    """
    if not sys.platform.startswith("linux") or any(k.startswith("MALLOC_") for k in os.environ):
        return
    import ctypes  # start-up: ctypes only where glibc's allocator is tuned

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
    mallopt(m_mmap_threshold, 64 << 20)
    mallopt(m_trim_threshold, 256 << 20)


def defer_rich_markdown() -> None:
    """Keep Typer's help formatter from importing ``rich.markdown`` until a ``Markdown`` is made.

    ``typer.rich_utils`` imports ``rich.markdown`` (markdown-it and pygments:
    60 ms of a 0.2-0.3 s ``mcmc --help``) at module level, for
    ``rich_markup_mode="markdown"``; mcmc's help uses rich markup, so no
    ``Markdown`` is ever made. Until one is, a stand-in module serves the
    name; making one imports the real module and hands the call on.
    """
    if "rich.markdown" in sys.modules:
        return
    import types  # start-up: only when the stand-in module is made

    class Markdown:
        def __new__(cls, *args: object, **kwargs: object):  # noqa: ANN204 - returns the real rich Markdown
            if sys.modules.get("rich.markdown") is stand_in:
                del sys.modules["rich.markdown"]
            # start-up: the real module, only when a help text needs Markdown
            from rich.markdown import Markdown as real

            return real(*args, **kwargs)

    stand_in = types.ModuleType("rich.markdown", "Stand-in until a Markdown is made (see mcmc.cli.speedups).")
    stand_in.Markdown = Markdown  # type: ignore[attr-defined]
    sys.modules["rich.markdown"] = stand_in


_NUMBA_PROBE = "numba.np.arraymath"  # the module whose import asks whether BLAS is there
_BLAS = "scipy.linalg.cython_blas"


def defer_numba_blas_probe() -> None:
    """Keep numba's import from importing all of ``scipy.linalg`` just to learn that BLAS is there.

    ``numba.np.arraymath`` sets ``_HAVE_BLAS`` at import by importing
    ``scipy.linalg.cython_blas`` (0.15 to 0.2 s: the whole of
    ``scipy.linalg``); nothing of it is used until a kernel types a BLAS call
    (``np.dot``, ``np.linalg``), and then numba imports it itself
    (``numba.np.linalg.ensure_blas``). While ``numba.np.arraymath`` is being
    imported the name reads as missing, and afterwards ``_HAVE_BLAS`` is set
    to what the probe would have found: whether SciPy is installed (it is a
    dependency). Does nothing once numba or ``scipy.linalg`` is imported.
    """
    if _NUMBA_PROBE in sys.modules or _BLAS in sys.modules or "scipy.linalg" in sys.modules:
        return
    if any(isinstance(f, _DeferBlasProbe) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _DeferBlasProbe())


class _DeferBlasProbe:
    """Import hook for :func:`defer_numba_blas_probe`: wraps the loading of ``numba.np.arraymath``, once."""

    def find_spec(self, name: str, path: object, target: object = None) -> Any:
        if name != _NUMBA_PROBE:
            return None
        import importlib.util  # start-up: only while the hooked module loads

        sys.meta_path.remove(self)  # one use; the normal finders locate the module
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_without_probe(module: Any) -> None:
            blocked = _BLAS not in sys.modules
            if blocked:
                sys.modules[_BLAS] = None  # type: ignore[assignment] - `import` raises ImportError
            try:
                exec_module(module)
            finally:
                if blocked and sys.modules.get(_BLAS, 0) is None:
                    del sys.modules[_BLAS]
            module._HAVE_BLAS = importlib.util.find_spec("scipy") is not None

        spec.loader.exec_module = exec_without_probe  # type: ignore[method-assign]
        return spec


_NUMBA_CONFIG = "numba.core.config"  # imports PyYAML for a config file in the working directory
_NUMBA_CONFIG_FILE = ".numba_config.yaml"


def defer_numba_checks() -> None:
    """Keep numba's import from importing SciPy for a version check and PyYAML for a file that is not there.

    ``numba/__init__`` imports ``scipy`` only to check that its version is at
    least 1.0 (16 ms of CPU; mcmc requires ``scipy>=1.11``): the name reads
    as missing until numba's next import (``numba._version``), which numba
    takes as "SciPy not installed" and skips the check. ``numba.core.config``
    imports ``yaml`` (10 ms) to read a ``.numba_config.yaml`` in the working
    directory: where there is none, a stand-in with ``safe_load`` serves, which
    imports the real module if such a file appears later. Together about 5 %
    of a one-sweep ``mcmc lda`` or a short ``mcmc sample`` (``bench/startup.py``).
    Does nothing once numba is imported.
    """
    if "numba" in sys.modules or any(isinstance(f, _DeferNumbaChecks) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _DeferNumbaChecks())


class _DeferNumbaChecks:
    """Import hook for :func:`defer_numba_checks`: SciPy hidden during numba's check, ``yaml`` in its config."""

    def __init__(self) -> None:
        self.hid_scipy = False

    def show_scipy(self) -> None:
        if self.hid_scipy and sys.modules.get("scipy", 0) is None:
            del sys.modules["scipy"]
        self.hid_scipy = False

    def find_spec(self, name: str, path: object, target: object = None) -> Any:
        if name == "numba._version":  # numba's first import after its check: SciPy is back
            self.show_scipy()
        elif name == "numba" and "scipy" not in sys.modules:
            import importlib.util  # start-up: only while numba's package loads

            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def exec_without_check(module: Any) -> None:
                sys.modules["scipy"] = None  # type: ignore[assignment] - `import scipy` raises ImportError
                self.hid_scipy = True
                try:
                    exec_module(module)
                finally:
                    self.show_scipy()  # also when numba's import fails

            spec.loader.exec_module = exec_without_check  # type: ignore[method-assign]
            return spec
        elif name == _NUMBA_CONFIG:
            sys.meta_path.remove(self)  # the last of the three; the normal finders locate the module
            if "yaml" not in sys.modules and not os.path.exists(_NUMBA_CONFIG_FILE):
                sys.modules["yaml"] = _yaml_stand_in()
        return None


def _yaml_stand_in() -> Any:
    """A ``yaml`` module whose ``safe_load`` imports PyYAML and hands the call on (see :func:`defer_numba_checks`)."""
    import types  # start-up: only when the stand-in module is made

    stand_in = types.ModuleType("yaml", "Stand-in until a YAML file is read (see mcmc.cli.speedups).")

    def safe_load(stream: Any) -> Any:
        if sys.modules.get("yaml") is stand_in:
            del sys.modules["yaml"]
        import yaml  # start-up: PyYAML only when numba finds its config file

        return yaml.safe_load(stream)

    stand_in.safe_load = safe_load  # type: ignore[attr-defined]
    return stand_in


def lazy_choice(load: Callable[[], Iterable[str]]) -> Any:
    """A case-insensitive choice whose names are loaded from a registry only when shown or checked.

    The sampler registry (:mod:`mcmc.core.samplers.registry`) imports no
    NumPy, but still takes about 1 ms to import (``python -X importtime``:
    its declarations, :mod:`mcmc.core.ranges`); :mod:`mcmc.cli.options`,
    which every command imports, would pay it at every ``mcmc diagnose``
    and ``mcmc lda`` start. With this choice only ``sample`` (whose help is
    written from the registry) and ``compare`` load it. Built on Typer's own
    choice type (``typer._types``, stable under the ``typer<0.29`` pin), so
    help and errors look like any choice's. Before the registry imported no
    NumPy this saved about 90 ms of ``mcmc --help``.
    """
    from typer._types import TyperChoice  # start-up: Typer's choice type only when an option is declared

    class LazyChoice(TyperChoice):
        def __init__(self) -> None:
            self.case_sensitive = False

        @property
        def choices(self) -> tuple[str, ...]:  # type: ignore[override]
            return tuple(load())

    return LazyChoice()
