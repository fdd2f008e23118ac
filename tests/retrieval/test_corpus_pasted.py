"""The plain-text corpus read by position, as users paste it: the 34-block pasted fixture, author
lines, areas, multi-line abstracts, encodings, the `file:line: field: why` report, the bundled corpus
with random lines deleted (200 seeded trials), and JSON Lines urls and long ids."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from retrieval.corpus import (
    MAX_ID_LENGTH,
    clean_area,
    load_corpus,
    long_id_key,
    normalize_url,
    parse_authors,
)
from tests.retrieval.fixtures import pasted_corpus

ROOT = Path(__file__).resolve().parents[2]
SEED_DIR = ROOT / "data" / "corpus"


def write(path: Path, data: str | bytes, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode(encoding))
    return path


def fields(paper) -> tuple:
    return (paper.area, paper.authors, paper.et_al, paper.abstract)


# -- the pasted fixture ----------------------------------------------------------------------------


def test_fixture_is_big_enough():
    assert len(pasted_corpus.BLOCKS) >= 30


@pytest.mark.parametrize(
    ("newline", "encoding"),
    [("\n", "utf-8"), ("\r\n", "utf-8"), ("\n", "utf-8-sig"), ("\r\n", "utf-16"), ("\r", "utf-8")],
    ids=["lf", "crlf", "utf8-bom", "utf16-bom-crlf", "cr"],
)
def test_pasted_fixture_loads_every_block_exactly(tmp_path, newline, encoding):
    corpus = load_corpus(write(tmp_path / "pasted.txt", pasted_corpus.text(newline), encoding))
    assert corpus.skipped == ()
    assert corpus.cp1252_files == ()
    assert len(corpus.papers) == len(pasted_corpus.BLOCKS)
    for block, paper in zip(pasted_corpus.BLOCKS, corpus.papers, strict=True):
        assert fields(paper) == (block.area, block.authors, block.et_al, block.abstract), block.raw[:60]


def test_pasted_fixture_blocks_load_alone_and_in_any_order(tmp_path):
    blocks = list(pasted_corpus.BLOCKS)
    random.Random(5).shuffle(blocks)
    text = "\n\n".join(b.raw for b in blocks)  # no header, the Chinese-area block no longer first
    corpus = load_corpus(write(tmp_path / "shuffled.txt", text))
    assert [fields(p) for p in corpus.papers] == [(b.area, b.authors, b.et_al, b.abstract) for b in blocks]
    one = load_corpus(write(tmp_path / "one.txt", pasted_corpus.BLOCKS[0].raw))
    assert [p.area for p in one.papers] == ["强化学习 · 离线强化学习"]


def test_sources_name_the_area_line(tmp_path):
    path = write(tmp_path / "pasted.txt", pasted_corpus.text())
    lines = path.read_text(encoding="utf-8").split("\n")
    for block, paper in zip(pasted_corpus.BLOCKS, load_corpus(path).papers, strict=True):
        line = int(paper.source.rsplit(":", 1)[1])
        assert clean_area(lines[line - 1].strip("\u200b")) == block.area


# -- authors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "names", "et_al"),
    [
        ("Alice Smith1, Bob Jones2,3", ("Alice Smith", "Bob Jones"), False),
        ("Smith*, Jones†, Lee‡", ("Smith", "Jones", "Lee"), False),
        ("Wei Zhang 0001, Lei Li 0005", ("Wei Zhang", "Lei Li"), False),
        ("A B, C D et al.", ("A B", "C D"), True),
        ("A B, C D et al", ("A B", "C D"), True),
        ("A B，C D 等", ("A B", "C D"), True),
        ("张三，李四", ("张三", "李四"), False),
        ("Ravi Kumar (IIT Delhi)", ("Ravi Kumar",), False),
        ("Ravi Kumar （IIT Delhi）, Ana Silva [USP]", ("Ravi Kumar", "Ana Silva"), False),
        ("Kevin Data, Anna Model", ("Kevin Data", "Anna Model"), False),
        ("A, B, and C", ("A", "B", "C"), False),
        ("authors: A B, C D", ("A B", "C D"), False),
        ("Qwen Team", ("Qwen Team",), False),
    ],
)
def test_author_lines(line, names, et_al):
    assert parse_authors(line) == (names, et_al)


def test_names_of_any_length_script_and_count(tmp_path):
    long_name = "María de los Ángeles García López de Mendoza"
    many = ", ".join(f"Person {i:03d}x" for i in range(300)).replace("0", "o")
    text = f"Theory\n\n{long_name}, 张三, {many}\n\nWe study something about graphs. It works well.\n"
    paper = load_corpus(write(tmp_path / "c.txt", text)).papers[0]
    assert paper.authors[:2] == (long_name, "张三")
    assert len(paper.authors) == 302


# -- areas -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "area", ["3D Vision", "Vision · 3D Reconstruction", "Optimization", "强化学习 · 离线强化学习", "Data"]
)
def test_any_area_line_in_the_first_block(tmp_path, area):
    text = f"{area}\n\nAda Lovelace\n\nWe propose a thing. It is good at graphs.\n\n"
    text += "Theory\n\nB C\n\nAnother abstract.\n"
    corpus = load_corpus(write(tmp_path / "c.txt", text))
    assert [p.area for p in corpus.papers] == [area, "Theory"]
    assert corpus.skipped == ()


def test_only_the_configured_header_is_a_header(tmp_path):
    text = "My Papers\n\nTheory\n\nAda Lovelace\n\nWe propose a thing that is good at graphs.\n"
    default = load_corpus(write(tmp_path / "a.txt", text))
    # the line above the area line is the paper's title
    assert [(p.title, p.title_derived, p.area) for p in default.papers] == [("My Papers", False, "Theory")]
    configured = load_corpus(tmp_path / "a.txt", headers=("My Papers",))
    assert configured.skipped == () and [p.area for p in configured.papers] == ["Theory"]
    assert configured.papers[0].title_derived


# -- abstracts over several lines --------------------------------------------------------------------


def test_abstract_over_several_lines_is_one_abstract(tmp_path):
    text = (
        "Theory\n\nAda Lovelace\n\nWe propose a thing that is good\nat graphs and at trees.\nIt is fast.\n\n"
        "Optimization\n\nAlan Turing\n\nSecond abstract on one line, about solvers.\n"
    )
    corpus = load_corpus(write(tmp_path / "c.txt", text))
    assert [p.abstract for p in corpus.papers] == [
        "We propose a thing that is good at graphs and at trees. It is fast.",
        "Second abstract on one line, about solvers.",
    ]


def test_file_without_blank_lines_has_one_line_per_field(tmp_path):
    text = "\n".join(b.raw.replace("\n\n", "\n") for b in pasted_corpus.BLOCKS[1:8] if b.raw.count("\n") == 4)
    corpus = load_corpus(write(tmp_path / "c.txt", text))
    expected = [b for b in pasted_corpus.BLOCKS[1:8] if b.raw.count("\n") == 4]
    assert len(expected) >= 5
    assert [fields(p) for p in corpus.papers] == [(b.area, b.authors, b.et_al, b.abstract) for b in expected]


# -- encodings -------------------------------------------------------------------------------------


def test_windows_1252_file_is_decoded_and_named(tmp_path):
    text = "Theory\r\n\r\nJosé Núñez, Zoë Ölçer\r\n\r\n"
    text += "We study “smart” quotes — and dashes… in café menus.\r\n"
    path = write(tmp_path / "win.txt", text, encoding="cp1252")
    corpus = load_corpus(path)
    paper = corpus.papers[0]
    assert paper.authors == ("José Núñez", "Zoë Ölçer")
    assert paper.abstract == "We study “smart” quotes — and dashes… in café menus."
    assert "\ufffd" not in paper.abstract + "".join(paper.authors)
    assert corpus.cp1252_files == (str(path),)


def test_one_windows_1252_line_in_a_utf8_file_leaves_the_rest_intact(tmp_path):
    utf8 = "强化学习 · 离线强化学习\n\n张三\n\n我们研究离线强化学习中的价值高估问题。\n\n".encode()
    rest = "Theory\n\nJosé Núñez\n\nWe study a thing about graphs and trees here.\n".encode("cp1252")
    corpus = load_corpus(write(tmp_path / "mixed.txt", utf8 + rest))
    assert [p.area for p in corpus.papers] == ["强化学习 · 离线强化学习", "Theory"]
    assert corpus.papers[1].authors == ("José Núñez",)
    assert len(corpus.cp1252_files) == 1


def test_undefined_windows_1252_bytes_do_not_become_replacement_characters(tmp_path):
    data = b"Theory\n\nAda \x81Lovelace\x9d\n\nWe study a thing about graphs and trees here.\n"
    paper = load_corpus(write(tmp_path / "c.txt", data)).papers[0]
    assert "\ufffd" not in paper.authors[0]


# -- the report ------------------------------------------------------------------------------------


def test_skipped_blocks_name_file_line_field_and_why(tmp_path):
    good = [b.raw for b in pasted_corpus.BLOCKS[1:5]]
    text = "\n\n".join(
        [
            good[0],
            # no authors
            "Theory · Learning Theory\n\nWe prove a bound for learning halfspaces with noise. It is tight.",
            good[1],
            # no area: the area is optional
            "Alice Smith, Bob Jones\n\nWe prove another bound for learning with noise. It is tight too.",
            good[2],
            "Theory · Optimization\n\nNiklaus Wirth",  # no abstract
            good[3],
        ]
    )
    text = "| Method | Accuracy |\n|---|---|\n| Ours | 91.2 |\n\n" + text  # a table after no abstract
    path = write(tmp_path / "bad.txt", text)
    corpus = load_corpus(path)
    blocks = pasted_corpus.BLOCKS
    no_area = "We prove another bound for learning with noise. It is tight too."
    want = [blocks[1].abstract, blocks[2].abstract, no_area, blocks[3].abstract, blocks[4].abstract]
    assert [p.abstract for p in corpus.papers] == want
    assert [p.area for p in corpus.papers][2] == ""
    lines = text.split("\n")
    by_field = {s.reason.split(":", 1)[0]: s for s in corpus.skipped}
    assert set(by_field) == {"authors", "abstract", "block"}
    assert lines[by_field["authors"].line - 1].startswith("We prove a bound")  # the line that is wrong
    assert lines[by_field["abstract"].line - 1] == "Theory · Optimization"
    assert lines[by_field["block"].line - 1] == "| Method | Accuracy |" and "table" in by_field["block"].why
    assert corpus.blocks == len(corpus.papers) + corpus.duplicates + len(corpus.skipped)
    for s in corpus.skipped:
        assert str(s).startswith(f"{path}:{s.line}: {s.reason.split(':', 1)[0]}: ")
        assert s.field in {"authors", "block", "abstract"} and s.why


def test_ignored_files_are_named(tmp_path):
    write(tmp_path / "a.txt", pasted_corpus.BLOCKS[1].raw)
    write(tmp_path / "paper.pdf", b"%PDF-1.4")
    write(tmp_path / "notes.md", "# notes")
    (tmp_path / "sub").mkdir()
    corpus = load_corpus(tmp_path)
    assert [Path(f).name for f in corpus.ignored_files] == ["notes.md", "paper.pdf"]


# -- the bundled corpus with random lines deleted ----------------------------------------------------


def _seed_blocks(lines: list[str]) -> list[tuple[int, int, int]]:
    content = [i for i, x in enumerate(lines) if x.strip() and x.strip() != "论文检索"]
    assert len(content) % 3 == 0
    return [tuple(content[k : k + 3]) for k in range(0, len(content), 3)]


@pytest.mark.parametrize("chunk", range(4))
def test_deleting_random_lines_never_disturbs_untouched_blocks(tmp_path, chunk):
    """200 seeded trials (50 per chunk): delete 1-3 random lines of a bundled corpus file. Every block
    none of whose lines (nor the blank line after each) was deleted loads exactly, and every paper
    loaded has a real abstract: no neighbour's line is ever glued onto or taken for one."""
    files = sorted(SEED_DIR.glob("*.txt"))
    for trial in range(chunk * 50, chunk * 50 + 50):
        rng = random.Random(trial)
        source = rng.choice(files)
        lines = source.read_text(encoding="utf-8").split("\n")
        blocks = _seed_blocks(lines)
        deleted = set(rng.sample(range(len(lines)), rng.randint(1, 3)))
        kept = "\n".join(x for i, x in enumerate(lines) if i not in deleted)
        path = write(tmp_path / f"t{trial}" / source.name, kept)
        corpus = load_corpus(path)
        loaded = {(p.area, p.authors, p.abstract) for p in corpus.papers}
        abstracts = {lines[b[2]] for b in blocks}
        for area, authors, abstract in blocks:
            if any(area <= x <= abstract + 1 for x in deleted):
                continue
            want = (clean_area(lines[area]), parse_authors(lines[authors])[0], lines[abstract])
            assert want in loaded, (trial, sorted(deleted), lines[area])
        assert all(a in abstracts for _, _, a in loaded), (trial, sorted(deleted))
        touched = sum(any(b[0] <= x <= b[2] + 1 for x in deleted) for b in blocks)
        assert len(corpus.papers) >= len(blocks) - touched


