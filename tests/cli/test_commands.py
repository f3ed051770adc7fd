"""The command layer as a library: each command's one call, its typed result and the one progress protocol.

No Typer, no console: the calls of :mod:`mcmc.cli.commands` are driven as a
script would, and what they report while they work is recorded.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from mcmc.cli.commands.compare import compare_runs, compare_samplers
from mcmc.cli.commands.diagnose import DiagnoseSettings, diagnose
from mcmc.cli.commands.lda import CorpusInput, LdaOutputs, lda_run
from mcmc.cli.commands.sample import SampleSpec, sample_run
from mcmc.core.errors import UsageError
from mcmc.core.lda.config import LdaConfig
from mcmc.diagnostics.report.lda import CorpusFacts
from mcmc.diagnostics.report.report import Report


class Recorder:
    """A :class:`~mcmc.cli.commands.progress.Progress` that keeps every report."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int, dict]] = []

    def __call__(self, label: str, done: int, total: int, /, **fields: object) -> None:
        assert isinstance(label, str) and 0 <= done <= total
        self.calls.append((label, done, total, fields))


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Recorder]:
    out = str(tmp_path_factory.mktemp("run") / "g.npz")
    progress = Recorder()
    result = sample_run(SampleSpec(target="gaussian", sampler="rwm", chains=2, warmup=100, draws=200, seed=4),
                        out, progress=progress)  # fmt: skip
    assert result.output == out and Path(out).exists() and result.report is not None
    return out, progress


def test_sample_run_reports_its_chains_through_the_one_protocol(run_file) -> None:
    _, progress = run_file
    assert progress.calls and progress.calls[-1][1] == progress.calls[-1][2]  # the last report: all done


def test_diagnose_returns_a_report_that_carries_no_display_setting(run_file) -> None:
    out, _ = run_file
    report = diagnose([out], DiagnoseSettings(var=("x",)))
    assert isinstance(report, Report) and report.source == (out,)
    assert not {"format", "wide", "sig_figs"} & {f.name for f in dataclasses.fields(Report)}


def test_diagnose_checks_outputs_before_reading(run_file) -> None:
    out, _ = run_file
    with pytest.raises(UsageError):
        diagnose([out], outputs={"-o": out})


def test_compare_runs_and_samplers_as_a_library(run_file, tmp_path: Path) -> None:
    out, _ = run_file
    same = compare_runs([out, out])  # a run against itself: every z is 0
    assert same.passed and {p.z for p in same.parameters} == {0.0}
    progress = Recorder()
    result = compare_samplers("gaussian", ["rwm", "slice"], chains=2, warmup=50, draws=100, seed=1,
                              progress=progress)  # fmt: skip
    assert [r.sampler for r in result.rows] == ["rwm", "slice"]
    assert {label for label, *_ in progress.calls} == {"rwm on gaussian", "slice on gaussian"}


def test_lda_run_reads_the_corpus_itself_and_reports_it_before_the_sweeps(tmp_path: Path) -> None:
    progress = Recorder()
    config = LdaConfig(n_topics=3, iterations=12, burn_in=4, chains=2, seed=5)
    buf = io.BytesIO()
    result = lda_run(CorpusInput(), config, LdaOutputs(chains="-"), stdout=buf, progress=progress)
    first = progress.calls[0]
    assert first[0] == "corpus" and isinstance(first[3]["corpus"], CorpusFacts)
    sweeps = progress.calls[1:]
    assert {label for label, *_ in sweeps} == {"chain 0", "chain 1"}
    assert all("log_joint_per_token" in fields and total == 12 for _, _, total, fields in sweeps)
    assert buf.getvalue()[:2] == b"PK"  # the chains file went to the stream it was given
    doc = json.loads(json.dumps(result.to_dict(), default=str))
    assert doc["schema"] == "mcmc.lda/1" and len(doc["chains"]) == 2
    assert doc["convergence"]["passed"] == result.passed and doc["convergence"]["verdict"] == result.verdict()
    assert result.corpus == first[3]["corpus"]


def test_lda_run_refuses_bad_options_before_reading_the_corpus(tmp_path: Path) -> None:
    config = LdaConfig(n_topics=3, iterations=4, burn_in=4, chains=1)
    with pytest.raises(UsageError, match="--burn-in"):
        lda_run(CorpusInput(str(tmp_path / "missing.ldac")), config, LdaOutputs())
