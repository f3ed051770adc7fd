"""The one library call of ``mcmc diagnose``: settings, outputs checked, chains read, report made.

:func:`diagnose` merges the options given with a ``[tool.mcmc.diagnose]``
table of the nearest ``pyproject.toml`` (options win), checks every setting
and every output before any work (:func:`mcmc.core.paths.check_paths`), reads
the chains files (:func:`mcmc.diagnostics.readers.read_chains`) and returns
:func:`mcmc.diagnostics.check.check`'s :class:`~mcmc.diagnostics.report.Report`,
with the plot data when a plot was asked for. It never prints; the command
line renders the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from mcmc.core.errors import UsageError

if TYPE_CHECKING:  # the report module loads NumPy: only when the command runs
    from mcmc.diagnostics.report import Report

__all__ = ["CONFIG_KEYS", "THRESHOLD_KEYS", "diagnose", "load_config", "piped_stdin"]

#: Threshold settings (option and ``[tool.mcmc.diagnose]`` names) -> whole numbers only?
THRESHOLD_KEYS = {
    "max-rhat": False, "min-ess": False, "max-divergences": True, "min-ebfmi": False,
    "max-treedepth-hits": True, "ssif-ratio": False,
}  # fmt: skip
#: Keys of ``[tool.mcmc.diagnose]`` (hyphens or underscores), each an option of ``mcmc diagnose``,
#: and ``per-variable``, a table of tables of :data:`PER_VARIABLE_KEYS` by variable or parameter name.
CONFIG_KEYS = (
    *THRESHOLD_KEYS, "var", "quantiles", "lags", "format", "strict", "sig-figs", "wide", "diagnostics",
    "superchains", "per-variable",
)  # fmt: skip
#: Keys of a ``[tool.mcmc.diagnose.per-variable.NAME]`` table: the limits judged per parameter.
PER_VARIABLE_KEYS = ("max-rhat", "min-ess")
#: Values of ``--diagnostics``: the default report, or that plus the classic diagnostics.
DIAGNOSTICS = ("default", "classic")


def diagnose(
    files: Sequence[str],
    options: Mapping[str, Any],
    *,
    outputs: Mapping[str, str | None] | None = None,
    stdin: BinaryIO | None = None,
    cwd: Path | None = None,
    formats: Sequence[str] = (),
    plot_cap: int | None = None,
    plot: bool = False,
    layout: str | None = None,
    names: str | None = None,
    discard: int = 0,
    thin: int = 1,
) -> Report:
    """Diagnose the chains in ``files`` with the given options over the project's defaults.

    Parameters
    ----------
    files
        Chains files (a quoted glob is several files; ``"-"`` is ``stdin``).
    options
        Settings given on the command line, by :data:`CONFIG_KEYS` name
        (``"max-rhat"``, ``"var"``, ...); ``None`` values count as not given.
        Thresholds and lists may be numbers or text (``"0.05,0.5"``).
    outputs
        Option -> path of every output the caller will write (``{"-o": ...}``):
        checked against the inputs before any work, so none can replace one.
    stdin
        Binary stream read for ``"-"``.
    cwd
        Where the search for ``pyproject.toml`` starts (default: the current directory).
    formats
        Output formats the caller can render: ``format`` from the options or
        the config must be one of them (recorded in ``Report.format``).
    plot, plot_cap
        Attach :class:`~mcmc.diagnostics.plots.PlotData` of the worst
        ``plot_cap`` parameters (all when ``None``), with the divergent
        transitions and the energies when the file has them.
    layout, names, discard, thin
        How to read the draws (:func:`~mcmc.diagnostics.readers.read_chains`):
        the axis order and the names of a bare array, the burn-in to drop from
        each chain and the thinning.

    Raises
    ------
    UsageError
        A bad setting (naming the option or the config file and key), an
        output that is an input, or a ``--var`` that matches nothing.
    InputError
        An unreadable chains file or ``pyproject.toml``.
    """
    from mcmc.core.paths import check_paths

    config, config_path = load_config(cwd or Path.cwd())
    given = {k: v for k, v in options.items() if v is not None and v != []}
    settings = {**config, **given}

    def where(key: str) -> str:
        return f"--{key}" if key in given else f"{config_path}: [tool.mcmc.diagnose] {key}"

    from mcmc.diagnostics.check import check
    from mcmc.diagnostics.plots import plot_data
    from mcmc.diagnostics.report import Thresholds
    from mcmc.diagnostics.stats import DEFAULT_LAGS, DEFAULT_PROBS

    per_variable = tuple(
        (
            name,
            *(
                None if key not in limits else _number(limits[key], f"{config_path}: {_table(name)} {key}", False)
                for key in PER_VARIABLE_KEYS
            ),
        )
        for name, limits in settings.get("per-variable", {}).items()
    )
    thresholds = Thresholds(
        **{
            key.replace("-", "_"): _number(settings[key], where(key), whole)
            for key, whole in THRESHOLD_KEYS.items()
            if key in settings
        },
        per_variable=per_variable,
    )
    strict = _flag(settings.get("strict", False), where("strict"))
    wide = _flag(settings.get("wide", False), where("wide"))
    sig_figs = settings.get("sig-figs")
    if sig_figs is not None:
        sig_figs = _number(sig_figs, where("sig-figs"), True)
        if not 1 <= sig_figs <= 15:
            raise UsageError(f"{where('sig-figs')}: must be between 1 and 15 (got {sig_figs})")
    kind = str(getattr(settings.get("diagnostics", "default"), "value", settings.get("diagnostics", "default")))
    if kind not in DIAGNOSTICS:
        raise UsageError(f"{where('diagnostics')}: must be one of {', '.join(DIAGNOSTICS)} (got {kind!r})")
    superchains = _superchains(settings.get("superchains"), where("superchains"))
    classic = kind == "classic" or superchains is not None  # nested R-hat lives in the classic report
    probs = _floats(settings.get("quantiles", list(DEFAULT_PROBS)), where("quantiles"))
    lags = [int(v) for v in _floats(settings.get("lags", list(DEFAULT_LAGS)), where("lags"), integer=True)]
    patterns = settings.get("var")
    if isinstance(patterns, str):
        patterns = [patterns]
    if patterns is not None and not (isinstance(patterns, list) and all(isinstance(p, str) for p in patterns)):
        raise UsageError(f"{where('var')}: must be a name or a list of names")
    fmt = settings.get("format")
    if fmt is not None:
        fmt = str(getattr(fmt, "value", fmt)).lower()
        if fmt not in formats:
            raise UsageError(f"{where('format')}: must be one of {', '.join(formats)}")

    check_paths(outputs or {}, [*files, *([str(config_path)] if config_path else [])])
    stdin = piped_stdin(files, stdin, "e.g. 'mcmc sample -o - | mcmc diagnose -'")

    import numpy as np

    from mcmc.diagnostics.readers import read_chains

    chains = read_chains(files, stdin=stdin, layout=layout, names=names, discard=discard, thin=thin)
    # A quoted glob is expanded by the reader: report the files actually read.
    sources = list(dict.fromkeys(chains.attrs.get("source_files") or files))
    report = check(chains, var=patterns, thresholds=thresholds, probs=probs, lags=lags, source=sources)
    data = None
    if plot:
        st = chains.sample_stats
        data = plot_data(
            report.draws, report.parameters, plot_cap, divergent=st.get("diverging"),
            energy=None if "energy" not in st else np.asarray(st["energy"], dtype=float),
        )  # fmt: skip
    extra: dict[str, Any] = {}
    if classic:
        extra = _classic(report, superchains, where("superchains"))
    from dataclasses import replace

    return replace(report, plot=data, format=fmt, strict=strict, wide=wide, sig_figs=sig_figs, **extra)


def _classic(report: Report, superchains: int | list[int] | None, where: str) -> dict[str, Any]:
    """The classic diagnostics of ``report``'s draws and their compact rows (only ever computed when asked)."""
    from mcmc.diagnostics.classic import classic_report
    from mcmc.diagnostics.classic_rows import classic_rows

    if superchains is not None:
        c = report.n_chains
        if isinstance(superchains, int) and (superchains < 2 or c % superchains):
            raise UsageError(f"{where}: {c} chains cannot form {superchains} superchains of equal size")
        if isinstance(superchains, list):
            if len(superchains) != c:
                raise UsageError(f"{where}: one superchain id per chain needed ({c}), got {len(superchains)}")
            counts = sorted(superchains.count(k) for k in set(superchains))
            if len(counts) < 2 or counts[0] != counts[-1]:
                raise UsageError(f"{where}: at least two superchains, each with the same number of chains")
    names = [p.name for p in report.parameters]
    result = classic_report(report.draws, names, superchains, quantile_probs=report.probs)
    rows = classic_rows(result, [p.max_rhat for p in report.parameters])
    return {"classic": result, "classic_rows": rows}


