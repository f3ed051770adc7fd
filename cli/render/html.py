"""One self-contained HTML page of a diagnose report, for people opening a CI artifact.

The verdict, the checks (failed first) with what to do, the sampler per chain
(the flagged ones beyond a few), a table of every parameter and ``lp`` (worst
first; click a column head to sort, type to filter, tick to show failing
parameters only), the plots -- the pair plot, one image per plotted parameter
(every failing one), the energy plot -- and how the report was made. Nothing
is fetched at view time: the CSS and the few lines of script are inline and
each plot is a PNG in a ``data:`` URI, so the file opens offline, from an
e-mail or a CI artifact store with a strict content policy. Without script the
page still shows everything, worst first; it reads at 400 pixels wide.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any, TextIO

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import TAIL_ESS_LEGEND, chains_shown, ess, estimate, mcse, num, plural, rhat
from mcmc.cli.text import printable

if TYPE_CHECKING:
    from mcmc.diagnostics.report.report import Report

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1400px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.verdict{padding:12px 16px;border-radius:6px;font-weight:600;margin:12px 0;word-wrap:break-word}
.pass{background:#dafbe1;color:#116329;border:1px solid #4ac26b}
.fail{background:#ffebe9;color:#a40e26;border:1px solid #ff8182}
.meta{color:#59636e}
ul.checks{list-style:none;padding:0;margin:0}ul.checks li{margin:3px 0}
.badge{display:inline-block;min-width:3.2em;text-align:center;border-radius:10px;padding:0 6px;font-size:12px;
font-weight:600;margin-right:6px}
.b-pass{background:#dafbe1;color:#116329}.b-fail{background:#cf222e;color:#fff}.b-warn{background:#fff8c5;color:#7d4e00}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid #eaeef2;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
#params th{cursor:pointer;user-select:none;position:sticky;top:0;background:#f6f8fa}
#params th.asc::after{content:" \\25B2"}#params th.desc::after{content:" \\25BC"}
tr.s-rhat td.st,td.bad{color:#cf222e;font-weight:600}tr.s-ess td.st{color:#9a6700;font-weight:600}
tr.s-nan td.st,tr.s-inf td.st{color:#8250df;font-weight:600}tr.s-constant td.st{color:#0969da}
tr.s-ok td.st{color:#1a7f37}
.tools{margin:8px 0;display:flex;gap:16px;align-items:center}
.tools input[type=search]{padding:4px 8px;width:22em;border:1px solid #d0d7de;border-radius:6px}
.scroll{max-height:70vh;overflow:auto;border:1px solid #d0d7de;border-radius:6px}
img.plot{max-width:100%;height:auto;border:1px solid #d0d7de;border-radius:6px}
figure{margin:10px 0}figcaption{color:#59636e;font-size:13px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px;overflow-wrap:anywhere}
h1 code{overflow-wrap:anywhere}.advice{color:#59636e;margin-left:4.2em}
table.made th{text-align:left;vertical-align:top;color:#59636e}table.made td{text-align:left;white-space:normal}
@media (max-width:700px){main{padding:8px 10px 32px}.tools{flex-wrap:wrap}.tools input[type=search]{width:100%}
.advice{margin-left:1em}}
"""

SCRIPT = """
(function () {
  var table = document.getElementById("params");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById("filter");
  var failing = document.getElementById("failing");
  var shown = document.getElementById("shown");
  function apply() {
    var text = filter.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (r) {
      var ok = (!text || r.cells[0].textContent.toLowerCase().indexOf(text) >= 0) &&
               (!failing.checked || r.dataset.failing === "1");
      r.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " parameters shown";
  }
  function key(r, i) {
    var v = r.cells[i].dataset.v;
    if (v === undefined) { return r.cells[i].textContent; }
    return v === "" ? NaN : parseFloat(v);
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener("click", function () {
      var dir = th.classList.contains("asc") ? -1 : 1;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.classList.remove("asc", "desc"); });
      th.classList.add(dir === 1 ? "asc" : "desc");
      rows.sort(function (a, b) {
        var x = key(a, i), y = key(b, i);
        if (typeof x === "number" || typeof y === "number") {
          if (isNaN(x)) { return isNaN(y) ? 0 : 1; }
          if (isNaN(y)) { return -1; }
          return dir * (x - y);
        }
        return dir * String(x).localeCompare(String(y));
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  filter.addEventListener("input", apply);
  failing.addEventListener("change", apply);
  apply();
})();
"""

FAILING = ("rhat", "ess", "nan", "inf")


