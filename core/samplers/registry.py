"""Every sampler declared once: its name, module, one-line summary and tunable settings.

Why one small module of declarations
------------------------------------
The command line reads this table for the ``--sampler`` choices, the list of
samplers and the help of every tuning option in ``mcmc sample --help``, and
for what ``-P SAMPLER:KEY=VALUE`` may set; ``mcmc --help`` builds every
command's options, so the table must import in about a millisecond. It
imports no NumPy and no sampler module (NumPy and the seventeen sampler
modules, numba among their imports, take a third of a second or more); a
sampler module is imported only when it runs
(:func:`mcmc.core.samplers.get_sampler`). Its entries are NamedTuples, not
frozen dataclasses, for the same reason: a dataclass costs half a
millisecond to create. Each
sampler module takes its own entry from here (``DECLARATION =
registry.RWM``, ``NAME = DECLARATION.name``), so its name, summary and
settings are written in one place, beside those of every other sampler.

A setting is the keyword argument of the sampler's ``step`` or
``make_adapter`` of the same name (``step_size``); users write it as
``step-size`` (``-P step-size=0.1``, ``--step-size 0.1``). Its valid values
are :data:`mcmc.core.ranges.RANGES`' (numbers) or its ``choices`` (words),
checked by :meth:`Setting.check` before any work. ``default`` is only what
help shows: the kernel's own default decides.

Adding a sampler: its module in ``core/samplers/``, a :class:`Declaration`
below (in :data:`DECLARATIONS`), a same-bytes case in
``tests/data/same_bytes/cases.py`` and a statistical test listed in
``tests/core/harness.py``'s ``STATISTICAL_TESTS``; ``tests/test_registry.py``
fails until all are there.

Target kinds: most samplers draw from a density (a
:class:`~mcmc.core.targets.base.Target`) and run in the driver
(:data:`DENSITY`); three draw from a Bayesian network (``NET.bif``) and run in
:mod:`mcmc.core.networks.driver` (:data:`NETWORK`), modules of the protocol of
:mod:`mcmc.core.networks`. Two names are
both (gibbs, rejection): the same algorithm on the two kinds of target, two
modules, two declarations.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mcmc.core.errors import UsageError
from mcmc.core.ranges import RANGES, Range, check_setting

#: Target kinds: a density (:class:`~mcmc.core.targets.base.Target`) or a Bayesian network (``NET.bif``).
DENSITY = "density"
NETWORK = "network"


class Setting(NamedTuple):
    """One tunable setting of a sampler.

    Attributes
    ----------
    name
        The kernel's keyword (``"step_size"``); users write it as :attr:`key`.
    help
        What it is, a lower-case phrase without a final period (``--help``
        adds the samplers taking it, a bounded range and the defaults).
    kind
        ``float``, ``int`` or ``str``: the type the kernel takes.
    choices
        The words a ``str`` setting takes (``("rw", "lognormal")``); numbers
        have their range in :data:`mcmc.core.ranges.RANGES` instead.
    default
        What help shows as the default for this sampler (``"0.8"``,
        ``"2.38/sqrt(dim)"``); the kernel's own default decides.
    other
        For a ``str`` setting that also takes text outside ``choices``, what
        that text is (``"node names A+B+C;D+E"``); the sampler checks it.
    suffix
        For a ``str`` setting that names a file rather than a choice: the
        ending its name must have (``".csv"``); the sampler reads the file
        and says what is wrong with it.
    """

    name: str
    help: str
    kind: type = float
    choices: tuple[str, ...] = ()
    default: str = ""
    other: str = ""
    suffix: str = ""

    @property
    def key(self) -> str:
        """``step_size`` -> ``step-size``: the setting as ``-P KEY=VALUE`` names it."""
        return self.name.replace("_", "-")

    @property
    def flag(self) -> str:
        """``step_size`` -> ``--step-size``."""
        return "--" + self.key

    @property
    def range(self) -> Range | None:
        """Its valid values, for a number (:data:`mcmc.core.ranges.RANGES`); ``None`` for a word."""
        return RANGES.get(self.name)

    def at(self, default: str) -> Setting:
        """This setting as one sampler declares it, with that sampler's default (shown in help)."""
        return self._replace(default=default)

    def check(self, value: Any, where: str | None = None) -> None:
        """Refuse a value out of range or not among the choices (``None``: not given, passes).

        ``where`` is how the user gave it (``"--param 'hmc:step-size=0'"``);
        by default the option :attr:`flag`.

        Raises
        ------
        UsageError
            ``where must be a number > 0, got -1``, ``where must be one of rw, lognormal, got 'x'``.
        """
        if value is None:
            return
        if self.suffix:
            if not isinstance(value, str) or not value.lower().endswith(self.suffix):
                raise UsageError(f"{where or self.flag} must be a file name ending in {self.suffix}, got {value!r}")
            return
        if self.choices:
            if value not in self.choices and not (self.other and isinstance(value, str)):
                raise UsageError(f"{where or self.flag} must be one of {', '.join(self.choices)}, got {value!r}")
            return
        check_setting(self.name, value, where or self.flag)


