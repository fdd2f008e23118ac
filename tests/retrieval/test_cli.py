"""The retrieval command line: text and JSON output, batch mode, ask, index, errors (exit 2)."""

from __future__ import annotations

import json
import re

import pytest

from bot import render
from retrieval.cli import main
from retrieval.index import BM25Params

FIELDS = {"rank", "id", "title", "authors", "area", "score", "snippet", "abstract"}


@pytest.fixture()
def run(corpus_copy, tmp_path, capsys):
    def _run(*argv: str) -> tuple[int, str, str]:
        # As the paperbot command runs it: snippets rendered by the bot's renderer.
        code = main(
            list(argv), default_corpus=corpus_copy, params=BM25Params(), cache_dir=tmp_path / "cache",
            render_snippet=render.snippet,
        )
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def test_search_text(run):
    code, out, err = run("search", "sparse autoencoders", "--top", "3")
    assert code == 0 and err == ""
    assert out.startswith("4 results for 'sparse autoencoders'")
    assert "  1. " in out and "  3. " in out and "  4. " not in out
    assert "**Sparse**" in out


def test_search_without_a_renderer_prints_plain_snippets(corpus_copy, tmp_path, capsys):
    code = main(["search", "sparse autoencoders", "--top", "1", "--json"], default_corpus=corpus_copy,
                params=BM25Params(), cache_dir=tmp_path / "cache")
    row = json.loads(capsys.readouterr().out)
    assert code == 0 and "**" not in row["snippet"] and "Sparse autoencoders" in row["snippet"]


