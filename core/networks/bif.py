"""Reader of the Bayesian Interchange Format (BIF 0.15) into a :class:`BayesianNetwork`.

BIF is the text format of JavaBayes (Cozman 1998, "The Interchange Format for
Bayesian Networks"), used by the bnlearn network repository, pgmpy, pyAgrum,
GeNIe and Hugin. The grammar read here (``*`` repetition, ``?`` optional)::

    unit        := network ( variable | probability )*
    network     := "network" NAME "{" property* "}"
    variable    := "variable" NAME "{" ( property | type )* "}"
    type        := "type" "discrete" "[" INTEGER "]" "{" NAME ( ","? NAME )* "}" ";"
    probability := "probability" "(" NAME ( ( "|" | "," ) NAME ( "," NAME )* )? ")"
                   "{" ( property | table | default | row )* "}"
    table       := "table" numbers ";"
    default     := "default" numbers ";"
    row         := "(" NAME ( "," NAME )* ")" numbers ";"
    numbers     := NUMBER ( ","? NUMBER )*
    property    := "property" anything-but-";" ";"

Comments are ``// ...`` to the end of the line and ``/* ... */``. A NAME is
any run of characters other than white space and ``{}[]()|,;`` (bnlearn's
state names include ``<5``, ``0-3_days`` and ``Transp.``), or a double-quoted
string. In ``probability ( X | A, B )`` the first name is the child and the
others its parents (the old form ``( X, A, B )`` means the same).

A ``row`` gives the child's distribution for one combination of parent
states (named, in the order of the parents); ``default`` fills every
combination no row gives; ``table`` gives the whole CPT at once with the
child's state varying slowest and the parents after it in their order, the
last fastest (as pgmpy reads it; for a node without parents it is simply
the distribution). Each distribution must be non-negative and sum to one
within ``1e-3`` (bnlearn rounds to four digits); it is then renormalised.

Every problem raises :class:`~mcmc.core.errors.InputError` naming the file
and the line: ``line 12: expected ';' after the probabilities, got '}'``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from mcmc.core.errors import InputError
from mcmc.core.memory import require_memory
from mcmc.core.networks.network import BayesianNetwork

SUM_TOLERANCE = 1e-3  # bnlearn's tables are rounded to 4 digits; a row off by more is a typo
PUNCTUATION = "{}[]()|,;"

_TOKEN = re.compile(
    r"""
    (?P<newline>\n)
    | (?P<space>[ \t\r\f\v]+)
    | (?P<line_comment>//[^\n]*)
    | (?P<block_comment>/\*.*?\*/)
    | (?P<string>"[^"\n]*")
    | (?P<punct>[{}\[\]()|,;])
    | (?P<word>[^\s{}\[\]()|,;"]+)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "string", "punct", "eof"
    text: str
    line: int


def _tokenize(text: str, source: str | None) -> list[_Token]:
    tokens: list[_Token] = []
    line, pos = 1, 0
    while pos < len(text):
        if text.startswith("/*", pos) and text.find("*/", pos + 2) < 0:
            raise InputError(source, f"line {line}: expected '*/' to close the comment opened here")
        m = _TOKEN.match(text, pos)
        if m is None:  # only a lone '"' gets here
            raise InputError(source, f"line {line}: unexpected character {text[pos]!r}")
        kind = m.lastgroup
        if kind in ("word", "punct"):
            tokens.append(_Token(kind, m.group(), line))
        elif kind == "string":
            tokens.append(_Token("string", m.group()[1:-1], line))
        line += m.group().count("\n")
        pos = m.end()
    tokens.append(_Token("eof", "end of file", line))
    return tokens


class _Parser:
    def __init__(self, text: str, source: str | None) -> None:
        self.source = source
        self.tokens = _tokenize(text, source)
        self.pos = 0
        self.entries = 0  # table entries declared so far (the memory guard)

    # -- token helpers -----------------------------------------------------

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def next(self) -> _Token:
        tok = self.tokens[self.pos]
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def error(self, tok: _Token, what: str) -> InputError:
        got = "end of file" if tok.kind == "eof" else repr(tok.text)
        return InputError(self.source, f"line {tok.line}: expected {what}, got {got}")

    def expect(self, text: str, context: str = "") -> _Token:
        tok = self.next()
        if tok.kind != "punct" and tok.kind != "word" or tok.text != text:
            raise self.error(tok, f"{text!r}{context}")
        return tok

    def accept(self, text: str) -> bool:
        tok = self.peek()
        if tok.kind in ("punct", "word") and tok.text == text:
            self.pos += 1
            return True
        return False

    def name(self, what: str) -> _Token:
        tok = self.next()
        if tok.kind not in ("word", "string"):
            raise self.error(tok, what)
        return tok

    def number(self, what: str = "a probability") -> float:
        tok = self.next()
        try:
            if tok.kind != "word":
                raise ValueError
            value = float(tok.text)
        except ValueError:
            raise self.error(tok, what) from None
        if not math.isfinite(value) or value < 0:
            raise InputError(self.source, f"line {tok.line}: expected a probability in [0, 1], got {tok.text!r}")
        return value

    def numbers(self) -> tuple[list[float], int]:
        line = self.peek().line
        values = [self.number()]
        while True:
            if self.accept(","):
                values.append(self.number())
            elif self.peek().kind == "word" and self.peek().text not in ("table", "default", "property"):
                values.append(self.number("a probability or ';'"))
            else:
                break
        self.expect(";", " after the probabilities")
        return values, line

    def property(self) -> None:
        # property := "property" anything-but-";" ";"  (its content is not used)
        start = self.peek()
        while not self.accept(";"):
            if self.next().kind == "eof":
                raise self.error(self.peek(), f"';' to end the property begun on line {start.line}")

    # -- grammar -----------------------------------------------------------

    def parse(self) -> BayesianNetwork:
        self.expect("network", " at the start of a BIF file")
        net_name = self.name("the network's name").text
        self.expect("{", " after the network's name")
        while not self.accept("}"):
            self.expect("property", " or '}' in the network block")
            self.property()
        variables: dict[str, tuple[str, ...]] = {}
        var_lines: dict[str, int] = {}
        tables: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        while True:
            tok = self.next()
            if tok.kind == "eof":
                break
            if tok.text == "variable":
                name, states = self.variable()
                if name.text in variables:
                    raise InputError(self.source, f"line {name.line}: variable {name.text!r} is declared twice")
                variables[name.text] = states
                var_lines[name.text] = name.line
            elif tok.text == "probability":
                child, parents, table = self.probability(variables)
                if child.text in tables:
                    raise InputError(self.source, f"line {child.line}: second probability block for {child.text!r}")
                tables[child.text] = (parents, table)
            else:
                raise self.error(tok, "'variable' or 'probability'")
        return self.build(net_name, variables, var_lines, tables)

    def variable(self) -> tuple[_Token, tuple[str, ...]]:
        name = self.name("a variable name")
        self.expect("{", f" after 'variable {name.text}'")
        states: tuple[str, ...] | None = None
        while not self.accept("}"):
            tok = self.next()
            if tok.text == "property" and tok.kind == "word":
                self.property()
                continue
            if tok.text != "type" or tok.kind != "word":
                raise self.error(tok, f"'type', 'property' or '}}' in variable {name.text!r}")
            kind = self.next()
            if kind.text != "discrete":
                raise self.error(kind, "'discrete' (only discrete variables are supported)")
            self.expect("[", " after 'discrete'")
            count_tok = self.next()
            if not re.fullmatch(r"\d+", count_tok.text):
                raise self.error(count_tok, "the number of states")
            self.expect("]", " after the number of states")
            self.expect("{", " before the state names")
            names = [self.name("a state name").text]
            while not self.accept("}"):
                self.accept(",")
                names.append(self.name("a state name or '}'").text)
            self.expect(";", " after the state names")
            if len(names) != int(count_tok.text):
                raise InputError(
                    self.source,
                    f"line {count_tok.line}: variable {name.text!r} declares {count_tok.text} states "
                    f"but lists {len(names)}",
                )
            if len(set(names)) != len(names):
                raise InputError(self.source, f"line {count_tok.line}: variable {name.text!r} repeats a state name")
            if not names:
                raise InputError(self.source, f"line {count_tok.line}: variable {name.text!r} has no states")
            states = tuple(names)
        if states is None:
            raise InputError(self.source, f"line {name.line}: expected 'type discrete [...]' in variable {name.text!r}")
        return name, states

    def probability(self, variables: dict[str, tuple[str, ...]]) -> tuple[_Token, tuple[str, ...], np.ndarray]:
        self.expect("(", " after 'probability'")
        child = self.name("the variable name")
        parents: list[_Token] = []
        if self.accept("|") or self.accept(","):
            parents.append(self.name("a parent's name"))
            while self.accept(","):
                parents.append(self.name("a parent's name"))
        self.expect(")", " after the variables of the probability block")
        for tok in (child, *parents):
            if tok.text not in variables:
                raise InputError(self.source, f"line {tok.line}: variable {tok.text!r} is not declared before use")
        names = [p.text for p in parents]
        if len(set(names)) != len(names) or child.text in names:
            raise InputError(self.source, f"line {child.line}: a variable appears twice in probability ( ... )")
        child_states = variables[child.text]
        parent_states = [variables[p] for p in names]
        shape = tuple(len(s) for s in parent_states) + (len(child_states),)
        k = len(child_states)
        # A few parents of many states ask for terabytes from a small file: refused before allocating.
        self.entries += math.prod(shape)
        require_memory(self.entries, 8 * 3, f"line {child.line}: the probability table of {child.text!r} "
                       f"({' x '.join(map(str, shape))} entries), with the tables before it,", self.source)  # fmt: skip
        table = np.full(shape, np.nan)
        default: np.ndarray | None = None
        self.expect("{", " to open the probability block")
        while not self.accept("}"):
            tok = self.peek()
            if tok.kind == "word" and tok.text == "property":
                self.next()
                self.property()
            elif tok.kind == "word" and tok.text == "table":
                self.next()
                values, line = self.numbers()
                if len(values) != table.size:
                    raise InputError(self.source, f"line {line}: expected {table.size} probabilities, got {len(values)}")
                arr = np.array(values).reshape((k, *shape[:-1]))
                table[...] = np.moveaxis(arr, 0, -1)
            elif tok.kind == "word" and tok.text == "default":
                self.next()
                values, line = self.numbers()
                if len(values) != k:
                    raise InputError(self.source, f"line {line}: expected {k} probabilities, got {len(values)}")
                default = self.distribution(values, line)
            elif tok.kind == "punct" and tok.text == "(":
                self.next()
                idx: list[int] = []
                for j, states in enumerate(parent_states):
                    if j:
                        self.expect(",", " between parent states")
                    st = self.name(f"a state of {names[j]!r}")
                    if st.text not in states:
                        raise InputError(
                            self.source,
                            f"line {st.line}: {st.text!r} is not a state of {names[j]!r} (states: {', '.join(states)})",
                        )
                    idx.append(states.index(st.text))
                self.expect(")", f" after the {len(parent_states)} parent states")
                values, line = self.numbers()
                if len(values) != k:
                    raise InputError(self.source, f"line {line}: expected {k} probabilities, got {len(values)}")
                table[tuple(idx)] = self.distribution(values, line)
            else:
                raise self.error(tok, "'table', 'default', '(', 'property' or '}'")
        missing = np.isnan(table[..., 0])
        if missing.any():
            if default is None:
                combo = np.argwhere(missing)[0]
                states = ", ".join(parent_states[j][c] for j, c in enumerate(combo))
                raise InputError(
                    self.source, f"line {child.line}: no probabilities for {child.text!r} given ({states}) and no default"
                )
            table[missing] = default
        # A `table` is checked here, rows as they come.
        sums = table.sum(axis=-1)
        bad = np.abs(sums - 1.0) > SUM_TOLERANCE
        if bad.any():
            raise InputError(
                self.source,
                f"line {child.line}: probabilities of {child.text!r} sum to {sums[bad].flat[0]:g}; expected 1",
            )
        return child, tuple(names), table / sums[..., None]

    def distribution(self, values: list[float], line: int) -> np.ndarray:
        total = sum(values)
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise InputError(self.source, f"line {line}: probabilities sum to {total:g}; expected 1")
        return np.array(values)

    def build(
        self,
        net_name: str,
        variables: dict[str, tuple[str, ...]],
        var_lines: dict[str, int],
        tables: dict[str, tuple[tuple[str, ...], np.ndarray]],
    ) -> BayesianNetwork:
        if not variables:
            raise InputError(self.source, "no variables declared")
        for name in variables:
            if name not in tables:
                raise InputError(self.source, f"line {var_lines[name]}: variable {name!r} has no probability block")
        # Kahn's algorithm, ties broken by declaration order: a stable topological order.
        order: list[str] = []
        placed: set[str] = set()
        remaining = list(variables)
        while remaining:
            ready = [v for v in remaining if all(p in placed for p in tables[v][0])]
            if not ready:
                raise InputError(
                    self.source, f"the network has a directed cycle through {', '.join(sorted(remaining))}"
                )
            for v in ready:
                order.append(v)
                placed.add(v)
            remaining = [v for v in remaining if v not in placed]
        index = {v: i for i, v in enumerate(order)}
        return BayesianNetwork(
            nodes=tuple(order),
            states=tuple(variables[v] for v in order),
            parents=tuple(tuple(index[p] for p in tables[v][0]) for v in order),
            cpts=tuple(tables[v][1] for v in order),
            name=net_name,
            source=self.source,
        )


def parse_bif(text: str, source: str | None = None) -> BayesianNetwork:
    """Parse BIF text into a :class:`BayesianNetwork` (nodes in topological order).

    Parameters
    ----------
    text
        The content of a ``.bif`` file.
    source
        The file name for error messages.

    Raises
    ------
    InputError
        ``source: line N: expected ...`` for any syntax error; also undeclared
        or repeated variables, a state count that disagrees with the list, a
        missing or incomplete table, probabilities that are negative or do not
        sum to one, and a directed cycle.
    """
    return _Parser(text, source).parse()


def read_bif(path: str | os.PathLike[str]) -> BayesianNetwork:
    """Read a ``.bif`` file (UTF-8, with or without a byte-order mark; Latin-1 accepted) into a :class:`BayesianNetwork`.

    Raises
    ------
    InputError
        The file is missing, unreadable, or not valid BIF (see :func:`parse_bif`).
    """
    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except OSError as exc:
        raise InputError(source, (exc.strerror or "cannot read the file").lower()) from None
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark (Windows editors write one) is not the first word
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_bif(text, source)
