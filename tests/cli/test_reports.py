"""Reports beside the table: --output-json/--output-md/--html/--junit/--plot, GitHub annotations, compare md/plot."""

from __future__ import annotations

import json
import re
import os
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest

from mcmc.core.chains import Chains, write_chains

FIX = Path(__file__).parents[1] / "data" / "fixtures"
EIGHT_NPZ = str(FIX / "centered_eight_posterior.npz")  # fails rhat, ess, divergences, ebfmi; warns ssif


def _outputs(tmp_path: Path) -> dict[str, Path]:
    names = {
        "--output-json": "r.json", "--output-md": "r.md", "--html": "r.html", "--junit": "j.xml", "--plot": "p.svg",
    }  # fmt: skip
    return {opt: tmp_path / name for opt, name in names.items()}


def test_every_output_from_one_run(mcmc, tmp_path: Path) -> None:
    outs = _outputs(tmp_path)
    args = [a for opt, path in outs.items() for a in (opt, str(path))]
    r = mcmc("diagnose", EIGHT_NPZ, *args)
    assert r.code == 1 and "tau" in r.out  # the table still goes to the terminal
    doc = json.loads(outs["--output-json"].read_text())
    assert doc == json.loads(mcmc("diagnose", "-f", "json", EIGHT_NPZ).out)
    assert outs["--output-md"].read_text() == mcmc("diagnose", "-f", "md", EIGHT_NPZ).out
    assert outs["--plot"].read_bytes().lstrip().startswith(b"<?xml") and b"<svg" in outs["--plot"].read_bytes()
    page = outs["--html"].read_text()
    assert 'id="verdict"' in page and doc["verdict"].replace(">", "&gt;").replace("<", "&lt;") in page
    assert "data:image/png;base64," in page
    assert ET.parse(outs["--junit"]).getroot().tag == "testsuites"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]  # atomic: no temporary left


@pytest.mark.parametrize("opt", ["--output-json", "--output-md", "--html", "--junit", "--plot"])
def test_no_output_may_be_the_input_or_another_output(mcmc, tmp_path: Path, opt: str) -> None:
    src = tmp_path / "run.svg" if opt == "--plot" else tmp_path / "run.npz"
    src.write_bytes(Path(EIGHT_NPZ).read_bytes())
    before = src.read_bytes()
    r = mcmc("diagnose", str(src), opt, str(src))
    assert r.code == 2 and "input" in r.stderr and src.read_bytes() == before
    other = "--junit" if opt != "--junit" else "--html"
    same = tmp_path / "same.out.svg"
    r = mcmc("diagnose", EIGHT_NPZ, opt, str(same), other, str(same))
    assert r.code == 2 and "give each its own name" in r.stderr and not same.exists()


def test_junit_has_a_case_per_check_and_per_failing_parameter(mcmc, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    r = mcmc("diagnose", EIGHT_NPZ, "--junit", str(path), "-f", "json")
    doc = json.loads(r.out)
    suite = ET.parse(path).getroot().find("testsuite")
    cases = suite.findall("testcase")
    checks = [c for c in cases if c.get("classname") == "checks"]
    params = [c for c in cases if c.get("classname").startswith("parameters.")]
    assert [c.get("name") for c in checks] == [c["name"] for c in doc["checks"]]
    failing = [p["name"] for p in doc["parameters"] if p["status"] in ("rhat", "ess", "nan", "inf")]
    assert sorted(c.get("name") for c in params) == sorted(failing) and failing
    assert all(c.find("failure") is not None for c in params)
    failed_checks = {c["name"] for c in doc["checks"] if not c["passed"] and c["severity"] == "error"}
    assert {c.get("name") for c in checks if c.find("failure") is not None} == failed_checks
    assert int(suite.get("failures")) == len(failed_checks) + len(failing)
    assert int(suite.get("tests")) == len(cases)
    tau = next(c for c in params if c.get("name") == "tau").find("failure").get("message")
    assert "R-hat 1.028 > 1.01" in tau and "bulk ESS 127 < 400" in tau
    ssif = next(c for c in checks if c.get("name") == "ssif")
    assert ssif.find("failure") is None and ssif.find("system-out").text.startswith("warning:")


def test_github_annotations_only_on_github_actions(mcmc, monkeypatch: pytest.MonkeyPatch) -> None:
    r = mcmc("diagnose", EIGHT_NPZ)
    assert "::error" not in r.out + r.stderr
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    r = mcmc("diagnose", EIGHT_NPZ)
    lines = [line for line in r.out.splitlines() if line.startswith("::")]
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == ["::error"] * 4 + ["::warning"] * 2  # rhat, ess, divergences, ebfmi; lp, ssif
    assert lines[2].startswith("::error title=mcmc diagnose divergences::")
    assert "19 of 2000 (0.95%25) transitions divergent" in lines[2]  # % escaped as the runner expects
    # stdout carrying a document keeps it clean: the annotations go to stderr
    r = mcmc("diagnose", "-f", "json", EIGHT_NPZ)
    json.loads(r.out)
    assert r.stderr.count("::error title=") == 4


def test_github_escapes_the_message() -> None:
    import io

    from mcmc.cli.render import github
    from mcmc.diagnostics.report.check import check

    x = np.random.default_rng(1).standard_normal((4, 100, 1))
    x[0] += 5
    report = check(Chains({"a": x[:, :, 0]}), source=["50%:x,y.npz"])
    out = io.StringIO()
    github.render(report, out)
    line = out.getvalue().splitlines()[0]
    assert line.startswith("::error title=mcmc diagnose rhat::50%25:x,y.npz: R-hat")


def test_markdown_stays_under_60000_characters_worst_first(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 200, 3000))
    x[0, :, 2500] += 3.0  # the one failing parameter, far down the file
    path = tmp_path / "big.npz"
    write_chains(Chains({"w": x}), path)
    r = mcmc("diagnose", "-f", "md", "--min-ess", "100", str(path))
    text = r.out
    assert r.code == 1 and len(text) < 60_000
    rows = [line for line in text.splitlines() if line.startswith("| `w[")]
    assert rows[0].startswith("| `w[2500]`")  # the worst first
    assert "<details>" in text and "</details>" in text and "left out" in text
    small = mcmc("diagnose", "-f", "md", EIGHT_NPZ).out
    assert "<details>" not in small and "left out" not in small


