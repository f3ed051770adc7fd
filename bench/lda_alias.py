"""Considered for issue 14, measured, not kept: a Metropolis-Hastings alias kernel against our sparse kernel.

The issue asked to consider, at K >= 200, the O(1)-per-token Metropolis-Hastings
samplers (LightLDA, Yuan et al. 2015; WarpLDA, Chen et al. 2016) as another
exact ``--kernel``, and to keep whichever wins. This is LightLDA's cycle
proposal, exact: per token (its counts removed), ``--mh-steps`` rounds of

* a *word proposal* from Walker alias tables built at the start of the sweep
  from a snapshot of the counts, ``q_w(k) ∝ (n_kw + beta) / (n_k + V beta)``
  (a sparse table over the word's topics plus one dense table for the beta
  part, so building them costs O(nonzeros + K), not O(V K)); a stale table is
  a fixed independence proposal, so the MH ratio uses the snapshot's ``q``;
* a *doc proposal*, the topic of a uniformly drawn token of the document (the
  token itself counted at its current topic) or, with probability
  ``K alpha / (N_d + K alpha)``, a uniform topic; its ratio reduces to
  ``(n_tw + beta)(n_s + V beta) / ((n_sw + beta)(n_t + V beta))``.

It runs beside our collapsed Gibbs sampler (the auto kernel: sparse at these
K) on the same corpus, K and number of sweeps, and prints both speeds (CPU
time, compilation excluded) and the collapsed log joint per token after the
same sweeps, which is what the issue's quality goal compares. The prototype
keeps a dense ``n_wk`` and its snapshot (memory is not the question here); a
production kernel would reorganise memory as WarpLDA does (2-3x per token in
its paper), which would not change the per-sweep mixing.

Usage::

    python bench/lda_alias.py [--corpus FILE.ldac] [--topics 200 500] [--iterations 100] [--mh-steps 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).parent))
from lda_kernel import DEFAULT, load_ldac, run_ours  # noqa: E402

from mcmc.core.lda.kernels.rng import uniform  # noqa: E402
from mcmc.core.lda.likelihood import collapsed_log_joint  # noqa: E402


@njit(cache=True)
def build_alias(w, out_prob, out_alias, off, n):
    """Vose's alias table of the weights ``w[:n]`` into ``out_prob``/``out_alias[off:off + n]``; their sum."""
    total = 0.0
    for j in range(n):
        total += w[j]
    small = np.empty(n, np.int64)
    large = np.empty(n, np.int64)
    scaled = np.empty(n)
    ns = nl = 0
    for j in range(n):
        scaled[j] = w[j] * n / total
        if scaled[j] < 1.0:
            small[ns] = j
            ns += 1
        else:
            large[nl] = j
            nl += 1
    while ns > 0 and nl > 0:
        s = small[ns - 1]
        ns -= 1
        g = large[nl - 1]
        out_prob[off + s] = scaled[s]
        out_alias[off + s] = g
        scaled[g] = scaled[g] + scaled[s] - 1.0
        if scaled[g] < 1.0:
            nl -= 1
            small[ns] = g
            ns += 1
    for rest, m in ((large, nl), (small, ns)):
        for j in range(m):
            out_prob[off + rest[j]] = 1.0
            out_alias[off + rest[j]] = rest[j]
    return total


