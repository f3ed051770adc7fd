"""The runs whose output must not change by a single bit across refactors.

Each case is a command line of ``mcmc sample`` or ``mcmc lda`` small enough to
run in a fraction of a second; :func:`digests` runs it and returns a SHA-256 of
every array it writes (the chains file, and the estimates file for ``lda``).
``make_digests.py`` stores them in ``digests.json``; ``tests/test_same_bytes.py``
recomputes them. Regenerate only for an intended change of the random stream
or of an algorithm, and say so in the commit.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

SHORT = ["--chains", "3", "--warmup", "40", "--draws", "30", "--seed", "7", "-q"]

SAMPLE_CASES: dict[str, list[str]] = {
    "rwm-gaussian": ["-t", "gaussian", "--dim", "3", "-s", "rwm"],
    "mh-independence-gaussian": ["-t", "gaussian", "--dim", "2", "-s", "mh-independence"],
    "mh-lognormal-gamma": ["-t", "gamma", "-s", "mh-lognormal"],
    "two-stage-logistic": ["-t", "logistic", "-s", "two-stage"],
    "slice-banana": ["-t", "banana", "-s", "slice"],
    "elliptical-slice-gaussian": ["-t", "gaussian", "--dim", "3", "--rho", "0.5", "-s", "elliptical-slice"],
    "rejection-gaussian": ["-t", "gaussian", "--dim", "2", "-s", "rejection"],
    "isir-bimodal": ["-t", "bimodal", "--dim", "1", "-s", "isir"],
    "gibbs-gaussian": ["-t", "gaussian", "--dim", "3", "--rho", "0.9", "-s", "gibbs"],
    "gibbs-ising": ["-t", "ising", "-T", "size=4", "-T", "beta=0.4", "-s", "gibbs"],
    "swendsen-wang-ising": ["-t", "ising", "-T", "size=4", "-T", "beta=0.44", "-s", "swendsen-wang"],
    "hmc-eight-schools": ["-t", "eight-schools", "-s", "hmc"],
    "hmc-funnel": ["-t", "funnel", "--dim", "3", "-s", "hmc", "--persistence", "0.5"],
    "nuts-eight-schools": ["-t", "eight-schools", "-s", "nuts"],
}

# Twelve sweeps do not converge: the R-hat gate is opened so the case exits 0 (the gate writes no array).
LDA_SHORT = ["--iterations", "12", "--burn-in", "6", "--chains", "2", "--seed", "3", "-k", "5", "--threads", "1",
             "--max-rhat", "inf"]

LDA_CASES: dict[str, list[str]] = {
    "lda-collapsed-dense": ["--method", "collapsed", "--kernel", "dense"],
    "lda-collapsed-sparse": ["--method", "collapsed", "--kernel", "sparse"],
    "lda-partial": ["--method", "partial"],
    "lda-uncollapsed": ["--method", "uncollapsed"],
    "lda-dmm": ["--method", "dmm"],
    "lda-collapsed-holdout": ["--method", "collapsed", "--holdout", "0.2"],
    # learned alpha and beta (Monte Carlo EM), both kernels, the fold-in with a per-topic alpha
    "lda-collapsed-optimize": ["--method", "collapsed", "--kernel", "dense", "--optimize-interval", "2",
                               "--optimize-burn-in", "4", "--holdout", "0.2"],
    "lda-collapsed-sparse-optimize": ["--method", "collapsed", "--kernel", "sparse", "--optimize-interval", "3",
                                      "--optimize-burn-in", "3"],
}


def _digest_npz(path: Path) -> dict[str, str]:
    out = {}
    with np.load(path, allow_pickle=False) as f:
        for name in sorted(f.files):
            if name == "__attrs__":  # metadata (settings, versions), not the random stream
                continue
            a = np.ascontiguousarray(f[name])
            if a.dtype.kind in "OUS":  # names, JSON attributes: compared as text
                payload = repr(a.tolist()).encode()
            else:
                payload = a.dtype.str.encode() + repr(a.shape).encode() + a.tobytes()
            out[name] = hashlib.sha256(payload).hexdigest()[:16]
    return out


def digests(name: str, workdir: Path) -> dict[str, str]:
    """Run case ``name`` with outputs under ``workdir``; SHA-256 (16 hex digits) per written array."""
    from mcmc.cli.app import main

    chains = workdir / f"{name}.npz"
    if name in SAMPLE_CASES:
        argv = ["sample", *SAMPLE_CASES[name], *SHORT, "-o", str(chains)]
        files = {"chains": chains}
    else:
        estimates = workdir / f"{name}.estimates.npz"
        argv = ["lda", *LDA_CASES[name], *LDA_SHORT, "-o", str(chains), "--estimates", str(estimates)]
        files = {"chains": chains, "estimates": estimates}
    code = main(argv)
    if code != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {code}")
    result = {}
    for kind, path in files.items():
        for array, digest in _digest_npz(path).items():
            result[f"{kind}:{array}"] = digest
    return result


ALL_CASES = [*SAMPLE_CASES, *LDA_CASES]
