"""What people paste from PDFs loads exactly (issue 33): roles from the whole block, titles, PDF
debris, line-break hyphens, the same paper twice, counts that add up, files that are not text."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from retrieval.corpus import load_corpus
from retrieval.corpus_text import join_lines
from retrieval.errors import CorpusError
from retrieval.hyphenation import join_break, own_words
from tests.retrieval.fixtures import pdf_pasted


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def fields(paper) -> tuple:
    return (None if paper.title_derived else paper.title, paper.area, paper.authors, paper.et_al,
            paper.abstract, paper.url)  # fmt: skip


def want(p: pdf_pasted.Pasted) -> tuple:
    return (p.title, p.area, p.authors, p.et_al, p.abstract, p.url)


def test_the_pasted_pdf_papers_load_exactly(tmp_path):
    path = write(tmp_path / "pasted.txt", pdf_pasted.text())
    corpus = load_corpus(path)
    assert corpus.skipped == ()
    assert [fields(p) for p in corpus.papers] == [want(p) for p in pdf_pasted.PAPERS]
    # the "Novak et al." copy came first: one paper, the fuller author list kept, with its own id
    assert corpus.duplicates == 1
    assert corpus.duplicate_details[0].startswith(f"{path}:1: duplicate of {corpus.papers[0].id}")
    assert corpus.papers[0].source == f"{path}:5"
    assert corpus.blocks == len(corpus.papers) + corpus.duplicates + len(corpus.skipped) == 16
    given = [p for p in corpus.papers if not p.title_derived]
    assert [p.title for p in given] == [p.title for p in pdf_pasted.PAPERS if p.title]


def test_each_paper_loads_alone_and_in_any_order(tmp_path):
    papers = list(pdf_pasted.PAPERS)
    for k, paper in enumerate(papers):
        got = load_corpus(write(tmp_path / f"one{k}.txt", paper.raw)).papers
        assert [fields(p) for p in got] == [want(paper)], paper.raw[:60]
    random.Random(3).shuffle(papers)
    corpus = load_corpus(write(tmp_path / "shuffled.txt", "\n\n".join(p.raw for p in papers)))
    assert [fields(p) for p in corpus.papers] == [want(p) for p in papers]


@pytest.mark.parametrize("chunk", range(3))
def test_cut_lines_never_make_a_paper_of_prose(tmp_path, chunk):
    """90 seeded trials: 1-4 random lines of the paste deleted. Every paper that loads takes its
    title, area and authors from lines that were fields (with its authors line cut, a paper may
    take a bare area line for its authors), never from an abstract's lines, and every abstract is
    made of one paper's lines; the counts add up."""
    text = pdf_pasted.text()
    lines = text.split("\n")
    titles = {p.title for p in pdf_pasted.PAPERS} | {None}
    areas = {p.area for p in pdf_pasted.PAPERS} | {"", "Deep Learning · Self-Supervised Learning"}
    authors = {p.authors for p in pdf_pasted.PAPERS} | {("Novak",)} | {(a,) for a in areas if a}
    abstracts = [" ".join(p.abstract.split()) for p in pdf_pasted.PAPERS]
    for trial in range(chunk * 30, chunk * 30 + 30):
        rng = random.Random(trial)
        cut = set(rng.sample(range(len(lines)), rng.randint(1, 4)))
        kept = "\n".join(x for i, x in enumerate(lines) if i not in cut)
        try:
            corpus = load_corpus(write(tmp_path / f"t{trial}.txt", kept))
        except CorpusError:
            continue
        for p in corpus.papers:
            assert (None if p.title_derived else p.title) in titles, (trial, p.title)
            assert p.area in areas, (trial, p.area)
            assert p.authors in authors, (trial, p.authors)
            assert any(_made_of(p.abstract, a) for a in abstracts), (trial, p.abstract[:80])
        assert corpus.blocks == len(corpus.papers) + corpus.duplicates + len(corpus.skipped)


def _made_of(abstract: str, real: str) -> bool:
    """``abstract`` is ``real`` with some of its words gone (a deleted line, which may leave half a
    broken word), nothing added."""

    def words(text: str) -> list[str]:
        return [w.strip(".,:;()|") for w in text.replace("-", " ").split() if w.strip(".,:;()|")]

    it = iter(words(real))
    return all(any(r == w or r.startswith(w) or w in r for r in it) for w in words(abstract))


def test_unplaceable_lines_are_reported_with_file_line_field_and_why(tmp_path):
    text = (
        "| Method | Accuracy |\n|---|---|\n| Ours | 91.2 |\n\n"  # a table after no abstract
        "We show that the choice of augmenta-\ntion pipeline dominates.\n\n"  # prose with no header
        + pdf_pasted.PAPERS[3].raw
    )
    path = write(tmp_path / "bad.txt", text)
    corpus = load_corpus(path)
    assert [fields(p) for p in corpus.papers] == [want(pdf_pasted.PAPERS[3])]
    assert [(s.line, s.field) for s in corpus.skipped] == [(1, "block"), (5, "block")]
    assert "a table on its own" in corpus.skipped[0].why
    assert "a paragraph of 2 lines" in corpus.skipped[1].why
    assert str(corpus.skipped[1]).startswith(f"{path}:5: block: ")
    assert corpus.blocks == 3