# -- JSON Lines: urls and ids ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "url"),
    [
        ("https://arxiv.org/abs/2401.00001", "https://arxiv.org/abs/2401.00001"),
        ("http://example.org/x?y=1", "http://example.org/x?y=1"),
        ("arxiv.org/abs/2401.00001", "https://arxiv.org/abs/2401.00001"),
        ("www.example.org", "https://www.example.org"),
        ("//example.org/p", "https://example.org/p"),
        ("doi:10.48550/arXiv.2401.00002", "https://doi.org/10.48550/arXiv.2401.00002"),
        ("DOI: 10.1000/xyz123", "https://doi.org/10.1000/xyz123"),
        ("10.1145/3292500.3330701", "https://doi.org/10.1145/3292500.3330701"),
        ("arXiv:2401.00003v2", "https://arxiv.org/abs/2401.00003v2"),
        ("javascript:alert(1)", None),
        ("ftp://example.org/file", None),
        ("mailto:a@b.org", None),
        ("not a url", None),
        ("paper.pdf", None),
        ("https://", None),
    ],
)
def test_urls_become_http_links_or_nothing(raw, url):
    assert normalize_url(raw) == url


def test_jsonl_urls_are_normalised_or_dropped_with_a_report_line(tmp_path):
    records = [
        {"id": "a", "abstract": "First abstract.", "url": "arxiv.org/abs/2401.00001"},
        {"id": "b", "abstract": "Second abstract.", "url": "doi:10.48550/arXiv.2401.00002"},
        {"id": "c", "abstract": "Third abstract.", "url": "javascript:alert(1)"},
    ]
    path = write(tmp_path / "c.jsonl", "\n".join(json.dumps(r) for r in records))
    corpus = load_corpus(path)
    assert [p.url for p in corpus.papers] == [
        "https://arxiv.org/abs/2401.00001",
        "https://doi.org/10.48550/arXiv.2401.00002",
        None,
    ]
    assert corpus.skipped == ()  # the paper loaded, with a note
    assert [(s.line, s.field) for s in corpus.notes] == [(3, "url")]
    assert "javascript:alert(1)" in corpus.notes[0].why


def test_jsonl_ids_over_100_characters_get_a_short_stable_key(tmp_path):
    long_id = "https://openreview.net/forum?id=" + "x" * 120
    records = [{"id": long_id, "abstract": "A paper with a long id."}, {"id": "ok", "abstract": "Another."}]
    path = write(tmp_path / "c.jsonl", "\n".join(json.dumps(r) for r in records))
    corpus = load_corpus(path)
    key = corpus.papers[0].id
    assert key == long_id_key(long_id) and len(key) <= MAX_ID_LENGTH and len(key) == 13
    assert corpus.papers[1].id == "ok"
    assert corpus.skipped == () and [(s.line, s.field) for s in corpus.notes] == [(1, "id")]
    assert key in corpus.notes[0].why
    again = load_corpus(write(tmp_path / "d" / "c.jsonl", path.read_text()))
    assert again.papers[0].id == key  # stable across loads
