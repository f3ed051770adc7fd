"""Options shared by the subcommands, written once: run length, seed, targets, sampler tuning.

Each shared option is an ``Annotated`` alias a command uses as its parameter's
type (as fastapi-cli does); the parsers of ``KEY=VALUE`` target options and of
``[SAMPLER:]KEY=VALUE`` tuning live here too, so ``mcmc sample`` and
``mcmc compare`` accept the same words the same way. Everything about
samplers is read from their registry (:mod:`mcmc.core.samplers.registry`),
loaded only by the commands that read it (``sample``, ``compare``; see
:func:`mcmc.cli.speedups.lazy_choice`): the ``--sampler`` choices, the list
of samplers and the help of each tuning setting (:func:`sampler_list`,
:func:`setting_help`), and what ``-P`` may set (:func:`tuning`,
:func:`parse_sampler_params`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from mcmc.cli.speedups import lazy_choice
from mcmc.core.errors import UsageError
from mcmc.core.targets import default_sampler_help, option_examples, targets_taking

if TYPE_CHECKING:
    from mcmc.core.samplers.registry import Declaration, Setting

RUN = "Run"


def _sampler_names() -> list[str]:
    # start-up: the registry only for sample and compare (see lazy_choice)
    from mcmc.core.samplers import sampler_names

    return sampler_names()


Sampler = Annotated[
    str | None,
    typer.Option(
        "--sampler",
        "-s",
        metavar="NAME",
        click_type=lazy_choice(_sampler_names),
        rich_help_panel=RUN,
        help=f"Sampling algorithm, one of the samplers above. \\[default: {default_sampler_help()}]",
        show_default=False,
    ),
]
Chains = Annotated[
    int, typer.Option("--chains", "-c", min=1, metavar="N", rich_help_panel=RUN, help="Number of chains.")
]
Warmup = Annotated[
    int,
    typer.Option(min=0, metavar="N", rich_help_panel=RUN, help="Warm-up (adaptation) iterations per chain, discarded."),
]
Draws = Annotated[int, typer.Option(min=1, metavar="N", rich_help_panel=RUN, help="Sampling iterations per chain.")]
Seed = Annotated[
    int | None,
    typer.Option(
        min=0,
        metavar="N",
        rich_help_panel=RUN,
        help="Random seed; omitted: a random one, printed and recorded.",
        show_default=False,
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS",
        rich_help_panel=RUN,
        help="Run on a Dask cluster (pip install 'mcmc\\[dask]'): a scheduler's address, or local:N for N worker "
        "processes here. Same bytes as a run without it. See docs/scale-out.md.",
        show_default=False,
    ),
]
LdaScheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        rich_help_panel=RUN,
        help="Run on a Dask cluster (pip install 'mcmc\\[dask]'): a scheduler's address, or local:N for N worker "
        "processes here. Every chain is a task; with --method partial, every chain's documents are split "
        "across the workers instead (phi sent each sweep). Same bytes as a run without it. See docs/scale-out.md.",
        show_default=False,
    ),
]
Dim = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        rich_help_panel="Target",
        help=f"Dimension ({', '.join(targets_taking('dim'))}).",
        show_default=False,
    ),
]
TargetOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--target-option",
        "-T",
        metavar="KEY=VALUE",
        rich_help_panel="Target",
        help=f"Other option of a built-in target, repeatable: {option_examples()}; of a CSV target: P.csv "
        "start=STATE or init=0.2,0.7,0.1 and steps=10, weights.csv start=STATE, graph.csv q=3 (beta=1 without a beta "
        "column).",
        show_default=False,
    ),
]
Observe = Annotated[
    list[str] | None,
    typer.Option(
        "--observe",
        metavar="EVIDENCE",
        rich_help_panel="Target",
        help="Bayesian network (NET.bif): evidence NODE=STATE, node and state by their names in the file; "
        "repeatable or a comma list.",
        show_default=False,
    ),
]
Output = Annotated[
    str,
    typer.Option("--output", "-o", metavar="FILE", help="Write the report to FILE (atomically); - is stdout. Without -f, a "
                 "FILE ending in .json, .csv or .md sets the format."),
]
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", show_default=False,
        help="Quiet: no table, summary or progress; a failed check's verdict line still shows. Files and the "
        "json, csv or md output asked for are written as usual.",
    ),
]  # fmt: skip
Var = Annotated[
    list[str] | None,
    typer.Option(
        "--var",
        metavar="NAME|GLOB",
        help="Variable or parameter, by exact name (theta, theta[0]) or a glob matching the whole name, * any "
        "characters and ? one ('theta[*]', 'sigma*'); lp: the log density, judged and plotted as a parameter. "
        "Repeat for several. Default: all.",
        show_default=False,
    ),
]

CHECKS = "Checks (defaults from \\[tool.mcmc.diagnose] in pyproject.toml)"

MaxRhat = Annotated[
    float | None,
    typer.Option(
        metavar="R", rich_help_panel=CHECKS, show_default=False,
        help="Fail if the rank-normalized split R-hat (max of bulk and folded) of any parameter exceeds this. "
        "Vehtari et al. (2021) recommend 1.01. \\[default: 1.01]",
    ),
]  # fmt: skip
MinEss = Annotated[
    float | None,
    typer.Option(
        metavar="N", rich_help_panel=CHECKS, show_default=False,
        help="Fail if the bulk or tail ESS of any parameter, over all chains, is below this. \\[default: 100 per "
        "chain (Vehtari et al. 2021): 400 for four chains]",
    ),
]  # fmt: skip
MaxDivergences = Annotated[
    int | None,
    typer.Option(
        metavar="N", rich_help_panel=CHECKS, show_default=False,
        help="Fail if more transitions than this ended in a divergence (HMC/NUTS; any divergence means the "
        "sampler may be missing part of the posterior). \\[default: 0]",
    ),
]  # fmt: skip
MinEbfmi = Annotated[
    float | None,
    typer.Option(
        metavar="E", rich_help_panel=CHECKS, show_default=False,
        help="Fail if the energy Bayesian fraction of missing information of any chain is below this "
        "(Betancourt 2016; CmdStan uses 0.3). \\[default: 0.3]",
    ),
]  # fmt: skip
MaxTreedepthHits = Annotated[
    int | None,
    typer.Option(
        metavar="N", rich_help_panel=CHECKS, show_default=False,
        help="Warn (never fail) if more transitions than this reached the maximum tree depth: an efficiency "
        "problem, not a bias. The limit is CmdStan's max_depth from the file, else 10. \\[default: 0]",
    ),
]  # fmt: skip
SsifRatio = Annotated[
    float | None,
    typer.Option(
        metavar="K", rich_help_panel=CHECKS, show_default=False,
        help="Warn (never fail) where the ESS implied by SSIF clears the ESS limit, the bulk ESS does not, and "
        "they differ by more than this factor; SSIF is exact only for AR(1) chains. \\[default: 1]",
    ),
]  # fmt: skip
MaxLlGap = Annotated[
    float | None,
    typer.Option(
        metavar="NATS", rich_help_panel=CHECKS, show_default=False,
        help="Topic models: fail a chain whose mean log joint per token is more than this below the best "
        "chain's (beyond two standard errors): stuck in a poorer mode. Smaller gaps are the many equally good "
        "modes of a topic model: a warning. \\[default: 0.05, about 5% in perplexity]",
    ),
]  # fmt: skip
Strict = Annotated[
    bool,
    typer.Option(
        "--strict", rich_help_panel=CHECKS, show_default=False,
        help="Fail (exit 1) on warnings too: tree-depth hits, constant parameters, SSIF, the log density.",
    ),
]  # fmt: skip
NoCheck = Annotated[
    bool,
    typer.Option(
        "--no-check", rich_help_panel=CHECKS, show_default=False,
        help="Exploratory run: report the checks but exit 0 even when the draws fail them.",
    ),
]  # fmt: skip


def given_fields(ctx: typer.Context | None, fields: Mapping[str, str]) -> set[str]:
    """The options among ``fields`` (parameter -> field) given on the command line, not left at their defaults.

    ``ctx`` ``None`` (the command called as a function, in tests): every one counts as given.
    """
    if ctx is None:
        return set(fields.values())
    # Typer carries its own copy of click: the parameter source is compared by name
    return {field for name, field in fields.items()
            if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"}  # fmt: skip


#: A report's format told by the name ``-o`` writes to, when ``-f`` is not given.
OUTPUT_SUFFIXES = {".json": "json", ".csv": "csv", ".md": "md"}
#: Report names that ``-o`` does not write: each has its own option.
OWN_OPTION = {".html": "--html", ".xml": "--junit"}


def report_format(fmt: str | None, output: str, choices: Sequence[str], own: bool = False) -> str | None:
    """The report's format: ``-f`` as given, else the one ``-o``'s name ends with, else ``None`` (the default).

    ``-o report.json`` alone writes JSON, as ``-f json -o report.json``
    would, rather than a text table under a ``.json`` name. With ``own``
    (diagnose), ``-o page.html`` and ``-o cases.xml`` are refused, naming
    ``--html`` and ``--junit``, which write those.
    """
    if fmt is not None or output == "-":
        return fmt
    suffix = output[output.rfind("."):].lower() if "." in output else ""
    if own and suffix in OWN_OPTION:
        raise UsageError(f"-o {output}: -o writes {', '.join(choices)}; {OWN_OPTION[suffix]} {output} writes that file")
    found = OUTPUT_SUFFIXES.get(suffix)
    return found if found in choices else None


def check_options(
    max_rhat: float | None, min_ess: float | None, max_divergences: int | None = None, min_ebfmi: float | None = None,
    max_treedepth_hits: int | None = None, ssif_ratio: float | None = None, strict: bool = False,
    max_ll_gap: float | None = None,
) -> dict[str, Any]:
    """The check options as :func:`mcmc.cli.config.resolve` takes them (``None``: not given)."""
    return {
        "max-rhat": max_rhat, "min-ess": min_ess, "max-divergences": max_divergences, "min-ebfmi": min_ebfmi,
        "max-treedepth-hits": max_treedepth_hits, "ssif-ratio": ssif_ratio, "strict": strict or None,
        "max-ll-gap": max_ll_gap,
    }  # fmt: skip


def sampler_list(declarations: Sequence[Declaration]) -> str:
    """``rwm (random-walk Metropolis), ... and nuts (...)``: samplers and their summaries, for a help paragraph."""
    items = [f"{d.name} ({escape(d.summary)})" for d in declarations]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def settings_list(declarations: Sequence[Declaration]) -> str:
    """``rwm: scale, target-accept; ...``: the settings of each sampler that has any, for a help paragraph."""
    return "; ".join(f"{d.name}: {', '.join(x.key for x in d.settings)}" for d in declarations if d.settings)


def setting_help(name: str) -> str:
    """The help of the tuning option ``--NAME``: which samplers take it, what it is, its range, each one's default."""
    # start-up: the registry only for sample and compare (see lazy_choice)
    from mcmc.core.samplers.registry import DECLARATIONS

    users = [(d.name, x) for d in DECLARATIONS for x in d.settings if x.name == name]
    first = users[0][1]
    valid = first.range
    text = escape(first.help) + (f", {valid}" if valid is not None and valid.high is not None else "")
    text += f": {' or '.join(first.choices)}" if first.choices else ""
    by_default: dict[str, list[str]] = {}
    for sampler, x in users:
        by_default.setdefault(escape(x.default), []).append(sampler)
    names = ", ".join(sampler for sampler, _ in users)
    if len(by_default) == 1:
        return f"{names}: {text}. \\[default: {escape(first.default)}]"
    defaults = "; ".join(f"{', '.join(samplers)} {default}" for default, samplers in by_default.items())
    return f"{text[0].upper()}{text[1:]}. \\[default: {defaults}]"