def test_plot_rows_are_capped_worst_first_with_the_verdict_as_title(tmp_path: Path) -> None:
    from mcmc.cli.commands.diagnose import diagnose
    from mcmc.cli.render.plot import figure

    report = diagnose([EIGHT_NPZ], plot=True, plot_cap=3)
    fig = figure(report)
    texts = " ".join(t.get_text() for t in fig.texts)
    assert texts.startswith("FAIL: R-hat > 1.01") and "The 3 worst of 10 parameters and lp; left out: theta[5]" in texts
    assert "and 1 more" in texts
    labels = [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()]
    assert labels == ["tau", "mu", "theta[4]", "lp"]  # R-hat 1.028, 1.025, 1.019; lp after the failing ones
    marks = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() == "|"]
    assert marks and sum(len(m.get_xdata()) for m in marks) == 4 * 19  # 19 divergences on each trace
    assert any(ax.get_title(loc="left").startswith("energy") for ax in fig.axes)


@pytest.mark.parametrize("ext", ["png", "pdf", "svg"])
def test_plot_format_by_extension(mcmc, tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"p.{ext}"
    mcmc("diagnose", EIGHT_NPZ, "--plot", str(path), "--plot-max", "2")
    magic = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}[ext]
    assert path.read_bytes().startswith(magic)


def test_compare_md_and_plot_of_runs(mcmc, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 500, 60)), rng.standard_normal((4, 500, 60))
    b[:, :, 7] += 1.0  # one parameter moved
    for name, x in (("a", a), ("b", b)):
        write_chains(Chains({"v": x}), tmp_path / f"{name}.npz")
    png = tmp_path / "z.png"
    r = mcmc("compare", str(tmp_path / "a.npz"), str(tmp_path / "b.npz"), "-f", "md", "--plot", str(png))
    assert r.code == 1
    rows = [line for line in r.out.splitlines() if line.startswith("| `v[")]
    assert rows[0].startswith("| `v[7]`") and "FAIL" in rows[0] and len(rows) == 60
    assert "<details><summary>40 more parameters</summary>" in r.out
    assert png.read_bytes().startswith(b"\x89PNG")


def test_compare_samplers_md_and_plot(mcmc, tmp_path: Path) -> None:
    from mcmc.cli.commands.compare import compare_samplers
    from mcmc.cli.render.plot import figure

    png = tmp_path / "s.png"
    args = ["-t", "gaussian", "--dim", "3", "-s", "hmc,rwm", "--seed", "1", "--warmup", "200", "--draws", "200",
            "--no-check"]  # rwm's 200 draws do not pass the checks
    r = mcmc("compare", *args, "-f", "md", "--plot", str(png))
    assert r.code == 0 and "| hmc |" in r.out and "| rwm |" in r.out and "ESS/1k grads" in r.out
    assert png.read_bytes().startswith(b"\x89PNG")
    result = compare_samplers("gaussian", ["hmc", "rwm"], target_options={"dim": 3}, seed=1, warmup=200, draws=200)
    fig = figure(result)
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles[:2] == ["ESS per second", "ESS per 1000 gradients"]
    hmc = result.rows[0]
    grads = hmc.n_gradient_evals - hmc.n_gradient_evals_warmup
    assert hmc.ess_per_1k_grads == pytest.approx(1000 * hmc.ess_min / grads)
    assert result.rows[1].ess_per_1k_grads is None  # rwm takes no gradient
    widths = [p.get_width() for p in fig.axes[0].patches]
    assert widths == pytest.approx([r.ess_per_s for r in result.rows])


