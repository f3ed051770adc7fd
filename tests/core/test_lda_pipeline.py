"""The LDA pipeline as a library call: what an LdaRun holds and the files it describes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mcmc.core.lda.config import LdaConfig
from mcmc.core.lda.kernels.partial import partial_sweep
from mcmc.core.lda.pipeline import fit_lda, load_input


@pytest.fixture(scope="module")
def run():
    config = LdaConfig(n_topics=4, iterations=8, burn_in=3, chains=2, seed=4, holdout=0.2, coherence=True, n_top=5)
    return fit_lda(load_input(None), config)


def test_run_holds_the_split_the_fit_and_its_scores(run) -> None:
    assert run.train.n_docs == 400 and run.heldout.n_docs == 100
    assert run.doc_index.shape == (400,) and np.all(np.diff(run.doc_index) > 0)
    assert run.fit.theta.shape == (2, 400, 4) and run.top.shape == (2, 4, 5)
    assert run.umass.shape == run.npmi.shape == run.cv.shape == run.shares.shape == (2, 4)
    assert np.all((run.cv >= -1) & (run.cv <= 1))
    assert run.completion.perplexity.shape == (2,) and np.all(np.isfinite(run.completion.perplexity))
    assert len(run.recoveries) == 2  # the synthetic corpus carries its truth
    assert {"sampling", "total", "evaluation"} <= set(run.timings)


def test_chains_are_the_post_burn_in_trace(run) -> None:
    chains = run.to_chains()
    np.testing.assert_array_equal(chains.posterior["log_joint"], run.fit.log_joint[:, 3:])
    np.testing.assert_array_equal(chains.posterior["log_joint_per_token"], run.fit.log_joint_per_token[:, 3:])
    assert chains.attrs["burn_in"] == 3 and chains.attrs["n_docs"] == 400 and chains.attrs["sampler"] == "lda-collapsed"


def test_estimates_file_round_trips_without_pickles(run, tmp_path: Path) -> None:
    path = tmp_path / "est.npz"
    run.write_estimates(path)
    expected = run.estimates()
    with np.load(path, allow_pickle=False) as f:
        assert sorted(f.files) == sorted(expected)
        for name, value in expected.items():
            np.testing.assert_array_equal(f[name], value)
    assert [p.name for p in tmp_path.iterdir()] == ["est.npz"]  # written through a temporary, renamed


def test_same_config_same_run() -> None:
    config = LdaConfig(n_topics=3, iterations=4, burn_in=1, chains=1, seed=9, holdout=0.1, method="partial")
    a, b = (fit_lda(load_input(None), config) for _ in range(2))
    np.testing.assert_array_equal(a.doc_index, b.doc_index)
    assert a.fit.log_joint.tobytes() == b.fit.log_joint.tobytes()
    assert a.completion.log_likelihood.tobytes() == b.completion.log_likelihood.tobytes()


def test_the_pipeline_does_not_import_diagnostics() -> None:
    # core never imports diagnostics: the run summary (R-hat, ESS) is computed above core
    code = (
        "import sys, json; import mcmc.core.lda.pipeline; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mcmc.diagnostics'))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_initial_sweep_assigns_tokens_one_by_one_from_empty_counts() -> None:
    # The fold-in's first sweep: token 1 | nothing ∝ alpha phi_k,w1, then token 2 | token 1 ∝ (n_k + alpha) phi_k,w2,
    # whatever z held on entry. Enumerate the four outcomes and compare with many independent keys.
    phi = np.array([[0.7, 0.3], [0.2, 0.8]])  # phi[k, w]
    alpha, words = 0.5, np.array([0, 1], dtype=np.int32)
    exact = np.zeros((2, 2))
    p1 = phi[:, 0] / phi[:, 0].sum()
    for k1 in range(2):
        w2 = (np.array([k1 == 0, k1 == 1]) + alpha) * phi[:, 1]
        exact[k1] = p1[k1] * w2 / w2.sum()
    phi_wk = np.ascontiguousarray(phi.T)
    cphi = np.cumsum(phi_wk, axis=1)
    doc_ptr = np.array([0, 2], dtype=np.int64)
    n = 20000
    counts = np.zeros((2, 2))
    for key in range(n):
        z = np.ones(2, dtype=np.int32)  # ignored by the initial sweep
        partial_sweep(doc_ptr, words, z, phi_wk, cphi, alpha, np.uint64(key * 0x9E3779B97F4A7C15 % 2**64), 0, 1, True)
        counts[z[0], z[1]] += 1
    freq = counts / n
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(freq - exact) / se < 4), (freq, exact)


def test_a_run_without_theta_writes_estimates_without_it() -> None:
    config = LdaConfig(n_topics=3, iterations=4, burn_in=1, chains=2, seed=9, keep_theta=False)
    lean, full = fit_lda(load_input(None), config), fit_lda(load_input(None), LdaConfig(**{**vars(config),
                                                                                           "keep_theta": True}))
    assert lean.fit.theta is None and "theta" not in lean.estimates() and "theta" in full.estimates()
    assert lean.shares.tobytes() == full.shares.tobytes()


def test_lda_run_refuses_an_estimates_file_without_theta(tmp_path: Path) -> None:
    from mcmc.cli.commands.lda import CorpusInput, LdaOutputs, lda_run
    from mcmc.core.errors import UsageError

    config = LdaConfig(n_topics=3, iterations=4, burn_in=1, chains=1, keep_theta=False)
    with pytest.raises(UsageError, match="keep_theta"):
        lda_run(CorpusInput(), config, LdaOutputs(estimates=str(tmp_path / "est.npz")))
    assert list(tmp_path.iterdir()) == []


def test_a_model_trained_with_keep_all_words_reads_new_text_the_same_way(data_dir: Path, tmp_path: Path) -> None:
    from mcmc.core.lda.model import infer, load_model, model_of

    path = data_dir / "lda" / "five_words.txt"
    data = load_input(path, keep_all_words=True)
    assert data.reading["keep_all_words"] is True
    run = fit_lda(data, LdaConfig(n_topics=2, iterations=6, burn_in=2, chains=1, seed=1))
    model_of(run).save(tmp_path / "model.npz")
    model = load_model(tmp_path / "model.npz")
    assert model.reading["keep_all_words"] is True
    inferred = infer(model, path, sweeps=4, burn_in=2)
    assert inferred.n_tokens == 25 and inferred.unknown_tokens == 0  # short words kept on the way in too
