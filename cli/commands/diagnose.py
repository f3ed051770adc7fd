"""The one call of ``mcmc diagnose``: outputs checked, chains read, report made.

:func:`diagnose` takes typed :class:`DiagnoseSettings` (the command line
resolves its options and ``[tool.mcmc.diagnose]`` into them:
:mod:`mcmc.cli.config`), checks every output
against the inputs before any work (:func:`mcmc.core.paths.check_paths`),
reads the chains files (:func:`mcmc.diagnostics.readers.read_chains`) and
returns :func:`mcmc.diagnostics.report.check.check`'s
:class:`~mcmc.diagnostics.report.report.Report`, with the plot data when a
plot was asked for and the classic diagnostics when they were. It never
prints; the command line renders the report with its own display settings
(:class:`mcmc.cli.render.RenderOptions`).
"""

from __future__ import annotations

import datetime
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

import numpy as np

from mcmc.cli.commands.files import piped_stdin
from mcmc.core.chains import Chains
from mcmc.core.errors import UsageError
from mcmc.core.paths import check_paths
from mcmc.diagnostics.readers import read_chains
from mcmc.diagnostics.report.check import check
from mcmc.diagnostics.report.classic_rows import classic_rows
from mcmc.diagnostics.report.plots import plot_data
from mcmc.diagnostics.report.report import Provenance, Report
from mcmc.diagnostics.report.thresholds import Thresholds
from mcmc.diagnostics.stats import DEFAULT_LAGS, DEFAULT_PROBS

__all__ = ["DiagnoseSettings", "diagnose", "lp_trace", "with_lp"]


@dataclass(frozen=True)
class DiagnoseSettings:
    """What ``mcmc diagnose`` judges by and reports.

    Attributes
    ----------
    thresholds
        The limits of the checks (``None``: the defaults of
        :class:`~mcmc.diagnostics.report.thresholds.Thresholds`).
    strict
        Warnings fail the run too.
    var
        Variable or parameter names or patterns to judge (all when ``None``).
    probs, lags
        Quantile probabilities and autocorrelation lags (``None``: the defaults).
    classic, superchains
        Also the classic diagnostics; nested R-hat over ``superchains``
        (a number of superchains of consecutive chains, or one id per chain).
    labels
        How a setting was given (``"--superchains"``, or the config file and
        key), named by messages about a setting checked against the draws.
    include_warmup
        Judge the warm-up draws a file keeps (``mcmc sample --keep-warmup``)
        with the draws, before them; by default they are left out.
    """

    thresholds: Thresholds | None = None
    strict: bool = False
    var: tuple[str, ...] | None = None
    probs: tuple[float, ...] | None = None
    lags: tuple[int, ...] | None = None
    classic: bool = False
    superchains: int | tuple[int, ...] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    include_warmup: bool = False


def diagnose(
    files: Sequence[str],
    settings: DiagnoseSettings | None = None,
    *,
    outputs: Mapping[str, str | None] | None = None,
    inputs: Sequence[str] = (),
    stdin: BinaryIO | None = None,
    plot_cap: int | None = None,
    every_failing: bool = False,
    command: str | None = None,
    plot: bool = False,
    layout: str | None = None,
    names: str | None = None,
    discard: int = 0,
    thin: int = 1,
) -> Report:
    """Diagnose the chains in ``files``.

    Parameters
    ----------
    files
        Chains files (a quoted glob is several files; ``"-"`` is ``stdin``).
    settings
        Thresholds, selection and what to report (defaults when ``None``).
    outputs
        Output name -> path of every output the caller will write (``{"-o": ...}``):
        checked against the inputs before any work, so none can replace one.
    inputs
        Other files the run reads (the config file), which no output may replace.
    stdin
        Binary stream read for ``"-"``.
    plot, plot_cap
        Attach :class:`~mcmc.diagnostics.report.plots.PlotData` of the worst
        ``plot_cap`` parameters (all when ``None``; with ``every_failing``,
        every failing one too, for the HTML page's one image each), the log
        density, the divergent transitions and the energies when the file
        has them.
    layout, names, discard, thin
        How to read the draws (:func:`~mcmc.diagnostics.readers.read_chains`):
        the axis order and the names of a bare array, the burn-in to drop from
        each chain and the thinning.

    Raises
    ------
    UsageError
        An output that is an input, a ``var`` that matches nothing, superchains
        that do not fit the chains.
    InputError
        An unreadable chains file.
    """
    settings = settings or DiagnoseSettings()
    check_paths(outputs or {}, [*files, *inputs])
    stdin = piped_stdin(files, stdin, "e.g. 'mcmc sample -o - | mcmc diagnose -'")
    chains = read_chains(files, stdin=stdin, layout=layout, names=names, discard=discard, thin=thin,
                         include_warmup=settings.include_warmup)  # fmt: skip
    # A quoted glob is expanded by the reader: report the files actually read.
    sources = list(dict.fromkeys(chains.attrs.get("source_files") or files))
    report = check(
        with_lp(chains, settings.var), var=settings.var, thresholds=settings.thresholds or Thresholds(),
        probs=settings.probs or DEFAULT_PROBS, lags=settings.lags or DEFAULT_LAGS, source=sources,
        strict=settings.strict,
    )  # fmt: skip
    data = None
    if plot:
        st = chains.sample_stats
        lp = chains.sample_stats.get("lp")
        trace, warm = lp_trace(chains)
        data = plot_data(
            report.draws, report.parameters, plot_cap, divergent=st.get("diverging"),
            energy=None if "energy" not in st else np.asarray(st["energy"], dtype=float), every_failing=every_failing,
            log_density=None if report.log_density is None or lp is None else (report.log_density, np.asarray(lp)),
            # kept warm-up draws: lp over warm-up and draws, beside the lp row of the draws
            lp=trace if warm else None, lp_warmup=warm,
        )  # fmt: skip
    extra: dict[str, Any] = {}
    if settings.classic:
        label = settings.labels.get("superchains", "--superchains")
        extra = _classic(report, settings.superchains, label)
    if command is not None:
        extra["provenance"] = provenance(command, sources)
    return replace(report, plot=data, **extra)


