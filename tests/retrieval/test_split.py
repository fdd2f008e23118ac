"""A plain-text file split into byte ranges at blank lines (so that the build's worker processes
share a big file): the pieces read exactly what the whole file reads (records, line numbers,
skipped blocks and their reasons, Windows-1252 lines) whenever their checks hold, and the build
falls back to the whole file when one does not."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

import retrieval.build as build_module
from retrieval.corpus import HEADER, _decode, _pieces, load_corpus, read_file, read_piece, split_file
from tests.retrieval.fixtures import pasted_corpus
from tests.retrieval.test_build import assert_open_index_equals_load_and_build, write_corpus_with_duplicates

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "data" / "corpus").glob("*.txt"))


def whole(path: Path) -> tuple:
    result = read_file(path, "f.txt", (HEADER,))
    return result.records, result.skipped, result.cp1252, _decode(path.read_bytes())[1]


def in_pieces(path: Path, pieces) -> tuple | None:
    """What the pieces read, or None when a check says the split does not hold."""
    out = [read_piece(path, "f.txt", (HEADER,), p) for p in pieces]
    if not all(ok for _, _, ok in out) or not any(r.records or r.skipped for r, _, _ in out):
        return None
    bad = [b for _, b, _ in out if b is not None]
    return ([x for r, _, _ in out for x in r.records], [x for r, _, _ in out for x in r.skipped],
            any(r.cp1252 for r, _, _ in out), min(bad) if bad else None)  # fmt: skip


def pasted_files(tmp_path: Path) -> list[Path]:
    out = []
    for k, (newline, encoding) in enumerate([("\n", "utf-8"), ("\r\n", "utf-8"), ("\n", "utf-8-sig")]):
        out.append(tmp_path / f"p{k}.txt")
        out[-1].write_bytes(pasted_corpus.text(newline).encode(encoding))
    data = pasted_corpus.text("\n").encode("utf-8")
    for k, at in enumerate((len(data) // 3, 2 * len(data) // 3)):  # one Windows-1252 line, then two
        end = data.index(b"\n", at)
        data = data[:end] + " caf\xe9 na\xefve \x81".encode("latin-1") + data[end:]
        out.append(tmp_path / f"cp{k}.txt")
        out[-1].write_bytes(data)
    return out


def line_soup(rng: random.Random) -> bytes:
    """Seed and pasted lines in random order with random blank lines: malformed blocks everywhere."""
    pool = [x for f in SEEDS for x in f.read_text(encoding="utf-8").split("\n") if x.strip()]
    pool += [x for b in pasted_corpus.BLOCKS for x in b.raw.split("\n") if x.strip()]
    pool += [HEADER, "Alice, Bob,", "Carol", "\ufeff", "  ", "Short line", "A · B", "x, y, z, w", "caf\xe9"]
    lines = []
    for _ in range(rng.randint(5, 120)):
        lines.append(rng.choice(pool))
        lines += [""] * rng.choice([0, 0, 1, 1, 1, 2])
    data = rng.choice(["\n", "\r\n"]).join(lines).encode("utf-8")
    return data.replace("caf\xe9".encode(), b"caf\xe9") if rng.random() < 0.3 else data


def test_well_formed_files_split_and_read_exactly(tmp_path):
    for path in [*SEEDS, *pasted_files(tmp_path)]:
        want = whole(path)
        for n in (2, 3, 5, 9):
            pieces = split_file(path, n)
            assert pieces is not None and len(pieces) >= 2, (path.name, n)
            assert in_pieces(path, pieces) == want, (path.name, n)


def test_damaged_files_and_line_soup_read_exactly_when_the_split_holds(tmp_path):
    held = refused = 0
    for trial in range(160):
        rng = random.Random(trial)
        if trial % 2:
            lines = rng.choice(SEEDS).read_text(encoding="utf-8").split("\n")
            deleted = set(rng.sample(range(len(lines)), rng.randint(1, 6)))
            data = "\n".join(x for i, x in enumerate(lines) if i not in deleted).encode("utf-8")
        else:
            data = line_soup(rng)
        path = tmp_path / "t.txt"
        path.write_bytes(data)
        want = whole(path)
        for n in (2, 4, 11):
            pieces = split_file(path, n)
            got = None if pieces is None else in_pieces(path, pieces)
            if got is not None:
                assert got == want, (trial, n)
                held += 1
    assert held > 250
    # any blank line as a split point, not only where a paper seems to start: the checks refuse
    # the splits that would read differently
    for trial in range(160):
        rng = random.Random(10_000 + trial)
        data = line_soup(rng) if trial % 2 else rng.choice(SEEDS).read_bytes()
        path = tmp_path / "r.txt"
        path.write_bytes(data)
        want = whole(path)
        ends = range(len(data) - 1)
        blanks = [i + 1 for i in ends if data[i : i + 1] == b"\n" and data[i + 1 : i + 2] in b"\r\n"]
        bounds = sorted(set(rng.sample(blanks, min(len(blanks), rng.randint(1, 6)))))
        starts = sorted({b + 1 + (data[b : b + 1] == b"\r") for b in bounds} - {len(data)})
        got = in_pieces(path, _pieces(data, [0, *starts]))
        if got is None:
            refused += 1
        else:
            assert got == want, trial
            held += 1
    assert refused > 20


def test_a_bad_block_at_a_split_point(tmp_path):
    """A block with a missing or extra line right where a piece starts: read as the whole file
    reads it, or the split is refused."""
    blocks = SEEDS[0].read_text(encoding="utf-8").split("\n\n")
    outcomes = set()
    bad_blocks = ["Only an area line · Here", "Just One Author, Another One, Third Person",
                  blocks[7] + "\n\n" + blocks[7],
                  "An orphan sentence that reads as prose. It ends."]  # fmt: skip
    for k, bad in enumerate(bad_blocks):
        text = "\n\n".join(blocks[:40] + [bad] + blocks[40:]) + "\n"
        data = text.encode("utf-8")
        path = tmp_path / f"b{k}.txt"
        path.write_bytes(data)
        want = whole(path)
        assert want[1], "the bad block is reported"
        at = len("\n\n".join(blocks[:40]).encode("utf-8")) + 2
        for start in (at, at + len(bad.encode("utf-8")) + 2):  # at the bad block, and just after it
            got = in_pieces(path, _pieces(data, [0, start]))
            outcomes.add(got is None)
            assert got is None or got == want, (k, start)
    assert outcomes == {True, False}


def test_workers_build_the_same_index_from_split_files(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(build_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(build_module, "SPLIT_MIN_BYTES", 3000)
    folder = write_corpus_with_duplicates(tmp_path / "corpus")
    # a bigger Windows-1252 file (papers of the bundled files again: duplicates, a bad block)
    blocks = SEEDS[1].read_text(encoding="utf-8").split("\n\n")
    parts = blocks[1:30] + ["ML - Théorie"] + blocks[30:60] + [blocks[3], "Noël, Zoë"] + blocks[60:90]
    text = "\n\n".join(parts)
    data = text.replace("é", "\x00").encode("utf-8").replace(b"\x00", b"\xe9")
    (folder / "cq.txt").write_bytes(data)
    splits = []
    real = build_module.split_file

    def spy(*args):
        splits.append(real(*args))
        return splits[-1]

    monkeypatch.setattr(build_module, "split_file", spy)
    with caplog.at_level(logging.DEBUG, logger="retrieval"):
        assert_open_index_equals_load_and_build(folder, tmp_path / "cache", duplicates=None)
    assert sum(1 for s in splits if s) >= 3  # the bundled files and cq.txt were split
    assert not any("does not hold" in r.getMessage() for r in caplog.records)
    warnings = [r.getMessage() for r in caplog.records  # the build's (load_corpus logs them too)
                if "Windows-1252" in r.getMessage() and r.filename == "build.py"]  # fmt: skip
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    assert len(warnings) == 2  # one per file, the split one included
    assert warnings[0].endswith("cp.txt:3: not valid UTF-8; read as Windows-1252")
    assert warnings[1].endswith(f"cq.txt:{line}: not valid UTF-8; read as Windows-1252")


@pytest.mark.parametrize("n", [2, 3])
def test_a_file_that_cannot_be_split_is_read_whole(tmp_path, n):
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"abstract": "x"}\n\n{"abstract": "y"}\n')
    cr = tmp_path / "cr.txt"
    cr.write_bytes(pasted_corpus.text("\r").encode("utf-8"))
    utf16 = tmp_path / "u.txt"
    utf16.write_bytes(pasted_corpus.text("\n").encode("utf-16"))
    for path in (jsonl, cr, utf16):
        assert split_file(path, n) is None


def test_five_equal_files_on_two_workers_go_in_ten_pieces(tmp_path, monkeypatch):
    """One worker would do three of five files; in halves, each does five pieces."""
    monkeypatch.setattr(build_module, "SPLIT_MIN_BYTES", 1000)
    folder = tmp_path / "five"
    folder.mkdir()
    text = SEEDS[0].read_text(encoding="utf-8")
    for k in range(5):  # equal sizes (the same papers: duplicates)
        (folder / f"f{k}.txt").write_text(text, encoding="utf-8")
    asked = []
    real = build_module.split_file

    def spy(path, n, headers):
        asked.append(n)
        return real(path, n, headers)

    monkeypatch.setattr(build_module, "split_file", spy)
    built = build_module.build_corpus(folder, (HEADER,), workers=2)
    assert asked == [2] * 5
    assert len(built.merged.doc_len) == len(load_corpus(folder).papers) == 20
