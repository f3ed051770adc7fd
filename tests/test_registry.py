"""Every registered sampler is complete: module, same-bytes case, statistical test, help line, settings.

Walks :data:`mcmc.core.samplers.registry.DECLARATIONS` (both target kinds)
and fails, naming the sampler and what it lacks, when a sampler has no
same-bytes case in ``tests/data/same_bytes/cases.py``, no statistical test
in ``tests/core/harness.py``'s ``STATISTICAL_TESTS`` (or one that does not
exist), no summary or no line in ``mcmc sample --help``, or when a setting
lacks its help, its default, or its valid values (a range in
:data:`mcmc.core.ranges.RANGES` for a number, choices for a word). A
registry entry that nothing backs is caught too: a test that registers a
fake sampler expects every one of these complaints.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import math
import typing
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

import pytest

from mcmc.core.ranges import RANGES, Range
from mcmc.core.samplers import registry
from mcmc.core.samplers.registry import DECLARATIONS, DENSITY, NETWORK, Declaration, Setting
from tests.core.harness import STATISTICAL_TESTS

ROOT = Path(__file__).parents[1]
_spec = importlib.util.spec_from_file_location("same_bytes_cases", ROOT / "tests" / "data" / "same_bytes" / "cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

MAX_SUMMARY = 60  # the list of samplers in `mcmc sample --help` is one paragraph: keep each entry short


def _sampler_of(argv: Sequence[str]) -> str | None:
    return argv[list(argv).index("-s") + 1] if "-s" in argv else None


def same_bytes_cases(d: Declaration) -> list[str]:
    """The same-bytes cases that run ``d``."""
    if d.kind == NETWORK:
        return [name for name, argv in cases.NETWORK_CASES.items() if _sampler_of(argv) == d.name]
    return [name for name, argv in cases.SAMPLE_CASES.items() if _sampler_of(argv) == d.name] + [
        name for name, (sampler, *_) in cases.LIBRARY_CASES.items() if sampler == d.name
    ]


def _test_problems(d: Declaration, test_id: str) -> list[str]:
    path, _, function = test_id.partition("::")
    file = ROOT / path
    if not file.is_file():
        return [f"its statistical test {test_id}: no file {path}"]
    text = file.read_text()
    defined = {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    if function not in defined:
        return [f"its statistical test {test_id}: no function {function} in {path}"]
    module = d.module.rsplit(".", 1)[1]
    if f'"{d.name}"' not in text and module not in text:
        return [f"its statistical test {test_id}: {path} never names {d.name!r} nor its module {module}"]
    return []


def _valid_value(setting: Setting) -> object:
    """A value inside the setting's range (or its first choice)."""
    if setting.suffix:
        return "Q" + setting.suffix
    if setting.choices:
        return setting.choices[0]
    valid = setting.range or Range()
    low = 0.0 if valid.low is None else valid.low
    value = low + 1.0 if valid.high is None else (low + valid.high) / 2
    return int(math.ceil(value)) if valid.integer else value


def _setting_problems(d: Declaration, setting: Setting, module: object | None) -> list[str]:
    where = f"setting {setting.key}"
    found = []
    if not setting.help or setting.help[0].isupper() or setting.help.endswith(".") or "\n" in setting.help:
        found.append(f"{where}: help must be a lower-case phrase without a final period, got {setting.help!r}")
    if not setting.default:
        found.append(f"{where}: no default to show in help")
    if setting.kind not in (float, int, str):
        found.append(f"{where}: kind {setting.kind!r} is not float, int or str")
    if setting.kind is str and not setting.choices and not setting.suffix:
        found.append(f"{where}: a word setting with no choices (nor a file suffix)")
    if setting.suffix and (setting.kind is not str or setting.choices):
        found.append(f"{where}: a file setting must be a str without choices")
    if setting.kind is not str and setting.name not in RANGES:
        found.append(f"{where}: no range in mcmc.core.ranges.RANGES")
    if module is not None and d.kind == DENSITY:
        keywords: set[str] = set()
        open_ended = False
        defaults = {}
        for fn in (getattr(module, "step", None), getattr(module, "make_adapter", None)):  # the adapter's wins
            if fn is None:
                continue
            params = inspect.signature(fn).parameters
            open_ended |= any(p.kind is p.VAR_KEYWORD for p in params.values())
            keywords |= set(params)
            if setting.name in params:
                defaults[fn.__name__] = params[setting.name].default
        default = list(defaults.values())[-1] if defaults else None
        shown = setting.default
        if isinstance(default, (int, float)) and shown.replace(".", "", 1).isdigit() and float(shown) != default:
            found.append(f"{where}: help shows default {shown}, the kernel has {default}")
        if not open_ended and setting.name not in keywords:
            found.append(f"{where}: neither step nor make_adapter of {d.module} takes {setting.name!r}")
    try:
        from mcmc.cli.options import parse_sampler_params

        value = _valid_value(setting)
        parsed = parse_sampler_params([f"{d.name}:{setting.key}={value}"], [d.name], d.kind)
        if parsed != {d.name: {setting.name: value}}:
            found.append(f"{where}: mcmc compare -P {d.name}:{setting.key}={value} gave {parsed}")
    except Exception as exc:  # noqa: BLE001 - reported as a problem of this setting
        found.append(f"{where}: mcmc compare -P refuses {d.name}:{setting.key}: {exc}")
    return found