def test_search_json_lines(run):
    code, out, _ = run("search", "offline reinforcement learning", "--top", "5", "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 5
    for i, row in enumerate(rows, 1):
        assert FIELDS <= row.keys() and row["rank"] == i
        assert isinstance(row["authors"], list) and isinstance(row["score"], float)
    assert rows[0]["area"] == "Reinforcement Learning · Batch/Offline"
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


def test_search_with_filters_and_explicit_corpus(run, corpus_copy):
    code, out, _ = run("search", "learning", "--area", "game theory", "--json", "--corpus", str(corpus_copy))
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows and all(r["area"] == "Theory · Game Theory" for r in rows)


def test_batch_mode(run, tmp_path):
    queries = tmp_path / "queries.txt"
    queries.write_text('sparse autoencoders\n"unclosed\n\ndiffusion models\n', encoding="utf-8")
    code, out, err = run("search", "--queries", str(queries), "--top", "2", "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["query_index"] for r in rows] == [0, 0, 3, 3]
    assert all(FIELDS <= r.keys() for r in rows)
    errors = [json.loads(line) for line in err.splitlines()]
    assert [(e["query_index"], e["position"]) for e in errors] == [(1, 0), (2, None)]
    assert "never closed" in errors[0]["error"] and 'Try: "unclosed"' in errors[0]["error"]
    assert "no word to search for" in errors[1]["error"]


def test_batch_mode_text(run, tmp_path):
    queries = tmp_path / "queries.txt"
    queries.write_text("sparse autoencoders\n-\n", encoding="utf-8")
    code, out, err = run("search", "--queries", str(queries), "--top", "1")
    assert code == 0 and out.startswith("[0] 4 results") and "query 1:" in err


def test_ask(run):
    code, out, _ = run("ask", "How are sparse autoencoders evaluated?", "--json")
    data = json.loads(out)
    assert code == 0 and 2 <= len(data["sentences"]) <= 4
    cited = [s["paper_id"] for s in data["sentences"]]
    assert [p["id"] for p in data["papers"]] == list(dict.fromkeys(cited))
    assert all(s["citation"] >= 1 for s in data["sentences"])
    code, out, _ = run("ask", "How are sparse autoencoders evaluated?")
    assert code == 0 and "[1]" in out


def test_index_report(run, tmp_path):
    code, out, _ = run("index")
    assert code == 0 and out.startswith("40 papers from 2 files, built in")
    assert "40 blocks read from 2 files: 40 papers loaded, 0 duplicates, 0 skipped\n" in out
    ranking = next(line for line in out.splitlines() if line.startswith("ranking:"))
    assert re.search(r"; \d{1,3}(,\d{3})+ terms, \d{1,3}(,\d{3})+ postings$", ranking), ranking
    code, out, _ = run("index", "--json")
    report = json.loads(out)
    assert code == 0 and report["papers"] == 40 and report["from_cache"] is True


def corpus_with_rejected_files_and_repaired_papers(folder):
    """The bundled corpus's two files, a binary and an empty file (both rejected), and a JSON Lines
    file: a paper whose 120-character id is replaced, one whose link is dropped (both load), and one
    line of broken JSON (a skipped block)."""
    import shutil

    from tests.support.corpora import ROOT

    folder.mkdir()
    for f in sorted((ROOT / "data" / "corpus").glob("*.txt")):
        shutil.copy(f, folder)
    (folder / "binary.txt").write_bytes(b"\x00\x01 not text")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    lines = [
        {"id": "a" * 120, "title": "Graphs", "abstract": "A paper on graph neural networks for molecules."},
        {"id": "ok1", "title": "Links", "abstract": "A paper on message passing.", "url": "javascript:x"},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + '\n{"id": "broken",\n'
    (folder / "more.jsonl").write_text(text, encoding="utf-8")
    return folder


def test_index_report_counts_rejected_files_and_repaired_papers(tmp_path, capsys):
    """Issue 30 item 8: two rejected files are not "read", and a repaired paper is loaded with a note,
    not a skipped block."""
    from retrieval.corpus import load_corpus

    corpus = corpus_with_rejected_files_and_repaired_papers(tmp_path / "corpus")
    code = main(["index"], default_corpus=corpus, params=BM25Params(), cache_dir=tmp_path / "cache")
    out, _ = capsys.readouterr()
    assert code == 0
    papers = len(load_corpus(corpus).papers)
    assert papers == 42
    assert out.startswith(f"{papers} papers from 3 files (2 more rejected), built in"), out
    assert "Files rejected: 2\n" in out and "binary.txt: binary (contains NUL bytes)" in out
    assert "Skipped blocks: 1\n" in out and "more.jsonl:3: record: invalid JSON" in out
    assert "Papers loaded with a note: 2\n" in out
    assert "43 blocks read from 3 files: 42 papers loaded (2 with a note), 0 duplicates, 1 skipped; " in out
    assert "; 2 files rejected\n" in out
    assert "more.jsonl:1: id: 120 characters" in out and "more.jsonl:2: url: dropped" in out
    code = main(["index", "--json"], default_corpus=corpus, params=BM25Params(), cache_dir=tmp_path / "cache")
    report = json.loads(capsys.readouterr().out)
    # every entry is still listed, as before, now saying whether its paper loaded
    loaded = [(s["path"].rsplit("/", 1)[-1], s["line"], s["loaded"]) for s in report["skipped"]]
    assert loaded == [
        ("binary.txt", 1, False), ("empty.txt", 1, False), ("more.jsonl", 1, True), ("more.jsonl", 2, True),
        ("more.jsonl", 3, False),
    ]
    assert [f.rsplit("/", 1)[-1] for f in report["rejected_files"]] == ["binary.txt", "empty.txt"]


def test_ingest_report_counts(tmp_path):
    from retrieval.index import open_index

    corpus = corpus_with_rejected_files_and_repaired_papers(tmp_path / "corpus")
    _, report = open_index(corpus, BM25Params(), cache_dir=tmp_path / "cache")
    assert [f.rsplit("/", 1)[-1] for f in report.rejected_files] == ["binary.txt", "empty.txt"]
    assert len(report.files_read) == 3 and len(report.files) == 5
    assert [(s.line, s.field) for s in report.notes] == [(1, "id"), (2, "url")]
    assert [(s.line, s.field) for s in report.skipped_blocks] == [(3, "record")]
    assert report.noted_papers == 2
    # from the cache: the same counts
    _, cached = open_index(corpus, BM25Params(), cache_dir=tmp_path / "cache")
    assert cached.from_cache and cached.notes == report.notes
    assert cached.skipped_blocks == report.skipped_blocks and cached.rejected_files == report.rejected_files


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (("search", '"unclosed'), 'character 1 is never closed: end the phrase with ". Try: "unclosed"'),
        (("search", "the of"), "no word to search for"),
        (("search", "area:theory"), "add a word to search for. Try: learning area:theory"),
        (("search", "models", "--corpus", "/no/such/corpus"), "/no/such/corpus"),
        (("search", "models", "--top", "0"), "--top"),
        (("search",), "QUERY or --queries"),
        (("search", "x", "--queries", "/no/such/file"), "QUERY or --queries"),
        (("search", "--queries", "/no/such/file"), "/no/such/file"),
        (("ask", "the?"), "no word to search for"),
        (("search", "--queries", "/"), "cannot read --queries /: Is a directory"),
        (("search", "--queries", "<latin-1>"), "is not UTF-8 text"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_errors_are_one_line_and_exit_2(run, argv, fragment, tmp_path):
    if "<latin-1>" in argv:
        latin = tmp_path / "latin-1.txt"
        latin.write_bytes("caf\xe9 models\n".encode("latin-1"))
        argv = tuple(str(latin) if a == "<latin-1>" else a for a in argv)
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert fragment in err


def test_help_exits_zero(run):
    code, out, _ = run("search", "--help")
    assert code == 0 and "--queries" in out


# -- queries that start with "-" ---------------------------------------------------------------------


def test_query_starting_with_a_dash_is_a_query_not_an_option(run):
    code, out, err = run("search", "-quantum sparse", "--top", "2")
    assert code == 0 and err == "", err
    assert out.startswith("4 results for '-quantum sparse'")
    code, out, err = run("search", "-sparse")  # an exclusion alone: the query's own message
    assert code == 2 and "unrecognized" not in err and "add a word to search for" in err


def test_words_after_a_double_dash_and_unquoted_words_form_the_query(run, corpus_copy):
    code, out, _ = run("search", "--corpus", str(corpus_copy), "--", "-quantum sparse")
    assert code == 0 and out.startswith("4 results for '-quantum sparse'")
    code, out, _ = run("search", "sparse", "autoencoders", "--top=1", "--json")
    assert code == 0 and len(out.splitlines()) == 1
    code, out, _ = run("search", "-quantum", "sparse", "--json", "--top", "1")
    assert code == 0 and json.loads(out)["matched_terms"] == ["sparse"]
    code, out, _ = run("ask", "-distillation", "how", "are", "reward", "models", "evaluated?")
    assert code == 0 and "[1]" in out
