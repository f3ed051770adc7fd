"""The BIF reader against every bnlearn network in tests/data/networks, and malformed inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcmc.core.errors import InputError
from mcmc.core.networks.bif import parse_bif, read_bif
from mcmc.core.networks.evidence import format_evidence, parse_evidence

DATA = Path(__file__).parents[1] / "data" / "networks"
NETWORKS = sorted(DATA.glob("*.bif"))
SIZES = {"alarm": 37, "asia": 8, "cancer": 5, "child": 20, "earthquake": 5, "insurance": 27, "sachs": 11, "survey": 6}


def test_every_network_is_there() -> None:
    assert {p.stem for p in NETWORKS} == set(SIZES)


@pytest.mark.parametrize("path", NETWORKS, ids=lambda p: p.stem)
def test_network_reads(path: Path) -> None:
    net = read_bif(path)
    assert net.n_nodes == SIZES[path.stem]
    text = path.read_text()
    assert text.count("variable ") == text.count("probability (") == net.n_nodes
    for i, (pa, cpt) in enumerate(zip(net.parents, net.cpts, strict=True)):
        assert all(p < i for p in pa)  # topological order
        assert cpt.shape == (*(net.cardinality[p] for p in pa), net.cardinality[i])
        np.testing.assert_allclose(cpt.sum(axis=-1), 1.0, atol=1e-12)
        assert not cpt.flags.writeable


def test_earthquake_tables_as_in_the_file() -> None:
    net = read_bif(DATA / "earthquake.bif")
    assert net.nodes == ("Burglary", "Earthquake", "Alarm", "JohnCalls", "MaryCalls")
    b, e, a = (net.index(n) for n in ("Burglary", "Earthquake", "Alarm"))
    assert net.parents[a] == (b, e)
    assert net.cpts[b][0] == 0.01 and net.cpts[e][0] == 0.02
    # (False, True) 0.29, 0.71: Burglary=False (code 1), Earthquake=True (code 0)
    assert net.cpts[a][1, 0, 0] == 0.29
    assert net.cpts[a][1, 1, 0] == 0.001


GOOD = """
// a comment
network "test net" { property "author" = "me"; }
variable A { type discrete [ 2 ] { a0, a1 }; property "pos = (1, 2)"; }
variable B { type discrete [ 3 ] { b0 b1 b2 }; }   /* no commas between states
   and a comment over lines */
probability ( B | A ) {
  default 0.2, 0.3, 0.5;
  (a1) 0.1, 0.1, 0.8;
  property "x";
}
probability ( A ) { table 0.25 0.75; }
"""


def test_grammar_features() -> None:
    net = parse_bif(GOOD, "t.bif")
    assert net.name == "test net"
    assert net.nodes == ("A", "B")  # topological although declared after
    np.testing.assert_allclose(net.cpts[1], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    np.testing.assert_allclose(net.cpts[0], [0.25, 0.75])


def test_conditional_table_has_child_slowest() -> None:
    text = """network n {}
variable A { type discrete [2] { a0, a1 }; }
variable B { type discrete [2] { b0, b1 }; }
probability ( A ) { table 0.5, 0.5; }
probability ( B | A ) { table 0.1, 0.3, 0.9, 0.7; }
"""
    net = parse_bif(text)
    # as pgmpy reads it: rows of the child, columns the parent states
    np.testing.assert_allclose(net.cpts[1], [[0.1, 0.9], [0.3, 0.7]])


BAD = [
    ("variable A { type discrete [2] { a, b }; }", "line 1: expected 'network'"),
    ("network n {}\nvariable A { type discrete [2] { a, b } }", "line 2: expected ';' after the state names, got '}'"),
    ("network n {}\nvariable A { type discrete [3] { a, b }; }", "line 2: variable 'A' declares 3 states but lists 2"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }", "line 2: variable 'A' has no probability block"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A ) { table 0.5 0.6; }",
     "line 3: probabilities of 'A' sum to 1.1; expected 1"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A ) { table 0.5; }",
     "line 3: expected 2 probabilities, got 1"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A ) { table 0.5, x; }",
     "line 3: expected a probability, got 'x'"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A ) { table -0.5, 1.5; }",
     "line 3: expected a probability in [0, 1], got '-0.5'"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A | C ) { table 0.5, 0.5; }",
     "line 3: variable 'C' is not declared before use"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nvariable B { type discrete [2] { a, b }; }\n"
     "probability ( A ) { table 0.5, 0.5; }\nprobability ( B | A ) { (a) 0.5, 0.5; }",
     "line 5: no probabilities for 'B' given (b) and no default"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nvariable B { type discrete [2] { a, b }; }\n"
     "probability ( A ) { table 0.5, 0.5; }\nprobability ( B | A ) { (c) 0.5, 0.5; }",
     "line 5: 'c' is not a state of 'A' (states: a, b)"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nvariable B { type discrete [2] { a, b }; }\n"
     "probability ( A | B ) { table 0.5, 0.5, 0.5, 0.5; }\nprobability ( B | A ) { table 0.5, 0.5, 0.5, 0.5; }",
     "directed cycle through A, B"),
    ("network n {}\nvariable A { type continuous; }", "line 2: expected 'discrete'"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A ) { table 0.5, 0.5; }\n"
     "probability ( A ) { table 0.5, 0.5; }", "line 4: second probability block for 'A'"),
    ("network n {}\n/* unclosed", "line 2: expected '*/'"),
    ("network n {}\nvariable A { type discrete [2] { a, b }; }\nprobability ( A ) { table 0.5, 0.5; ", "expected"),
    ("network n {}\nbogus", "line 2: expected 'variable' or 'probability', got 'bogus'"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_malformed_input_names_file_and_line(text: str, message: str) -> None:
    with pytest.raises(InputError, match=None) as err:
        parse_bif(text, "bad.bif")
    assert err.value.source == "bad.bif"
    assert message in err.value.message, err.value.message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        read_bif(tmp_path / "none.bif")
    assert err.value.source.endswith("none.bif")


def test_evidence_by_name() -> None:
    net = read_bif(DATA / "earthquake.bif")
    ev = parse_evidence(net, "JohnCalls=True, MaryCalls=False")
    assert ev == {3: 0, 4: 1}
    assert parse_evidence(net, ["JohnCalls=True", "MaryCalls=False"]) == ev
    assert parse_evidence(net, {"MaryCalls": "False", "JohnCalls": "True"}) == ev
    assert format_evidence(net, ev) == "JohnCalls=True,MaryCalls=False"
    assert parse_evidence(net, None) == {} and parse_evidence(net, "") == {}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("Johncalls=True", "unknown node 'Johncalls'; the nodes are: Burglary, Earthquake, Alarm, JohnCalls, MaryCalls"),
        ("JohnCalls=yes", "node 'JohnCalls' has no state 'yes'; its states are: True, False"),
        ("JohnCalls", "evidence 'JohnCalls': expected NODE=STATE"),
        ("JohnCalls=True,JohnCalls=False", "two different states"),
    ],
)
def test_bad_evidence(spec: str, message: str) -> None:
    net = read_bif(DATA / "earthquake.bif")
    with pytest.raises(InputError) as err:
        parse_evidence(net, spec)
    assert message in err.value.message
    assert err.value.source.endswith("earthquake.bif")
