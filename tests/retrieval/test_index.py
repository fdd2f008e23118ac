"""Index container API, parameters, and the on-disk cache (round trip, damage, staleness, speed)."""

from __future__ import annotations

import logging
import mmap
import os
import shutil
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import retrieval.index as index_module
from bench._synth import Generator, write_corpus
from retrieval.errors import CorpusError
from retrieval.index import (
    BM25Params,
    build_index,
    cache_path_for,
    id_diff,
    open_index,
    sweep_leftovers,
)
from retrieval.models import Paper
from retrieval.tokenize import tokenize

QUERIES = ["sparse autoencoders", "offline reinforcement learning", '"language models" -diffusion', "bounds"]


def snapshot(index, queries=QUERIES):
    out = []
    for q in queries:
        r = index.search(q, 10)
        out.append((r.total, [(h.paper.id, h.score, h.matched_terms, h.snippet) for h in r.hits]))
    return out


def warnings_of(caplog):
    return [r for r in caplog.records if r.name == "retrieval.index" and r.levelno >= logging.WARNING]


# -- parameters -----------------------------------------------------------------------------------


def test_params_defaults_and_validation():
    p = BM25Params()
    assert (p.variant, p.k1, p.b, p.epsilon) == ("okapi", 1.5, 0.75, 0.25)
    assert BM25Params(variant="l").effective_delta == 0.5
    assert BM25Params(variant="plus").effective_delta == 1.0
    assert BM25Params(variant="plus", delta=0.3).effective_delta == 0.3
    for bad in [dict(variant="bm25"), dict(k1=-1), dict(b=1.5), dict(k1=float("nan")), dict(delta=-1.0)]:
        with pytest.raises(ValueError):
            BM25Params(**bad)
    with pytest.raises(AttributeError):
        p.k1 = 2.0  # frozen


# -- container API --------------------------------------------------------------------------------


def test_container_protocol(seed_index, seed_papers):
    assert len(seed_index) == len(seed_papers) == 40
    assert seed_index.papers == tuple(seed_papers)
    first = seed_papers[0]
    assert seed_index.get(first.id) == first and first.id in seed_index
    assert seed_index.get(first.id.upper()) == first  # ids are typed by people
    assert seed_index.papers[-1] == seed_papers[-1] and seed_index.papers[2:4] == tuple(seed_papers[2:4])
    assert seed_index.get("nope") is None and "nope" not in seed_index and 3 not in seed_index
    assert isinstance(seed_index.built_at, float) and seed_index.build_seconds >= 0
    assert seed_index.params == BM25Params()


def test_arrays_are_read_only(seed_index):
    for name, arr in seed_index.arrays().items():
        with pytest.raises(ValueError):
            arr[...] = 0
        assert not arr.flags.writeable, name


def test_areas_counts_sorted(seed_index, seed_papers):
    areas = seed_index.areas()
    assert sum(c for _, c in areas) == sum(1 for p in seed_papers if p.area)
    counts = [c for _, c in areas]
    assert counts == sorted(counts, reverse=True)
    assert areas[0] == ("Theory · Learning Theory", 7)


def test_complete_areas(seed_index):
    assert seed_index.complete_areas("theo")[0] == "Theory"
    assert "Theory · Game Theory" in seed_index.complete_areas("game")
    assert "Reinforcement Learning · Batch/Offline" in seed_index.complete_areas("batch")
    assert len(seed_index.complete_areas("", limit=3)) == 3
    assert seed_index.complete_areas("zzzz") == []


def test_complete_ids(seed_index, seed_papers):
    pid = seed_papers[5].id
    found = seed_index.complete_ids(pid[:4])
    assert (pid, seed_papers[5].title) in found
    assert all(i.lower().startswith(pid[:4].lower()) for i, _ in found[:1])
    word = seed_papers[7].title.split()[1].lower()
    assert any(i == seed_papers[7].id for i, _ in seed_index.complete_ids(word, 25))
    assert len(seed_index.complete_ids("", limit=5)) == 5


def test_nearest_areas(seed_index):
    assert "Theory · Game Theory" in seed_index.nearest_areas("game theroy")
    assert len(seed_index.nearest_areas("reinforcment", 2)) <= 2
    assert seed_index.nearest_areas("reinforcment")[0].startswith("Reinforcement Learning")


