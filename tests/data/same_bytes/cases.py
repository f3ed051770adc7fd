"""The runs whose output must not change by a single bit across refactors.

Each case is a command line of ``mcmc sample`` or ``mcmc lda`` small enough to
run in a fraction of a second; :func:`digests` runs it and returns a SHA-256 of
every array it writes (the chains file, and the estimates file for ``lda``).
A case in ``LIBRARY_CASES`` runs the library (``driver.run`` then
``write_chains``) for a sampler the command line does not offer yet; once it
does, the case can become a command line with the same digests.
``make_digests.py`` stores them in ``digests.json``; ``tests/test_same_bytes.py``
recomputes them. Regenerate only for an intended change of the random stream
or of an algorithm, and say so in the commit.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

# Thirty draws do not pass the checks: --no-check makes the case exit 0 (the checks write no array).
SHORT = ["--chains", "3", "--warmup", "40", "--draws", "30", "--seed", "7", "-q", "--no-check"]

EARTHQUAKE = str(Path(__file__).parents[1] / "networks" / "earthquake.bif")
MARKOV = Path(__file__).parents[1] / "markov"
BOTH_CALL = ["--observe", "JohnCalls=True,MaryCalls=True"]

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
    "gibbs-potts": ["-t", "potts", "-T", "size=5", "-T", "q=3", "-T", "beta=0.9", "-s", "gibbs"],
    "swendsen-wang-potts": ["-t", "potts", "-T", "size=4", "-T", "q=4", "-T", "beta=1.1", "-s", "swendsen-wang"],
    "hmc-eight-schools": ["-t", "eight-schools", "-s", "hmc"],
    "hmc-funnel": ["-t", "funnel", "--dim", "3", "-s", "hmc", "--persistence", "0.5"],
    "hmc-gibbs-bnn": ["-t", "bnn", "-T", "hidden=3", "-s", "hmc-gibbs"],
    "nuts-eight-schools": ["-t", "eight-schools", "-s", "nuts"],  # compiled (the target has a point function)
    "nuts-funnel": ["-t", "funnel", "--dim", "3", "-s", "nuts"],  # the NumPy transition
    "gibbs-random-gaussian": ["-t", "gaussian", "--dim", "3", "--rho", "0.9", "-s", "gibbs", "-P", "scan=random"],
    "gibbs-random-potts": ["-t", "potts", "-T", "size=4", "-T", "q=3", "-T", "beta=0.9", "-s", "gibbs",
                           "-P", "scan=random"],
    "gibbs-random-blocks": ["-t", str(Path(__file__).parents[1] / "sample" / "bivariate_gibbs.py"), "-s", "gibbs",
                            "-P", "scan=random"],
    "gibbs-graph": ["-t", str(Path(__file__).parents[1] / "graphs" / "cube.csv"), "-T", "q=3", "-s", "gibbs"],
    "swendsen-wang-graph": ["-t", str(Path(__file__).parents[1] / "graphs" / "cube.csv"), "-T", "q=3",
                            "-s", "swendsen-wang"],
    "hmc-n-steps-banana": ["-t", "banana", "-s", "hmc", "-P", "n-steps=20", "-P", "jitter=0"],
    "inverse-cdf-gamma": ["-t", "gamma", "-T", "shape=3", "-s", "inverse-cdf"],  # the quantile function
    "inverse-cdf-bimodal": ["-t", "bimodal", "--dim", "1", "-s", "inverse-cdf"],  # the numerical inverse
    "exact-box-muller": ["-t", "gaussian", "--dim", "3", "--rho", "0.5", "-s", "exact"],
    "exact-polar": ["-t", "gaussian", "--dim", "3", "--scales", "log", "-s", "exact", "-P", "method=polar"],
    "rejection-envelope": ["-t", str(Path(__file__).parents[1] / "sample" / "envelope.py"), "-s", "rejection"],
    "importance-banana": ["-t", "banana", "-s", "importance"],
    "importance-envelope": ["-t", str(Path(__file__).parents[1] / "sample" / "envelope.py"), "-s", "importance"],
    "elliptical-slice-prior": ["-t", str(Path(__file__).parents[1] / "sample" / "gp_regression.py"),
                               "-s", "elliptical-slice"],
    "hmc-dirichlet": ["-t", "dirichlet", "-T", "counts=4,1,3,1,1", "-T", "eta=1", "-s", "hmc"],
    "mh-weights": ["-t", str(MARKOV / "weights.csv"), "-s", "mh", "-P", f"proposal-matrix={MARKOV / 'proposal.csv'}"],
}

# The samplers of a Bayesian network (NET.bif), given both calls; command lines of ``mcmc sample`` run as SHORT.
NETWORK_CASES: dict[str, list[str]] = {
    "gibbs-earthquake": ["-t", EARTHQUAKE, *BOTH_CALL, "-s", "gibbs"],
    # random scan: a block beside single nodes, and single-site Gibbs
    "gibbs-random-earthquake": ["-t", EARTHQUAKE, *BOTH_CALL, "-s", "gibbs", "-P", "blocks=Burglary+Alarm",
                                "-P", "scan=random"],
    "gibbs-random-single-earthquake": ["-t", EARTHQUAKE, *BOTH_CALL, "-s", "gibbs", "-P", "blocks=single",
                                       "-P", "scan=random"],
    "rejection-earthquake": ["-t", EARTHQUAKE, *BOTH_CALL, "-s", "rejection"],
    "likelihood-weighting-earthquake": ["-t", EARTHQUAKE, *BOTH_CALL, "-s", "likelihood-weighting"],
}

# name -> (sampler, target, target options), run as SHORT: 3 chains, warm-up 40, 30 draws, seed 7.
LIBRARY_CASES: dict[str, tuple[str, str, dict]] = {
    "markov-lecture": ("markov", str(Path(__file__).parents[1] / "markov" / "lecture.csv"), {"start": "Rainy"}),
}

# Twelve sweeps do not converge: --no-check makes the case exit 0 (the checks write no array).
LDA_SHORT = ["--iterations", "12", "--burn-in", "6", "--chains", "2", "--seed", "3", "-k", "5", "--threads", "1",
             "--no-check"]

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
            if name == "__resume__" or name.startswith("resume__"):
                # what a run needs to go on: tested by tests/test_resume.py (a run that stops and
                # goes on writes the bytes of one that never stopped), not frozen here
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
    if name in LIBRARY_CASES:
        from mcmc.core.chains import write_chains
        from mcmc.core.samplers import get_sampler
        from mcmc.core.samplers.driver import run
        from mcmc.core.targets import get_target

        sampler, target, options = LIBRARY_CASES[name]
        result = run(get_sampler(sampler), get_target(target, **options), chains=3, warmup=40, draws=30, seed=7)
        write_chains(result.chains, chains)
        return {f"chains:{array}": digest for array, digest in _digest_npz(chains).items()}
    if name in SAMPLE_CASES or name in NETWORK_CASES:
        argv = ["sample", *{**SAMPLE_CASES, **NETWORK_CASES}[name], *SHORT, "-o", str(chains)]
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


ALL_CASES = [*SAMPLE_CASES, *NETWORK_CASES, *LIBRARY_CASES, *LDA_CASES]