def test_plain_diagnose_imports_no_matplotlib(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from mcmc.cli.app import main; rc = main(['diagnose', sys.argv[1]]); "
        "print('matplotlib' in sys.modules)"
    )
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    out = subprocess.run([sys.executable, "-c", code, EIGHT_NPZ], capture_output=True, text=True, env=env)
    assert out.stdout.strip().splitlines()[-1] == "False"


SINGULAR_AS_PLURAL = re.compile(r"\b1 (chains|draws|parameters|steps|iterations)\b")


def test_one_of_a_thing_is_singular_everywhere(mcmc, tmp_path: Path) -> None:
    """Issue 28.12: "1 chains", "converged in 1 steps" and "1 parameters" read as English in every output."""
    one = tmp_path / "one.npz"
    write_chains(Chains({"v": np.random.default_rng(1).standard_normal((1, 400))}), one)
    html = tmp_path / "r.html"
    texts = [mcmc("diagnose", str(one), "-f", fmt, "--html", str(html)) for fmt in ("table", "md")]
    texts.append(mcmc("sample", "-t", "gaussian", "--dim", "2", "-c", "1", "--warmup", "50", "--draws", "50",
                      "--no-check", "--seed", "1", "-o", str(tmp_path / "g.npz")))  # fmt: skip
    matrix = tmp_path / "P.csv"
    matrix.write_text("a,b\n0.5,0.5\n0.5,0.5\n")
    texts.append(mcmc("sample", "-t", str(matrix), "-c", "1", "-T", "steps=1", "--warmup", "0", "--draws", "50",
                      "--no-check", "--seed", "1", "-o", str(tmp_path / "m.npz")))  # fmt: skip
    texts.append(mcmc("sample", "-t", "censored-normal", "--mcem", "-c", "1", "--em-iterations", "1", "--em-draws",
                      "20", "--warmup", "10", "--seed", "1", "-o", str(tmp_path / "em.npz")))  # fmt: skip
    shown = "\n".join(r.out + r.stderr for r in texts) + html.read_text()
    assert "converged in 1 step)" in shown and "law after 1 step from" in shown and "(1 chain, " in shown
    assert not SINGULAR_AS_PLURAL.findall(shown), SINGULAR_AS_PLURAL.findall(shown)


def test_compare_md_header_names_a_and_b(mcmc, tmp_path: Path) -> None:
    for name in ("run", "run2"):
        write_chains(Chains({"v": np.random.default_rng(len(name)).standard_normal((2, 300))}), tmp_path / f"{name}.npz")
    r = mcmc("compare", str(tmp_path / "run.npz"), str(tmp_path / "run2.npz"), "-f", "md")
    head = r.out.splitlines()[0]
    assert head.endswith("run.npz` (A) against `" + str(tmp_path / "run2.npz") + "` (B)"), head


def test_piped_output_fits_100_columns_unpadded_with_whole_titles(mcmc, tmp_path: Path, monkeypatch) -> None:
    """Issue 28.6: without a terminal, $COLUMNS or 100 columns, no trailing spaces, titles whole, advice indented."""
    monkeypatch.delenv("COLUMNS", raising=False)
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3)
    deep.mkdir()
    run = deep / "emcee-like-run-of-32-walkers.npz"
    rng = np.random.default_rng(5)
    write_chains(Chains({"v": np.cumsum(rng.standard_normal((32, 300, 2)), axis=1)}), run)  # random walks: fail
    r = mcmc("diagnose", str(run))
    assert r.code == 1
    lines = r.out.splitlines()
    title = f"sampler: {run}, 32 chains x 300 draws"
    assert title in lines  # whole, on one line, however long the file name
    assert max(len(line) for line in lines if line != title) <= 100
    assert not [line for line in lines if line != line.rstrip()]
    advice = next(k for k, line in enumerate(lines) if "what to do:" in line)
    assert lines[advice + 1].startswith("    ") and lines[advice].startswith("    what to do:")
    monkeypatch.setenv("COLUMNS", "130")
    assert max(map(len, mcmc("diagnose", str(run)).out.splitlines())) > 100


