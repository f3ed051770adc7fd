"""The --html report in a real browser: headless Chromium loads it offline, runs its script without errors.

Skips only when no Chromium binary exists (``.ci/run`` installs Debian's
``chromium``). The page's script writes "N of N parameters shown" into the
page, so the dumped DOM proves it ran; console errors are read from
Chromium's log on stderr.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

FIX = Path(__file__).parents[1] / "data" / "fixtures"
EIGHT_NPZ = str(FIX / "centered_eight_posterior.npz")
BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium binary on PATH (apt-get install chromium)")


def _chromium(tmp_path: Path, page: Path, *action: str) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr", "--v=0",
    ]  # fmt: skip
    return subprocess.run(
        [BROWSER, *flags, *action, page.as_uri()], capture_output=True, text=True, timeout=120, check=True
    )


def console_errors(log: str) -> list[str]:
    """Lines of Chromium's log that report a page's console error or an uncaught exception."""
    return [
        line for line in log.splitlines()
        if re.search(r"CONSOLE\(\d+\)|Uncaught|SyntaxError|TypeError|ReferenceError", line)
    ]  # fmt: skip


def test_html_report_renders_offline_without_console_errors(mcmc, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    r = mcmc("diagnose", EIGHT_NPZ, "--html", str(page))
    assert r.code == 1
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched at view time
    run = _chromium(tmp_path, page, "--dump-dom")
    assert console_errors(run.stderr) == []
    dom = run.stdout
    verdict = re.search(r'<div id="verdict" class="verdict fail">(.*?)</div>', dom)
    assert verdict and verdict.group(1).startswith("FAIL: R-hat &gt; 1.01")
    assert "11 of 11 parameters shown" in dom  # written by the page's script: it ran to the end
    body = dom[dom.index('<table id="params"') :]
    names = re.findall(r"<tr class=\"s-(\w+)\" data-failing=\"(\d)\"><td><code>([^<]+)</code>", body)
    assert len(names) == 11 and names[0][2] == "tau"  # every parameter and lp, the worst first
    assert names[7][2] == "lp"  # after the 7 failing ones, as in the text and Markdown tables
    assert [f for _, f, _ in names] == sorted((f for _, f, _ in names), reverse=True)  # failing ones on top
    shot = tmp_path / "shot.png"
    _chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1200,900")
    assert shot.read_bytes()[:4] == b"\x89PNG"


def test_the_console_check_sees_a_broken_script(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>")
    assert console_errors(_chromium(tmp_path, page, "--dump-dom").stderr)


PROBE = (
    '<script>window.addEventListener("load", function () {'
    " var wide = [];"
    ' document.querySelectorAll("body *").forEach(function (el) {'
    "  var r = el.getBoundingClientRect();"
    '  if (r.right > window.innerWidth + 1 && !el.closest(".scroll")) { wide.push(el.tagName + "." + el.className); }'
    " });"
    " parent.postMessage(JSON.stringify({inner: window.innerWidth, scroll: document.documentElement.scrollWidth,"
    ' wide: wide.slice(0, 10)}), "*");'
    "});</script>"
)


def _fits(tmp_path: Path, page: Path, width: int) -> dict:
    """How the page lays out ``width`` pixels wide: in an iframe (headless windows are at least 500 wide)."""
    import json

    probe = tmp_path / f"probe{width}.html"
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    outer = tmp_path / f"outer{width}.html"
    outer.write_text(
        '<!DOCTYPE html><html><body style="margin:0"><pre id="probe"></pre>'
        f'<iframe src="{probe.name}" style="width:{width}px;height:900px;border:0"></iframe>'
        '<script>window.addEventListener("message", function (e) {'
        ' document.getElementById("probe").textContent = e.data; });</script></body></html>'
    )
    run = _chromium(tmp_path, outer, "--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom")
    found = re.search(r'<pre id="probe">([^<]*)</pre>', run.stdout)
    assert found and found.group(1), run.stdout[-500:]
    return json.loads(found.group(1).replace("&quot;", '"'))


@pytest.mark.parametrize("width", [1300, 400])
def test_html_report_reads_on_a_desktop_and_on_a_phone(mcmc, tmp_path: Path, width: int) -> None:
    """Issue 28.11: at 1,300 and at 400 pixels (a phone in a PR review) nothing runs off the page."""
    deep = tmp_path / ("a-folder-with-a-long-name-for-a-phone-" * 2)
    deep.mkdir()
    src = deep / "centered-eight-schools-posterior-draws.npz"
    src.write_bytes(Path(EIGHT_NPZ).read_bytes())
    page = tmp_path / "report.html"
    assert mcmc("diagnose", str(src), "--html", str(page)).code == 1
    layout = _fits(tmp_path, page, width)
    assert layout["inner"] == width
    assert layout["wide"] == [] and layout["scroll"] <= width, layout
    shot = tmp_path / f"shot{width}.png"
    _chromium(tmp_path, page, f"--screenshot={shot}", f"--window-size={max(width, 500)},900")
    assert shot.read_bytes()[:4] == b"\x89PNG"