def test_the_ids_of_a_served_index_are_read_from_its_mapped_ids(corpus_copy):
    """A served index answers id questions from its mapped arrays: ``find`` (exact), ``id_set``
    (membership) and the start-up report's ``added`` (an IdList) behave as the tuple of ids would."""
    import pickle

    from retrieval.catalogue import IdList, IdSet

    open_index(corpus_copy)  # build and write the cache
    index, report = open_index(corpus_copy)
    table = index.papers
    ids = table.ids()
    assert report.from_cache and isinstance(report.added, IdList)
    assert report.added == tuple(ids) == tuple(report.added) and report.added == ids
    assert report.added != tuple(ids[:-1]) and report.added != (*ids[:-1], "other")
    assert report.added[0] == ids[0] and report.added[-1] == ids[-1] and report.added[2:5] == tuple(ids[2:5])
    with pytest.raises(IndexError):
        report.added[len(ids)]
    assert pickle.loads(pickle.dumps(report.added)) == tuple(ids)
    assert [table.find(pid) for pid in ids] == list(range(len(ids)))
    assert table.find(ids[3].upper() + "x") is None and table.find("") is None and table.find(3) is None
    members = table.id_set()
    assert isinstance(members, IdSet) and len(members) == len(ids) and list(members) == sorted(ids)
    assert all(pid in members for pid in ids) and "no such id" not in members and None not in members
    folded = next(pid for pid in ids if pid != pid.swapcase())
    assert folded.swapcase() not in members and index.get(folded.swapcase()) is not None  # get folds case


# -- cache ----------------------------------------------------------------------------------------


def test_cache_round_trip_gives_identical_results(corpus_copy, caplog):
    built, report = open_index(corpus_copy)
    assert not report.from_cache and report.build_seconds > 0
    assert report.papers == 40 and report.added == tuple(p.id for p in built.papers)
    cache = cache_path_for(corpus_copy, BM25Params())
    assert cache.exists() and cache.parent == corpus_copy.parent / ".paperbot-index"
    loaded, report2 = open_index(corpus_copy)
    assert report2.from_cache and report2.build_seconds == 0.0
    for field in ("files", "duplicates", "duplicate_details", "skipped", "papers"):
        assert getattr(report2, field) == getattr(report, field), field
    assert loaded.papers == built.papers and loaded.fingerprint == built.fingerprint
    assert loaded.built_at == built.built_at
    assert snapshot(loaded) == snapshot(built)
    assert [h.paper.id for h in loaded.similar(built.papers[0].id)] == [
        h.paper.id for h in built.similar(built.papers[0].id)
    ]
    for name, arr in built.arrays().items():
        assert np.array_equal(arr, loaded.arrays()[name]), name
    assert warnings_of(caplog) == []


def damage_garbage(path):
    path.write_bytes(b"this is not an index at all" * 100)


def damage_truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def damage_flip(path):
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    path.write_bytes(bytes(data))


def damage_foreign_npz(path):
    with path.open("wb") as fh:
        np.savez(fh, meta=np.frombuffer(b'{"format": "someone-else"}', dtype=np.uint8), x=np.arange(3))


def damage_empty(path):
    path.write_bytes(b"")


