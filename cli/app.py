"""The ``mcmc`` command: one Typer app, one module per subcommand.

Exit codes live here and only here:

* 0: the work is done (and, for ``diagnose``, every check passed);
* 1: a convergence check failed (raised as :class:`CheckFailed` by a command);
* 2: bad usage or unreadable input (:class:`~mcmc.core.errors.McmcError`,
  Click's usage errors), or an unexpected error (traceback only with ``--debug``);
* 130: interrupted (SIGINT, Ctrl-C); 143: terminated (SIGTERM, as CI
  cancellation and batch schedulers send). Either way the temporary file of
  an output being written is removed and an existing output is left as it was
  (``docs/errors.md``).

Every message is printed with rich markup escaped, no emoji shortcodes and its
control characters shown as escapes (:func:`mcmc.cli.text.printable`): file
names and cells such as ``chains[hmc].npz``, ``[/b]``, ``run:100:.npz`` or one
holding a newline print as they are, on one line.

Start-up stays light so ``mcmc --help`` is instant: subcommand modules import
only Typer, rich and the standard library at module level; NumPy, SciPy,
ArviZ and numba are imported inside the command bodies that need them. A run
of one subcommand imports and registers only that subcommand's module: Typer
builds a Click command from every registered signature on each call, and a CI
gate running ``mcmc diagnose`` should not pay for ``sample``, ``lda`` and
``compare`` (about 60 ms together). Process-level tricks (allocator settings,
a lazy-import stand-in) live in :mod:`mcmc.cli.speedups`, which says what each
buys.
"""

from __future__ import annotations

import errno
import importlib
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from typing import Annotated

import typer
from rich.markup import escape

from mcmc.cli.console import HELD, INVOKED, SIGNALLED, CheckFailed, err_console, numba_compiling, raise_after_compiling
from mcmc.cli.text import printable
from mcmc.core.errors import McmcError

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + 2, 128 + 15  # the shell's 128 + signal number

#: The subcommands, each the ``command`` function of the module
#: ``mcmc.cli.<name>``, in ``mcmc --help`` order. None shows its help when given
#: no arguments: a missing FILE is a one-line usage error, like any other.
SUBCOMMANDS = ("sample", "lda", "diagnose", "compare")


def build_app(names: Sequence[str] = tuple(SUBCOMMANDS), *, listing: bool = False) -> typer.Typer:
    """The Typer app with the subcommands ``names`` registered (all by default).

    ``listing``: each registered by its one-line summary only
    (:data:`mcmc.cli.summaries.SUMMARIES`), for ``mcmc --help``, which lists
    the commands and runs none: no subcommand module is imported or built.
    """
    app = typer.Typer(
        name="mcmc",
        help="Markov chain Monte Carlo from the command line: sample, fit topic models, diagnose convergence.",
        context_settings={"help_option_names": ["-h", "--help"]},
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
    )
    for name in names:
        if listing:
            from mcmc.cli.summaries import SUMMARIES  # start-up: four lines, only for the listing

            app.command(name, help=SUMMARIES[name])(_listed)
            continue
        module = importlib.import_module(f"mcmc.cli.{name}")
        app.command(name)(module.command)
    app.callback()(_root)
    return app


def _invoked(argv: Sequence[str]) -> list[str]:
    """The subcommands a run of ``argv`` needs: the one named, none for ``--version``, or all (help, errors)."""
    # the root options (--debug, --version, -h) take no value: the first word is the subcommand
    first = next((i for i, a in enumerate(argv) if not a.startswith("-")), len(argv))
    root = argv[:first]
    if "--version" in root and not {"-h", "--help"} & set(root):
        return []  # eager: answered before any subcommand is looked at, so none is imported (about 30 ms)
    return [argv[first]] if first < len(argv) and argv[first] in SUBCOMMANDS else list(SUBCOMMANDS)


def _listed() -> None:
    """A subcommand as ``mcmc --help`` lists it (never run: the listing exits first)."""


