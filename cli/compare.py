"""`mcmc compare` (being built: see the open issue)."""

from __future__ import annotations

from mcmc.core.errors import UsageError


def command() -> None:
    """Not available yet."""
    raise UsageError("'mcmc compare' is not available yet")