def problems(declarations: Sequence[Declaration], sample_help: str) -> list[str]:
    """What each of ``declarations`` lacks, as ``NAME (kind): problem`` lines; ``sample_help`` at 1000 columns."""
    from mcmc.cli.options import Sampler

    choices = Sampler.__metadata__[0].click_type.choices
    help_text = " ".join(sample_help.split())
    found = []
    for d in declarations:
        mine = []
        if not d.summary or len(d.summary) > MAX_SUMMARY or "\n" in d.summary or d.summary.endswith("."):
            mine.append(f"summary must be one phrase of at most {MAX_SUMMARY} characters, got {d.summary!r}")
        module = None
        try:
            module = import_module(d.module)
        except ImportError as exc:
            mine.append(f"its module {d.module} does not import: {exc}")
        if module is not None and (getattr(module, "DECLARATION", None) is not d or module.NAME != d.name):
            mine.append(f"{d.module} does not take its DECLARATION and NAME from the registry")
        if not same_bytes_cases(d):
            mine.append("no same-bytes case in tests/data/same_bytes/cases.py")
        tests = STATISTICAL_TESTS.get((d.kind, d.name), ())
        if not tests:
            mine.append("no statistical test in tests/core/harness.py STATISTICAL_TESTS")
        for test_id in tests:
            mine += _test_problems(d, test_id)
        if f"{d.name} ({d.summary})" not in help_text:
            mine.append("no line 'NAME (summary)' in mcmc sample --help")
        if d.name not in choices:
            mine.append("not among the --sampler choices")
        if d.settings and f"{d.name}: {', '.join(s.key for s in d.settings)}" not in help_text:
            mine.append("its settings are not listed in mcmc sample --help")
        for setting in d.settings:
            mine += _setting_problems(d, setting, module)
        found += [f"{d.name} ({d.kind}): {problem}" for problem in mine]
    return found


@pytest.fixture(scope="module")
def sample_help() -> str:
    from typer.testing import CliRunner

    from mcmc.cli.app import build_app

    result = CliRunner().invoke(build_app(["sample"]), ["sample", "--help"], env={"COLUMNS": "1000"})
    assert result.exit_code == 0, result.output
    return result.output


def test_every_registered_sampler_is_complete(sample_help: str) -> None:
    found = problems(DECLARATIONS, sample_help)
    assert not found, "registered samplers lack:\n" + "\n".join(found)


def test_a_fake_sampler_is_refused_for_everything_it_lacks(sample_help: str) -> None:
    fake = Declaration(
        "fake", "mcmc.core.samplers.rwm", "A summary with a final period.",
        (Setting("scale", "initial proposal scale", default=""), Setting("shape", "", str),
         Setting("jump", "how far", default="1")),
    )  # fmt: skip
    assert problems([fake], sample_help) == [
        "fake (density): summary must be one phrase of at most 60 characters, got 'A summary with a final period.'",
        "fake (density): mcmc.core.samplers.rwm does not take its DECLARATION and NAME from the registry",
        "fake (density): no same-bytes case in tests/data/same_bytes/cases.py",
        "fake (density): no statistical test in tests/core/harness.py STATISTICAL_TESTS",
        "fake (density): no line 'NAME (summary)' in mcmc sample --help",
        "fake (density): not among the --sampler choices",
        "fake (density): its settings are not listed in mcmc sample --help",
        "fake (density): setting scale: no default to show in help",
        "fake (density): setting scale: mcmc compare -P refuses fake:scale: --param 'fake:scale=1.0': fake has no "
        "option 'scale' (its options: none)",
        "fake (density): setting shape: help must be a lower-case phrase without a final period, got ''",
        "fake (density): setting shape: no default to show in help",
        "fake (density): setting shape: a word setting with no choices (nor a file suffix)",
        "fake (density): setting shape: neither step nor make_adapter of mcmc.core.samplers.rwm takes 'shape'",
        "fake (density): setting shape: mcmc compare -P refuses fake:shape: --param 'fake:shape=1.0': fake has no "
        "option 'shape' (its options: none)",
        "fake (density): setting jump: no range in mcmc.core.ranges.RANGES",
        "fake (density): setting jump: neither step nor make_adapter of mcmc.core.samplers.rwm takes 'jump'",
        "fake (density): setting jump: mcmc compare -P refuses fake:jump: --param 'fake:jump=1.0': fake has no "
        "option 'jump' (its options: none)",
    ]


def test_the_dedicated_tuning_options_of_mcmc_sample_are_registered_settings() -> None:
    from mcmc.cli import sample
    from mcmc.core.samplers import setting_named

    hints = typing.get_type_hints(sample.command, include_extras=True)
    tuning = [
        name for name, hint in hints.items()
        if getattr(getattr(hint, "__metadata__", [None])[0], "rich_help_panel", None) == sample.TUNING
    ]  # fmt: skip
    assert "param" in hints  # -P sits beside --sampler, in the Run panel: its metavar would squeeze this panel's help
    assert [name for name in tuning if setting_named(name) is None] == []


def test_each_kind_names_a_sampler_once_and_every_setting_means_one_thing() -> None:
    for kind in (DENSITY, NETWORK):
        names = [d.name for d in DECLARATIONS if d.kind == kind]
        assert len(names) == len(set(names)), kind
    by_name: dict[str, Setting] = {}
    for d in DECLARATIONS:
        for s in d.settings:
            first = by_name.setdefault(s.name, s)
            assert (s.help, s.kind, s.choices) == (first.help, first.kind, first.choices), s.name
    assert registry.DECLARATIONS is DECLARATIONS


def test_the_registry_imports_without_numpy_or_any_sampler_module() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import mcmc.core.samplers as s; s.sampler_names(); "
        "bad = sorted(m for m in sys.modules if m == 'numpy' or m.startswith('mcmc.core.samplers.') "
        "and m != 'mcmc.core.samplers.registry'); print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