def _parse_value(
    item: str, sampler: str, declaration: Declaration | None, key: str, text: str, any_sampler: bool = False
) -> tuple[Setting, Any]:
    """The setting ``key`` of ``sampler`` and the value ``text`` of ``-P item``, checked (as ``--target-option``).

    ``any_sampler``: the sampler is not known yet (a target file's default): any sampler's setting ``key``.
    """
    if any_sampler:
        # start-up: the registry only for sample and compare (see lazy_choice)
        from mcmc.core.samplers import setting_named

        setting = setting_named(key.replace("-", "_"))
        if setting is None:
            raise UsageError(f"--param {item!r}: no sampler has an option {key!r}")
    else:
        setting = declaration.setting(key) if declaration is not None else None
    if setting is None:
        known = ", ".join(x.key for x in declaration.settings) if declaration is not None else ""
        raise UsageError(f"--param {item!r}: {sampler} has no option {key!r} (its options: {known or 'none'})")
    ((_, value),) = parse_target_options([f"{setting.name}={text}"]).items()
    if setting.kind is not str and isinstance(value, (str, bool)):
        raise UsageError(f"--param {item!r}: {setting.key} must be a number, got {value!r}")
    setting.check(value, where=f"--param {item!r}:")
    return setting, value


def tuning(
    sampler: str | None, given: Mapping[str, Any], items: Sequence[str] = (), kind: str | None = None
) -> dict[str, Any]:
    """The kernel keywords of ``mcmc sample``'s tuning: options given as ``--NAME`` and ``-P [SAMPLER:]KEY=VALUE``.

    ``given``: the dedicated options (``None``: not given); ``items``: the
    ``-P`` words, each a setting of ``sampler`` (as declared for ``kind``
    targets; ``None``: a density). A ``-P`` value is converted to the setting's type, as its
    option would give it, so ``-P step-size=1`` and ``--step-size 1`` write
    the same bytes. ``sampler`` ``None`` is the default of a target file, known
    once the file is loaded: the values are converted and range-checked here,
    and whether the sampler takes them is checked by the run
    (:func:`mcmc.core.samplers.check_applies`).

    Raises :class:`UsageError` for a value out of range, a setting the sampler
    does not take, or one given twice.
    """
    # start-up: the registry only for sample and compare (see lazy_choice)
    from mcmc.core.samplers import DENSITY, find, setting_named

    declaration = find(sampler, kind or DENSITY) if sampler is not None else None
    options = {name: setting_named(name) for name in given}
    for name, value in given.items():
        options[name].check(value)  # type: ignore[union-attr] - every dedicated option is a registered setting
    params = {}
    for name, value in given.items():
        if value is None:
            continue
        if sampler is not None and (declaration is None or declaration.setting(name) is None):
            raise UsageError(f"{options[name].flag} does not apply to --sampler {sampler}")  # type: ignore[union-attr]
        params[name] = value
    for item in items:
        head, sep, text = item.partition("=")
        who, colon, key = head.rpartition(":")
        key = key.strip().lower()
        if not sep or not key:
            raise UsageError(f"--param expects KEY=VALUE or SAMPLER:KEY=VALUE, got {item!r}")
        if colon and sampler is None:
            raise UsageError(f"--param {item!r}: give --sampler {who.strip()} to tune it")
        if colon and who.strip().lower() != sampler:
            raise UsageError(f"--param {item!r}: {who.strip()!r} is not --sampler {sampler}")
        setting, value = _parse_value(item, sampler or "", declaration, key, text, any_sampler=sampler is None)
        if setting.name in params:
            raise UsageError(f"--param {item!r}: {setting.key} is given twice (by {setting.flag} or -P)")
        params[setting.name] = value if setting.kind is str else setting.kind(value)
    return params