class Declaration(NamedTuple):
    """A sampler as the registry knows it.

    Attributes
    ----------
    name
        The command-line name (``--sampler NAME``), also recorded in the chains file.
    module
        The module of the algorithm, imported only to run it.
    summary
        One line for ``mcmc sample --help``: what it is, where it applies.
    settings
        Its tunable settings, in the order help lists them.
    kind
        The targets it draws from: :data:`DENSITY` or :data:`NETWORK`.
    warms_up
        Whether a run needs warm-up iterations by default: ``False`` for a
        sampler whose draws are exact and independent from the first and
        which tunes nothing (``mcmc sample`` then runs none unless
        ``--warmup`` asks).
    """

    name: str
    module: str
    summary: str
    settings: tuple[Setting, ...] = ()
    kind: str = DENSITY
    warms_up: bool = True

    def setting(self, key: str) -> Setting | None:
        """The setting named ``key`` (``step-size`` or ``step_size``), or ``None``."""
        name = key.replace("-", "_")
        return next((s for s in self.settings if s.name == name), None)


# The settings several samplers share, each written once; a declaration adds its own default (Setting.at).
SCALE = Setting("scale", "initial proposal scale, tuned in warm-up")
TARGET_ACCEPT = Setting("target_accept", "acceptance rate warm-up aims for")
STEP_SIZE = Setting("step_size", "initial leapfrog step size, tuned in warm-up")
PATH_LENGTH = Setting("path_length", "integration time (jittered)")
PERSISTENCE = Setting("persistence", "partial momentum refreshment (0: plain HMC)")
MAX_ENERGY_ERROR = Setting("max_energy_error", "energy error flagged as a divergence (as Stan)")
RW_ACCEPT = "0.234 (0.44 in 1-D)"
RW_SCALE = "2.38/sqrt(dim)"
SEARCHED = "found by a search in warm-up"
HMC_ACCEPT = "0.8"
# Both Gibbs samplers, on a density and on a network (where a coordinate is a unit: a block or a node).
SCAN = Setting("scan", "order of the updates: each coordinate (a network's block or node) in turn, or one picked "
               "at random per update", str, ("systematic", "random"), "systematic")
STAN_ENERGY = "1000"

