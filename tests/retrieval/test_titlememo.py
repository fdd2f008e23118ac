"""A build keeps the titles it derived beside its cache file (retrieval/titlememo.py) and the next
build takes them instead of deriving them again: the same index whatever the memo holds, only the
papers that are new derive a title, and a memo that cannot serve (other title rules, truncated,
damaged, not a memo) is passed over."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import retrieval.build as build_module
import retrieval.text as text_module
from retrieval.build import build_corpus
from retrieval.corpus import HEADER, content_digest, read_file
from retrieval.index import cache_path_for, open_index
from retrieval.postings import BM25Params
from retrieval.titlememo import MemoParts, TitleMemo, memo_path_for, write_memo

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "data" / "corpus").glob("*.txt"))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for seed in SEEDS[:-1]:
        shutil.copy(seed, folder / seed.name)
    return folder


@pytest.fixture
def derived(monkeypatch) -> list[str]:
    """The abstracts a title was derived for, in this process (the build runs in it: a small corpus)."""
    calls: list[str] = []
    real = text_module.derive_title

    def counting(abstract: str) -> str:
        calls.append(abstract)
        return real(abstract)

    monkeypatch.setattr(text_module, "derive_title", counting)
    return calls


def arrays(index) -> dict[str, bytes]:  # noqa: ANN001
    return {name: np.asarray(a).tobytes() for name, a in index.arrays().items()}


def papers_of(path: Path) -> list:
    return read_file(path, path.name, (HEADER,)).records


def test_a_rebuild_derives_only_the_new_papers_titles_and_builds_the_same_index(
    corpus, tmp_path, derived
):
    cache = tmp_path / "cache"
    open_index(corpus, cache_dir=cache)
    first = len(derived)
    assert first == sum(len(papers_of(f)) for f in corpus.iterdir())
    memo = memo_path_for(cache_path_for(corpus, BM25Params(), cache))
    assert memo.exists() and len(TitleMemo.open(memo, check=True)) == first

    shutil.copy(SEEDS[-1], corpus / SEEDS[-1].name)  # a new file: the corpus changed
    derived.clear()
    index, report = open_index(corpus, cache_dir=cache)
    assert not report.from_cache
    new = {r.abstract for r in papers_of(corpus / SEEDS[-1].name)}
    assert set(derived) == new and len(derived) == len(new)

    cold, _ = open_index(corpus, cache_dir=tmp_path / "cold")  # no memo: every title derived
    assert arrays(index) == arrays(cold)


def test_titles_come_from_the_memo_in_worker_processes_too(corpus, tmp_path):
    """A memo whose title for one paper is not what the rules derive: the build shows the memo's, so
    the workers read it (a memo is trusted for the title rules it names; its CRC guards the bytes)."""
    path = corpus / SEEDS[0].name
    record = papers_of(path)[0]
    digest = content_digest(record.authors, record.abstract)
    parts = MemoParts()
    parts.add([digest], ["A title from the memo"])
    memo = tmp_path / "titles.memo"
    assert write_memo(memo, parts)
    built = build_corpus(corpus, (HEADER,), workers=2, titles=memo)
    assert first_title(built) == "a title from the memo"
    # and the memo now holds what this build derived: every paper's title, the planted one as read
    after = TitleMemo.open(memo, check=True)
    assert after is not None and after.get_many([digest]) == ["A title from the memo"]
    assert len(after) == sum(len(papers_of(f)) for f in corpus.iterdir())


def first_title(built) -> str:  # noqa: ANN001
    """The first paper's title, case-folded (the catalogue's autocomplete blob)."""
    return bytes(built.catalogue["title_fold"]).split(b"\n")[0].decode()


def planted(tmp_path: Path, corpus: Path) -> tuple[Path, bytes]:
    """A memo giving a wrong title to one paper (as a memo of other title rules would)."""
    record = papers_of(corpus / SEEDS[0].name)[0]
    digest = content_digest(record.authors, record.abstract)
    parts = MemoParts()
    parts.add([digest], ["Planted"])
    memo = tmp_path / "titles.memo"
    assert write_memo(memo, parts)
    return memo, digest


def damage_truncate(memo: Path) -> None:
    memo.write_bytes(memo.read_bytes()[:-3])


def damage_flip(memo: Path) -> None:
    data = bytearray(memo.read_bytes())
    data[-2] ^= 0x01  # "Planted" -> "Plantee": the size holds, the CRC does not
    memo.write_bytes(bytes(data))


def damage_garbage(memo: Path) -> None:
    memo.write_bytes(b"not a memo at all" * 10)


def other_rules(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(text_module, "TITLE_RULES_VERSION", "titles-other", raising=False)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "rules"])
def test_a_memo_that_cannot_serve_is_passed_over(corpus, tmp_path, monkeypatch, damage):
    memo, digest = planted(tmp_path, corpus)
    if damage == "rules":
        other_rules(monkeypatch)  # the memo was written under today's rules; the build's are others
    else:
        {"truncate": damage_truncate, "flip": damage_flip, "garbage": damage_garbage}[damage](memo)
    built = build_corpus(corpus, (HEADER,), workers=0, titles=memo)
    record = papers_of(corpus / SEEDS[0].name)[0]
    assert first_title(built) == text_module.derive_title(record.abstract).casefold()
    again = TitleMemo.open(memo, check=True)  # replaced by this build's own
    assert again is not None and again.get_many([digest]) != ["Planted"]


def test_the_memo_finds_what_it_holds_and_nothing_else(tmp_path):
    digests = [bytes([i]) * 32 for i in (5, 1, 9, 3)]
    titles = ["five", "one", "nine ünïcode 我", "three"]
    parts = MemoParts()
    parts.add(digests[:2], titles[:2])
    parts.add(digests[2:], titles[2:])
    memo = tmp_path / "m"
    assert write_memo(memo, parts)
    opened = TitleMemo.open(memo, check=True)
    assert opened is not None and len(opened) == 4
    probe = [bytes([9]) * 32, bytes([0]) * 32, bytes([1]) * 32, bytes([255]) * 32, bytes([3]) * 32]
    assert opened.get_many(probe) == ["nine ünïcode 我", None, "one", None, "three"]
    assert opened.get_many([]) == []
    opened.release()  # its pages given back: the next look-up reads them again
    assert opened.get_many(probe) == ["nine ünïcode 我", None, "one", None, "three"]
    assert memo.stat().st_mode & 0o077 == 0, "private, as the cache file is"


def test_an_unwritable_folder_keeps_no_memo_and_no_temp_file(tmp_path, monkeypatch):
    parts = MemoParts()
    parts.add([b"x" * 32], ["t"])

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(build_module.os, "replace", full)  # the same os module
    assert not write_memo(tmp_path / "m", parts)
    assert list(tmp_path.iterdir()) == []