def parse_target_options(items: Sequence[str]) -> dict[str, int | float | str]:
    """``["b=0.1", "trials=10"]`` -> ``{"b": 0.1, "trials": 10}`` (ints, then floats, else text)."""
    out: dict[str, int | float | str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise UsageError(f"--target-option expects KEY=VALUE, got {item!r}")
        value: int | float | str
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                value = text
        out[key] = value
    return out


def parse_sampler_params(
    items: Sequence[str], samplers: Sequence[str], kind: str | None = None
) -> dict[str, dict[str, Any]]:
    """``["hmc:target-accept=0.95"]`` -> ``{"hmc": {"target_accept": 0.95}, ...}`` (kernel keywords, every sampler).

    Setting names are ``mcmc sample``'s (``--target-accept`` as ``target-accept``
    or ``target_accept``), as each sampler declares them for ``kind`` targets
    (``None``: a density); values parse as in ``--target-option``.
    """
    # start-up: the registry only for sample and compare (see lazy_choice)
    from mcmc.core.samplers import DENSITY, find

    out: dict[str, dict[str, Any]] = {name: {} for name in samplers}
    for item in items:
        sampler, sep, setting = item.partition(":")
        sampler = sampler.strip().lower()
        if not sep or "=" not in setting:
            raise UsageError(f"--param expects SAMPLER:KEY=VALUE, got {item!r}")
        if sampler not in out:
            raise UsageError(f"--param {item!r}: {sampler!r} is not among --samplers ({', '.join(samplers)})")
        key, _, text = setting.partition("=")
        if not key.strip().replace("-", "_").isidentifier():
            raise UsageError(f"--target-option expects KEY=VALUE, got {setting!r}")
        chosen, value = _parse_value(item, sampler, find(sampler, kind or DENSITY), key.strip().replace("_", "-"), text)
        out[sampler][chosen.name] = value
    return out


def parse_sampler_variants(
    items: Sequence[str], param: Sequence[str] = (), kind: str | None = None
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """``mcmc compare``'s ``--samplers`` items and ``-P``: each row's label and its kernel keywords.

    An item is a sampler name (``gibbs``) or a variant of one with settings of
    its own, ``NAME:KEY=VALUE[:KEY=VALUE...]`` (``gibbs:scan=random``), so two
    settings of one sampler run side by side; the label is the item as
    written. ``-P NAME:KEY=VALUE`` applies to every row of that sampler, and
    a variant's own settings win. Settings are checked as ``-P``'s.

    Returns
    -------
    labels
        The items in order, the sampler's name and each setting's key
        lower-cased, the values as written (node names are case-sensitive:
        ``gibbs:blocks=Burglary+Alarm``).
    params
        Label -> kernel keywords.
    """

    def label_of(item: str) -> str:
        base, *own = item.strip().split(":")
        words = [kv.partition("=") for kv in own]
        return ":".join([base.strip().lower(), *(f"{k.strip().lower()}{eq}{v.strip()}" for k, eq, v in words)])

    labels = [label_of(item) for item in items if item.strip()]
    bases = list(dict.fromkeys(label.split(":", 1)[0] for label in labels))
    shared = parse_sampler_params(param, bases, kind)
    params: dict[str, dict[str, Any]] = {}
    for label in labels:
        base, *own = label.split(":")
        mine = parse_sampler_params([f"{base}:{kv}" for kv in own], [base], kind)[base] if own else {}
        params[label] = {**shared.get(base, {}), **mine}
    return labels, params


class Layout(str, Enum):
    """Axis order of bare arrays (:data:`mcmc.diagnostics.readers.LAYOUTS`)."""

    chain_draw = "chain,draw"
    draw_chain = "draw,chain"


LayoutOption = Annotated[
    Layout | None,
    typer.Option(
        metavar="AXES",
        help="Axis order of a bare array (.npy, .npz saved without names): chain,draw, or draw,chain as emcee's "
        "get_chain() saves (draw, walker, dim). Without it, a bare array with more chains than draws is refused. "
        "\\[default: chain,draw]",
        show_default=False,
    ),
]


LONG_RUNS = "Long runs"
CHECKPOINT_DEFAULT = "5m"
CheckpointEvery = Annotated[
    str,
    typer.Option(
        "--checkpoint-every", metavar="DURATION", rich_help_panel=LONG_RUNS,
        help="Write the draws so far, with what the run needs to go on, to OUTPUT.checkpoint.npz beside -o this "
        "often (atomically; -o itself is written only at the end), and a last one on Ctrl-C or SIGTERM: 90s, 5m, "
        "2h; 0 for the last one only; off for none. The checkpoint is removed once -o is written.",
    ),
]


def parse_duration(text: str, option: str = "--checkpoint-every") -> float | None:
    """``"90"``, ``"90s"``, ``"5m"``, ``"2h"`` -> seconds; ``"off"`` -> ``None`` (no checkpoints).

    Raises
    ------
    UsageError
        Anything else, a negative or non-finite number.
    """
    t = text.strip().lower()
    if t in ("off", "none", "never"):
        return None
    scale = {"s": 1.0, "m": 60.0, "h": 3600.0}.get(t[-1:], None)
    number = t[:-1] if scale is not None else t
    try:
        value = float(number) * (scale or 1.0)
    except ValueError:
        value = float("nan")
    if not (value >= 0.0 and value < float("inf")):
        raise UsageError(f"{option} must be a duration such as 90s, 5m or 2h, or off (got {text!r})")
    return value