def damage_zip_without_meta(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("hello.txt", "hi")


@pytest.mark.parametrize(
    "damage",
    [damage_garbage, damage_truncate, damage_flip, damage_foreign_npz, damage_empty, damage_zip_without_meta],
)
def test_damaged_cache_is_rebuilt_with_one_warning(corpus_copy, caplog, damage):
    # Snapshot first: the reference index maps this very file, and damaging a mapped file in
    # place (we never do: caches are replaced, not rewritten) would pull the pages from under it.
    reference = snapshot(open_index(corpus_copy)[0])
    cache = cache_path_for(corpus_copy, BM25Params())
    damage(cache)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        index, report = open_index(corpus_copy)
    assert not report.from_cache
    assert len(warnings_of(caplog)) == 1, [r.getMessage() for r in caplog.records]
    assert str(cache) in warnings_of(caplog)[0].getMessage()
    assert snapshot(index) == reference
    caplog.clear()
    again, report = open_index(corpus_copy)  # the rebuilt cache is good again
    assert report.from_cache and warnings_of(caplog) == []


def test_stale_cache_after_a_content_edit_with_same_size_and_mtime(corpus_copy, caplog):
    open_index(corpus_copy)
    path = sorted(corpus_copy.glob("*.txt"))[0]
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert "Sparse autoencoders" in text or "Generative models" in text
    edited = text.replace("Generative models", "Generative modelz", 1)
    assert len(edited.encode()) == st.st_size
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime: only the hash sees it
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        index, report = open_index(corpus_copy)
    assert not report.from_cache
    assert len(warnings_of(caplog)) == 1 and "stale" in warnings_of(caplog)[0].getMessage()
    assert any("modelz" in p.abstract for p in index.papers)


def test_params_and_tokenizer_version_key_the_cache(corpus_copy, caplog, monkeypatch):
    open_index(corpus_copy)
    plus, report = open_index(corpus_copy, BM25Params(variant="plus"))
    assert not report.from_cache and plus.params.variant == "plus"  # its own cache file
    assert open_index(corpus_copy)[1].from_cache
    monkeypatch.setattr(index_module, "TOKENIZER_VERSION", "test-changed")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _, report = open_index(corpus_copy)
    assert not report.from_cache and len(warnings_of(caplog)) == 1


def test_the_parser_version_keys_the_cache_not_its_source_nor_the_title_rules(corpus_copy, monkeypatch):
    import retrieval.corpus
    import retrieval.titles

    open_index(corpus_copy)
    # Reading the sources would make any edit (a comment) rebuild every cache: the key must not.
    real_read_bytes = Path.read_bytes

    def no_source_reads(self):
        assert self.suffix != ".py", f"the cache key read {self}"
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", no_source_reads)
    assert open_index(corpus_copy)[1].from_cache
    # A cache holds no derived title: new title rules rebuild nothing, and the papers show theirs.
    monkeypatch.setattr(retrieval.titles, "TITLE_RULES_VERSION", "titles-test-changed")
    monkeypatch.setattr(retrieval.titles, "derive_title", lambda abstract: "New rules: " + abstract[:20])
    again, report = open_index(corpus_copy)
    assert report.from_cache
    assert again.papers[0].title == "New rules: " + again.papers[0].abstract[:20]
    assert again.papers.title(1) == "New rules: " + again.papers[1].abstract[:20]
    monkeypatch.setattr(retrieval.corpus, "PARSER_VERSION", "parser-test-changed")
    assert not open_index(corpus_copy)[1].from_cache


def test_cache_dir_and_read_only_fallback(corpus_copy, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    _, report = open_index(corpus_copy, cache_dir=cache_dir)
    assert list(cache_dir.glob("*.pbindex")) and report.extra["cache"].startswith(str(cache_dir))
    assert open_index(corpus_copy, cache_dir=cache_dir)[1].from_cache
    # A read-only corpus folder (root ignores permissions, so simulate it): fall back to temp.
    monkeypatch.setattr(index_module.tempfile, "tempdir", str(tmp_path / "tmp"))
    real = index_module._writable_dir
    monkeypatch.setattr(
        index_module, "_writable_dir", lambda p: False if ".paperbot-index" in str(p) else real(p)
    )
    _, report = open_index(corpus_copy)
    assert str(tmp_path / "tmp") in str(report.extra["cache"])
    assert not (corpus_copy.parent / ".paperbot-index").exists()
    assert open_index(corpus_copy)[1].from_cache


def test_previous_gives_added_removed_and_is_not_mutated(corpus_copy, tmp_path):
    old, _ = open_index(corpus_copy)
    before = snapshot(old)
    files = sorted(corpus_copy.glob("*.txt"))
    smaller = tmp_path / "smaller"
    smaller.mkdir()
    shutil.copy(files[0], smaller / files[0].name)
    new, report = open_index(smaller, previous=old)
    kept = {p.id for p in new.papers}
    assert report.added == ()
    assert set(report.removed) == {p.id for p in old.papers} - kept
    assert report.unchanged == len(kept) and report.papers == len(new)
    assert snapshot(old) == before and len(old) == 40
    back, report = open_index(corpus_copy, previous=new)
    assert set(report.added) == set(report.added) and len(report.added) == 40 - len(kept)
    assert report.removed == ()


def test_progress_is_reported_cheaply(tmp_path):
    gen = Generator(3000, seed=3)
    folder = tmp_path / "synthetic"
    write_corpus(gen.papers(), folder, per_file=1000)
    calls = []
    open_index(folder, progress=lambda stage, done, total: calls.append((stage, done, total)))
    stages = [c[0] for c in calls]
    assert {"parse", "tokenize", "index"} <= set(stages)
    assert stages.index("parse") < stages.index("tokenize") < stages.index("index")
    assert all(0 <= done <= total for _, done, total in calls)
    assert ("tokenize", 3000, 3000) in calls and len(calls) < 250


def test_cache_load_is_at_least_five_times_faster_than_building(tmp_path):
    folder = tmp_path / "synthetic"
    write_corpus(Generator(5000, seed=5).papers(), folder)
    started = time.perf_counter()
    built, report = open_index(folder)
    build = time.perf_counter() - started
    assert not report.from_cache
    loads = []
    for _ in range(3):
        started = time.perf_counter()
        loaded, report = open_index(folder)
        loads.append(time.perf_counter() - started)
        assert report.from_cache
    assert build / min(loads) >= 5, (build, loads)
    assert snapshot(loaded, ["learning models", "data"]) == snapshot(built, ["learning models", "data"])


def test_missing_corpus_is_a_corpus_error(tmp_path):
    with pytest.raises(CorpusError):
        open_index(tmp_path / "does-not-exist")


# -- saved parts shared with the bot's index worker ---------------------------------------------------


def test_id_diff_against_the_replaced_index(seed_papers):
    assert id_diff(seed_papers[:3], None) == (tuple(p.id for p in seed_papers[:3]), (), 0)
    previous = build_index(seed_papers[:30], BM25Params())
    added, removed, unchanged = id_diff(seed_papers[5:], previous)
    assert added == tuple(p.id for p in seed_papers[30:])
    assert removed == tuple(p.id for p in seed_papers[:5])
    assert unchanged == 25


def test_a_served_index_is_memory_mapped_and_makes_papers_on_demand(corpus_copy):
    built, report = open_index(corpus_copy)  # built, written, then served from the file
    loaded, _ = open_index(corpus_copy)
    for index in (built, loaded):
        arrays = index.arrays()
        for name in ("post_docs", "post_tf", "paper_text", "positions"):
            base = arrays[name].base
            while base is not None and not isinstance(base, memoryview | mmap.mmap):
                base = getattr(base, "base", None)
            assert isinstance(base, memoryview | mmap.mmap), name
    assert not any(isinstance(v, Paper) for v in vars(loaded.papers).values())
    assert loaded.papers[3] == built.papers[3] and loaded.papers[3] is not loaded.papers[3]


def test_ids_are_found_exactly_then_case_insensitively():
    base = Paper(id="x", title="A title", authors=("A. B",), et_al=False, area="T", abstract="Words.")
    ids = ["AbC", "abc", "Zed", "zED"]
    papers = [replace(base, id=i, abstract=f"Paper {n} words.") for n, i in enumerate(ids)]
    index = build_index(papers, BM25Params())
    assert index.position("AbC") == 0 and index.position("abc") == 1
    assert index.position("ABC") == 1  # the id that is the folded text wins
    assert index.position("zed") == 2 and index.position(" ZED ") == 2  # else the first in corpus order
    assert index.position("zEd") == 2 and index.position("nope") is None and index.position("") is None


def test_truncated_data_is_detected_even_with_a_good_header(corpus_copy, caplog):
    open_index(corpus_copy)
    cache = cache_path_for(corpus_copy, BM25Params())
    data = cache.read_bytes()
    cache.write_bytes(data[: len(data) - 100])
    with caplog.at_level(logging.WARNING):
        _, report = open_index(corpus_copy)
    assert not report.from_cache and "truncated" in warnings_of(caplog)[0].getMessage()


def test_an_unchanged_corpus_is_not_hashed_again(corpus_copy, monkeypatch):
    open_index(corpus_copy)
    monkeypatch.setattr(index_module, "corpus_fingerprint", lambda *a: pytest.fail("hashed"))
    assert open_index(corpus_copy)[1].from_cache


def test_a_corpus_written_while_it_is_built_is_built_again_next_time(corpus_copy, monkeypatch):
    """The corpus is hashed while it is built: a file written meanwhile (here: after the build read
    it and before it is hashed, the order a hash made first would have caught) gives a fingerprint no
    corpus has, so that the next open builds again, with the new paper; unchanged, the fingerprint
    is the corpus's."""
    import threading

    import retrieval.build as build_module

    written = threading.Event()
    real_fingerprint, real_build = index_module.corpus_fingerprint, build_module.build_corpus
    target = sorted(corpus_copy.glob("*.txt"))[0]

    def late_fingerprint(*args, **kwargs):
        assert written.wait(60)
        return real_fingerprint(*args, **kwargs)

    def build_then_write(*args, **kwargs):
        built = real_build(*args, **kwargs)
        if not written.is_set():
            with target.open("a", encoding="utf-8") as fh:
                fh.write("\nRobotics\n\nAda Lovelace\n\nWe study how a quadruped robot learns to climb "
                         "stairs from a few demonstrations.\n")  # fmt: skip
            written.set()
        return built

    monkeypatch.setattr(index_module, "corpus_fingerprint", late_fingerprint)
    monkeypatch.setattr(build_module, "build_corpus", build_then_write)
    first, report = open_index(corpus_copy)
    files = sorted(corpus_copy.glob("*.txt"))
    assert not report.from_cache and first.fingerprint != real_fingerprint(files, BM25Params())
    again, report = open_index(corpus_copy)
    assert not report.from_cache and len(again) == len(first) + 1
    assert again.fingerprint == real_fingerprint(files, BM25Params())  # nothing changed this time
    assert open_index(corpus_copy)[1].from_cache
    assert again.search("quadruped stairs", 3).hits[0].paper.authors == ("Ada Lovelace",)


def test_sweep_removes_dead_writers_tmp_files_and_old_transfer_folders(corpus_copy, tmp_path, monkeypatch):
    monkeypatch.setattr(index_module.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cache = cache_path_for(corpus_copy, BM25Params())
    dead = cache.parent / f"{cache.name}.999999999.abc123.tmp"
    live = cache.parent / f"{cache.name}.{os.getpid()}.xyz.tmp"
    for path in (dead, live):
        path.write_bytes(b"partial")
    transfer = tmp_path / "tmp" / "paperbot-transfer-old"
    transfer.mkdir()
    (transfer / "papers.jsonl").write_text("{}")
    stale = time.time() - index_module.TRANSFER_STALE_SECONDS - 60
    os.utime(transfer, (stale, stale))
    # A fresh one may be another process's hand-over in progress (the temp dir is shared): it stays.
    fresh = tmp_path / "tmp" / "paperbot-transfer-live"
    fresh.mkdir()
    (fresh / "summary.json").write_text("{}")
    removed = sweep_leftovers(corpus_copy)
    assert set(removed) == {dead, transfer} and live.exists() and not dead.exists()
    assert (fresh / "summary.json").exists()


@pytest.mark.parametrize("variant", ["okapi", "l", "plus"])
def test_post_impact_reads_like_a_stored_array(seed_papers, variant):
    index = build_index(seed_papers, BM25Params(variant=variant))
    every = index.post_impact[:]
    assert len(every) == len(index.post_impact) == len(index.post_docs)
    for term in ("models", "sparse", "learning"):
        (term,) = tokenize(term)
        tid = index.vocab[term]
        lo, hi = int(index.indptr[tid]), int(index.indptr[tid + 1])
        docs, impacts = index.postings(tid)
        assert every[lo:hi].tolist() == impacts.tolist() == index.post_impact[lo:hi].tolist()
        assert index.post_impact[lo] == impacts[0] and index.post_impact[hi - 1] == impacts[-1]
        picks = np.array([hi - 1, lo, lo + (hi - lo) // 2])
        assert index.post_impact[picks].tolist() == every[picks].tolist()
        # one term's query scores are its impacts (plus BM25Plus's baseline elsewhere)
        scores, _ = index.score_terms([term])
        assert scores[docs].tolist() == impacts.tolist()