@njit(cache=True)
def sweep(doc_ptr, words, z, nwk, nk, alpha, beta, key, mh_steps):
    """One sweep of LightLDA's cycle proposal (see the module docstring), exact Metropolis-Hastings."""
    v, k_topics = nwk.shape
    vbeta = v * beta
    snap = nwk.copy()
    snap_k = nk.astype(np.float64)
    dense_w = np.empty(k_topics)
    for k in range(k_topics):
        dense_w[k] = beta / (snap_k[k] + vbeta)
    d_prob = np.empty(k_topics)
    d_alias = np.empty(k_topics, np.int64)
    d_mass = build_alias(dense_w, d_prob, d_alias, 0, k_topics)
    ptr = np.zeros(v + 1, np.int64)
    for w in range(v):
        nonzero = 0
        for k in range(k_topics):
            if snap[w, k] > 0:
                nonzero += 1
        ptr[w + 1] = ptr[w] + nonzero
    s_prob = np.empty(ptr[v])
    s_alias = np.empty(ptr[v], np.int64)
    s_topic = np.empty(ptr[v], np.int64)
    s_mass = np.zeros(v)
    tmp = np.empty(k_topics)
    for w in range(v):
        o = ptr[w]
        n = ptr[w + 1] - o
        if n == 0:
            continue
        j = 0
        for k in range(k_topics):
            if snap[w, k] > 0:
                tmp[j] = snap[w, k] / (snap_k[k] + vbeta)
                s_topic[o + j] = k
                j += 1
        s_mass[w] = build_alias(tmp, s_prob, s_alias, o, n)
    ndk = np.zeros(k_topics)
    for d in range(doc_ptr.size - 1):
        start, stop = doc_ptr[d], doc_ptr[d + 1]
        nd = stop - start
        for i in range(start, stop):
            ndk[z[i]] += 1.0
        for i in range(start, stop):
            w = words[i]
            s = z[i]
            ndk[s] -= 1.0
            nwk[w, s] -= 1
            nk[s] -= 1
            c = i * 16
            for _ in range(mh_steps):
                # word proposal: the snapshot's (n_kw + beta) / (n_k + V beta), sparse part + dense part
                if uniform(key, c) * (s_mass[w] + d_mass) < s_mass[w]:
                    o = ptr[w]
                    r = uniform(key, c + 1) * (ptr[w + 1] - o)
                    j = int(r)
                    t = s_topic[o + (j if r - j < s_prob[o + j] else s_alias[o + j])]
                else:
                    r = uniform(key, c + 1) * k_topics
                    j = int(r)
                    t = j if r - j < d_prob[j] else d_alias[j]
                if t != s:
                    pt = (ndk[t] + alpha) * (nwk[w, t] + beta) / (nk[t] + vbeta)
                    ps = (ndk[s] + alpha) * (nwk[w, s] + beta) / (nk[s] + vbeta)
                    qt = (snap[w, t] + beta) / (snap_k[t] + vbeta)
                    qs = (snap[w, s] + beta) / (snap_k[s] + vbeta)
                    if uniform(key, c + 2) * ps * qt < pt * qs:
                        s = t
                # doc proposal: a random token's topic (this token counted at s), or a uniform topic
                u = uniform(key, c + 3) * (nd + k_topics * alpha)
                if u < nd:
                    j = start + int(u)
                    t = s if j == i else z[j]
                else:
                    t = min(int((u - nd) / alpha), k_topics - 1)
                if t != s:
                    a = (nwk[w, t] + beta) * (nk[s] + vbeta)
                    b = (nwk[w, s] + beta) * (nk[t] + vbeta)
                    if uniform(key, c + 4) * b < a:
                        s = t
                c += 5
            z[i] = s
            ndk[s] += 1.0
            nwk[w, s] += 1
            nk[s] += 1
        for i in range(start, stop):
            ndk[z[i]] = 0.0


def run_alias(corpus, k: int, alpha: float, beta: float, iterations: int, seed: int, mh_steps: int) -> dict:
    doc_ptr = np.asarray(corpus.doc_ptr, np.int64)
    words = np.asarray(corpus.words, np.int32)
    v = corpus.vocab_size
    rng = np.random.default_rng(seed)
    z = rng.integers(0, k, words.size).astype(np.int32)
    nwk = np.zeros((v, k), np.int32)
    np.add.at(nwk, (words, z), 1)
    nk = np.bincount(z, minlength=k).astype(np.int32)
    tiny = slice(0, int(doc_ptr[1]))  # compile on the first document's copy, outside the timing
    sweep(doc_ptr[:2].copy(), words[tiny].copy(), z[tiny].copy(), nwk.copy(), nk.copy(), alpha, beta,
          np.uint64(1), mh_steps)  # fmt: skip
    c0 = time.process_time()
    for _ in range(iterations):
        sweep(doc_ptr, words, z, nwk, nk, alpha, beta, np.uint64(rng.integers(2**63)), mh_steps)
    cpu = time.process_time() - c0
    ll = collapsed_log_joint(doc_ptr, words, z, n_topics=k, vocab_size=v, alpha=alpha, beta=beta) / words.size
    return {"cpu_tokens_per_s": words.size * iterations / cpu, "ll": float(ll)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT)
    parser.add_argument("--topics", type=int, nargs="+", default=[200, 500])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--mh-steps", type=int, default=2, help="word + doc proposal rounds per token (LightLDA: 2)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    corpus = load_ldac(args.corpus, None)
    print(
        f"corpus {args.corpus.name}: D={corpus.n_docs} N={corpus.n_tokens} V={corpus.vocab_size}; "
        f"alpha 0.1, beta 0.01, {args.iterations} sweeps, one thread"
    )
    print(f"{'K':>5s} {'kernel':28s} {'M tok/s CPU':>11s} {'ll/token':>9s}")
    for k in args.topics:
        ours = run_ours(corpus, k, alpha=0.1, beta=0.01, iterations=args.iterations, seed=args.seed)
        mh = run_alias(corpus, k, 0.1, 0.01, args.iterations, args.seed, args.mh_steps)
        print(
            f"{k:5d} {'collapsed Gibbs (' + ours['kernel'] + ')':28s} {ours['cpu_tokens_per_s'] / 1e6:11.2f} "
            f"{ours['ll']:9.4f}"
        )
        print(
            f"{k:5d} {f'MH alias, {args.mh_steps} steps':28s} {mh['cpu_tokens_per_s'] / 1e6:11.2f} {mh['ll']:9.4f}"
            f"   speed {mh['cpu_tokens_per_s'] / ours['cpu_tokens_per_s']:.2f}x ours, "
            f"ll/token {mh['ll'] - ours['ll']:+.4f}"
        )


if __name__ == "__main__":
    main()