def provenance(command: str, sources: list[str]) -> Provenance:
    """The :class:`Provenance` of a report made by ``command`` from ``sources``: version, date, file hashes."""
    from importlib.metadata import PackageNotFoundError, version  # start-up: importlib.metadata (40 ms), --html only

    try:
        made_by = version("mcmc")
    except PackageNotFoundError:  # a source tree that is not installed
        made_by = "unknown"
    inputs = []
    for source in sources:
        if source == "-" or not os.path.isfile(source):
            inputs.append((source, None))  # stdin, or a zarr store (a folder)
            continue
        digest = hashlib.sha256()
        with open(source, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        inputs.append((source, digest.hexdigest()))
    created = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    return Provenance(made_by, created, command, tuple(inputs))


def with_lp(chains: Chains, var: Sequence[str] | None) -> Chains:
    """``chains`` with the log density ``lp`` as a variable when ``--var`` names it (and no variable is called so).

    ``lp`` is a sampler statistic, reported in its own row and only warned
    about; asked for by name it is judged and plotted as a parameter.
    """
    if not var or "lp" not in var or "lp" in chains.posterior or "lp" not in chains.sample_stats:
        return chains
    return replace(chains, posterior={**chains.posterior, "lp": np.asarray(chains.sample_stats["lp"], dtype=float)})


def lp_trace(chains: Chains) -> tuple[np.ndarray | None, int]:
    """The log density of every draw of every chain, warm-up first when the file keeps it, and how many are warm-up."""
    lp = chains.sample_stats.get("lp")
    if lp is None:
        return None, 0
    lp = np.asarray(lp, dtype=float)
    included = int(chains.attrs.get("warmup_included", 0) or 0)
    warm = chains.warmup_sample_stats.get("lp")
    if included or warm is None:
        return lp, included
    return np.concatenate([np.asarray(warm, dtype=float), lp], axis=1), int(np.shape(warm)[1])


def _classic(report: Report, superchains: int | tuple[int, ...] | None, where: str) -> dict[str, Any]:
    """The classic diagnostics of ``report``'s draws and their compact rows (only ever computed when asked)."""
    # start-up: the classic diagnostics' modules (and SciPy, which some of them use) only when asked for
    from mcmc.diagnostics.stats.classic import classic_report

    if superchains is not None:
        c = report.n_chains
        if isinstance(superchains, int) and (superchains < 2 or c % superchains):
            raise UsageError(f"{where}: {c} chains cannot form {superchains} superchains of equal size")
        if isinstance(superchains, tuple):
            superchains = list(superchains)
            if len(superchains) != c:
                raise UsageError(f"{where}: one superchain id per chain needed ({c}), got {len(superchains)}")
            counts = sorted(superchains.count(k) for k in set(superchains))
            if len(counts) < 2 or counts[0] != counts[-1]:
                raise UsageError(f"{where}: at least two superchains, each with the same number of chains")
    names = [p.name for p in report.parameters]
    result = classic_report(report.draws, names, superchains, quantile_probs=report.probs)
    rows = classic_rows(result, [p.max_rhat for p in report.parameters])
    return {"classic": result, "classic_rows": rows}
