"""Settings from the command line and ``[tool.mcmc.diagnose]``, resolved once into typed objects.

Every command that judges draws (``diagnose``, and ``sample``, ``compare`` and
``lda`` on the draws they write) applies the same checks with the same limits:
the options ``--max-rhat``, ``--min-ess``, ... over the ``[tool.mcmc.diagnose]``
table of the nearest ``pyproject.toml`` (options win), over the defaults of
:class:`~mcmc.diagnostics.report.thresholds.Thresholds`. This module reads that table and
turns both into the library's own types (:class:`Resolved`), as fastapi-cli's
``config.py`` resolves ``[tool.fastapi]`` into a typed model before calling
anything: the library never sees a flag name or the user's config file.

A bad value names where it came from: ``--max-rhat`` or
``pyproject.toml: [tool.mcmc.diagnose] max-rhat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcmc.core.errors import UsageError

if TYPE_CHECKING:  # start-up: the report module loads NumPy, only when a command runs
    from mcmc.diagnostics.report.thresholds import Thresholds

__all__ = ["CONFIG_KEYS", "THRESHOLD_KEYS", "Resolved", "load_config", "resolve"]

#: Threshold settings (option and ``[tool.mcmc.diagnose]`` names) -> whole numbers only?
THRESHOLD_KEYS = {
    "max-rhat": False, "min-ess": False, "max-divergences": True, "min-ebfmi": False,
    "max-treedepth-hits": True, "ssif-ratio": False, "max-ll-gap": False,
}  # fmt: skip
#: Keys of ``[tool.mcmc.diagnose]`` (hyphens or underscores), each an option of ``mcmc diagnose``,
#: and ``per-variable``, a table of tables of :data:`PER_VARIABLE_KEYS` by variable or parameter name.
CONFIG_KEYS = (
    *THRESHOLD_KEYS, "var", "quantiles", "lags", "format", "strict", "sig-figs", "wide", "diagnostics",
    "superchains", "per-variable",
)  # fmt: skip
#: The keys that concern the checks every command applies (the rest shape diagnose's report).
CHECK_KEYS = (*THRESHOLD_KEYS, "strict", "per-variable")
#: Keys of a ``[tool.mcmc.diagnose.per-variable.NAME]`` table: the limits judged per parameter.
PER_VARIABLE_KEYS = ("max-rhat", "min-ess")
#: Values of ``--diagnostics``: the default report, or that plus the classic diagnostics.
DIAGNOSTICS = ("default", "classic")


@dataclass(frozen=True)
class Resolved:
    """Options over ``[tool.mcmc.diagnose]`` over the defaults, checked and typed.

    ``thresholds`` and ``strict`` are what every command's checks apply;
    the other fields shape ``mcmc diagnose``'s report and its rendering
    (``None``: not given anywhere). ``labels`` says, per key, how it was
    given (``--max-rhat`` or the config file and key), for messages;
    ``config_path`` is the ``pyproject.toml`` read, if any (an input: no
    output may replace it).
    """

    thresholds: Thresholds
    strict: bool = False
    var: tuple[str, ...] | None = None
    probs: tuple[float, ...] | None = None
    lags: tuple[int, ...] | None = None
    format: str | None = None
    wide: bool = False
    sig_figs: int | None = None
    classic: bool = False
    superchains: int | tuple[int, ...] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    config_path: Path | None = None


def resolve(
    options: Mapping[str, Any], *, cwd: Path | None = None, formats: tuple[str, ...] = (), keys: tuple[str, ...] = CONFIG_KEYS
) -> Resolved:
    """Merge ``options`` (by :data:`CONFIG_KEYS` name; ``None`` or ``[]``: not given) over the config table.

    Parameters
    ----------
    options
        Settings given on the command line.
    cwd
        Where the search for ``pyproject.toml`` starts (default: the current directory).
    formats
        Output formats the command can render: a ``format`` must be one of them.
    keys
        The config keys this command uses (``sample``, ``compare`` and ``lda``
        use :data:`CHECK_KEYS`; the table's other keys shape diagnose's report
        and are ignored there).

    Raises
    ------
    UsageError
        A bad value, naming the option or the config file and key; an
        unreadable or invalid ``pyproject.toml``.
    """
    # start-up: NumPy and the report types, when a command runs, not for --help
    from mcmc.diagnostics.report.thresholds import Thresholds

    config, config_path = load_config(cwd or Path.cwd())
    config = {k: v for k, v in config.items() if k in keys}
    given = {k: v for k, v in options.items() if v is not None and v != []}
    settings = {**config, **given}
    labels = {key: f"--{key}" if key in given else f"{config_path}: [tool.mcmc.diagnose] {key}" for key in settings}

    def where(key: str) -> str:
        return labels.get(key, f"--{key}")

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
    numbers = {key.replace("-", "_"): _number(settings[key], where(key), whole)
               for key, whole in THRESHOLD_KEYS.items() if key in settings}  # fmt: skip
    try:
        thresholds = Thresholds(**numbers, per_variable=per_variable)
    except UsageError as exc:  # name where the bad limit came from
        text = str(exc)
        key = text.split(" ", 1)[0]
        if key in labels and key != "per-variable":
            text = f"{where(key)}: {text.split(' ', 1)[1]}"
        elif text.startswith("per-variable") and config_path is not None:
            text = f"{config_path}: [tool.mcmc.diagnose] {text}"
        raise UsageError(text) from None
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
    probs = lags = None
    if "quantiles" in settings:
        probs = tuple(_floats(settings["quantiles"], where("quantiles")))
        if not all(0 < p < 1 for p in probs):
            raise UsageError(f"{where('quantiles')}: probabilities must lie strictly between 0 and 1 "
                             f"(got {', '.join(f'{p:g}' for p in probs)})")  # fmt: skip
    if "lags" in settings:
        lags = tuple(int(v) for v in _floats(settings["lags"], where("lags"), integer=True))
        if any(k < 0 for k in lags):
            raise UsageError(f"{where('lags')}: lags must be non-negative (got {', '.join(map(str, lags))})")
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
    return Resolved(
        thresholds=thresholds, strict=strict, var=None if patterns is None else tuple(patterns), probs=probs,
        lags=lags, format=fmt, wide=wide, sig_figs=sig_figs, classic=kind == "classic" or superchains is not None,
        superchains=superchains, labels=labels, config_path=config_path,
    )  # fmt: skip


def _superchains(value: Any, where: str) -> int | tuple[int, ...] | None:
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
    return numbers[0] if len(numbers) == 1 else tuple(numbers)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{where}: must be true or false (got {value!r})")
    return value


def _table(name: str) -> str:
    """How the ``per-variable`` table of ``name`` is written in TOML (quoted when it needs quotes)."""
    bare = name.replace("-", "").replace("_", "").isalnum()
    return f"[tool.mcmc.diagnose.per-variable.{name if bare else repr(name).replace(chr(39), chr(34))}]"


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
    import tomllib  # start-up: tomllib (20 ms) only when there is a pyproject.toml

    try:
        with path.open("rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:200]:
        raise UsageError(f"{path}: not UTF-8 text (it looks like UTF-16): a TOML file must be UTF-8")
    try:
        doc = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}): a TOML file must be UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
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
