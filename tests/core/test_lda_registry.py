"""The registries of LDA methods and collapsed kernels: every member complete, consistent, tested and in the help.

A new method or kernel is one module plus one registry line; these tests fail
until it also has what the rest of the program reads from it: its declarations,
its help words, a same-bytes case, and a strategy whose every method agrees
with the definitions (the exact transition tests in ``test_lda_exact.py`` walk
the kernel registry themselves).
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from mcmc.core.errors import UsageError
from mcmc.core.lda import collapsed, config
from mcmc.core.lda.kernels import AUTO_HELP, COLLAPSED_KERNELS, CollapsedKernel, collapsed_kernel, common
from mcmc.core.lda.sampler import Problem

_spec = importlib.util.spec_from_file_location(
    "same_bytes_cases", Path(__file__).parents[1] / "data" / "same_bytes" / "cases.py"
)
same_bytes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(same_bytes)


def _same_bytes_option_values(option: str) -> set[str]:
    """The values ``option`` takes in the LDA same-bytes cases."""
    return {argv[i + 1] for argv in same_bytes.LDA_CASES.values() for i, a in enumerate(argv[:-1]) if a == option}


# -- methods -------------------------------------------------------------------------------------------------------


def test_methods_are_the_registry():
    assert config.METHODS == tuple(config.METHOD_MODULES)
    with pytest.raises(UsageError, match="unknown method 'adlda'; choose one of collapsed, uncollapsed"):
        config.sampler_class("adlda")


@pytest.mark.parametrize("method", config.METHODS)
def test_every_method_declares_itself_and_has_a_same_bytes_case(method):
    sampler = config.sampler_class(method)
    assert sampler.name == method
    for declaration in ("learns_hyperparameters", "shards_documents", "one_topic_per_document"):
        assert isinstance(getattr(sampler, declaration), bool), declaration
    for name in ("warm_up", "chains"):
        assert callable(getattr(sampler, name)), name
    assert method in _same_bytes_option_values("--method")


def test_the_declarations_the_pipeline_reads():
    # who does what today: what pipeline.py and report.py used to test by name
    declared = {m: config.sampler_class(m) for m in config.METHODS}
    assert [m for m, s in declared.items() if s.learns_hyperparameters] == ["collapsed"]
    assert [m for m, s in declared.items() if s.shards_documents] == ["partial"]
    assert [m for m, s in declared.items() if s.one_topic_per_document] == ["dmm"]


# -- collapsed kernels ---------------------------------------------------------------------------------------------


def test_kernel_choices_and_help_are_the_registry():
    assert config.KERNELS == ("auto", *COLLAPSED_KERNELS)
    assert config.KERNEL_HELP.startswith("Implementation of the collapsed conditional: ")
    for name, entry in COLLAPSED_KERNELS.items():
        assert entry.help and f"{name} ({entry.help})" in config.KERNEL_HELP
    assert f"auto ({AUTO_HELP})" in config.KERNEL_HELP


def test_auto_is_resolved_to_registered_kernels():
    for n_topics in (1, collapsed.DENSE_MAX_TOPICS, collapsed.DENSE_MAX_TOPICS + 1, 1000):
        start, then = collapsed.choose_kernels("auto", n_topics)
        for kernel in (start, then):
            assert kernel is None or kernel is collapsed_kernel(kernel.name)
    for name in COLLAPSED_KERNELS:
        assert collapsed.choose_kernels(name, 1000) == (collapsed_kernel(name), None)


PROTOCOL_METHODS = [name for name, _ in inspect.getmembers(CollapsedKernel, inspect.isfunction)
                    if not name.startswith("_")]


@pytest.mark.parametrize("name", COLLAPSED_KERNELS)
def test_every_kernel_has_the_whole_interface_and_a_same_bytes_case(name):
    kernel = collapsed_kernel(name)
    assert kernel.name == name
    assert set(PROTOCOL_METHODS) >= {"init", "sweep", "log_joint", "word_topic_values", "accumulate_phi"}
    for method in PROTOCOL_METHODS:
        ours = inspect.signature(getattr(type(kernel), method))
        assert list(ours.parameters) == list(inspect.signature(getattr(CollapsedKernel, method)).parameters), method
    assert name in _same_bytes_option_values("--kernel")


def ref_log_joint(doc_ptr, words, z, n_topics, vocab_size, alpha, beta):
    n_docs = doc_ptr.size - 1
    doc_of = np.repeat(np.arange(n_docs), np.diff(doc_ptr))
    ndk = np.zeros((n_docs, n_topics))
    np.add.at(ndk, (doc_of, z), 1)
    nkw = np.zeros((n_topics, vocab_size))
    np.add.at(nkw, (z, words), 1)
    g = special.gammaln
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (n_topics,))
    doc = g(alpha.sum()) - g(ndk.sum(1) + alpha.sum()) + (g(ndk + alpha) - g(alpha)).sum(1)
    top = g(vocab_size * beta) - g(nkw.sum(1) + vocab_size * beta) + (g(nkw + beta) - g(beta)).sum(1)
    return doc.sum() + top.sum()


@pytest.fixture(scope="module")
def state():
    """A random state of a ragged corpus (an empty document, words in more and fewer topics than K)."""
    rng = np.random.default_rng(32)
    n_topics, vocab_size = 11, 40
    lengths = rng.integers(0, 30, size=25)
    lengths[3] = 0
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.zipf(1.6, size=doc_ptr[-1]).clip(max=vocab_size).astype(np.int32) - 1
    problem = Problem.build(doc_ptr, words, n_topics, vocab_size, 0.3, 0.05, 1)
    z = rng.integers(0, n_topics, size=words.size).astype(np.int32)
    return problem, z


@pytest.mark.parametrize("name", COLLAPSED_KERNELS)
def test_every_kernel_agrees_with_the_definitions(state, name):
    p, z = state
    kernel = collapsed_kernel(name)
    nwk = common.word_topic_counts(p.words, z, p.K, p.V)
    nk = common.topic_counts(z, p.K)
    counts = kernel.init(p, z)
    # its counts are n_wk, however laid out; made from another layout they are the same
    np.testing.assert_array_equal(kernel.word_topic_counts(p, counts)[:, :p.K], nwk)
    for other in COLLAPSED_KERNELS:
        source = collapsed_kernel(other)
        moved = kernel.from_word_topic_counts(p, source.word_topic_counts(p, source.init(p, z)))
        np.testing.assert_array_equal(kernel.word_topic_counts(p, moved)[:, :p.K], nwk)
    np.testing.assert_array_equal(np.sort(kernel.word_topic_values(p, counts)), np.sort(nwk[nwk > 0]))
    spread = np.count_nonzero(nwk, axis=1) @ p.word_freq / p.N
    assert kernel.topics_per_word(p, counts) == pytest.approx(spread, rel=1e-15)
    # the log joints, against the formula
    ref = ref_log_joint(p.doc_ptr, p.words, z, p.K, p.V, p.alpha, p.beta)
    assert kernel.log_joint(p, counts, z, nk) == pytest.approx(ref, rel=1e-12)
    alpha = np.linspace(0.05, 0.9, p.K)
    ref = ref_log_joint(p.doc_ptr, p.words, z, p.K, p.V, alpha, 0.2)
    got = kernel.log_joint_asymmetric(p, counts, z, nk, alpha, 0.2, common.lgamma_table(0.2, int(p.word_freq.max())))
    assert got == pytest.approx(ref, rel=1e-12)
    # phi's running sums: exactly the plain counts' (a zero count adds +0.0)
    vbeta = p.V * p.beta
    want = np.zeros((p.K, p.V)), np.zeros(p.K)
    common.accumulate_phi_sums(nwk, nk, vbeta, *want)
    got_sums = np.zeros((p.K, p.V)), np.zeros(p.K)
    kernel.accumulate_phi(p, counts, nk, vbeta, *got_sums)
    for a, b in zip(got_sums, want, strict=True):
        np.testing.assert_array_equal(a, b)
    # a sweep keeps n_wk, n_k and z in step
    z2 = z.copy()
    nk2 = nk.copy()
    kernel.sweep(p, counts, z2, nk2, np.full(p.K, p.alpha), p.beta, np.uint64(0x1DA))
    assert not np.array_equal(z2, z)
    np.testing.assert_array_equal(kernel.word_topic_counts(p, counts)[:, :p.K],
                                  common.word_topic_counts(p.words, z2, p.K, p.V))
    np.testing.assert_array_equal(nk2, common.topic_counts(z2, p.K))
