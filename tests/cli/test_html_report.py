"""The --html report as a pull request's attachment (issue 28.11): lp, how it was made, a pair plot, every failing
parameter in an image of its own, and on a passing run the lowest ESS rather than "the worst"."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from mcmc.core.chains import Chains, write_chains

FIX = Path(__file__).parents[1] / "data" / "fixtures"
EIGHT_NPZ = str(FIX / "centered_eight_posterior.npz")  # 19 divergences; tau, mu and 5 thetas fail


def test_the_page_says_how_it_was_made_and_draws_every_failing_parameter(mcmc, tmp_path: Path) -> None:
    from importlib.metadata import version

    page = tmp_path / "report.html"
    r = mcmc("diagnose", EIGHT_NPZ, "--html", str(page))
    doc = json.loads(mcmc("diagnose", EIGHT_NPZ, "-f", "json").out)
    html = page.read_text()
    made = html[html.index("How this report was made") :]
    assert f"<td>{version('mcmc')}</td>" in made and re.search(r"<td>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00</td>", made)
    assert f"<code>mcmc diagnose {EIGHT_NPZ} --html {page}</code>" in made
    assert hashlib.sha256(Path(EIGHT_NPZ).read_bytes()).hexdigest() in made
    assert "R-hat at most 1.01" in made and "400 (100 per chain)" in made
    assert "<td><code>lp</code></td>" in html  # the log density's row, as in the text and Markdown tables
    images = re.findall(r'<img class="plot" alt="plots of ([^"]+)"', html)
    assert images[: len(doc["failing"]) + 1] == [*doc["failing"], "lp"]  # every failing one, worst first, then lp
    assert "every failing parameter, worst first, the log density lp, then the lowest ESS" in html
    assert 'alt="pair plot"' in html and "<code>tau</code>" in html and "divergent transitions" in html
    assert r.code == 1


def test_a_passing_page_shows_the_lowest_ess_not_the_worst(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    run = tmp_path / "good.npz"
    write_chains(Chains({"v": rng.standard_normal((4, 1000, 12))}), run)
    page = tmp_path / "report.html"
    assert mcmc("diagnose", str(run), "--html", str(page), "--plot-max", "3").code == 0
    plots = page.read_text().split("<h2>Plots</h2>", 1)[1]
    assert "the parameters with the lowest ESS" in plots and "worst" not in plots.split("<figure", 1)[0]
    doc = json.loads(mcmc("diagnose", str(run), "-f", "json").out)
    lowest = sorted(doc["parameters"], key=lambda p: min(p["ess_bulk"], p["ess_tail"]))[:3]
    assert re.findall(r'alt="plots of ([^"]+)"', plots) == [p["name"] for p in lowest]


def test_each_parameter_image_is_its_own_figure_without_the_verdict(tmp_path: Path) -> None:
    from mcmc.cli.commands.diagnose import diagnose
    from mcmc.cli.render.plot import parameter_figures

    report = diagnose([EIGHT_NPZ], plot=True, plot_cap=2, every_failing=True)
    figures = parameter_figures(report)
    assert [name for name, _ in figures] == [*(p.name for p in report.failing()), "lp"]  # beyond --plot-max
    assert all(not any("FAIL" in t.get_text() for t in fig.texts) for _, fig in figures)