def _superchains(value: Any, where: str) -> int | list[int] | None:
    """``K`` (a number of superchains) or one id per chain (``"0,0,1,1"`` or a list)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if isinstance(items, (int, float)) and not isinstance(items, bool):
        items = [items]
    if not isinstance(items, list) or not items:
        raise UsageError(f"{where}: a number of superchains or one id per chain (got {value!r})")
    try:
        numbers = [int(str(v).strip()) for v in items if not isinstance(v, bool)]
    except ValueError:
        raise UsageError(f"{where}: whole numbers only (got {value!r})") from None
    if len(numbers) != len(items):
        raise UsageError(f"{where}: whole numbers only (got {value!r})")
    return numbers[0] if len(numbers) == 1 else numbers


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{where}: must be true or false (got {value!r})")
    return value


def _table(name: str) -> str:
    """How the ``per-variable`` table of ``name`` is written in TOML (quoted when it needs quotes)."""
    bare = name.replace("-", "").replace("_", "").isalnum()
    return f"[tool.mcmc.diagnose.per-variable.{name if bare else repr(name).replace(chr(39), chr(34))}]"


def piped_stdin(files: Sequence[str], stdin: BinaryIO | None, example: str = "") -> BinaryIO | None:
    """The stream to read for ``"-"`` among ``files`` (``None`` when no file is ``"-"``).

    Raises :class:`UsageError` when ``"-"`` is given and ``stdin`` is a
    terminal: a person would wait for input that never comes.
    """
    if "-" not in files:
        return None
    if stdin is None or stdin.isatty():
        raise UsageError(f"-: standard input is a terminal; pipe a chains file in{', ' + example if example else ''}")
    return stdin


def load_config(start: Path) -> tuple[dict[str, Any], Path | None]:
    """Read ``[tool.mcmc.diagnose]`` from the nearest ``pyproject.toml`` at or above ``start``.

    Returns the table with keys normalised to hyphens, and the file it came
    from (``None`` when there is no ``pyproject.toml``, or it has no such
    table). Raises :class:`UsageError` naming the file for invalid TOML or an
    unknown key.
    """
    for directory in (start, *start.parents):
        path = directory / "pyproject.toml"
        if path.is_file():
            break
    else:
        return {}, None
    import tomllib  # only when there is a pyproject.toml

    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    table = doc.get("tool", {}).get("mcmc", {}).get("diagnose")
    if table is None:
        return {}, None
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.mcmc.diagnose] must be a table")
    config: dict[str, Any] = {}
    for key, value in table.items():
        norm = key.replace("_", "-")
        if norm not in CONFIG_KEYS:
            raise UsageError(
                f"{path}: unknown key {key!r} in [tool.mcmc.diagnose]; known keys: {', '.join(CONFIG_KEYS)}"
            )
        config[norm] = value
    if "per-variable" in config:
        config["per-variable"] = _per_variable(config["per-variable"], path)
    return config, path


def _per_variable(value: Any, path: Path) -> dict[str, dict[str, Any]]:
    """``[tool.mcmc.diagnose.per-variable.NAME]`` tables, keys normalised; errors name the table."""
    example = "e.g. [tool.mcmc.diagnose.per-variable.sigma] with min-ess = 100"
    if not isinstance(value, dict):
        raise UsageError(f"{path}: [tool.mcmc.diagnose.per-variable] must be a table of tables, {example}")
    out: dict[str, dict[str, Any]] = {}
    for name, limits in value.items():
        if not isinstance(limits, dict):
            raise UsageError(f"{path}: {_table(name)} must be a table (got {limits!r}), {example}")
        out[name] = {}
        for key, v in limits.items():
            norm = key.replace("_", "-")
            if norm not in PER_VARIABLE_KEYS:
                raise UsageError(
                    f"{path}: unknown key {key!r} in {_table(name)}; known keys: {', '.join(PER_VARIABLE_KEYS)}"
                )
            out[name][norm] = v
    return out


def _number(value: Any, where: str, whole: bool) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UsageError(f"{where}: must be a number (got {value!r})")
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"{where}: must be a number (got {value!r})") from None
    if whole:
        if not number.is_integer():
            raise UsageError(f"{where}: must be a whole number (got {value!r})")
        return int(number)
    return number


def _floats(value: Any, where: str, integer: bool = False) -> list[float]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise UsageError(f"{where}: must be a comma-separated list or an array (got {value!r})")
    out = []
    for item in items:
        if isinstance(item, bool):
            raise UsageError(f"{where}: must hold numbers (got {item!r})")
        try:
            v = float(str(item).strip())
        except ValueError:
            raise UsageError(f"{where}: must hold numbers (got {str(item).strip()!r})") from None
        if integer and not v.is_integer():
            raise UsageError(f"{where}: must hold whole numbers (got {str(item).strip()!r})")
        out.append(v)
    return out
