"""NumPyro's NUTS on the same network as ``mcmc sample --target bnn``: the peer process of ``bench/bnn.py``.

    .venv/bin/python bench/bnn_numpyro.py TRAIN.csv TEST.csv OUT.npz [--hidden 16] [--chains 4]
        [--warmup 1000] [--draws 1000] [--seed 0]

The model is :mod:`mcmc.core.targets.bnn` written in NumPyro, term by term:
predictors and outcome standardized with the training means and sds
(``ddof=1``); ``tau_g ~ Gamma(2, 2 / m_g)`` for the groups ``in``,
``hidden_bias``, ``out``, ``direct``, ``out_bias`` and the noise, with prior
mean precisions ``(1, 1, H, 1, 1, 4)``; every weight of group ``g`` is
``N(0, tau_g^-1/2)`` (centred, as ours); ``y_std ~ N(f(x_std), tau_noise^-1/2)``.
NumPyro samples ``tau`` through its positive-support transform, ``log tau``
plus the Jacobian: the same unconstrained space as ours.
``bench/bnn.py --check`` confirms that the two log densities differ by a
constant at random points.

float64 (``enable_x64``) as our sampler; chains one after another on one CPU
device (``chain_method="sequential"``: the machine has 2 cores shared with
other jobs, and ours runs its chains vectorized in one thread). NumPyro's
defaults otherwise: ``init_to_uniform``, target acceptance 0.8, tree depth
10, diagonal mass matrix adapted in warm-up windows.

Writes ``OUT.npz``: the weights and ``sigma_*``, ``noise_sd`` under the names
of our chains file ``(chain, draw, ...)``, ``prediction`` ``(chain, draw, m)``
(the network's output at the test inputs, original scale),
``num_steps`` and ``diverging`` ``(chain, draw)``.
"""

from __future__ import annotations

import argparse

import numpyro

numpyro.enable_x64()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402

GROUPS = ("in", "hidden_bias", "out", "direct", "out_bias", "noise")
PRIOR_SHAPE = 2.0


def prior_mean(hidden: int) -> tuple[float, ...]:
    return (1.0, 1.0, float(hidden), 1.0, 1.0, 4.0)


def network(w_in, b_h, w_out, w_dir, b_out, xs):
    return b_out + xs @ w_dir + jnp.tanh(xs @ w_in + b_h) @ w_out


def model(xs, ys, hidden: int):
    p = xs.shape[1]
    tau = {
        g: numpyro.sample(f"tau_{g}", dist.Gamma(PRIOR_SHAPE, PRIOR_SHAPE / m))
        for g, m in zip(GROUPS, prior_mean(hidden), strict=True)
    }

    def weights(name, g, shape):
        return numpyro.sample(name, dist.Normal(0.0, tau[g] ** -0.5).expand(shape).to_event(len(shape)))

    w_in = weights("W_in", "in", (p, hidden))
    b_h = weights("b_hidden", "hidden_bias", (hidden,))
    w_out = weights("W_out", "out", (hidden,))
    w_dir = weights("W_direct", "direct", (p,))
    b_out = numpyro.sample("b_out", dist.Normal(0.0, tau["out_bias"] ** -0.5))
    numpyro.sample("y", dist.Normal(network(w_in, b_h, w_out, w_dir, b_out, xs), tau["noise"] ** -0.5), obs=ys)


def standardize(train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means and sds ``(p + 1,)`` of the training columns (``ddof=1``, as ours)."""
    return train.mean(axis=0), train.std(axis=0, ddof=1)


def read(path: str) -> np.ndarray:
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    train, test = read(a.train), read(a.test)
    mean, sd = standardize(train)
    xs = jnp.asarray((train[:, :-1] - mean[:-1]) / sd[:-1])
    ys = jnp.asarray((train[:, -1] - mean[-1]) / sd[-1])
    xt = jnp.asarray((test[:, : train.shape[1] - 1] - mean[:-1]) / sd[:-1])

    mcmc = MCMC(
        NUTS(model), num_warmup=a.warmup, num_samples=a.draws, num_chains=a.chains,
        chain_method="sequential", progress_bar=False,
    )  # fmt: skip
    mcmc.run(jax.random.PRNGKey(a.seed), xs, ys, a.hidden, extra_fields=("num_steps", "diverging"))
    s = mcmc.get_samples(group_by_chain=True)
    extra = mcmc.get_extra_fields(group_by_chain=True)
    f = jax.vmap(jax.vmap(network, in_axes=(0, 0, 0, 0, 0, None)), in_axes=(0, 0, 0, 0, 0, None))(
        s["W_in"], s["b_hidden"], s["W_out"], s["W_direct"], s["b_out"], xt
    )
    out = {k: np.asarray(s[k]) for k in ("W_in", "b_hidden", "W_out", "W_direct", "b_out")}
    for g in GROUPS[:-1]:
        out[f"sigma_{g}"] = np.asarray(s[f"tau_{g}"]) ** -0.5
    out["noise_sd"] = np.asarray(s["tau_noise"]) ** -0.5 * sd[-1]
    out["prediction"] = mean[-1] + sd[-1] * np.asarray(f)
    out["num_steps"] = np.asarray(extra["num_steps"])
    out["diverging"] = np.asarray(extra["diverging"])
    np.savez(a.out, **out)


if __name__ == "__main__":
    main()
