"""The abstracts title and parsing tests read: the bundled corpus, the pasted fixture, and the ICLR
2024 evaluation corpus where it is kept (``../shared/corpora``, read there, never copied)."""

from __future__ import annotations

import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ICLR = ROOT.parent / "shared" / "corpora" / "iclr2024" / "abstracts.txt"


def bundled_and_pasted_abstracts() -> list[str]:
    """The bundled corpus's abstracts, then the pasted fixture's (a new list: the caller may change it)."""
    return list(_bundled_and_pasted())


def iclr_abstracts() -> list[str]:
    """The ICLR 2024 abstracts ([] without the corpus; a new list: the caller may change it)."""
    return list(_iclr())


# Parsed once per test process: several title and parsing test files read the same abstracts.
@functools.cache
def _bundled_and_pasted() -> tuple[str, ...]:
    from retrieval.corpus import load_corpus
    from tests.retrieval.fixtures import pasted_corpus

    out = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    return (*out, *(b.abstract for b in pasted_corpus.BLOCKS))


@functools.cache
def _iclr() -> tuple[str, ...]:
    if not ICLR.exists():
        return ()
    from retrieval.corpus import _parse_text

    records, _ = _parse_text(ICLR.read_text(encoding="utf-8"), "iclr")
    return tuple(r.abstract for r in records)


def corpus_with_a_cp1252_file(folder: Path) -> Path:
    """``folder`` made into a corpus: the bundled corpus's first file and ``latin.txt``, one paper
    written in Windows-1252 (not UTF-8)."""
    import shutil

    folder.mkdir(parents=True)
    shutil.copy(sorted((ROOT / "data" / "corpus").glob("*.txt"))[0], folder)
    text = "Theory\nAda Lovelace, Alan Turing\nWe study café networks and the résumé of their learning.\n"
    (folder / "latin.txt").write_bytes(text.encode("cp1252"))
    return folder
