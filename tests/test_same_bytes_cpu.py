"""Same seed, same bytes whatever BLAS kernel: the runs that went through BLAS or LAPACK, under four of them.

OpenBLAS picks its kernels for the CPU at run time, and their dot products and
LAPACK results differ in the last bits (order of summation, fused
multiply-adds). The Markov chain's ``lp`` came from LAPACK's eigenvector and
LDA's learned beta from a BLAS dot product, so the stored digests of
``tests/test_same_bytes.py`` held on the Intel machine that made them and not
on an AMD one. Here each case runs in a subprocess under
``OPENBLAS_CORETYPE`` = Zen, Haswell, SkylakeX and Sandybridge (the kernels
OpenBLAS would pick on such a CPU; where the CPU lacks their instructions
OpenBLAS runs others, and that core type is skipped) and every array must
have the same digest under each. A ``@`` back in
:func:`mcmc.core.lda.hyper.optimize_beta`, ``np.vecdot`` back in
:func:`mcmc.core.samplers.leapfrog.row_dot` or the eigenvector back in
:func:`mcmc.core.targets.markov_chain.stationary_law` fails it (tried).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "data" / "same_bytes"
CORETYPES = ("Zen", "Haswell", "SkylakeX", "Sandybridge")
# The cases whose bytes went through BLAS or LAPACK, and a NUTS and an HMC run (row-wise dot products).
CASES = ("markov-lecture", "lda-collapsed-optimize", "lda-collapsed-sparse-optimize", "nuts-funnel", "hmc-funnel")

# Run in the subprocess: the OpenBLAS kernel actually in use, the cases' digests, and those of the row-wise
# dot product and the stationary law on inputs where the kernels' dot products and eigenvectors differ.
SCRIPT = r"""
import ctypes, glob, hashlib, json, os, sys, tempfile, warnings
from pathlib import Path
import numpy as np

def corename():
    for path in glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "*openblas*")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                     "openblas_get_corename"):
            f = getattr(lib, name, None)
            if f is not None:
                f.restype = ctypes.c_char_p
                return f().decode()
    return None

warnings.simplefilter("ignore")
here, out, cases = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
sys.path.insert(0, str(here))
from cases import digests
from mcmc.core.samplers.leapfrog import row_dot
from mcmc.core.targets.markov_chain import communicating_classes, stationary_law

result = {}
with tempfile.TemporaryDirectory() as tmp:
    for name in cases:
        result.update({f"{name} {k}": v for k, v in digests(name, Path(tmp)).items()})
rng = np.random.default_rng(5)
digest = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]
a, b = rng.standard_normal((2, 7, 41))
result["row_dot"] = digest(row_dot(a, b))
p = rng.random((60, 60)) * (rng.random((60, 60)) < 0.3) + np.eye(60, k=1) + np.eye(60, k=-59)
p /= p.sum(axis=1, keepdims=True)
result["stationary_law"] = digest(stationary_law(p, *communicating_classes(p)))
out.write_text(json.dumps({"corename": corename(), "digests": result}))
"""


def _run(coretype: str, tmp: Path) -> dict:
    out = tmp / f"{coretype}.json"
    env = {**os.environ, "OPENBLAS_CORETYPE": coretype}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(HERE), str(out), *CASES], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Every core type's run: ``{"corename": kernel OpenBLAS used (None: not OpenBLAS), "digests": {...}}``."""
    tmp = tmp_path_factory.mktemp("coretypes")
    return {coretype: _run(coretype, tmp) for coretype in CORETYPES}


# Builds without kernels of their own for Zen (numpy's wheels) run the Haswell ones there and name them so.
ALIASES = {"zen": {"zen", "haswell"}}


def _accepted(run: dict, coretype: str) -> bool:
    name = coretype.lower()
    return run["corename"] is not None and run["corename"].lower() in ALIASES.get(name, {name})


@pytest.mark.slow
@pytest.mark.parametrize("coretype", CORETYPES)
def test_same_bytes_under_every_openblas_kernel(runs, coretype) -> None:
    run = runs[coretype]
    if run["corename"] is None:
        pytest.skip("numpy's BLAS is not a bundled OpenBLAS that names its kernel: OPENBLAS_CORETYPE selects nothing")
    if not _accepted(run, coretype):
        pytest.skip(f"OpenBLAS refused {coretype} and ran {run['corename']}: this CPU lacks its instructions")
    reference = next(c for c in CORETYPES if _accepted(runs[c], c))
    expected = runs[reference]["digests"]
    assert {k.split()[0] for k in expected} >= set(CASES)  # every case wrote arrays
    differ = sorted(k for k in expected if run["digests"].get(k) != expected[k])
    assert not differ, f"{coretype} and {reference} wrote different bytes: {differ}"
    assert run["digests"].keys() == expected.keys()