def _lists_only(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks only for the top-level help: no subcommand, and ``-h``/``--help`` or nothing at all."""
    if any(not a.startswith("-") for a in argv):
        return False
    return not argv or bool({"-h", "--help"} & set(argv))


def _version(value: bool) -> None:
    if value:
        # start-up: importlib.metadata (40 ms) only for --version
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("mcmc")
        except PackageNotFoundError:  # running from a source tree that is not installed
            v = "unknown"
        typer.echo(f"mcmc {v}")
        raise typer.Exit()


def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback of an unexpected error.", envvar="MCMC_DEBUG")
    ] = False,
    _show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    if debug:
        os.environ["MCMC_DEBUG"] = "1"


class _Terminated:
    """The SIGINT and SIGTERM handler: remember the signal, then unwind like Ctrl-C.

    Raising :class:`KeyboardInterrupt` runs every ``finally`` and context
    manager on the way out (the temporary output file is removed), through
    code that already handles Ctrl-C; Typer turns it into exit 130, and
    :func:`main` reports 143 for SIGTERM. Remembering the signal also catches
    the interrupt that a library wraps in an exception of its own: the exit
    code is still 130 or 143, never "internal error".

    While a run that writes checkpoints samples (:func:`~mcmc.cli.console.signals_held`)
    the first signal is only remembered: the run writes a last checkpoint at the
    end of its iteration and stops there (a second signal stops it at once).

    While numba compiles or loads a kernel on this thread the handler only
    remembers the signal, and raises it when that kernel is done
    (:func:`~mcmc.cli.console.raise_after_compiling`). An exception thrown into
    the compiler lands in LLVM's callbacks (where ctypes swallows it) or in
    code numba runs through ``exec``, and CPython then ends the process by
    SIGINT whatever :func:`main` returns (it remembers any KeyboardInterrupt
    that left exec'd code, bpo-1054041): SIGTERM reported as -2, not 143.
    """

    def __init__(self) -> None:
        self.received = False  # SIGTERM
        self.interrupted = False  # SIGINT

    def __call__(self, signum: int, frame: object) -> None:
        SIGNALLED["received"] = True
        SIGNALLED["count"] += 1
        if signum == signal.SIGTERM:
            self.received = True
        else:
            self.interrupted = True
        if HELD["active"] and SIGNALLED["count"] == 1:
            return  # a checkpointed run stops after this iteration, its last checkpoint written
        if numba_compiling():
            raise_after_compiling()
        else:
            raise KeyboardInterrupt

    @property
    def any(self) -> bool:
        return self.received or self.interrupted


def _interrupted(terminated: _Terminated) -> int:
    if terminated.received:
        err_console.print("mcmc: terminated", highlight=False, markup=False)
        return EXIT_TERMINATED
    err_console.print("mcmc: interrupted", highlight=False, markup=False)
    return EXIT_INTERRUPTED


def _error(label: str, message: str) -> None:
    """One line on stderr: ``mcmc: error: message``, the message printed verbatim (no markup, controls visible)."""
    err_console.print(
        f"[bold red]mcmc: {label}:[/] {escape(printable(message))}", highlight=False, markup=True, soft_wrap=True
    )


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the app and return the exit code.

    The console-script wrapper calls ``sys.exit(main())``; tests call ``main([...])``.
    """
    process = argv is None  # the console script: this process is ours to end
    if argv is None:
        argv = sys.argv[1:]
        if not os.environ.get("MCMC_DEBUG") and "--debug" not in argv:
            # Last line of defence for the terminal: a NumPy RuntimeWarning that
            # escaped the checks means nothing to a user. Tests call main([...])
            # and keep seeing them (pytest turns them into errors).
            warnings.simplefilter("ignore", RuntimeWarning)
    terminated = _Terminated()
    SIGNALLED["received"] = False
    INVOKED["argv"] = list(argv)
    SIGNALLED["count"] = 0
    previous = {}
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):
            if signum == signal.SIGINT and signal.getsignal(signum) is not signal.default_int_handler:
                continue  # SIGINT ignored (a background job) or handled by a caller: leave it so
            previous[signum] = signal.signal(signum, terminated)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        code = _run(argv, terminated)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if process and code not in (EXIT_OK, EXIT_CHECK_FAILED):
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process at once after a failure or a signal: its one line is out, its outputs are settled.

    Interpreter shutdown would wait for the threads a reader left behind (zarr's
    event loop reading thousands of chunks when Ctrl-C came: a minute, once)
    and let their pending tasks print hundreds of asyncio lines after
    ``mcmc: interrupted``. Only for the console script: a caller of
    ``main([...])`` keeps its process.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to say there
            pass
    os._exit(code)


def _run(argv: list[str], terminated: _Terminated) -> int:
    from mcmc.cli import speedups  # start-up: the speed tricks' module is applied per command, after argv is read

    from mcmc.core.atomic import transaction  # start-up: the standard library only, once argv is read

    invoked = _invoked(argv)
    speedups.apply(invoked[0] if len(invoked) == 1 else None)
    # Every output of the command is renamed onto its name at the end, all or none: a run
    # that fails after writing one output (a bad test file, a full disk) leaves all as they were.
    with transaction() as outputs:
        try:
            code = build_app(invoked, listing=_lists_only(argv))(args=argv, prog_name="mcmc", standalone_mode=False)
        except CheckFailed:
            outputs.commit()  # the draws fail the checks: the files written are the evidence
            return EXIT_CHECK_FAILED
        except (typer.Abort, KeyboardInterrupt):
            return _interrupted(terminated)
        except Exception as exc:  # noqa: BLE001 - the one place that turns exceptions into exit codes
            if terminated.any:  # a signal arrived and something wrapped its KeyboardInterrupt
                return _interrupted(terminated)
            return _failure(exc)
        # Typer turns Ctrl-C inside a command into the return value 130 (standalone_mode=False).
        if code == EXIT_INTERRUPTED or terminated.any:
            return _interrupted(terminated)
        try:
            outputs.commit()
        except McmcError as exc:
            return _failure(exc)
        return code if isinstance(code, int) else EXIT_OK


#: Write errors that say where the bytes could not go, not what went wrong in mcmc: the files mcmc writes name
#: themselves (core/atomic.py), so one of these reaching here was writing to standard output.
_FULL = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO") if hasattr(errno, name))


def _failure(exc: Exception) -> int:
    """The exit code of an exception from a command, after its one line on stderr."""
    if isinstance(exc, McmcError):
        _error("error", str(exc))
        return EXIT_BAD_INPUT
    if isinstance(exc, typer.Exit):
        return exc.exit_code
    if isinstance(exc, typer.TyperException):  # Click's usage errors: unknown option, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":  # `mcmc` alone: the help is already shown
            return EXIT_BAD_INPUT
        # One line, like every other bad input, with the way to the help.
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "mcmc"
        _error("error", f"{' '.join(exc.format_message().split())} (see '{where} -h')")
        return EXIT_BAD_INPUT
    if isinstance(exc, BrokenPipeError):  # `mcmc diagnose --format csv f.npz | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    if isinstance(exc, OSError) and exc.errno in _FULL:  # a report or the draws on a full standard output
        _error("error", f"{exc.filename or 'standard output'}: cannot be written ({exc.strerror})")
        return EXIT_BAD_INPUT
    if os.environ.get("MCMC_DEBUG"):
        raise exc
    _error("internal error", f"{type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
