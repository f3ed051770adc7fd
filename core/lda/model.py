"""Saved topic models (``--save-model``) and topics of new documents (``--model``).

A saved model is an ``.npz`` file of plain arrays (no pickles; read with
``allow_pickle=False``), format ``mcmc.lda-model`` version :data:`VERSION`,
described in ``docs/formats.md``: the vocabulary, phi of every chain, the
alpha and beta each chain ended with (learned or fixed), the method and the
options the training corpus was read with.

:func:`infer` gives documents the model never saw their topic proportions:
their words are mapped to the model's vocabulary by spelling (unknown words
are dropped and counted), and theta is estimated by fold-in Gibbs sampling
with phi fixed (:func:`mcmc.core.lda.evaluate.fold_in`, the conditional
held-out document completion uses), per chain of the model: tomotopy's
``LDAModel.infer``.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcmc.core.atomic import atomic_output
from mcmc.core.errors import InputError, UsageError
from mcmc.core.lda import evaluate
from mcmc.core.lda.corpus import Corpus
from mcmc.core.lda.readers import detect_format, load_corpus
from mcmc.core.npz import read_npz_arrays
from mcmc.core.random import generator

FORMAT = "mcmc.lda-model"
VERSION = 1
#: Spawn key of the fold-in's stream (distinct from the chains' and the held-out split's).
INFER_KEY = (0x1DA, 2)


@dataclass(frozen=True, eq=False)
class LdaModel:
    """A fitted model, enough to infer the topics of new documents.

    Attributes
    ----------
    vocab : the V words.
    phi : float (chains, K, V), rows summing to 1.
    alpha : float (chains, K); beta : float (chains,).
    method : the sampler that fitted it.
    reading : how the training corpus was read (``format``, ``min_df``, ``max_df``, NaN = not given;
        ``keep_all_words``).
    source : the training corpus.
    """

    vocab: tuple[str, ...]
    phi: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    method: str
    reading: dict[str, Any]
    source: str

    @property
    def n_topics(self) -> int:
        return self.phi.shape[1]

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the model file."""
        return {
            "format": np.array(FORMAT),
            "version": np.array(VERSION),
            "vocab": np.array(self.vocab, dtype=str),
            "phi": self.phi,
            "alpha": self.alpha,
            "beta": self.beta,
            "method": np.array(self.method),
            "source": np.array(self.source),
            "corpus_format": np.array(self.reading.get("format") or ""),
            "min_df": np.array(_nan_if_none(self.reading.get("min_df"))),
            "max_df": np.array(_nan_if_none(self.reading.get("max_df"))),
            "keep_all_words": np.array(bool(self.reading.get("keep_all_words", False))),
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to the ``.npz`` file ``path``, atomically."""
        buf = io.BytesIO()
        np.savez(buf, **self.arrays())
        with atomic_output(path) as fh:
            fh.write(buf.getvalue())


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else float(value)


def model_of(run: Any) -> LdaModel:
    """The model of an :class:`~mcmc.core.lda.pipeline.LdaRun`: per chain, its phi and final alpha and beta."""
    f = run.fit
    chains, k = f.phi.shape[:2]
    if f.learned is not None:
        alpha, beta = f.learned.final_alpha, f.learned.final_beta
    else:
        alpha, beta = np.full((chains, k), f.alpha), np.full(chains, f.beta)
    return LdaModel(tuple(run.train.vocab), f.phi, alpha, beta, f.method, dict(run.reading), run.source)


def load_model(path: str | os.PathLike[str]) -> LdaModel:
    """Read and check a model file; any problem is an :class:`InputError` naming ``path`` and the field.

    Every member's header is checked before it is loaded (a ``phi`` claiming
    ``10**10`` floats is refused, not allocated), Python objects are refused
    by name, and every field must have its type and shape: ``version`` one
    whole number, ``vocab`` distinct words, ``phi`` at least one topic.
    """
    source = os.fspath(path)
    what = "model file written by mcmc lda --save-model"
    arrays = read_npz_arrays(path, what)
    missing = [n for n in ("format", "version", "vocab", "phi", "alpha", "beta", "method") if n not in arrays]
    if missing or _text(arrays["format"]) != FORMAT:
        raise InputError(source, f"not a {what}" + (f" (missing {', '.join(missing)})" if missing else ""))
    version = arrays["version"]
    if version.shape != () or version.dtype.kind not in "iu":
        raise InputError(source, f"version must be one whole number, got {_shown(version)}")
    if int(version) != VERSION:
        raise InputError(source, f"model format version {int(version)}; this mcmc reads version {VERSION}")
    phi, alpha, beta, vocab = arrays["phi"], arrays["alpha"], arrays["beta"], arrays["vocab"]
    if vocab.ndim != 1 or vocab.dtype.kind not in "US":
        raise InputError(source, f"vocab must be a list of words (strings), got {_shown(vocab)}")
    for name, value in (("phi", phi), ("alpha", alpha), ("beta", beta)):
        if value.dtype.kind not in "fiu":
            raise InputError(source, f"{name} must hold numbers, got {_shown(value)}")
    if phi.ndim != 3 or phi.shape[2] != vocab.size or alpha.shape != phi.shape[:2] or beta.shape != phi.shape[:1]:
        raise InputError(source, f"inconsistent shapes: phi {phi.shape}, alpha {alpha.shape}, beta {beta.shape}, "
                         f"vocab {vocab.shape}")  # fmt: skip
    if 0 in phi.shape:
        raise InputError(source, f"phi has shape {phi.shape} (chains, topics, words): a model needs at least one "
                         "chain, one topic and one word")  # fmt: skip
    words = [str(w) for w in vocab.tolist()]
    if len(set(words)) != len(words):
        seen: set[str] = set()
        repeated = next(w for w in words if w in seen or seen.add(w))  # type: ignore[func-returns-value]
        raise InputError(source, f"vocab holds the word {repeated!r} twice: a word must have one column of phi")
    if not (np.all(np.isfinite(phi)) and np.all(phi >= 0) and np.allclose(phi.sum(axis=2), 1)):
        raise InputError(source, "phi must hold probability distributions over the vocabulary")
    if not (np.all(np.isfinite(alpha)) and np.all(alpha > 0) and np.all(np.isfinite(beta)) and np.all(beta > 0)):
        raise InputError(source, "alpha and beta must be positive and finite")
    for name in ("method", "source", "corpus_format"):
        if name in arrays and (arrays[name].shape != () or arrays[name].dtype.kind not in "US"):
            raise InputError(source, f"{name} must be one string, got {_shown(arrays[name])}")
    for name, kinds in (("min_df", "fiu"), ("max_df", "fiu"), ("keep_all_words", "biu")):
        if name in arrays and (arrays[name].shape != () or arrays[name].dtype.kind not in kinds):
            raise InputError(source, f"{name} must be one {'number' if 'f' in kinds else 'flag'}, "
                             f"got {_shown(arrays[name])}")  # fmt: skip
    reading = {
        "format": _text(arrays.get("corpus_format", np.array(""))) or None,
        "min_df": _none_if_nan(arrays.get("min_df")),
        "max_df": _none_if_nan(arrays.get("max_df")),
        # absent from files written before --keep-all-words existed: their text was read without it
        "keep_all_words": bool(arrays.get("keep_all_words", False)),
    }
    return LdaModel(tuple(words), phi.astype(np.float64), alpha.astype(np.float64), beta.astype(np.float64),
                    _text(arrays["method"]), reading, _text(arrays.get("source", np.array(""))))  # fmt: skip


def _text(value: np.ndarray) -> str:
    """A 0-d string member as text (``""`` for anything else: the caller's check names it)."""
    if value.shape != () or value.dtype.kind not in "US":
        return ""
    item = value[()]
    return item.decode(errors="replace") if isinstance(item, bytes) else str(item)


def _shown(value: np.ndarray) -> str:
    """How a member of the wrong type is named in a message: its value when small, else its dtype and shape."""
    if value.size <= 4:
        return repr(value.tolist())
    return f"an array of {value.dtype} of shape {value.shape}"


def _none_if_nan(value: Any) -> float | None:
    if value is None or not np.isfinite(float(value)):
        return None
    return float(value)


@dataclass(frozen=True, eq=False)
class Inference:
    """Topic proportions of new documents.

    Attributes
    ----------
    theta : float (chains, D, K), per chain of the model (topic labels are the chain's).
    n_tokens : tokens of the new corpus that are in the model's vocabulary (the ones used).
    unknown_tokens : tokens whose word the model does not know (ignored).
    unknown_words : distinct such words.
    source : the new corpus.
    """

    theta: np.ndarray
    n_tokens: int
    unknown_tokens: int
    unknown_words: int
    doc_lengths: np.ndarray
    source: str

    def theta_csv(self) -> str:
        """CSV: ``document,chain,topic_0,...,topic_{K-1}``, one row per document and chain."""
        chains, d, k = self.theta.shape
        lines = [",".join(["document", "chain", *(f"topic_{j}" for j in range(k))])]
        for c in range(chains):
            for i in range(d):
                lines.append(f"{i},{c}," + ",".join(repr(float(x)) for x in self.theta[c, i]))
        return "\n".join(lines) + "\n"

    def write_theta(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`theta_csv` to ``path``, atomically."""
        with atomic_output(path) as fh:
            fh.write(self.theta_csv().encode())


def map_to_vocabulary(corpus: Corpus, vocab: tuple[str, ...]) -> tuple[Corpus, int, int]:
    """``corpus`` with word ids of ``vocab``; tokens of other words dropped.

    Returns the mapped corpus, the number of dropped tokens and of distinct dropped words.
    """
    index = {w: i for i, w in enumerate(vocab)}
    new_id = np.array([index.get(w, -1) for w in corpus.vocab], dtype=np.int64)
    ids = new_id[corpus.words]
    keep = ids >= 0
    lengths = np.bincount(corpus.doc_of_token()[keep], minlength=corpus.n_docs)
    mapped = Corpus(np.concatenate([[0], np.cumsum(lengths)]), ids[keep], vocab)
    used = np.bincount(corpus.words, minlength=corpus.vocab_size) > 0
    return mapped, int((~keep).sum()), int(np.sum(used & (new_id < 0)))


def infer(
    model: LdaModel,
    path: str | os.PathLike[str],
    *,
    sweeps: int = 200,
    burn_in: int = 100,
    seed: int = 1,
    fmt: str | None = None,
    vocab: str | os.PathLike[str] | None = None,
) -> Inference:
    """Topic proportions of the documents at ``path`` under ``model`` (fold-in Gibbs, phi fixed).

    The corpus is read like any ``mcmc lda`` input but never pruned (the
    model's vocabulary decides which words count; LDA-C and UCI ids without a
    vocabulary file, given or beside the corpus, are the model's own), text with the tokenizer the
    model was trained with (``keep_all_words``); the fold-in runs ``sweeps``
    sweeps per chain of the model, the last ``sweeps - burn_in`` averaged,
    from the stream ``SeedSequence(seed, spawn_key=INFER_KEY)``.
    """
    fmt = fmt or detect_format(path)
    keep_all_words = fmt == "text" and bool(model.reading.get("keep_all_words", False))
    corpus = load_corpus(path, fmt=fmt, vocab=vocab, keep_all_words=keep_all_words, known=model.vocab)
    mapped, unknown_tokens, unknown_words = map_to_vocabulary(corpus, model.vocab)
    if mapped.n_tokens == 0:
        # theta would be the prior for every document, written as if it were an answer
        raise InputError(
            os.fspath(path), f"no word of its {corpus.n_docs} document{'s' if corpus.n_docs != 1 else ''} is in the "
            f"model's vocabulary ({len(model.vocab)} words from {model.source or 'its training corpus'}): nothing to "
            "infer topics from; is it the corpus, or the vocabulary file, the model was trained with?"
        )
    theta = evaluate.fold_in(model.phi, mapped, model.alpha, generator(seed, INFER_KEY), sweeps=sweeps,
                             burn_in=burn_in)
    return Inference(theta, mapped.n_tokens, unknown_tokens, unknown_words, mapped.doc_lengths, os.fspath(path))


def inference_report(inference: Inference, model: LdaModel, *, n_docs: int = 10, n_topics: int = 3,
                     n_words: int = 6) -> dict[str, Any]:
    """The JSON-ready summary ``mcmc lda --model`` renders: the top topics of the first documents (chain 0)."""
    theta = inference.theta[0]
    top_words = evaluate.top_words(model.phi[0], n_words)
    docs = []
    for d in range(min(n_docs, theta.shape[0])):
        order = np.argsort(-theta[d], kind="stable")[:n_topics]
        docs.append({
            "document": d,
            "tokens": int(inference.doc_lengths[d]),
            "topics": [{"topic": int(k), "theta": float(theta[d, k]),
                        "words": [model.vocab[w] for w in top_words[k]]} for k in order],
        })  # fmt: skip
    empty = int(np.sum(inference.doc_lengths == 0))
    warnings = []
    if empty:
        warnings.append(
            f"{empty} of {theta.shape[0]} documents have no word the model knows: their topics are the prior's "
            "(alpha normalised), not an inference"
        )
    return {
        "schema": "mcmc.lda-infer/1",
        "warnings": warnings,
        "corpus": {"source": inference.source, "documents": int(theta.shape[0]), "tokens": inference.n_tokens,
                   "unknown_tokens": inference.unknown_tokens, "unknown_words": inference.unknown_words},
        "model": {"source": model.source, "method": model.method, "topics": model.n_topics,
                  "chains": int(model.phi.shape[0]), "words": len(model.vocab)},
        "documents": docs,
    }


@dataclass(frozen=True)
class InferenceResult:
    """A finished ``mcmc lda CORPUS --model FILE``: the inference and its report (schema ``mcmc.lda-infer/1``)."""

    inference: Inference
    report: dict[str, Any]
    model_path: str
    sweeps: int
    burn_in: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return self.report


def infer_documents(
    model_path: str,
    corpus_path: str,
    *,
    sweeps: int,
    burn_in: int,
    seed: int,
    fmt: str | None = None,
    vocab: str | None = None,
    theta_path: str | None = None,
) -> InferenceResult:
    """The one call of ``mcmc lda CORPUS --model FILE``: check the outputs, infer, write theta.

    Raises
    ------
    UsageError
        ``burn_in`` outside ``0 .. sweeps - 1``, or a ``theta_path`` that is
        an input or cannot be written (checked before any work).
    InputError
        An unreadable model or corpus.
    """
    from mcmc.core.paths import check_paths

    if not 0 <= burn_in < sweeps:
        raise UsageError(f"--burn-in must be in 0 .. --iterations - 1 = {sweeps - 1}, got {burn_in}")
    check_paths({"--theta": theta_path}, [corpus_path, vocab, model_path])
    model = load_model(model_path)
    inference = infer(model, corpus_path, sweeps=sweeps, burn_in=burn_in, seed=seed, fmt=fmt, vocab=vocab)
    if theta_path is not None:
        inference.write_theta(theta_path)
    return InferenceResult(inference, inference_report(inference, model), model_path, sweeps, burn_in, seed)
