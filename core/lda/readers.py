"""Reading corpora for `mcmc lda`: LDA-C, UCI bag-of-words and plain text.

Each reader returns a :class:`~mcmc.core.lda.corpus.Corpus`.

* LDA-C (Blei's ``lda-c``): one document per line, ``M id:count id:count ...``
  with 0-based ids, and a vocabulary file of one word per line.
* UCI bag-of-words (``docword.NAME.txt``): lines ``D``, ``W``, ``NNZ``, then
  ``doc word count`` triples with 1-based ids, and ``vocab.NAME.txt``.
* Plain text: a directory of files (one document per file, sorted by path) or
  one file with one document per line; lower-cased, letters only, tokens of at
  least three letters, English stop words removed (the Glasgow Information
  Retrieval Group list, as shipped by scikit-learn), then document-frequency
  pruning. ``keep_all_words`` keeps every run of letters, short words and stop
  words too: a toy corpus such as ``a b a c`` is all short words.

Every file is read through one function that decompresses gzip, bzip2 and xz
transparently (told by the magic bytes, whatever the name: ``corpus.ldac.gz``,
``docword.nips.txt.gz`` as UCI distributes it) and refuses binary content (a
NUL byte, or mostly undecodable UTF-8, in the first 64 KiB: an ``.npz``, an
executable) with one line naming the file, instead of fitting topics to bytes.

The numeric formats are parsed by a vectorized scan over the raw bytes (no
Python loop per token or per line), so the 2.2 M-token 20 Newsgroups corpus
loads in well under a second. When the scan finds a problem the offending line
is re-read on its own to say exactly what is wrong:
``InputError(path, "line 12: word id 5000 is beyond the vocabulary ...")``.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcmc.core.errors import InputError, UsageError
from mcmc.core.lda.corpus import Corpus, filter_vocabulary
from mcmc.core.memory import require_memory

FORMATS = ("ldac", "uci", "text")

# The Glasgow Information Retrieval Group stop list
# (http://ir.dcs.gla.ac.uk/resources/linguistic_utils/stop_words), the list
# scikit-learn ships as ENGLISH_STOP_WORDS. Entries shorter than three letters
# are kept for completeness although the tokenizer never produces them.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amount an and another any anyhow anyone anything anyway
    anywhere are around as at back be became because become becomes becoming been before
    beforehand behind being below beside besides between beyond bill both bottom but by call
    can cannot cant co con could couldnt cry de describe detail do done down due during each
    eg eight either eleven else elsewhere empty enough etc even ever every everyone everything
    everywhere except few fifteen fifty fill find fire first five for former formerly forty
    found four from front full further get give go had has hasnt have he hence her here
    hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if
    in inc indeed interest into is it its itself keep last latter latterly least less ltd made
    many may me meanwhile might mill mine more moreover most mostly move much must my myself
    name namely neither never nevertheless next nine no nobody none noone nor not nothing now
    nowhere of off often on once one only onto or other others otherwise our ours ourselves
    out over own part per perhaps please put rather re same see seem seemed seeming seems
    serious several she should show side since sincere six sixty so some somehow someone
    something sometime sometimes somewhere still such system take ten than that the their them
    themselves then thence there thereafter thereby therefore therein thereupon these they
    thick thin third this those though three through throughout thru thus to together too top
    toward towards twelve twenty two un under until up upon us very via was we well were what
    whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
    whether which while whither who whoever whole whom whose why will with within without
    would yet you your yours yourself yourselves
    """.split()
)

