"""A derived title is made when a paper is shown, never by an index build (retrieval/catalogue.py,
retrieval/build.py), is not indexed, and is still found by /paper autocomplete
(retrieval/index.py ``Index.complete_ids``)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

import retrieval.corpus
import retrieval.titlefile
import retrieval.titles
from retrieval.corpus import load_corpus
from retrieval.index import COMPLETE_DERIVE_MAX, build_index, open_index, paper_tokens
from retrieval.titlefile import title_file_path
from retrieval.titles import derive_title
from retrieval.tokenize import analyze_document
from tests.support.corpora import ICLR, ROOT

BUNDLED = ROOT / "data" / "corpus"


def no_titles(abstract: str) -> str:
    raise AssertionError("a title was derived")


def test_an_index_build_derives_no_title_and_a_shown_paper_has_its_own(tmp_path, monkeypatch):
    corpus = tmp_path / "c"
    corpus.mkdir()
    for seed in sorted(BUNDLED.glob("*.txt")):
        (corpus / seed.name).write_text(seed.read_text(encoding="utf-8"), encoding="utf-8")
    titled = {"id": "t1", "title": "A Title of Its Own", "authors": ["A. B"], "abstract": "Words here."}
    (corpus / "b.jsonl").write_text(json.dumps(titled) + "\n", encoding="utf-8")
    # every name derive_title is reached by
    monkeypatch.setattr(retrieval.titles, "derive_title", no_titles)
    monkeypatch.setattr(retrieval.corpus, "derive_title", no_titles)
    # the title file is written after the build (in the background for a big corpus): asked for here
    writers = []
    monkeypatch.setattr(retrieval.titlefile, "WRITE_NOW_MAX", 0)
    monkeypatch.setattr(retrieval.titlefile, "_start_writer", lambda cache, path: writers.append(path))
    index, report = open_index(corpus, cache_dir=tmp_path / "cache")
    served, again = open_index(corpus, cache_dir=tmp_path / "cache")
    assert again.from_cache and len(served) == len(index) == report.papers
    assert writers == [title_file_path(Path(report.extra["cache"]))] * 2
    own = served.position("t1")
    assert served.papers[own].title == "A Title of Its Own" and not served.papers[own].title_derived
    monkeypatch.undo()
    fresh = load_corpus(corpus)
    by_id = {p.id: p for p in fresh.papers}
    for i, paper in enumerate(served.papers):
        assert paper == by_id[paper.id]  # the title derived now is the loader's
        assert paper.title_derived == by_id[paper.id].title_derived == (paper.id != "t1")
        assert served.papers.title(i) == paper.title
        if paper.title_derived:
            assert paper.title == derive_title(paper.abstract)


def test_a_derived_title_is_not_indexed_and_an_own_one_is(seed_papers):
    derived = next(p for p in seed_papers if p.title_derived)
    assert paper_tokens(derived) == analyze_document(derived.abstract)[0]
    own = type(derived)(id="x", title="Quokka habitats", authors=(), et_al=False, area="", abstract="Text.")
    assert paper_tokens(own) == analyze_document("Quokka habitats")[0] + analyze_document("Text.")[0]
    index = build_index([*seed_papers, own], use_rank_bm25=False)
    assert [h.paper.id for h in index.search("quokka", 5).hits] == ["x"]
    # a word only in a derived title, not in its abstract, would not be found; none is: every word
    # of a derived title is the abstract's (a hyphenated pair may be the abstract's two words)
    for paper in seed_papers:
        words = set(analyze_document(paper.abstract)[1])
        assert set(analyze_document(paper.title)[1]) <= words or not paper.title_derived


def starts_a_word(word: str, title: str) -> bool:
    """Some word of ``title`` starts with ``word`` (after a non-alphanumeric character other than _)."""
    folded = title.casefold()
    at = folded.find(word) if folded else -1
    while at != -1:
        if at == 0 or not folded[at - 1].isalnum() and folded[at - 1] != "_":
            return True
        at = folded.find(word, at + 1)
    return False


def expected_completions(index, typed: str, limit: int) -> list[tuple[str, str]]:
    """By brute force: ids starting with the text, then papers whose (derived) title has a word
    starting with each typed word."""
    text = typed.strip().casefold()
    papers = index.papers
    by_id = sorted(i for i in range(len(papers)) if papers.id(i).casefold().startswith(text))[:limit]
    words = text.split()
    rest = [
        i for i in range(len(papers))
        if i not in by_id and all(starts_a_word(w, papers.title(i)) for w in words)
    ]  # fmt: skip
    return [(papers.id(i), papers.title(i)) for i in (by_id + rest)[:limit]]


def tokenize_words(index, found: list[tuple[str, str]]) -> set[str]:
    """Every prefix of every word the index holds for the papers found (their abstracts' words)."""
    words: set[str] = set()
    for pid, _ in found:
        abstract = index.papers.abstract(index.position(pid)).casefold()
        for w in re.findall(r"\w[\w-]*", abstract):
            words.update(w[:k] for k in range(2, len(w) + 1))
    return words


def typed_prefixes(titles: list[str], rng: random.Random, n: int) -> list[str]:
    """What people type: one to three words of a title, the last one often cut short."""
    out = []
    for _ in range(n):
        words = [w.strip(",:;()").casefold() for w in rng.choice(titles).split()]
        words = [w for w in words if len(w) >= 2]
        if not words:
            continue
        start = rng.randrange(len(words))
        picked = words[start : start + rng.randint(1, 3)]
        last = picked[-1]
        if len(last) > 4 and rng.random() < 0.6:
            picked[-1] = last[: rng.randint(3, len(last) - 1)]
        out.append(" ".join(picked))
    return out


def test_autocomplete_finds_derived_titles_as_a_scan_of_every_title_would(seed_index):
    titles = [p.title for p in seed_index.papers]
    for typed in typed_prefixes(titles, random.Random(11), 300) + ["sae", "sparse auto", "x", "policy"]:
        assert seed_index.complete_ids(typed, 25) == expected_completions(seed_index, typed, 25), typed


@pytest.mark.skipif(not ICLR.exists(), reason=f"no {ICLR}")
def test_autocomplete_over_iclr_matches_a_scan_of_every_title():
    """1,996 derived titles: the candidates the index gives hold every paper a scan of all titles
    finds (when fewer than COMPLETE_DERIVE_MAX titles need deriving to fill the answer)."""
    index = build_index(load_corpus(ICLR).papers, use_rank_bm25=False)
    titles = [p.title for p in index.papers]
    rng = random.Random(5)
    checked, unindexed = 0, []
    for typed in typed_prefixes(titles, rng, 200):
        want = expected_completions(index, typed, 10)
        got = index.complete_ids(typed, 10)
        if got != want:
            # the budget stopped it: then what it gives is a prefix of the scan's answer
            many = len(index._candidates(typed.split())) > COMPLETE_DERIVE_MAX
            words = tokenize_words(index, want)
            if not many and got == want[: len(got)] and any(w not in words for w in typed.split()):
                # a word LaTeX splits in the index (\textbf{IN}stilling): found once the file is there
                unindexed.append(typed)
                continue
            assert got == want[: len(got)] and many, typed
        else:
            checked += 1
    assert checked >= 190 and len(unindexed) <= 2, unindexed


def test_a_title_is_derived_once_per_paper(seed_papers, monkeypatch):
    calls = []
    real = retrieval.titles.derive_title

    def counting(abstract: str) -> str:
        calls.append(abstract)
        return real(abstract)

    table = build_index(seed_papers, use_rank_bm25=False).papers
    monkeypatch.setattr(retrieval.titles, "derive_title", counting)
    first = [table[i].title for i in range(len(table))]
    again = [table.title(i) for i in range(len(table))] + [p.title for p in table]
    assert again == first + first and len(calls) == sum(p.title_derived for p in table)


def test_titles_derived_by_many_threads_from_a_cold_start_are_the_sequential_ones():
    """Search threads derive the titles they show, the first ones at once in a fresh process (the
    title rules' lazy patterns, C tables and keyphrase module set up on first use)."""
    import subprocess
    import sys

    script = """
import sys, threading
sys.setswitchinterval(1e-6)
from tests.support.corpora import bundled_and_pasted_abstracts
abstracts = bundled_and_pasted_abstracts()
from retrieval.titles import derive_title
out = {}
def run(k):
    out[k] = [derive_title(a) for a in abstracts[k::3] + abstracts]
threads = [threading.Thread(target=run, args=(k,)) for k in range(6)]
for t in threads: t.start()
for t in threads: t.join()
sequential = [derive_title(a) for a in abstracts]
for k in range(6):
    assert out[k] == [derive_title(a) for a in abstracts[k::3]] + sequential, k
print("ok", len(abstracts))
"""
    for _ in range(3):
        command = [sys.executable, "-c", script]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-2000:]
