"""The derived titles of a cached index in a file of their own (retrieval/titlefile.py): written after
the build (at once for a small corpus, in the background for a big one), mapped by every process
serving the cache, ignored and written again when stale, truncated, damaged or foreign."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import retrieval.titlefile as titlefile
import retrieval.titles
import retrieval.titlewriter as titlewriter
from retrieval.corpus import load_corpus
from retrieval.index import open_index, sweep_leftovers
from retrieval.titlefile import TitleFile, title_file_path, wait_for_writers, write_title_file
from retrieval.titles import derive_title
from tests.support.corpora import ROOT

BUNDLED = ROOT / "data" / "corpus"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    shutil.copytree(BUNDLED, folder)
    return folder


def expected_titles(folder: Path) -> dict[str, str]:
    return {p.id: p.title for p in load_corpus(folder).papers}


def no_titles(abstract: str) -> str:
    raise AssertionError("a title was derived")


def test_the_file_holds_every_derived_title_and_autocomplete_scans_it(corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    built, report = open_index(corpus, cache_dir=cache)
    path = title_file_path(Path(report.extra["cache"]))
    assert path.exists() and built.papers.title_file() is not None
    want = expected_titles(corpus)
    monkeypatch.setattr(retrieval.titles, "derive_title", no_titles)  # read from the file, not derived
    index, again = open_index(corpus, cache_dir=cache)
    assert again.from_cache and index.papers.title_file() is not None
    shown = [index.papers.title(i) for i in range(len(index))]
    assert shown == [want[index.papers.id(i)] for i in range(len(index))]
    assert [p.title for p in index.papers] == shown
    for typed in ("sparse auto", "diffusion", "LEARN", "policy gradient", "graph neural", "zzzz"):
        words = typed.casefold().split()
        scan = [(index.papers.id(i), t) for i, t in enumerate(shown) if all(w in t.casefold() for w in words)]
        assert not any(pid.casefold().startswith(typed.casefold()) for pid, _ in scan)
        assert index.complete_ids(typed, 25) == scan[:25], typed


def tamper_truncate(path: Path, other: Path) -> None:
    path.write_bytes(path.read_bytes()[:-7])


def tamper_flip(path: Path, other: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-20] ^= 0x55
    path.write_bytes(bytes(data))


def tamper_header(path: Path, other: Path) -> None:
    data = bytearray(path.read_bytes())
    data[40] ^= 0x01  # inside the JSON header
    path.write_bytes(bytes(data))


def tamper_foreign(path: Path, other: Path) -> None:
    shutil.copyfile(other, path)  # the title file of another corpus


def tamper_garbage(path: Path, other: Path) -> None:
    path.write_bytes(b"not a title file at all\n")


TAMPERS = [tamper_truncate, tamper_flip, tamper_header, tamper_foreign, tamper_garbage]


@pytest.mark.parametrize("tamper", TAMPERS)
def test_a_bad_title_file_is_ignored_and_written_again(corpus, tmp_path, tamper):
    cache = tmp_path / "cache"
    _, report = open_index(corpus, cache_dir=cache)
    path = title_file_path(Path(report.extra["cache"]))
    other = tmp_path / "other"
    other.mkdir()
    (other / "one.txt").write_text(
        "论文检索\n\nTheory\nA. Author\nWe study one thing here, and show it works well.\n", encoding="utf-8"
    )
    _, other_report = open_index(other, cache_dir=tmp_path / "other-cache")
    tamper(path, title_file_path(Path(other_report.extra["cache"])))
    index, again = open_index(corpus, cache_dir=cache)
    assert again.from_cache
    want = expected_titles(corpus)
    assert [p.title for p in index.papers] == [want[index.papers.id(i)] for i in range(len(index))]
    assert TitleFile.open(path, index.title_identity()) is not None  # written again, whole
    assert index.papers.title_file() is not None


def test_a_title_file_of_other_title_rules_is_written_again(corpus, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    open_index(corpus, cache_dir=cache)
    monkeypatch.setattr(retrieval.titles, "TITLE_RULES_VERSION", "titles-test-changed")
    monkeypatch.setattr(retrieval.titles, "derive_title", lambda abstract: "New: " + abstract[:10])
    index, report = open_index(corpus, cache_dir=cache)
    assert report.from_cache  # the index itself is not rebuilt
    assert index.papers.title_file() is not None
    assert index.papers[0].title == "New: " + index.papers[0].abstract[:10]


def test_a_folder_where_the_file_cannot_be_written_leaves_titles_derived_when_shown(
    corpus, tmp_path, monkeypatch, caplog
):
    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(titlefile, "WRITE_NOW_MAX", 0)
    monkeypatch.setattr(titlefile, "_start_writer", lambda cache, path: None)
    open_index(corpus, cache_dir=tmp_path / "cache")  # the cache, without its titles
    monkeypatch.undo()
    monkeypatch.setattr(titlefile.os, "replace", refuse)  # (every module's os.replace)
    with caplog.at_level(logging.WARNING, logger="retrieval.titlefile"):
        index, report = open_index(corpus, cache_dir=tmp_path / "cache")
    assert report.from_cache
    assert "could not write the titles file" in caplog.text
    cache = Path(report.extra["cache"])
    assert not title_file_path(cache).exists()
    assert sorted(p.name for p in cache.parent.iterdir()) == [cache.name]  # no temp file left
    want = expected_titles(corpus)
    assert [p.title for p in index.papers] == [want[index.papers.id(i)] for i in range(len(index))]


def test_a_big_corpus_has_its_file_written_in_the_background_and_picked_up(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(titlefile, "WRITE_NOW_MAX", 0)
    index, report = open_index(corpus, cache_dir=tmp_path / "cache")
    path = title_file_path(Path(report.extra["cache"]))
    want = expected_titles(corpus)
    # meanwhile, titles are derived when shown
    assert [p.title for p in index.papers] == [want[index.papers.id(i)] for i in range(len(index))]
    wait_for_writers(120)
    assert path.exists()
    deadline = time.monotonic() + 5
    while index.papers.title_file() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert index.papers.title_file() is not None  # the open index found the file once written
    index.papers._derived.clear()
    monkeypatch.setattr(retrieval.titles, "derive_title", no_titles)
    assert [p.title for p in index.papers] == [want[index.papers.id(i)] for i in range(len(index))]
    assert not list(path.parent.glob("*.tmp"))


def test_no_second_writer_while_one_is_alive_and_a_dead_ones_temp_file_is_swept(
    corpus, tmp_path, monkeypatch
):
    monkeypatch.setattr(titlefile, "WRITE_NOW_MAX", 0)
    started = []
    monkeypatch.setattr(titlefile, "_start_writer", lambda cache, path: started.append(path))
    _, report = open_index(corpus, cache_dir=tmp_path / "cache")
    cache = Path(report.extra["cache"])
    path = title_file_path(cache)
    monkeypatch.undo()
    monkeypatch.setattr(titlefile, "WRITE_NOW_MAX", 0)

    def no_spawn(*args, **kwargs):
        raise AssertionError("a second writer was started")

    alive = titlefile._tmp_path(path, os.getppid())  # a live process "writing" it
    alive.touch()
    monkeypatch.setattr(subprocess, "Popen", no_spawn)
    index, again = open_index(corpus, cache_dir=tmp_path / "cache")
    assert again.from_cache and index.papers.title_file() is None
    alive.unlink()
    dead = titlefile._tmp_path(path, 2**22 + 12345)  # above the usual pid_max: no such process
    dead.touch()
    assert dead in sweep_leftovers(corpus, tmp_path / "cache")
    assert not dead.exists() and cache.exists()


def test_a_writer_whose_cache_holds_another_build_by_then_installs_nothing(corpus, tmp_path):
    index, report = open_index(corpus, cache_dir=tmp_path / "cache")
    path = tmp_path / "elsewhere.pbindex.titles"
    assert write_title_file(index, path, still_current=lambda: False) is False
    assert not path.exists() and not list(tmp_path.glob("*.tmp"))
    assert write_title_file(index, path) is True
    assert TitleFile.open(path, index.title_identity()) is not None
    other = dict(index.title_identity(), built_at=index.built_at + 1)
    assert TitleFile.open(path, other) is None  # another build of the same corpus


def test_the_writer_command_writes_the_file_of_a_cache(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(titlefile, "WRITE_NOW_MAX", 0)
    monkeypatch.setattr(titlefile, "_start_writer", lambda cache, path: None)
    index, report = open_index(corpus, cache_dir=tmp_path / "cache")
    cache = Path(report.extra["cache"])
    assert titlewriter.main([str(cache)]) == 0
    found = TitleFile.open(title_file_path(cache), index.title_identity())
    assert found is not None
    assert [found.title(i) or index.papers.title(i) for i in range(len(index))] == [
        derive_title(index.papers.abstract(i)) if index.papers.title_is_derived(i) else index.papers.title(i)
        for i in range(len(index))
    ]
    assert titlewriter.main([str(tmp_path / "missing.pbindex")]) == 1


def test_threads_reading_titles_while_the_file_appears_see_the_same_titles(corpus, tmp_path, monkeypatch):
    import sys
    import threading

    monkeypatch.setattr(titlefile, "WRITE_NOW_MAX", 0)
    monkeypatch.setattr(titlefile, "_start_writer", lambda cache, path: None)
    monkeypatch.setattr(titlefile, "_RECHECK_SECONDS", 0.0)  # every call looks for the file
    index, report = open_index(corpus, cache_dir=tmp_path / "cache")
    want = expected_titles(corpus)
    expected = [want[index.papers.id(i)] for i in range(len(index))]
    wrong: list[tuple[int, str]] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            for i in range(len(index)):
                title = index.papers.title(i)
                if title != expected[i]:
                    wrong.append((i, title))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=read) for _ in range(6)]
    try:
        for t in threads:
            t.start()
        time.sleep(0.05)
        assert write_title_file(index, title_file_path(Path(report.extra["cache"])))
        deadline = time.monotonic() + 5
        while index.papers.title_file() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join()
        sys.setswitchinterval(old)
    assert index.papers.title_file() is not None
    assert not wrong


def test_worker_processes_derive_the_titles_one_process_does(corpus, tmp_path, monkeypatch):
    index, _ = open_index(corpus, cache_dir=tmp_path / "cache")
    monkeypatch.setattr(titlefile, "_CHUNK", 7)  # several chunks, in order, from forked workers
    alone = titlefile.derive_all(index, workers=1)
    assert titlefile.derive_all(index, workers=2) == alone
    papers = index.papers
    assert alone == [papers.title(i) if papers.title_is_derived(i) else "" for i in range(len(index))]
