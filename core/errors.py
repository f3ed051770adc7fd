"""The errors `mcmc` turns into exit code 2: bad input, bad usage, a cluster that could not finish.

Everything that reads user input raises :class:`InputError` with the file it
was reading and what is wrong, so the command line can print one line,
``mcmc: error: FILE: problem``, and exit 2 without a traceback.
"""

from __future__ import annotations


class McmcError(Exception):
    """Base of the errors that mean "the user's request cannot be carried out"."""


class InputError(McmcError):
    """A file (or stdin) that cannot be used: missing, corrupt, wrong shape, NaN.

    Parameters
    ----------
    source
        The file name as the user typed it (``"-"`` for stdin), or ``None``
        when the input is not a file (an option value, say).
    message
        What is wrong, as a short lower-case phrase without a final period.
    """

    def __init__(self, source: str | None, message: str) -> None:
        self.source = source
        self.message = message
        super().__init__(f"{source}: {message}" if source else message)

    def __reduce__(self) -> tuple[type[InputError], tuple[str | None, str]]:
        # An error raised on a Dask worker travels back pickled: rebuild it from
        # both fields (the default would call __init__ with the joined text only).
        return type(self), (self.source, self.message)


class UsageError(McmcError):
    """Options that do not fit together or an unknown option value."""


class ScaleOutError(McmcError):
    """The cluster could not finish the run (workers kept dying, the scheduler went away).

    Raised by :mod:`mcmc.core.scaleout` and by a method's own split of a
    chain across the workers (:mod:`mcmc.core.lda.sharded`).
    """