def test_best_is_marked_with_a_star_without_colour(mcmc, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    r = mcmc("compare", "-t", "gaussian", "--dim", "2", "-s", "rwm,slice", "--seed", "1", "--draws", "200",
             "--warmup", "200", "--no-check")  # fmt: skip
    assert "Best marked *." in " ".join(r.out.split()) and "Best in green" not in r.out
    assert any(line.rstrip().endswith("*") for line in r.out.splitlines())
    assert not [line for line in r.out.splitlines() if line != line.rstrip()]


def test_tail_ess_convention_is_stated_with_the_arviz_call_that_gives_it(mcmc, tmp_path: Path) -> None:
    """Issue 28.3: tail ESS is the 5%/95% one; arviz_stats.summary's is 11%/89%; the legend names the call."""
    call = 'arviz_stats.ess(data, method="tail", prob=(0.05, 0.95))'
    html = tmp_path / "r.html"
    table = mcmc("diagnose", EIGHT_NPZ, "--html", str(html)).out
    md = mcmc("diagnose", EIGHT_NPZ, "-f", "md").out
    for text in (" ".join(table.split()), md, html.read_text().replace("&quot;", '"')):
        assert "5% and 95% quantiles" in text and "11%/89%" in text and call in text
    root = Path(__file__).parents[2]
    readme = " ".join((root / "README.md").read_text().split())
    assert call in readme and "11 % and 89 %" in readme
    formats = " ".join((root / "docs" / "formats.md").read_text().split())
    assert "reports a larger number" not in formats and call in formats
    # and the call named gives our figure, where ArviZ's default (its ci_prob) gives another
    import arviz_stats
    import xarray as xr

    from mcmc.diagnostics.readers import read_chains
    from mcmc.diagnostics.report.check import check

    chains = read_chains([str(FIX.parent / "diagnose" / "pymc_eight_schools.nc")])
    mu = next(p for p in check(chains).parameters if p.name == "mu")
    da = xr.DataArray(np.asarray(chains.posterior["mu"]), dims=("chain", "draw"))
    assert float(arviz_stats.ess(da, method="tail", prob=(0.05, 0.95))) == pytest.approx(mu.ess_tail, rel=1e-10)
    assert abs(float(arviz_stats.ess(da, method="tail")) - mu.ess_tail) > 1


def test_one_rounding_rule_across_text_markdown_html_and_json(mcmc, tmp_path: Path, monkeypatch) -> None:
    """Issue 28.5: each estimate with the digits of its own MCSE (quantiles by theirs), ESS floored, everywhere."""
    import html as html_lib
    import math
    import re as re_lib

    from mcmc.cli.render.common import estimate

    monkeypatch.setenv("COLUMNS", "300")
    src = str(FIX.parent / "diagnose" / "emcee_backend.h5")  # emcee: a 5% quantile of m far from the mean's digits
    page = tmp_path / "r.html"
    doc = json.loads(mcmc("diagnose", src, "-f", "json").out)
    table = mcmc("diagnose", src, "--wide", "--html", str(page)).out
    md = mcmc("diagnose", src, "-f", "md").out
    cells = re_lib.findall(r"<tr[^>]*><td><code>([^<]*)</code></td>(.*?)</tr>", page.read_text())
    html_rows = {html_lib.unescape(n): [html_lib.unescape(t) for t in re_lib.findall(r"<td[^>]*>([^<]*)</td>", r)]
                 for n, r in cells}  # fmt: skip
    labels = list(doc["parameters"][0]["quantiles"])
    shown_any_quantile_digits = False
    for p in [*doc["parameters"], doc["log_density"]]:
        want = [estimate(p["mean"], p["mcse_mean"]), estimate(p["sd"], p["mcse_sd"])]
        want += [estimate(p["quantiles"][q], p["mcse_quantiles"][q]) for q in labels]
        floor = [str(math.floor(p["ess_bulk"])), str(math.floor(p["ess_tail"]))]
        shown_any_quantile_digits |= any(
            estimate(p["quantiles"][q], p["mcse_quantiles"][q]) != estimate(p["quantiles"][q], p["mcse_mean"])
            for q in labels
        )
        row = next(line.split() for line in table.splitlines() if line.split()[:1] == [p["name"]])
        assert row[1 : 3 + len(labels)] == want and floor[0] in row and floor[1] in row, (p["name"], row, want)
        md_row = next(line for line in md.splitlines() if line.startswith(f"| `{p['name']}`"))
        md_cells = [c.strip().strip("*") for c in md_row.strip("|").split("|")]
        assert md_cells[1 : 3 + len(labels)] == want and floor[0] in md_cells and floor[1] in md_cells
        assert html_rows[p["name"]][: 2 + len(labels)] == want, (p["name"], html_rows[p["name"]])
        assert floor[0] in html_rows[p["name"]] and floor[1] in html_rows[p["name"]]
    assert shown_any_quantile_digits  # the case of the issue: a quantile's own MCSE sets other digits