RWM = Declaration(
    "rwm", "mcmc.core.samplers.rwm", "random-walk Metropolis",
    (SCALE.at(RW_SCALE), TARGET_ACCEPT.at(RW_ACCEPT)),
)  # fmt: skip
MH_INDEPENDENCE = Declaration(
    "mh-independence", "mcmc.core.samplers.mh_independence",
    "independence MH with a fitted t proposal",
    (SCALE.at("2"),),
)  # fmt: skip
MH_LOGNORMAL = Declaration(
    "mh-lognormal", "mcmc.core.samplers.mh_lognormal", "log-normal proposals, for positive targets",
    (SCALE.at(RW_SCALE), TARGET_ACCEPT.at(RW_ACCEPT)),
)  # fmt: skip
TWO_STAGE = Declaration(
    "two-stage", "mcmc.core.samplers.two_stage", "delayed acceptance for prior x likelihood targets",
    (SCALE.at(RW_SCALE), TARGET_ACCEPT.at(RW_ACCEPT),
     Setting("proposal", "proposal kind", str, ("rw", "lognormal"), "rw")),
)  # fmt: skip
SLICE = Declaration(
    "slice", "mcmc.core.samplers.slice", "one coordinate at a time, the default without a gradient",
    (Setting("width", "initial slice interval width, tuned in warm-up", default="1"),),
)  # fmt: skip
ELLIPTICAL_SLICE = Declaration(
    "elliptical-slice", "mcmc.core.samplers.elliptical", "the model's Gaussian prior or one learnt in warm-up",
)
REJECTION = Declaration(
    "rejection", "mcmc.core.samplers.rejection",
    "exact under the file's envelope, else a fitted one",
)
INVERSE_CDF = Declaration(
    "inverse-cdf", "mcmc.core.samplers.inverse_cdf", "x = F^-1(u) for 1-D targets", warms_up=False,
)
EXACT = Declaration(
    "exact", "mcmc.core.samplers.exact", "gaussian by Box-Muller, basic or polar",
    (Setting("method", "the target's exact method: the basic or the polar Box-Muller transform of the normal",
             str, ("box-muller", "polar"), "box-muller"),), warms_up=False,
)  # fmt: skip
ISIR = Declaration(
    "isir", "mcmc.core.samplers.isir", "importance sampling with resampling, exact for any proposal",
    (Setting("particles", "importance samples per iteration, the current state included", int, default="16"),),
)  # fmt: skip
IMPORTANCE = Declaration(
    "importance", "mcmc.core.samplers.importance", "weighted draws, self-normalised means",
)
GIBBS = Declaration(
    "gibbs", "mcmc.core.samplers.gibbs",
    "full conditionals: ising, potts, gaussian, graph.csv",
    (SCAN,),
)
SWENDSEN_WANG = Declaration(
    "swendsen-wang", "mcmc.core.samplers.swendsen_wang", "cluster flips: ising and potts (their default), graph.csv",
)
HMC = Declaration(
    "hmc", "mcmc.core.samplers.hmc", "Hamiltonian Monte Carlo, the default with a gradient",
    (STEP_SIZE.at(SEARCHED), PATH_LENGTH.at("pi/2"), TARGET_ACCEPT.at(HMC_ACCEPT), PERSISTENCE.at("0"),
     MAX_ENERGY_ERROR.at(STAN_ENERGY),
     Setting("n_steps", "leapfrog steps per transition instead of path-length / step-size (jittered)", int,
             default="path-length / step-size"),
     Setting("jitter", "relative spread of the path length or of n-steps: uniform in 1 +- jitter", default="0.5"),
     Setting("integrator", "the integrator (euler is refused, with the reason)", str, ("leapfrog", "euler"),
             "leapfrog")),
)  # fmt: skip
HMC_GIBBS = Declaration(
    "hmc-gibbs", "mcmc.core.samplers.hmc_within_gibbs",
    "Gibbs blocks between HMC moves, bnn's default",
    (STEP_SIZE.at(SEARCHED), PATH_LENGTH.at("1.5"), TARGET_ACCEPT.at(HMC_ACCEPT), PERSISTENCE.at("0.8"),
     MAX_ENERGY_ERROR.at(STAN_ENERGY)),
)  # fmt: skip
MARKOV = Declaration(
    "markov", "mcmc.core.samplers.markov", "simulates the chain of a transition matrix P.csv",
)
MH = Declaration(
    "mh", "mcmc.core.samplers.mh", "Metropolis-Hastings on weights.csv",
    (Setting("proposal_matrix", "proposal matrix Q of mh, a transition-matrix CSV", str,
             default="uniform over the other states", suffix=".csv"),),
)  # fmt: skip
NUTS = Declaration(
    "nuts", "mcmc.core.samplers.nuts", "the no-U-turn sampler, as Stan's",
    (STEP_SIZE.at(SEARCHED), TARGET_ACCEPT.at(HMC_ACCEPT), MAX_ENERGY_ERROR.at(STAN_ENERGY),
     Setting("max_tree_depth", "most doublings of the tree per iteration (as Stan)", int, default="10")),
)  # fmt: skip

NETWORK_GIBBS = Declaration(
    "gibbs", "mcmc.core.networks.blocked_gibbs", "the default: blocks drawn exactly by junction trees",
    (Setting("blocks", "nodes drawn together: auto, single (none), or node names", str, ("auto", "single"),
             "auto", other="node names A+B+C;D+E"),
     Setting("budget", "largest clique table of a block, in entries", int,
             default="10^6; 10^4 for blocks grown from near-deterministic groups"),
     SCAN),
    kind=NETWORK,
)  # fmt: skip
LOGIC_SAMPLING = Declaration(
    "rejection", "mcmc.core.networks.logic_sampling", "logic sampling, reporting its acceptance rate", kind=NETWORK,
    warms_up=False,
)
LIKELIHOOD_WEIGHTING = Declaration(
    "likelihood-weighting", "mcmc.core.networks.likelihood_weighting",
    "weighted draws, reporting the Kish ESS of the weights", kind=NETWORK, warms_up=False,
)

#: Every sampler, in the order of ``mcmc sample --help`` and of the choices.
DECLARATIONS: tuple[Declaration, ...] = (
    RWM, MH_INDEPENDENCE, MH_LOGNORMAL, TWO_STAGE, SLICE, ELLIPTICAL_SLICE, REJECTION, INVERSE_CDF, EXACT, ISIR,
    IMPORTANCE, GIBBS, SWENDSEN_WANG, HMC, HMC_GIBBS, MARKOV, MH, NUTS,
    NETWORK_GIBBS, LOGIC_SAMPLING, LIKELIHOOD_WEIGHTING,
)  # fmt: skip