# Compressed files by magic bytes, and the extensions they are usually given.
_COMPRESSION = ((b"\x1f\x8b", "gzip", gzip), (b"BZh", "bzip2", bz2), (b"\xfd7zXZ\x00", "xz", lzma))
_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
_SNIFF_BYTES = 1 << 16  # the "first block" judged for binary content
# Undecodable share of the first block beyond which a file is binary: Latin-1
# text (20 Newsgroups has some) stays below a few percent and is read with
# replacement characters as before; compressed or machine data is far above.
_BINARY_SHARE = 0.1
_KNOWN_BINARY = (
    (b"PK\x03\x04", "a zip archive (an .npz?)"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x7fELF", "an executable"),
    (b"\x89HDF", "an HDF5/netCDF file"),
)

_TOKEN = re.compile(r"[^\W\d_]{3,}")  # maximal runs of letters (any script), >= 3 long
_ANY_TOKEN = re.compile(r"[^\W\d_]+")  # every maximal run of letters (keep_all_words)
_MAX_DIGITS = 18  # every integer up to 10**18 - 1 fits int64
_POW10 = 10 ** np.arange(_MAX_DIGITS + 1, dtype=np.int64)
_STRAY, _DIGIT, _NEWLINE, _COLON, _SPACE = range(5)
_BYTE_CLASS = np.full(256, _STRAY, dtype=np.uint8)
_BYTE_CLASS[48:58] = _DIGIT
_BYTE_CLASS[10] = _NEWLINE
_BYTE_CLASS[58] = _COLON
_BYTE_CLASS[[9, 11, 12, 13, 32]] = _SPACE  # tab, VT, FF, CR, space


# -- format detection and vocabulary ------------------------------------------


def detect_format(path: str | os.PathLike[str]) -> str:
    """Guess ``"ldac"``, ``"uci"`` or ``"text"`` from the path and the first lines.

    A directory is text; ``*.ldac`` is LDA-C; ``docword.*`` is UCI. Otherwise the
    first non-blank line decides: ``M id:count ...`` is LDA-C, a lone integer
    followed by two more lone integers is UCI, anything else is text.
    """
    p = Path(path)
    if p.is_dir():
        return "text"
    if not p.exists():
        raise InputError(str(path), "no such file or directory")
    name = _plain_name(p).lower()
    if name.endswith((".ldac", ".lda-c", ".lda_c")):
        return "ldac"
    if name.startswith("docword."):
        return "uci"
    head = _read_bytes(p, limit=_SNIFF_BYTES)
    lines = [ln.strip() for ln in head.splitlines() if ln.strip()][:4]
    if not lines:
        return "text"
    if re.fullmatch(rb"\d+(\s+\d+:\d+)*", lines[0]) and (len(lines) == 1 or b":" in b"".join(lines)):
        return "ldac"
    if len(lines) >= 3 and all(re.fullmatch(rb"\d+", ln) for ln in lines[:3]):
        return "uci"
    return "text"


def default_vocab_path(path: str | os.PathLike[str], fmt: str) -> Path | None:
    """The vocabulary file beside a corpus, or ``None`` when none of the usual names exists.

    LDA-C ``X.ldac``: ``X.vocab.txt``, ``X.vocab``, ``X.ldac.vocab.txt``,
    ``X.ldac.vocab``, then ``vocab.txt``. UCI ``docword.X.txt``: ``vocab.X.txt``.
    """
    p = Path(path)
    p = p.with_name(_plain_name(p))  # docword.nips.txt.gz has vocab.nips.txt beside it
    if fmt == "uci":
        name = p.name
        stem = name[len("docword.") :] if name.lower().startswith("docword.") else name
        candidates = [p.with_name("vocab." + stem), p.with_name("vocab.txt")]
    else:
        candidates = [
            p.with_name(p.stem + ".vocab.txt"),
            p.with_name(p.stem + ".vocab"),
            p.with_name(p.name + ".vocab.txt"),
            p.with_name(p.name + ".vocab"),
            p.with_name("vocab.txt"),
        ]
    for c in candidates:
        if c.is_file():
            return c
    return None


def read_vocab(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """One word per line (surrounding white space stripped; trailing blank lines ignored)."""
    text = _read_bytes(path).decode("utf-8-sig", errors="replace")  # a byte-order mark is no part of a word
    words = [w.strip() for w in text.splitlines()]
    while words and not words[-1]:
        words.pop()
    if not words:
        raise InputError(str(path), "empty vocabulary file")
    for i, w in enumerate(words):
        if not w:
            raise InputError(str(path), f"line {i + 1}: empty word")
    return tuple(words)


def _plain_name(path: Path) -> str:
    """The file name without a compression suffix: ``corpus.ldac.gz -> corpus.ldac``."""
    name = path.name
    for suffix in _COMPRESSED_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The content of a text file, decompressed if it is gzip, bzip2 or xz.

    ``limit`` reads at most that many (decompressed) bytes. Raises
    :class:`InputError` naming the file for an unreadable, corrupt or binary
    file, or one that would decompress beyond the memory guard.
    """
    source = str(path)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
            fh.seek(0)
            codec = next(((kind, mod) for m, kind, mod in _COMPRESSION if magic.startswith(m)), None)
            if codec is None:
                data = fh.read() if limit is None else fh.read(limit)
            else:
                data = _decompress(fh, codec, source, limit)
    except IsADirectoryError:
        raise InputError(source, "is a directory; expected a file") from None
    except OSError as exc:
        raise InputError(source, exc.strerror or str(exc)) from None
    _refuse_binary(data, source)
    return data


def _decompress(fh: Any, codec: tuple[str, Any], source: str, limit: int | None) -> bytes:
    kind, module = codec
    chunks: list[bytes] = []
    size = 0
    try:
        with module.open(fh, "rb") as stream:
            while limit is None or size < limit:
                chunk = stream.read(1 << 22 if limit is None else min(1 << 22, limit - size))
                if not chunk:
                    break
                size += len(chunk)
                # A small file can decompress to terabytes: stop at the memory guard.
                require_memory(size, 1, f"decompressing {kind} data", source)
                chunks.append(chunk)
    except (EOFError, OSError, ValueError, lzma.LZMAError) as exc:
        raise InputError(source, f"corrupt or truncated {kind} file ({exc})") from None
    return b"".join(chunks)


def _refuse_binary(data: bytes, source: str) -> None:
    """Raise when the first block of ``data`` is not text (see ``_BINARY_SHARE``)."""
    block = data[:_SNIFF_BYTES]
    what = next((name for magic, name in _KNOWN_BINARY if block.startswith(magic)), None)
    if what is None and b"\x00" in block:
        what = "binary data (NUL bytes)"
    if what is None:
        try:
            block.decode("utf-8")
            return
        except UnicodeDecodeError as exc:
            if exc.start >= len(block) - 3:  # a character cut at the end of the block
                return
        undecodable = block.decode("utf-8", errors="replace").count("\ufffd")
        if undecodable <= _BINARY_SHARE * len(block):
            return
        what = "binary data (not UTF-8 text)"
    raise InputError(source, f"is {what}, not a text corpus (compressed corpora are read if gzip, bzip2 or xz)")


# -- the vectorized integer scanner --------------------------------------------


@dataclass
class _Scan:
    values: np.ndarray  # int64 (T,): every maximal run of ASCII digits
    line: np.ndarray  # int64 (T,): 0-based line of each number
    after_colon: np.ndarray  # bool (T,)
    before_colon: np.ndarray  # bool (T,)
    bad_lines: np.ndarray  # int64: lines with a stray byte, a bad colon or an over-long number
    n_lines: int


def _scan_integers(data: bytes) -> _Scan:
    """Split ``data`` into unsigned integers, ``:`` and white space, fully vectorized."""
    buf = np.frombuffer(data + b"\n", dtype=np.uint8)
    cls = _BYTE_CLASS[buf]
    is_digit = cls == _DIGIT
    nl_pos = np.flatnonzero(cls == _NEWLINE)

    def line_of(pos: np.ndarray) -> np.ndarray:
        return np.searchsorted(nl_pos, pos, side="left")

    edges = np.diff(is_digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)  # exclusive; always < len(buf) because buf ends in "\n"
    lengths = ends - starts
    colon_pos = np.flatnonzero(cls == _COLON)
    colon_ok = (colon_pos > 0) & is_digit[np.maximum(colon_pos - 1, 0)] & is_digit[colon_pos + 1]
    stray = np.flatnonzero(cls == _STRAY)
    long_runs = starts[lengths > _MAX_DIGITS]
    bad = np.concatenate([line_of(stray[:1]), line_of(colon_pos[~colon_ok][:1]), line_of(long_runs[:1])])
    values = np.zeros(0, dtype=np.int64)
    if starts.size and stray.size == 0 and long_runs.size == 0:
        # Only digits, colons and white space: NumPy's C parser reads the runs in order.
        values = np.fromstring(data.replace(b":", b" "), dtype=np.int64, sep=" ")
    if values.size != starts.size:  # the always-defined way, for input about to be rejected
        digit_pos = np.flatnonzero(is_digit)
        exponent = np.minimum(np.repeat(ends, lengths) - 1 - digit_pos, _MAX_DIGITS)
        terms = (buf[digit_pos] - 48).astype(np.int64) * _POW10[exponent]
        first = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        values = np.add.reduceat(terms, first) if starts.size else np.zeros(0, dtype=np.int64)
    after = buf[ends] == 58
    before = np.zeros(starts.size, dtype=bool)
    before[starts > 0] = buf[starts[starts > 0] - 1] == 58
    return _Scan(values, line_of(starts), after, before, bad.astype(np.int64), int(nl_pos.size))


def _first_line(text_lines: list[bytes], n: int) -> str:
    return text_lines[n].decode("utf-8", errors="replace").strip()


# -- LDA-C ----------------------------------------------------------------------


def _ldac_line_problem(line: str, vocab_size: int, vocab_source: str) -> str | None:
    """What is wrong with one LDA-C line, in words (``None`` when nothing is)."""
    fields = line.split()
    if not fields:
        return None
    if not re.fullmatch(r"[0-9]+", fields[0]):
        return f"expected the number of distinct words M first, found {fields[0]!r}"
    m = int(fields[0])
    pairs = fields[1:]
    for pair in pairs:
        parts = pair.split(":")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            return f"malformed pair {pair!r} (expected id:count)"
        wid, count = parts
        if not re.fullmatch(r"[0-9]+", wid):
            return f"word id {wid!r} is not a non-negative integer"
        if not re.fullmatch(r"[0-9]+", count) or int(count) == 0:
            return f"count {count!r} in {pair!r} is not a positive integer"
        if len(wid) > _MAX_DIGITS or int(wid) >= vocab_size:
            return f"word id {wid} is beyond the vocabulary ({vocab_size} words in {vocab_source})"
        if len(count) > _MAX_DIGITS:
            return f"count {count} is too large"
    if m != len(pairs):
        return f"M = {m} but the line has {len(pairs)} id:count pairs"
    return None


#: The vocabulary LDA-C and UCI ids fall back on without a vocabulary file (a saved model's), and how
#: messages name it.
VocabWords = Sequence[str] | None
KNOWN_LABEL = "the model's vocabulary"


def read_ldac(
    path: str | os.PathLike[str], vocab: str | os.PathLike[str] | None = None, known: VocabWords = None
) -> Corpus:
    """Read an LDA-C corpus (``M id:count ...`` per line, 0-based ids) and its vocabulary.

    Blank lines are skipped (line numbers in messages still count them); a line
    ``0`` is an empty document. ``vocab`` defaults to :func:`default_vocab_path`,
    then to ``known`` (a saved model's vocabulary: the ids are the model's).
    """
    source = str(path)
    vocab_path = Path(vocab) if vocab is not None else default_vocab_path(path, "ldac")
    data = _read_bytes(path)
    if vocab_path is None and known is None:
        p = Path(path)
        raise InputError(
            source, f"no vocabulary file found (looked for {p.stem}.vocab.txt, {p.stem}.vocab); pass --vocab"
        )
    words_list = read_vocab(vocab_path) if vocab_path is not None else list(known)  # type: ignore[arg-type]
    v = len(words_list)
    lengths_parts: list[np.ndarray] = []
    words_parts: list[np.ndarray] = []
    label = str(vocab_path) if vocab_path is not None else KNOWN_LABEL
    for first_line, block in _line_blocks(data, LDAC_BLOCK_BYTES):
        lengths, words = _parse_ldac_block(block, first_line, v, source, label)
        lengths_parts.append(lengths)
        words_parts.append(words)
    lengths = np.concatenate(lengths_parts) if lengths_parts else np.zeros(0, dtype=np.int64)
    if lengths.size == 0 or lengths.sum() == 0:
        raise InputError(source, "empty corpus: no document has any word")
    words = np.concatenate(words_parts)
    return Corpus(np.concatenate([[0], np.cumsum(lengths)]), words, words_list)


#: LDA-C is parsed in blocks of whole lines of about this many bytes: the vectorized
#: parse needs ~20 bytes of temporaries per byte of text, so a whole 10 MB file
#: (20 Newsgroups) would peak at 200 MB for a corpus that ends as 10 MB of word ids.
LDAC_BLOCK_BYTES = 1 << 18


def _line_blocks(data: bytes, size: int) -> Iterator[tuple[int, bytes]]:
    """``(number of the block's first line, block)``: ``data`` cut after a newline every ``size`` bytes or so."""
    start, line = 0, 0
    while start < len(data):
        cut = data.find(b"\n", min(start + size, len(data)) - 1)
        stop = len(data) if cut < 0 else cut + 1
        block = data[start:stop]
        yield line, block
        line += block.count(b"\n")
        start = stop


def _parse_ldac_block(data: bytes, first_line: int, v: int, source: str, vocab_source: str) -> tuple[np.ndarray,
                                                                                                         np.ndarray]:
    """Document lengths (n_docs,) and word ids int32 (n_tokens,) of whole LDA-C lines; errors name the file's line."""
    scan = _scan_integers(data)
    t = scan.values.size
    tok = np.arange(t)
    new_line = np.ones(t, dtype=bool)
    new_line[1:] = scan.line[1:] != scan.line[:-1]
    line_first = np.flatnonzero(new_line)
    rank = tok - np.repeat(line_first, np.diff(np.append(line_first, t)))
    is_id = scan.after_colon & ~scan.before_colon
    is_count = scan.before_colon & ~scan.after_colon
    plain = ~scan.after_colon & ~scan.before_colon
    expected_ok = np.where(rank == 0, plain, np.where(rank % 2 == 1, is_id, is_count))
    per_line = np.diff(np.append(line_first, t))
    m_values = scan.values[line_first]
    bad_m = (per_line - 1) != 2 * m_values
    id_vals = scan.values[is_id & (rank > 0)]
    count_vals = scan.values[is_count & (rank > 0)]
    bad = [scan.bad_lines, scan.line[~expected_ok][:1], scan.line[line_first][bad_m][:1]]
    if expected_ok.all() and not bad_m.any():
        # Structure is sound, so ids and counts alternate and line up one to one.
        id_line = scan.line[rank % 2 == 1]
        bad += [id_line[id_vals >= v][:1], id_line[count_vals == 0][:1]]
    bad_all = np.concatenate(bad)
    if bad_all.size:
        n = int(bad_all.min())
        lines = data.split(b"\n")
        problem = _ldac_line_problem(_first_line(lines, n), v, vocab_source)
        raise InputError(source, f"line {first_line + n + 1}: {problem or 'malformed line'}")
    n_docs = line_first.size
    _require_tokens(count_vals, scan.line[is_count & (rank > 0)] + first_line, source)
    pair_doc = np.repeat(np.arange(n_docs), (per_line - 1) // 2)
    lengths = np.bincount(pair_doc, weights=count_vals, minlength=n_docs).astype(np.int64)
    return lengths, np.repeat(id_vals, count_vals).astype(np.int32)


def _require_tokens(counts: np.ndarray, lines: np.ndarray, source: str) -> None:
    """Refuse counts that add up to more tokens than memory holds, naming the largest."""
    if counts.size == 0:
        return
    total = float(counts.sum(dtype=np.float64))  # float: int64 would wrap on hostile counts
    i = int(np.argmax(counts))
    what = f"{total:.0f} tokens (line {int(lines[i]) + 1} has a count of {int(counts[i])})"
    # each token is an int64 word id while expanding, then int32 ids and topics per chain
    require_memory(total, 16, what, source)


# -- UCI bag of words -------------------------------------------------------------


def read_uci(
    path: str | os.PathLike[str], vocab: str | os.PathLike[str] | None = None, known: VocabWords = None
) -> Corpus:
    """Read a UCI ``docword`` file (``D``, ``W``, ``NNZ``, then 1-based ``doc word count``).

    Documents without any triple are empty documents; triples need not be sorted.
    ``vocab`` defaults to ``vocab.NAME.txt`` beside ``docword.NAME.txt``, then to
    ``known`` (a saved model's vocabulary), and must have exactly ``W`` words.
    """
    source = str(path)
    data = _read_bytes(path)
    vocab_path = Path(vocab) if vocab is not None else default_vocab_path(path, "uci")
    if vocab_path is None and known is None:
        raise InputError(source, "no vocabulary file found (looked for vocab.NAME.txt); pass --vocab")
    words_list = read_vocab(vocab_path) if vocab_path is not None else list(known)  # type: ignore[arg-type]
    scan = _scan_integers(data)
    lines = data.split(b"\n")
    if scan.bad_lines.size or scan.after_colon.any():
        n = int(np.concatenate([scan.bad_lines, scan.line[scan.after_colon][:1]]).min())
        raise InputError(source, f"line {n + 1}: malformed line {_first_line(lines, n)!r} (expected integers)")
    t = scan.values.size
    new_line = np.ones(t, dtype=bool)
    new_line[1:] = scan.line[1:] != scan.line[:-1]
    line_first = np.flatnonzero(new_line)
    per_line = np.diff(np.append(line_first, t))
    if line_first.size < 3 or (per_line[:3] != 1).any():
        n = int(scan.line[line_first[:3]][per_line[:3] != 1][0]) if line_first.size else 0
        raise InputError(source, f"line {n + 1}: the header must be three lines D, W and NNZ, one integer each")
    n_docs, n_words, nnz = (int(x) for x in scan.values[:3])
    header_lines = scan.line[:3]
    # D sizes the per-document arrays (empty documents are allowed, so the file does not bound it).
    require_memory(n_docs, 8 * 3, f"line {header_lines[0] + 1}: D = {n_docs} documents", source)
    if nnz > len(data) // 6:  # "1 1 1\n" is the shortest triple
        raise InputError(
            source, f"line {header_lines[2] + 1}: NNZ = {nnz} triples cannot fit in a file of {len(data)} bytes"
        )
    if (per_line[3:] != 3).any():
        n = int(scan.line[line_first[3:][per_line[3:] != 3][0]])
        raise InputError(source, f"line {n + 1}: expected 'doc word count', found {_first_line(lines, n)!r}")
    if n_words != len(words_list):
        raise InputError(
            source, f"line {header_lines[1] + 1}: W = {n_words} but {vocab_path or KNOWN_LABEL} has {len(words_list)} words"
        )
    triples = scan.values[3:].reshape(-1, 3)
    triple_line = scan.line[3::3][: triples.shape[0]] if triples.size else np.zeros(0, dtype=np.int64)
    checks = (
        ((triples[:, 0] < 1) | (triples[:, 0] > n_docs), f"document id out of range 1..{n_docs} (D)"),
        ((triples[:, 1] < 1) | (triples[:, 1] > n_words), f"word id out of range 1..{n_words} (the vocabulary)"),
        (triples[:, 2] < 1, "count is not a positive integer"),
    )
    first_bad = [(int(triple_line[np.argmax(mask)]), msg) for mask, msg in checks if mask.any()]
    if first_bad:
        n, msg = min(first_bad)
        raise InputError(source, f"line {n + 1}: {msg} in {_first_line(lines, n)!r}")
    if triples.shape[0] != nnz:
        raise InputError(source, f"line {header_lines[2] + 1}: NNZ = {nnz} but the file has {triples.shape[0]} triples")
    _require_tokens(triples[:, 2], triple_line, source)
    order = np.argsort(triples[:, 0], kind="stable")
    triples = triples[order]
    lengths = np.bincount(triples[:, 0] - 1, weights=triples[:, 2], minlength=n_docs).astype(np.int64)
    if n_docs == 0 or lengths.sum() == 0:
        raise InputError(source, "empty corpus: no document has any word")
    words = np.repeat(triples[:, 1] - 1, triples[:, 2]).astype(np.int32)
    return Corpus(np.concatenate([[0], np.cumsum(lengths)]), words, words_list)


# -- plain text --------------------------------------------------------------------


def tokenize(text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS, *, keep_all_words: bool = False) -> list[str]:
    """Lower-case, keep maximal runs of letters of length >= 3, drop ``stop_words``.

    With ``keep_all_words`` every maximal run of letters is a token, whatever
    its length, and no stop word is dropped.
    """
    if keep_all_words:
        return _ANY_TOKEN.findall(text.lower())
    return [t for t in _TOKEN.findall(text.lower()) if t not in stop_words]


def read_text(
    path: str | os.PathLike[str],
    *,
    min_df: float = 1,
    max_df: float = 1.0,
    stop_words: frozenset[str] = ENGLISH_STOP_WORDS,
    keep_all_words: bool = False,
) -> Corpus:
    """Documents from a directory (one per file, recursively, sorted) or a file (one per line).

    Hidden files are skipped. Text is decoded as UTF-8 with undecodable bytes
    replaced. The vocabulary is sorted; ``min_df``/``max_df`` prune it as in
    :func:`filter_vocabulary`. Empty documents are kept (document ``d`` is
    file ``d`` or line ``d``). ``keep_all_words``: :func:`tokenize` keeps
    short words and stop words.
    """
    source = str(path)
    p = Path(path)
    if p.is_dir():
        files = sorted(
            f for f in p.rglob("*") if f.is_file() and not any(s.startswith(".") for s in f.relative_to(p).parts)
        )
        if not files:
            raise InputError(source, "empty corpus: the directory has no files")
        docs = [tokenize(_read_bytes(f).decode("utf-8", errors="replace"), stop_words, keep_all_words=keep_all_words)
                for f in files]
    else:
        lines = _read_bytes(p).decode("utf-8", errors="replace").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()  # trailing blank lines are not documents
        docs = [tokenize(line, stop_words, keep_all_words=keep_all_words) for line in lines]
    index: dict[str, int] = {}
    ids = [[index.setdefault(t, len(index)) for t in doc] for doc in docs]
    if not index:
        if keep_all_words:
            raise InputError(source, "empty corpus: no word (a run of letters) in any document")
        raise InputError(source, "empty corpus: no word of three or more letters outside the stop list "
                         "(--keep-all-words keeps short words and stop words)")
    lengths = np.array([len(d) for d in ids], dtype=np.int64)
    flat = np.fromiter((i for d in ids for i in d), dtype=np.int64, count=int(lengths.sum()))
    # Sorted vocabulary: ids follow alphabetical order so outputs are easy to scan.
    first_seen = np.array(list(index), dtype=object)
    order = np.argsort(first_seen.astype(str), kind="stable")
    remap = np.empty(order.size, dtype=np.int64)
    remap[order] = np.arange(order.size)
    corpus = Corpus(np.concatenate([[0], np.cumsum(lengths)]), remap[flat], tuple(first_seen[order].tolist()))
    corpus = filter_vocabulary(corpus, min_df=min_df, max_df=max_df, source=source)
    return corpus


# -- the one entry point ------------------------------------------------------------


def load_corpus(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    vocab: str | os.PathLike[str] | None = None,
    min_df: float | None = None,
    max_df: float | None = None,
    keep_all_words: bool = False,
    known: VocabWords = None,
) -> Corpus:
    """Read a corpus in any supported format (``fmt=None`` detects it).

    For LDA-C and UCI the vocabulary file fixes ``V`` and nothing is pruned
    unless ``min_df``/``max_df`` are given; text is always pruned with the
    defaults ``min_df=1``, ``max_df=1.0`` (i.e. nothing beyond stop words).
    ``keep_all_words`` (text only) keeps short words and stop words
    (:func:`tokenize`). ``known`` is the vocabulary of LDA-C and UCI ids when no vocabulary file
    is given or found beside the corpus: a saved model's, whose ids new
    documents written with it share (``mcmc lda NEW --model FILE``).

    Raises
    ------
    UsageError
        An unknown format; ``vocab`` or ``keep_all_words`` for a format they do not apply to.
    """
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise UsageError(f"unknown corpus format {fmt!r}; use one of {', '.join(FORMATS)}")
    if not Path(path).exists():
        raise InputError(str(path), "no such file or directory")
    if fmt == "text":
        if vocab is not None:
            raise UsageError("--vocab applies to LDA-C and UCI corpora; text input builds its own vocabulary")
        return read_text(path, min_df=1 if min_df is None else min_df, max_df=1.0 if max_df is None else max_df,
                         keep_all_words=keep_all_words)
    if keep_all_words:
        raise UsageError(f"--keep-all-words applies to text corpora; {path} is {fmt}, whose words are the vocabulary's")
    corpus = read_ldac(path, vocab, known) if fmt == "ldac" else read_uci(path, vocab, known)
    if min_df is not None or max_df is not None:
        corpus = filter_vocabulary(
            corpus, min_df=1 if min_df is None else min_df, max_df=1.0 if max_df is None else max_df, source=str(path)
        )
    return corpus
