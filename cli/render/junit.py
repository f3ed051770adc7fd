"""JUnit XML of a diagnose report: the checks and the failing parameters as test cases.

CI systems (GitHub Actions through a test-report action, GitLab's
``artifacts:reports:junit``, Jenkins, Azure Pipelines) show JUnit XML as a
list of passed and failed tests. One ``<testsuite name="mcmc diagnose">``
holds a test case per check (classname ``checks``; a failed error check is a
``<failure>``, a failed warning passes with the warning in ``<system-out>``,
as JUnit has no warning state) and one per parameter that failed R-hat, ESS
or finiteness (classname ``parameters.<variable>``), whose failure message
gives the figures against the thresholds. Everything comes from the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO
from xml.etree import ElementTree as ET

from mcmc.cli.render import RenderOptions
from mcmc.cli.render.common import ess, rhat
from mcmc.cli.text import printable

if TYPE_CHECKING:
    from mcmc.diagnostics.report.parameters import Parameter
    from mcmc.diagnostics.report.report import Report

FAILING = ("rhat", "ess", "nan", "inf")  # statuses that fail the run (constant is a warning)


def _why(report: Report, p: Parameter) -> str:
    t = report.thresholds
    if p.status in ("nan", "inf"):
        return f"non-finite draws ({p.status})"
    parts = []
    if p.status == "rhat":
        parts.append(f"R-hat {rhat(p.rhat)} > {t.max_rhat:g}")
    if p.ess_bulk_low:
        parts.append(f"bulk ESS {ess(p.ess_bulk)} < {t.min_ess:g}")
    if p.ess_tail_low:
        parts.append(f"tail ESS {ess(p.ess_tail)} < {t.min_ess:g}")
    return "; ".join(parts)


def render(report: Report, out: TextIO, options: RenderOptions = RenderOptions()) -> None:  # noqa: B008
    """Write ``report`` as one JUnit ``<testsuites>`` document to ``out``.

    Every name and message goes through :func:`mcmc.cli.text.printable`: XML 1.0
    has no way to hold most control characters, so they are written as
    their escapes (``\\x1b``) and the document always parses.
    """
    x = printable
    suite = ET.Element("testsuite", name="mcmc diagnose")
    failures = 0
    tests = 0
    for c in report.checks:
        case = ET.SubElement(suite, "testcase", classname="checks", name=x(c.name))
        tests += 1
        if not c.passed and c.severity == "error":
            failures += 1
            ET.SubElement(case, "failure", message=x(c.message), type=x(c.name)).text = x(c.message)
        elif not c.passed:
            ET.SubElement(case, "system-out").text = x(f"warning: {c.message}")
        else:
            ET.SubElement(case, "system-out").text = x(c.message)
    for p in report.worst_first():
        if p.status not in FAILING:
            break
        case = ET.SubElement(suite, "testcase", classname=x(f"parameters.{p.variable}"), name=x(p.name))
        tests += 1
        failures += 1
        why = _why(report, p)
        ET.SubElement(case, "failure", message=why, type=p.status).text = why
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    props = ET.Element("properties")
    for name, value in (("source", ", ".join(report.source)), ("verdict", report.verdict()),
                        ("chains", str(report.n_chains)), ("draws", str(report.n_draws))):  # fmt: skip
        ET.SubElement(props, "property", name=name, value=x(value))
    suite.insert(0, props)
    root = ET.Element("testsuites", name="mcmc", tests=str(tests), failures=str(failures), errors="0")
    root.append(suite)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")