def _v(value: Any) -> str:
    """A sort key for a numeric cell: the full value, empty when undefined."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return repr(float(value))
    if isinstance(value, float) and math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return ""


def e(text: str) -> str:
    """``text`` in HTML: control characters visible (:func:`mcmc.cli.text.printable`), then HTML-escaped."""
    return escape(printable(text))


def _td(text: str, value: Any, bad: bool = False) -> str:
    return f'<td data-v="{_v(value)}"{" class=bad" if bad else ""}>{e(text)}</td>'


def render(report: Report, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """Write the page of ``report`` to ``out``, with its plots when it carries plot data."""
    images: list[tuple[str, str, bytes]] = []
    if report.plot is not None:
        from mcmc.cli.render import plot  # start-up: matplotlib's renderer only when the report carries plot data

        images = plot.report_images(report)
    out.write(document(report, images, options))


def document(
    report: Report, images: Sequence[tuple[str, str, bytes]] = (), options: RenderOptions = RenderOptions()  # noqa: B008
) -> str:
    """The page of ``report`` as text; ``images`` are its plots as ``(kind, title, PNG)`` (:func:`plot.report_images`).

    Numbers as in every other output: an estimate with the digits its own Monte
    Carlo error supports (``--sig-figs`` overrides), ESS whole and floored.
    """
    sig = options.sig_figs
    src = ", ".join(report.source) or "input"
    verdict = report.verdict()
    parts: list[str] = []
    w = parts.append
    w('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
    w('<meta name="viewport" content="width=device-width, initial-scale=1">')
    w(f"<title>{e(verdict.split(':')[0])}: mcmc diagnose {e(src)}</title><style>{CSS}</style></head><body><main>")
    w(f"<h1>mcmc diagnose: <code>{e(src)}</code></h1>")
    w(f'<p class="meta">{plural(report.n_chains, "chain")} x {plural(report.n_draws, "draw")}, '
      f"{plural(len(report.parameters), 'parameter')}</p>")  # fmt: skip
    w(f'<div id="verdict" class="verdict {"pass" if report.passed else "fail"}">{e(verdict)}</div>')

    w('<h2>Checks</h2><ul class="checks">')
    order = {"error": 0, "warning": 1}
    for c in sorted(report.checks, key=lambda c: (c.passed, order.get(c.severity, 2))):
        kind = "pass" if c.passed else ("fail" if c.severity == "error" else "warn")
        label = {"pass": "pass", "fail": "FAIL", "warn": "warn"}[kind]
        advice = f'<div class="advice">what to do: {e(c.advice)}</div>' if c.advice else ""
        w(f'<li><span class="badge b-{kind}">{label}</span><code>{e(c.name)}</code>: {e(c.message)}{advice}</li>')
    for note in report.notes:
        w(f'<li><span class="badge">note</span>{e(note)}</li>')
    w("</ul>")

    s = report.sampler
    w("<h2>Sampler</h2>")
    w(f'<p class="meta">{s.acceptance.label.capitalize()}: {e(s.acceptance.source)}.')
    if s.treedepth_hits is not None:
        w(f" Tree depth: {s.treedepth_hits} of {s.transitions} transitions at the maximum {s.max_treedepth}.")
    w(f'</p><div class="scroll"><table><thead><tr><th>chain</th><th>{s.acceptance.label}</th>')
    w(("<th>divergences</th>" if s.divergences_per_chain is not None else "")
      + ("<th>E-BFMI</th>" if s.ebfmi is not None else "") + "</tr></thead><tbody>")  # fmt: skip
    low = set(c for check in report.checks if check.name == "ebfmi" for c in check.chains)
    for c in chains_shown(report):
        w(f"<tr><td>{c}</td>{_td(num(s.acceptance.per_chain[c], 3), s.acceptance.per_chain[c])}")
        if s.divergences_per_chain is not None:
            d = s.divergences_per_chain[c]
            w(_td(str(d), d))
        if s.ebfmi is not None:
            w(_td(num(s.ebfmi[c], 3), s.ebfmi[c], c in low))
        w("</tr>")
    hidden = report.n_chains - len(chains_shown(report))
    if hidden:  # many chains (an ensemble's walkers): the range of the rest in one row
        acc = s.acceptance.per_chain
        w(f"<tr><td>{hidden} more</td><td>{num(min(acc), 3)} to {num(max(acc), 3)}</td></tr>")
    w("</tbody></table></div>")

    w("<h2>Parameters</h2>")
    w('<div class="tools"><input id="filter" type="search" placeholder="filter by name" aria-label="filter">'
      '<label><input id="failing" type="checkbox"> failing only</label><span id="shown" class="meta"></span></div>')
    q = report.quantile_labels
    tau = ["tau"] if report.ensemble else []  # an ensemble's walkers: emcee's autocorrelation time
    heads = ["parameter", "mean", "sd", *q, "MCSE mean", "ESS bulk", "ESS tail", *tau, "ESS SSIF", "R-hat", "move",
             "status"]  # fmt: skip
    w('<div class="scroll"><table id="params"><thead><tr>')
    w("".join(f"<th>{e(h)}</th>" for h in heads) + "</tr></thead><tbody>")
    lp = [report.log_density] if report.log_density is not None else []
    ordered, n_failing = report.worst_first(), len(report.failing())
    for p in [*ordered[:n_failing], *lp, *ordered[n_failing:]]:  # lp after the failing ones, as in the tables
        fail = p.status in FAILING and p is not report.log_density
        w(f'<tr class="s-{e(p.status)}" data-failing="{int(fail)}"><td><code>{e(p.name)}</code></td>')
        w(_td(estimate(p.mean, p.mcse_mean, sig), p.mean) + _td(estimate(p.sd, p.mcse_sd, sig), p.sd))
        w("".join(_td(estimate(v, p.quantile_mcse(q), sig), v) for q, v in p.quantiles.items()))
        w(_td(mcse(p.mcse_mean, sig), p.mcse_mean))
        w(_td(ess(p.ess_bulk), p.ess_bulk, p.ess_bulk_low) + _td(ess(p.ess_tail), p.ess_tail, p.ess_tail_low))
        if tau:
            w(_td(num(p.iat_emcee, 3), p.iat_emcee))
        w(_td(ess(p.ess_ssif) + (" (!)" if p.ssif_disagrees else ""), p.ess_ssif))
        w(_td(rhat(p.rhat), p.rhat, p.status == "rhat") + _td(num(p.acceptance, 3), p.acceptance))
        w(f'<td class="st">{e(p.status)}</td></tr>')
    w("</tbody></table></div>")
    w(f'<p class="meta">{e(TAIL_ESS_LEGEND)}.</p>')

    if images:
        _plots(w, report, images)
    if report.provenance is not None:
        _provenance(w, report)
    w(f"<script>{SCRIPT}</script></main></body></html>\n")
    return "".join(parts)


def _img(png: bytes, alt: str) -> str:
    return f'<img class="plot" alt="{e(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _plots(w: Any, report: Report, images: Sequence[tuple[str, str, bytes]]) -> None:
    """The pair plot, one image per plotted parameter (every failing one), the energy plot."""
    data = report.plot
    w("<h2>Plots</h2>")
    for kind, title, png in images:
        if kind == "pair" and data is not None and data.pair is not None:
            pair = data.pair
            worst = "The worst parameter" + (" besides the scale" if pair.y_log else "")
            w(f'<figure>{_img(png, title)}<figcaption>{worst}, <code>{e(pair.x_name)}</code>, against '
              f"<code>{e(pair.y_name)}</code>{' (log scale)' if pair.y_log else ''}, divergent transitions "
              "marked: divergences gathered where a scale is small are the neck of a funnel.</figcaption></figure>")
    rows = [(title, png) for kind, title, png in images if kind == "parameter"]
    if rows and data is not None:
        which = "the parameters with the lowest ESS" if data.lowest_ess else "every failing parameter, worst first"
        lp = ", the log density lp" if report.log_density is not None and "lp" in data.names else ""
        if not data.lowest_ess and len(rows) > len(report.failing()) + bool(lp):
            lp += ", then the lowest ESS"
        left = f"; not drawn: {e(', '.join(data.omitted[:20]))}{' and more' if len(data.omitted) > 20 else ''}" \
            if data.omitted else ""  # fmt: skip
        w(f'<p class="meta">Density per chain, trace (divergences marked), rank plot (99% band) and '
          f"autocorrelation of {which}{lp}{left}.</p>")
    for title, png in rows:
        w(f'<figure id="plot-{e(title)}">{_img(png, "plots of " + title)}</figure>')
    for kind, title, png in images:
        if kind == "energy":
            w(f"<figure>{_img(png, title)}<figcaption>Marginal energy against energy transitions "
              "(Betancourt 2016).</figcaption></figure>")


def _provenance(w: Any, report: Report) -> None:
    """How the report was made: mcmc's version, the date, the command line, the thresholds, the inputs' hashes."""
    p, t = report.provenance, report.thresholds
    assert p is not None
    w("<h2>How this report was made</h2><table class=\"made\"><tbody>")
    w(f"<tr><th>mcmc</th><td>{e(p.version)}</td></tr><tr><th>created</th><td>{e(p.created)}</td></tr>")
    w(f"<tr><th>command</th><td><code>{e(p.command)}</code></td></tr>")
    limits = (f"R-hat at most {t.max_rhat:g}; bulk and tail ESS at least {t.min_ess_text}; at most "
              f"{t.max_divergences} divergent transitions; E-BFMI at least {t.min_ebfmi:g}"
              + ("; warnings fail (strict)" if report.strict else ""))  # fmt: skip
    w(f"<tr><th>thresholds</th><td>{e(limits)}</td></tr>")
    for path, digest in p.inputs:
        shown = f"sha256 {digest}" if digest else "not hashed (standard input or a folder)"
        w(f"<tr><th>input</th><td><code>{e(path)}</code><br><code class=\"hash\">{e(shown)}</code></td></tr>")
    w("</tbody></table>")
