"""Synthetic topic-model data on disk: a corpus drawn from LDA's generative process, its vocabulary, its truth.

:func:`generate_corpus` draws a corpus from the generative process of LDA
(Blei, Ng & Jordan 2003; Griffiths & Steyvers 2004) with
:func:`mcmc.core.lda.corpus.synthetic_corpus` -- ``phi_k ~ Dir(beta)``,
``theta_d ~ Dir(alpha)``, then for each of the ``doc_length`` tokens of a
document ``z ~ Categorical(theta_d)`` and ``w ~ Categorical(phi_z)`` -- and
writes three files, for exercises and recovery tests:

``X.ldac``
    The corpus in LDA-C: one line per document, ``M id:count ...``, ids
    0-based and ascending (what :func:`mcmc.core.lda.readers.read_ldac` reads).
``X.vocab.txt``
    The vocabulary, one word per line: ``w000``, ``w001``, ... (found by the
    reader beside ``X.ldac``).
``X.truth.npz``
    Plain arrays: ``theta`` (D, K) and ``phi`` (K, V), the true proportions
    and topics, and the settings ``alpha``, ``beta``, ``seed``, ``doc_length``.

Randomness: one Generator, ``numpy.random.default_rng(seed)``, so the same
seed gives the same bytes, and ``--seed 2003`` with the built-in corpus's
settings (K = 10, V = 500, 500 documents of 100 tokens, alpha 0.1, beta
0.05) writes exactly the corpus ``mcmc lda`` fits without a CORPUS.

Writing: each file through a temporary beside it, none renamed into place
before all three are written (an error or an interrupt leaves none of
them, and older files of those names as they were).
"""

from __future__ import annotations

import io
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.atomic import atomic_output
from mcmc.core.errors import UsageError
from mcmc.core.lda.corpus import Corpus, SyntheticCorpus, synthetic_corpus

#: What the files hold, in the JSON report.
SCHEMA = "mcmc.lda-generate/1"


@dataclass(frozen=True)
class GenerateConfig:
    """The settings of a synthetic corpus.

    Attributes
    ----------
    n_topics, n_docs, vocab_size, doc_length
        K, D, V and the tokens of every document.
    alpha, beta
        Symmetric Dirichlet concentrations of theta and phi.
    seed
        The seed of the one Generator (``numpy.random.default_rng(seed)``).
    """

    n_topics: int = 10
    n_docs: int = 500
    vocab_size: int = 500
    doc_length: int = 100
    alpha: float = 0.1
    beta: float = 0.01
    seed: int = 1


@dataclass(frozen=True, eq=False)
class GeneratedCorpus:
    """What :func:`generate_corpus` wrote, and the draw itself.

    Attributes
    ----------
    config : the settings.
    corpus, vocab, truth : the paths of the three files.
    data : the corpus with its true theta, phi and token topics.
    """

    config: GenerateConfig
    corpus: str
    vocab: str
    truth: str
    data: SyntheticCorpus

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema :data:`SCHEMA`): the files and the settings."""
        c = self.config
        return {
            "schema": SCHEMA,
            "files": {"corpus": self.corpus, "vocab": self.vocab, "truth": self.truth},
            "topics": c.n_topics, "documents": c.n_docs, "vocab_size": c.vocab_size, "doc_length": c.doc_length,
            "tokens": self.data.corpus.n_tokens, "alpha": c.alpha, "beta": c.beta, "seed": c.seed,
        }  # fmt: skip


def output_paths(path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """``X.ldac`` -> ``(X.ldac, X.vocab.txt, X.truth.npz)``.

    Raises
    ------
    UsageError
        A name not ending in ``.ldac`` (the readers tell LDA-C by it and find
        the vocabulary beside it by its stem).
    """
    p = Path(path)
    if p.suffix.lower() != ".ldac" or not p.stem:
        raise UsageError(f"{path}: the generated corpus is LDA-C; give a name ending in .ldac")
    return os.fspath(p), os.fspath(p.with_suffix(".vocab.txt")), os.fspath(p.with_suffix(".truth.npz"))


def ldac_text(corpus: Corpus) -> str:
    """The LDA-C lines of ``corpus``: per document ``M id:count ...``, ids ascending, an empty document ``0``."""
    v = corpus.vocab_size
    key = corpus.doc_of_token() * v + corpus.words
    cells, counts = np.unique(key, return_counts=True)  # sorted: by document, then word
    doc, word = np.divmod(cells, v)
    per_doc = np.bincount(doc, minlength=corpus.n_docs)
    pairs = [f"{w}:{n}" for w, n in zip(word.tolist(), counts.tolist(), strict=True)]
    lines, start = [], 0
    for m in per_doc.tolist():
        lines.append(" ".join([str(m), *pairs[start : start + m]]))
        start += m
    return "\n".join(lines) + "\n"


def generate_corpus(path: str | os.PathLike[str], config: GenerateConfig) -> GeneratedCorpus:
    """Draw a corpus from LDA's generative process and write it, its vocabulary and its truth.

    Parameters
    ----------
    path
        ``X.ldac``; the vocabulary and the truth go beside it (:func:`output_paths`).
    config
        K, D, V, the document length, alpha, beta and the seed.

    Returns
    -------
    GeneratedCorpus

    Raises
    ------
    UsageError
        A bad setting, a name not ending in ``.ldac``, or an output that
        cannot be written (all checked before anything is drawn).
    """
    from mcmc.core.paths import check_paths

    corpus_path, vocab_path, truth_path = output_paths(path)
    check_paths({"--generate": corpus_path, "its vocabulary": vocab_path, "its truth": truth_path})
    if isinstance(config.seed, bool) or int(config.seed) != config.seed or config.seed < 0:
        raise UsageError(f"seed must be a non-negative integer, got {config.seed}")
    data = synthetic_corpus(
        np.random.default_rng(int(config.seed)), n_topics=config.n_topics, vocab_size=config.vocab_size,
        n_docs=config.n_docs, doc_length=config.doc_length, alpha=config.alpha, beta=config.beta,
    )  # fmt: skip
    truth = io.BytesIO()
    np.savez(truth, theta=data.theta, phi=data.phi, alpha=np.array(float(config.alpha)),
             beta=np.array(float(config.beta)), seed=np.array(int(config.seed)),
             doc_length=np.array(int(config.doc_length)))  # fmt: skip
    contents = (
        (corpus_path, ldac_text(data.corpus).encode()),
        (vocab_path, ("\n".join(data.corpus.vocab) + "\n").encode()),
        (truth_path, truth.getvalue()),
    )
    with ExitStack() as stack:  # every file written before the first is renamed into place
        for name, content in contents:
            stack.enter_context(atomic_output(name)).write(content)
    return GeneratedCorpus(config, corpus_path, vocab_path, truth_path, data)