# -- line-break hyphens -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right", "joined"),
    [
        ("a representa-", "tion of", "a representation of"),  # fragments: a typesetter's break
        ("the self-", "supervised loss", "the self-supervised loss"),  # both words, and a compound
        ("pre- and", "post-training", "pre- and post-training"),  # unaffected: no break here
        ("both pre-", "and post-training", "both pre- and post-training"),  # a suspended compound
        ("state-of-the-", "art results", "state-of-the-art results"),  # a hyphen before: real
        ("at https://github.com/some-", "lab/code", "at https://github.com/some-lab/code"),  # a link
        ("the GR1-", "Manipulation robot", "the GR1-Manipulation robot"),  # a capital after
        ("Plug-", "and-Play", "Plug-and-Play"),
        ("cross-", "entropy loss", "cross-entropy loss"),  # two words, no solid "crossentropy"
        ("bench-", "mark", "benchmark"),
    ],
)
def test_line_break_hyphens(left, right, joined):
    parts = [left, right]
    assert join_lines(parts) == joined


def test_the_papers_own_spelling_decides_a_broken_word():
    assert join_break("we pre-", "train it", own_words(["pretrain", "models"])) == "we pretrain it"
    assert join_break("we pre-", "train it", own_words(["pre-train", "models"])) == "we pre-train it"


# -- files that are not text, counts -----------------------------------------------------------------


def test_a_file_that_is_not_text_is_rejected_whatever_its_name(tmp_path):
    rng = random.Random(7)
    binary = bytes(rng.randrange(1, 256) for _ in range(50_000))  # no NUL byte
    assert b"\x00" not in binary
    write(tmp_path / "good.txt", pdf_pasted.PAPERS[3].raw)
    for name in ("papers.txt", "more.jsonl", "refs.bib"):
        write(tmp_path / name, binary)
    corpus = load_corpus(tmp_path)
    assert len(corpus.papers) == 1 and corpus.skipped == ()
    assert [Path(f).name for f in corpus.files] == ["good.txt"]
    assert sorted(Path(r.path).name for r in corpus.rejected) == ["more.jsonl", "papers.txt", "refs.bib"]
    assert all(r.line == 1 and r.field == "file" and "not text" in r.why for r in corpus.rejected)
    with pytest.raises(CorpusError, match="not text"):
        load_corpus(tmp_path / "papers.txt")


def test_windows_1252_text_with_accents_is_still_text(tmp_path):
    text = "Theory\r\n\r\nJosé Núñez, Zoë Ölçer\r\n\r\nWe study “smart” quotes — and dashes… in café.\r\n"
    corpus = load_corpus(write(tmp_path / "win.txt", text.encode("cp1252")))
    assert corpus.rejected == () and len(corpus.papers) == 1


def test_the_counts_add_up_and_repairs_are_notes(tmp_path):
    write(tmp_path / "a.txt", pdf_pasted.text())
    rows = [
        {"id": "r1", "abstract": "A record whose link is not a link.", "url": "javascript:alert(1)"},
        {"id": "r2", "abstract": "A record with nothing wrong in it."},
        {"id": "r3"},  # no abstract: skipped
    ]
    write(tmp_path / "b.jsonl", "\n".join(json.dumps(r) for r in rows))
    write(tmp_path / "c.txt", "")  # empty: rejected, not read
    corpus = load_corpus(tmp_path)
    assert [Path(f).name for f in corpus.files] == ["a.txt", "b.jsonl"]
    assert [(Path(r.path).name, r.why) for r in corpus.rejected] == [("c.txt", "empty")]
    assert [(Path(n.path).name, n.line, n.field) for n in corpus.notes] == [("b.jsonl", 1, "url")]
    assert [(Path(s.path).name, s.line) for s in corpus.skipped] == [("b.jsonl", 3)]
    assert corpus.blocks == 16 + 3
    assert corpus.blocks == len(corpus.papers) + corpus.duplicates + len(corpus.skipped)


def test_the_corpus_documentation_examples_load_as_it_says(tmp_path):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "corpus.md").read_text(encoding="utf-8")
    blocks = [part.split("\n```", 1)[0] for part in docs.split("```text\n")[1:]]
    first = load_corpus(write(tmp_path / "a.txt", blocks[0])).papers
    assert [(None if p.title_derived else p.title, p.area, p.authors[0], p.et_al) for p in first] == [
        ("Attention Is All You Need", "Deep Learning · Attention Mechanisms", "Ashish Vaswani", True),
        (None, "Reinforcement Learning · Deep RL", "Sergey Levine", False),
    ]
    (titled,) = load_corpus(write(tmp_path / "b.txt", blocks[1])).papers
    assert (titled.title, titled.title_derived, titled.area) == (
        "Calibrated Uncertainty for Graph Neural Networks", False, ""
    )
