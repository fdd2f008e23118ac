"""Tests of retrieval.corpus: the seed format, JSON Lines, ids, duplicates, areas, errors."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval import corpus as corpus_module
from retrieval.corpus import (
    ID_ALPHABET,
    Corpus,
    area_key,
    clean_area,
    corpus_files,
    load_corpus,
    normalize_name,
    paper_id,
    parse_authors,
    short_ids,
)
from retrieval.errors import CorpusError
from retrieval.titles import derive_title

ROOT = Path(__file__).resolve().parents[2]
SEED_DIR = ROOT / "data" / "corpus"
SEED_FILES = {"000": "000_052725e3e4cc1d6a.txt", "002": "002_89f75c7431d67b52.txt"}
SHARED = ROOT / ".." / "shared" / "corpora"
ID_RE = re.compile(f"[{ID_ALPHABET}]{{8}}")

MERGED_AREA = "Social Aspects · Accountability, Transparency and Interpretability"

# (file, line of the area line, area as loaded, et al., authors joined by ", ") for every seed paper,
# in corpus order.
# Two seed papers spell the area "Accountability, Transparency, and Interpretability" (Oxford comma);
# they load with the more common spelling (4 against 2).
# fmt: off
SEED_TABLE = [
    ("000",   3, "Reinforcement Learning · Batch/Offline", False, "Prajwal Koirala, Cody Fleming"),
    ("000",   9, "Theory · Reinforcement Learning and Planning", False,
     "Patrik Reizinger, Bálint Mucsányi, Siyuan Guo, Benjamin Eysenbach, Bernhard Schölkopf, "
     "Wieland Brendel"),
    ("000",  15, "Theory · Interpretability and Visualization", False,
     "Arnav Das, Gantavya Bhatt, Sahil Verma, Yiping Wang, Viswa Virinchi Muppirala, Jeff Bilmes"),
    ("000",  21, "Theory · Learning Theory", False, "Riccardo Molteni, Simon Marshall, Vedran Dunjko"),
    ("000",  27, "Theory · Interpretability and Visualization", False,
     "Zunhai Su, Qingyuan Li, HaoZhang, Weihao Ye, Qibo Xue, Yulei Qian, Ngai Wong, Kehong Yuan"),
    ("000",  33, "Theory · Interpretability and Visualization", False,
     "Thomas Heap, Tim Lawson, Lucy Farnik, Laurence Aitchison"),
    ("000",  39, "Theory · Learning Theory", False, "Roy Betser, Eyal Gofer, Meir Yossef Levi, Guy Gilboa"),
    ("000",  45, "Theory · Learning Theory", False, "Yukuan Wei, Xudong Li, Lin Yang"),
    ("000",  51, "Theory · Learning Theory", False, "Riccardo Poiani, Martino Bernasconi, Andrea Celli"),
    ("000",  57, "Theory · Game Theory", False,
     "Kiarash Banihashem, Diptarka Chakraborty, Shayan Jahan, Iman Gholami, "
     "MohammadTaghi Hajiaghayi, Mohammad Mahdavi, Max Springer"),
    ("000",  63, "Social Aspects · Fairness, Equity, Justice and Safety", False,
     "Joonsung Jeon, Woo Jae Kim, Suhyeon Ha, Sooel Son, Sung-eui Yoon"),
    ("000",  69, "Social Aspects · Fairness, Equity, Justice and Safety", False,
     "Liangsheng Liu, Si Chen, Jiamin Wu, Weiwei Feng, Zhixin Cheng, Xiaotian Yin, Wenfei Yang, "
     "Tianzhu Zhang"),
    ("000",  75, "Social Aspects · Fairness, Equity, Justice and Safety", False,
     "Qibing Ren, Zhijie Zheng, Jiaxuan Guo, Junchi Yan, Lizhuang Ma, Jing Shao"),
    ("000",  81, "Social Aspects · Fairness, Equity, Justice and Safety", False,
     "Zherui Li, Zheng Nie, Zhenhong Zhou, Yue Liu, Yitong Zhang, Yu Cheng, Qingsong Wen, "
     "Kun Wang, Yufei Guo, Jiaheng Zhang"),
    ("000",  87, "Social Aspects · Fairness, Equity, Justice and Safety", False,
     "Fanjunduo Wei, Zhenheng Tang, Rongfei Zeng, Tongliang Liu, Chengqi Zhang, Xiaowen Chu, "
     "Bo Han"),
    ("000",  93, "Social Aspects · Fairness, Equity, Justice and Safety", False,
     "Yujie Lin, Kunquan Li, YiXuan Liao, Xiaoxin Chen, Jinsong Su"),
    ("000",  99, "Social Aspects · Accountability, Transparency and Interpretability", False,
     "Wenxin Tai, Ting Zhong, Goce Trajcevski, Fan Zhou"),
    ("000", 105, "Social Aspects · Accountability, Transparency and Interpretability", False,
     "Huanyi Xie, Chenyang Ren, Khouloud Saadi, Shu Yang, Zhen Tan, Jingfeng Zhang, Lijie Hu, "
     "Di Wang"),
    ("000", 111, "Social Aspects · Accountability, Transparency and Interpretability", False,
     "Chenyang Ren, Huanyi Xie, Shu Yang, Meng Ding, Dongrui Liu, Lijie Hu, Di Wang"),
    ("000", 117, "Social Aspects · Accountability, Transparency and Interpretability", False,
     "Yuhan Guo, Lizhong Ding, Shihao Jia, Yanyu Ren, Pengqi Li, Jiarun Fu, Changsheng Li, "
     "Ye Yuan, Guoren Wang"),
    ("002",   3, "Theory · Learning Theory", False,
     "Jasper Lee, Walter McKelvie, Maoyuan Song, Paul Valiant"),
    ("002",   9, "Reinforcement Learning · Batch/Offline", False,
     "Yilun Kong, Guozheng Ma, Qi Zhao, Haoyu Wang, Li Shen, Xueqian Wang, Dacheng Tao"),
    ("002",  15, "Deep Learning · Large Language Models", False,
     "Michael Zhang, Zhilin Wang, Jena Hwang, Yi Dong, Olivier Delalleau, Yejin Choi, "
     "Eunsol Choi, Xiang Ren, Valentina Pyatkin"),
    ("002",  21, "Theory · Learning Theory", False,
     "Yuxin Dong, Haoran Guo, Tieliang Gong, Wen Wen, Chen Li"),
    ("002",  27, "Deep Learning · Foundation Models", False,
     "Da Xiao, Qingye Meng, Shengping Li, xingyuan yuan"),
    ("002",  33, "Theory · Learning Theory", False,
     "Yannis Montreuil, Shu Heng Yeo, Axel Carlier, Lai Xing Ng, Wei Tsang Ooi"),
    ("002",  39, "Social Aspects · Accountability, Transparency and Interpretability", True ,
     "Adam Karvonen, Can Rager, Johnny Lin, Curt Tigges, Joseph Bloom, David Chanin, "
     "Yeu-Tong Lau, Eoin Farrell, Callum McDougall, Kola Ayonrinde"),
    ("002",  45, "Deep Learning · Large Language Models", False,
     "chengqian gao, Haonan Li, Liu Liu, Zeke Xie, Peilin Zhao, Zhiqiang Xu"),
    ("002",  51, "Deep Learning · Large Language Models", False,
     "Daniil Tiapkin, Daniele Calandriello, Johan Ferret, Sarah Perrin, Nino Vieillard, "
     "Alexandre Rame, Mathieu Blondel"),
    ("002",  57, "Applications · Health / Medicine", False,
     "Mengmeng Ma, Tang Li, Yunxiang Peng, LIN LU, Volkan Beylergil, Binsheng Zhao, Oguz Akin, "
     "Xi Peng"),
    ("002",  63, "Theory · Game Theory", False, "Jiawei Ge, Yuanhao Wang, Wenzhe Li, Chi Jin"),
    ("002",  69, "General Machine Learning · Everything Else", False,
     "Khai Nguyen, Hai Nguyen, Tuan Pham, Nhat Ho"),
    ("002",  75, "Deep Learning · Large Language Models", False,
     "David Reber, Sean Richardson, Todd Nief, Cristina Garbacea, Victor Veitch"),
    ("002",  81, "Applications · Computer Vision", False, "Guixiang Wang, Jianjun Li"),
    ("002",  87, "Social Aspects · Accountability, Transparency and Interpretability", False,
     "Subhash Kantamneni, Josh Engels, Senthooran Rajamanoharan, Max Tegmark, Neel Nanda"),
    ("002",  93, "General Machine Learning · Causality", False,
     "Boyang Sun, Yu Yao, Xinshuai Dong, Zongfang Liu, Tongliang Liu, Yumou Qiu, Kun Zhang"),
    ("002",  99, "General Machine Learning · Online Learning, Active Learning and Bandits", False,
     "Jae-Hong Lee"),
    ("002", 105, "Social Aspects", False,
     "Jen-Tse Huang, Jiaxu Zhou, Tailin Jin, Xuhui Zhou, Zixi Chen, Wenxuan Wang, Youliang Yuan, "
     "Michael Lyu, Maarten Sap"),
    ("002", 111, "Deep Learning · Graph Neural Networks", False,
     "Yejiang Wang, Yuhai Zhao, Zhengkui Wang, Wen Shan, Ling Li, Qian Li, Miaomiao Huang, "
     "Meixia Wang, Shirui Pan, Xingwei Wang"),
    ("002", 117, "General Machine Learning · Unsupervised and Semi-supervised Learning", False,
     "chao ying, Jun Jin, Yi Guo, Xiudi Li, Muxuan Liang, Jiwei Zhao"),
]
# fmt: on


@pytest.fixture(scope="module")
def seeds() -> Corpus:
    return load_corpus(SEED_DIR)


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


def block(area: str, authors: str, abstract: str) -> str:
    return f"{area}\n\n{authors}\n\n{abstract}\n\n"


ABSTRACT_A = (
    "We propose FooNet, a graph network for molecules. It predicts binding affinity from structure and "
    "beats strong baselines on three benchmarks."
)
ABSTRACT_B = (
    "Transformers are widely used for language modelling. We study how attention heads specialise during "
    "training and find two distinct phases."
)
ABSTRACT_C = (
    "Reinforcement learning agents often overfit to their training environments. We introduce a benchmark "
    "of procedurally generated tasks that measures generalisation."
)


def small_corpus(header: bool = True) -> str:
    text = "论文检索\n\n" if header else ""
    text += block("Deep Learning · Graph Neural Networks", "Ada Lovelace, Alan Turing", ABSTRACT_A)
    text += block("Deep Learning · Large Language Models", "Grace Hopper", ABSTRACT_B)
    text += block("Reinforcement Learning", "Edsger Dijkstra, Barbara Liskov, John McCarthy 等", ABSTRACT_C)
    return text


# --------------------------------------------------------------------------------------------------
# The seed corpus
# --------------------------------------------------------------------------------------------------


def test_seed_corpus_has_forty_papers(seeds):
    assert len(seeds.papers) == 40
    assert seeds.skipped == ()
    assert seeds.duplicates == 0
    assert [Path(f).name for f in seeds.files] == sorted(SEED_FILES.values())


@pytest.mark.parametrize(
    ("index", "row"), list(enumerate(SEED_TABLE)), ids=[f"{r[0]}:{r[1]}" for r in SEED_TABLE]
)
def test_seed_entry(seeds, index, row):
    file, line, area, et_al, authors = row
    paper = seeds.papers[index]
    authors = tuple(authors.split(", "))
    assert paper.source.endswith(f"{SEED_FILES[file]}:{line}")
    assert paper.area == area
    assert paper.authors == authors
    assert paper.et_al is et_al
    assert ID_RE.fullmatch(paper.id)
    assert paper.title == derive_title(paper.abstract)
    assert paper.url is None


def test_seed_abstracts_are_the_third_line_verbatim(seeds):
    for paper in seeds.papers:
        path_text, line = paper.source.rsplit(":", 1)
        lines = (SEED_DIR / Path(path_text).name).read_text(encoding="utf-8").split("\n")
        rest = [x.strip() for x in lines[int(line) :] if x.strip()]
        assert paper.abstract == rest[1]


def test_seed_area_spellings_are_merged(seeds):
    raw = "".join((SEED_DIR / name).read_text(encoding="utf-8") for name in SEED_FILES.values())
    assert raw.count("Accountability, Transparency and Interpretability") == 4
    assert raw.count("Accountability, Transparency, and Interpretability") == 2
    merged = [p for p in seeds.papers if "Accountability" in p.area]
    assert len(merged) == 6
    assert {p.area for p in merged} == {MERGED_AREA}
    assert area_key("Social Aspects · Accountability, Transparency, and Interpretability") == area_key(
        MERGED_AREA
    )


def test_seed_top_level_only_area(seeds):
    only_top = [p for p in seeds.papers if p.area == "Social Aspects"]
    assert len(only_top) == 1
    assert only_top[0].top_area == "Social Aspects"
    assert only_top[0].sub_area == ""


def test_seed_ids_are_unique_and_typeable(seeds):
    ids = [p.id for p in seeds.papers]
    assert len(set(ids)) == 40
    assert all(ID_RE.fullmatch(i) for i in ids)
    assert all(p.id == paper_id(p.authors, p.abstract) for p in seeds.papers)


# --------------------------------------------------------------------------------------------------
# Format tolerance
# --------------------------------------------------------------------------------------------------


def ids_and_fields(c: Corpus) -> list[tuple[str, str, tuple[str, ...], bool, str]]:
    return [(p.id, p.area, p.authors, p.et_al, p.abstract) for p in c.papers]


def test_small_corpus_fields(tmp_path):
    c = load_corpus(write(tmp_path / "c.txt", small_corpus()))
    assert [p.area for p in c.papers] == [
        "Deep Learning · Graph Neural Networks",
        "Deep Learning · Large Language Models",
        "Reinforcement Learning",
    ]
    assert c.papers[2].authors == ("Edsger Dijkstra", "Barbara Liskov", "John McCarthy")
    assert c.papers[2].et_al is True
    assert c.papers[0].et_al is False
    assert [p.source for p in c.papers] == [f"{tmp_path / 'c.txt'}:{n}" for n in (3, 9, 15)]
    assert c.papers[0].title == "FooNet: Graph network for molecules"
    assert c.skipped == ()


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(lambda t: t.replace("论文检索\n\n", ""), id="no-header"),
        pytest.param(lambda t: t.replace("\n", "\r\n"), id="crlf"),
        pytest.param(lambda t: t.replace("\n", "\r"), id="old-mac-cr"),
        pytest.param(lambda t: "\ufeff" + t, id="bom"),
        pytest.param(lambda t: t.rstrip("\n"), id="no-trailing-newline"),
        pytest.param(lambda t: t.replace("\n\n", "\n \t \n\n\n"), id="extra-blank-lines"),
        pytest.param(lambda t: "\n\n\n" + t, id="leading-blank-lines"),
        pytest.param(lambda t: "\n".join(f"  \t{x}   " for x in t.split("\n")), id="stray-spaces-tabs"),
        pytest.param(lambda t: t.replace("\n\n", "\n"), id="compact-no-blank-lines"),
        pytest.param(lambda t: t.replace(" · ", "·"), id="separator-without-spaces"),
        pytest.param(lambda t: t.replace(" · ", "  ·   "), id="separator-odd-spacing"),
    ],
)
def test_format_variants_give_the_same_papers(tmp_path, variant):
    reference = load_corpus(write(tmp_path / "ref.txt", small_corpus()))
    changed = load_corpus(write(tmp_path / "variant" / "c.txt", variant(small_corpus())))
    assert changed.skipped == ()
    assert [(p.id, p.area, p.authors, p.et_al) for p in changed.papers] == [
        (p.id, p.area, p.authors, p.et_al) for p in reference.papers
    ]
    assert [" ".join(p.abstract.split()) for p in changed.papers] == [p.abstract for p in reference.papers]


def test_utf16_file_with_bom(tmp_path):
    c = load_corpus(write(tmp_path / "c.txt", small_corpus(), encoding="utf-16"))
    assert len(c.papers) == 3


def test_invalid_utf8_is_read_as_windows_1252_not_replaced(tmp_path):
    data = small_corpus().encode("utf-8").replace(b"Alan Turing", "Alan Türing".encode("cp1252"))
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    c = load_corpus(path)
    assert len(c.papers) == 3
    assert c.papers[0].authors[1] == "Alan Türing"
    assert c.papers[0].area == "Deep Learning · Graph Neural Networks"  # the UTF-8 lines stay UTF-8
    assert c.cp1252_files == (str(path),)


def test_header_only_file_is_an_error(tmp_path):
    with pytest.raises(CorpusError, match="no paper"):
        load_corpus(write(tmp_path / "c.txt", "论文检索\n\n"))


def test_et_al_variants():
    assert parse_authors("A B, C D 等") == (("A B", "C D"), True)
    assert parse_authors("A B, C D等") == (("A B", "C D"), True)
    assert parse_authors("A B, C D, 等") == (("A B", "C D"), True)
    assert parse_authors("A B, C D et al.") == (("A B", "C D"), True)
    assert parse_authors("A B, C D, et al") == (("A B", "C D"), True)
    assert parse_authors(" A B ,, C  D , ") == (("A B", "C D"), False)
    assert parse_authors("A B and C D") == (("A B", "C D"), False)
    assert parse_authors("Jae-Hong Lee") == (("Jae-Hong Lee",), False)


# --------------------------------------------------------------------------------------------------
# Malformed blocks
# --------------------------------------------------------------------------------------------------


def test_malformed_blocks_are_skipped_with_their_line(tmp_path):
    text = (
        "论文检索\n\n"  # 1
        + block("Theory · Learning Theory", "Ada Lovelace", ABSTRACT_A)  # 3, 5, 7
        + block("Theory · Game Theory", "Alan Turing, Grace Hopper", "tbd.")  # 9: abstract too short
        + "Deep Learning · Robustness\n\n"
        + ABSTRACT_B
        + "\n\n"  # 15: authors missing
        + "%%%% garbage ####\n\n12345\n\n"  # 19, 21: garbage lines (one block)
        + block("Optimization", "Barbara Liskov", ABSTRACT_C)  # 23, 25, 27
        + "Edsger Dijkstra, John McCarthy\n\n"  # 29: no area (optional)
        + "We show a thing about graphs and trees that nobody knew before.\n\n"
        + block("Applications · Health", "Tim Berners-Lee", ABSTRACT_A.replace("molecules", "proteins"))  # 33
        + "Theory · Optimization\n\nNiklaus Wirth\n\n"  # 39, 41: abstract missing
        + block("Theory · Game Theory", "Donald Knuth", ABSTRACT_B.replace("two", "three"))  # 43, 45, 47
    )
    c = load_corpus(write(tmp_path / "bad.txt", text))
    # Read by position, "tbd." is the abstract of the block at line 9.
    assert [p.source.rsplit(":", 1)[1] for p in c.papers] == ["3", "9", "23", "29", "33", "43"]
    assert [p.area for p in c.papers] == [
        "Theory · Learning Theory",
        "Theory · Game Theory",
        "Optimization",
        "",
        "Applications · Health",
        "Theory · Game Theory",
    ]
    assert c.papers[1].abstract == "tbd."
    reasons = {s.line: s.reason for s in c.skipped}
    assert set(reasons) == {17, 19, 39}
    assert reasons[17].startswith("authors: missing: the line after the area 'Deep Learning · Robustness'")
    assert reasons[19].startswith("abstract: missing: the 2 lines '%%%% garbage ####' and '12345'")
    assert reasons[39].startswith("abstract: missing: the 2 lines 'Theory · Optimization' and 'Niklaus")
    assert all(s.path == str(tmp_path / "bad.txt") for s in c.skipped)
    assert str(c.skipped[0]) == f"{tmp_path / 'bad.txt'}:17: {reasons[17]}"


def test_one_bad_line_does_not_shift_later_blocks(tmp_path):
    good = small_corpus(header=False)
    text = "stray line\n\n" + good.replace(
        ABSTRACT_B, ABSTRACT_B + "\n\nAn extra paragraph sits here, alone."
    )
    c = load_corpus(write(tmp_path / "c.txt", text))
    assert [p.authors[0] for p in c.papers] == ["Ada Lovelace", "Grace Hopper", "Edsger Dijkstra"]
    assert [s.line for s in c.skipped] == [1, 15]


def test_incomplete_block_at_end(tmp_path):
    c = load_corpus(write(tmp_path / "c.txt", small_corpus() + "Theory · Optimization\n"))
    assert len(c.papers) == 3
    assert [s.line for s in c.skipped] == [21]
    assert c.skipped[0].reason == (
        "authors: missing: the file ends after 'Theory · Optimization' (an incomplete block)"
    )


def test_binary_file_is_skipped(tmp_path):
    write(tmp_path / "a.txt", small_corpus())
    (tmp_path / "b.txt").write_bytes(bytes(range(256)) * 4)
    c = load_corpus(tmp_path)
    assert len(c.papers) == 3
    assert c.skipped == () and [Path(f).name for f in c.files] == ["a.txt"]  # rejected, not read
    assert [(Path(s.path).name, s.line) for s in c.rejected] == [("b.txt", 1)]
    assert "binary" in c.rejected[0].reason


# --------------------------------------------------------------------------------------------------
# Paths and errors
# --------------------------------------------------------------------------------------------------


def test_nonexistent_path(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(CorpusError, match="does not exist"):
        corpus_files(tmp_path / "nope")


def test_empty_file(tmp_path):
    with pytest.raises(CorpusError, match="empty.txt:1: file: empty"):
        load_corpus(write(tmp_path / "empty.txt", ""))


def test_directory_without_corpus_files(tmp_path):
    write(tmp_path / "notes.md", small_corpus())
    write(tmp_path / ".hidden.txt", small_corpus())
    with pytest.raises(CorpusError, match=r"no corpus file \(\.txt, \.jsonl"):
        corpus_files(tmp_path)


def test_directory_input_reads_txt_and_jsonl_sorted(tmp_path):
    write(tmp_path / "b.txt", small_corpus())
    write(
        tmp_path / "a.jsonl", json.dumps({"id": "X1", "title": "A title", "abstract": "Some abstract text."})
    )
    write(tmp_path / "c.md", small_corpus())
    write(tmp_path / ".d.txt", small_corpus())
    write(tmp_path / "sub" / "e.txt", small_corpus())
    assert [f.name for f in corpus_files(tmp_path)] == ["a.jsonl", "b.txt"]
    c = load_corpus(tmp_path)
    assert [p.id for p in c.papers][0] == "X1"
    assert len(c.papers) == 4
    assert [Path(f).name for f in c.files] == ["a.jsonl", "b.txt"]


def test_explicit_file_with_other_suffix_is_sniffed(tmp_path):
    assert len(load_corpus(write(tmp_path / "corpus.data", small_corpus())).papers) == 3
    rows = json.dumps({"_id": "7", "text": "Some abstract text for the sniffing test."})
    assert [p.id for p in load_corpus(write(tmp_path / "rows.json", rows)).papers] == ["7"]


def test_nothing_loadable_lists_reasons(tmp_path):
    write(tmp_path / "a.txt", "just some words\n\nand more words\n")
    write(tmp_path / "b.jsonl", "{not json}\n")
    with pytest.raises(CorpusError) as info:
        load_corpus(tmp_path)
    message = str(info.value)
    assert "no paper could be loaded" in message
    assert "a.txt:1" in message and "b.jsonl:1: record: invalid JSON" in message


# --------------------------------------------------------------------------------------------------
# JSON Lines
# --------------------------------------------------------------------------------------------------


def jsonl(*rows: object) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


def test_jsonl_fields(tmp_path):
    path = write(
        tmp_path / "p.jsonl",
        jsonl(
            {
                "id": " iclr-1 ",
                "title": "Fast $\\epsilon$-nets",
                "abstract": ABSTRACT_A,
                "authors": ["Ada Lovelace", " Alan Turing "],
                "area": "Theory->Learning Theory",
                "url": "https://x.org/1",
            },
            {
                "_id": 42,
                "title": "",
                "text": ABSTRACT_B,
                "authors": "Grace Hopper, Edsger Dijkstra 等",
                "area": None,
            },
            {"abstract": ABSTRACT_C},
        ),
    )
    c = load_corpus(path)
    a, b, d = c.papers
    assert (a.id, a.title, a.authors, a.area, a.url, a.et_al) == (
        "iclr-1",
        "Fast ε-nets",
        ("Ada Lovelace", "Alan Turing"),
        "Theory · Learning Theory",
        "https://x.org/1",
        False,
    )
    assert (b.id, b.authors, b.et_al, b.area, b.url) == (
        "42",
        ("Grace Hopper", "Edsger Dijkstra"),
        True,
        "",
        None,
    )
    assert b.title == derive_title(ABSTRACT_B)
    assert d.id == paper_id((), ABSTRACT_C) and d.authors == () and d.area == ""
    assert [p.source for p in c.papers] == [f"{path}:{n}" for n in (1, 2, 3)]


def test_jsonl_bad_lines_are_skipped_with_file_and_line(tmp_path):
    path = write(
        tmp_path / "p.jsonl",
        jsonl(
            {"id": "a", "abstract": ABSTRACT_A},
            "{broken json",
            "",
            {"id": "b", "abstract": ""},
            "[1, 2]",
            {"id": "c", "text": ABSTRACT_B},
            "[" * 100000,
        ),
    )
    c = load_corpus(path)
    assert [p.id for p in c.papers] == ["a", "c"]
    assert [(s.line, s.reason.split(" (")[0]) for s in c.skipped] == [
        (2, "record: invalid JSON"),
        (4, "abstract: missing: the record has no abstract or text"),
        (5, "record: not a JSON object"),
        (7, "record: invalid JSON"),
    ]
    assert str(c.skipped[0]).startswith(f"{path}:2: record: invalid JSON")


def test_jsonl_repeated_explicit_id_is_a_duplicate(tmp_path):
    path = write(
        tmp_path / "p.jsonl", jsonl({"id": "a", "abstract": ABSTRACT_A}, {"id": "a", "abstract": ABSTRACT_B})
    )
    c = load_corpus(path)
    assert [p.abstract for p in c.papers] == [ABSTRACT_A]
    assert c.duplicates == 1
    assert c.duplicate_details == (f"{path}:2: duplicate id a (loaded from {path}:1)",)


# --------------------------------------------------------------------------------------------------
# Duplicates and ids
# --------------------------------------------------------------------------------------------------


def test_same_paper_in_two_files_is_loaded_once(tmp_path):
    write(tmp_path / "a.txt", small_corpus())
    copy = small_corpus(header=False).replace("Deep Learning · Large Language Models", "Deep Learning")
    write(
        tmp_path / "b.txt",
        "论文检索\n\n"
        + block("Theory", "Someone Else", "A different abstract about things.")
        + copy.replace(ABSTRACT_B, "  " + ABSTRACT_B.replace(" ", "  ")),
    )
    c = load_corpus(tmp_path)
    assert len(c.papers) == 4
    assert c.duplicates == 3
    first = {p.authors[0]: p for p in c.papers}
    assert c.duplicate_details[0] == (
        f"{tmp_path / 'b.txt'}:9: duplicate of {first['Ada Lovelace'].id} "
        f"(loaded from {tmp_path / 'a.txt'}:3)"
    )
    assert all(" duplicate of " in d for d in c.duplicate_details)


def test_txt_and_jsonl_copy_of_a_paper_is_one_paper(tmp_path):
    write(tmp_path / "a.txt", small_corpus())
    write(tmp_path / "b.jsonl", jsonl({"id": "J1", "abstract": ABSTRACT_B, "authors": ["Grace Hopper"]}))
    c = load_corpus(tmp_path)
    assert len(c.papers) == 3 and c.duplicates == 1
    assert "b.jsonl:1: duplicate of" in c.duplicate_details[0]


def test_ids_survive_whitespace_crlf_rename_and_reordering(tmp_path):
    reference = {
        p.abstract: p.id for p in load_corpus(write(tmp_path / "a" / "x.txt", small_corpus())).papers
    }
    blocks = small_corpus(header=False).strip().split("\n\n")
    reordered = "\n\n".join(blocks[6:9] + blocks[0:3] + blocks[3:6])
    edited = reordered.replace(" ", "  ").replace("\n", "\r\n").replace("It predicts", "It\tpredicts")
    c = load_corpus(write(tmp_path / "b" / "renamed.txt", edited))
    assert {" ".join(p.abstract.split()): p.id for p in c.papers} == reference


def test_ids_ignore_case_and_punctuation_spacing():
    base = paper_id(["Ada Lovelace"], "Models work. Recent results agree.")
    assert paper_id([" ada  lovelace "], "models work.Recent results agree.") == base
    assert paper_id(["Ada Lovelace"], "Models work.\r\nRecent results   agree.") == base
    assert paper_id(["Ada Lovelace"], "Models work. Recent results disagree.") != base
    assert paper_id(["Alan Turing"], "Models work. Recent results agree.") != base
    assert ID_RE.fullmatch(base)


def test_id_alphabet():
    assert len(ID_ALPHABET) == 32
    assert not set("ilou") & set(ID_ALPHABET)
    assert ID_ALPHABET == ID_ALPHABET.lower()


def digest(prefix: bytes, rest: int) -> bytes:
    return prefix + rest.to_bytes(32 - len(prefix), "big")


def test_short_ids_collision_rule():
    shared = b"\x12\x34\x56\x78\x9a"  # 40 bits = the 8 characters both ids share
    low, high, other = digest(shared, 1), digest(shared, 2), digest(b"\xff" * 5, 3)
    ids = short_ids([high, other, low])
    assert ids[2] == ids[0][:8] and len(ids[2]) == 8  # the smaller full hash keeps 8 characters
    assert len(ids[0]) == 12 and ids[0].startswith(ids[2])
    assert len(ids[1]) == 8
    assert short_ids([low, high, other]) == [ids[2], ids[0], ids[1]]  # independent of the order


def test_short_ids_avoid_reserved_explicit_ids():
    d = digest(b"\x00" * 5, 9)
    eight = short_ids([d])[0]
    assert len(short_ids([d], reserved={eight})[0]) == 12


def test_collision_inside_load_corpus(tmp_path, monkeypatch):
    real = corpus_module.record_digests

    def colliding(authors, abstract):
        d, key = real(authors, abstract)
        return b"\x00" * 5 + d[5:], key  # every paper's id digest shares its first 40 bits

    monkeypatch.setattr(corpus_module, "record_digests", colliding)
    c = load_corpus(write(tmp_path / "c.txt", small_corpus()))
    ids = [p.id for p in c.papers]
    digests = [colliding(p.authors, p.abstract)[0] for p in c.papers]
    winner = digests.index(min(digests))
    assert [len(i) for i in ids] == [8 if k == winner else 12 for k in range(3)]
    assert len(set(ids)) == 3


# --------------------------------------------------------------------------------------------------
# Areas and names
# --------------------------------------------------------------------------------------------------


def test_area_key_and_clean_area():
    assert area_key("Social Aspects · Accountability, Transparency, and Interpretability") == (
        "social aspects · accountability transparency and interpretability"
    )
    assert area_key("Theory") == "theory"
    assert area_key("Health / Medicine") == area_key("health medicine")
    assert area_key("Fairness & Safety") == area_key("Fairness and Safety")
    assert clean_area("Theory·Learning  Theory") == "Theory · Learning Theory"
    assert clean_area("  Theory ->Learning Theory ") == "Theory · Learning Theory"
    assert clean_area("Theory") == "Theory"


def test_most_common_area_spelling_wins_ties_go_to_first(tmp_path):
    text = (
        block("Theory · Games, Markets and Auctions", "A B", ABSTRACT_A)
        + block("Theory · Games, Markets, and Auctions", "C D", ABSTRACT_B)
        + block("theory  ·  games, markets and auctions", "E F", ABSTRACT_C)
        + block("Theory·Games, Markets, and Auctions", "G H", ABSTRACT_C + " More.")
        + block("Deep Learning · Other", "I J", ABSTRACT_A + " More.")
        + block("Deep Learning · other", "K L", ABSTRACT_B + " More.")
    )
    c = load_corpus(write(tmp_path / "c.txt", text))
    # the Oxford-comma spelling is seen second but twice (the separator spacing does not count)
    assert [p.area for p in c.papers] == ["Theory · Games, Markets, and Auctions"] * 4 + [
        "Deep Learning · Other"
    ] * 2


def test_normalize_name():
    assert normalize_name("Bálint  Mucsányi") == "balint mucsanyi"
    assert normalize_name("Bernhard Schölkopf") == normalize_name("bernhard scholkopf")
    assert normalize_name("ＡＢ") == "ab"


# --------------------------------------------------------------------------------------------------
# Robustness (property-based)
# --------------------------------------------------------------------------------------------------

LINES = st.sampled_from(
    ["论文检索", "", " ", "\t", "Theory · Learning Theory", "Deep Learning", "Ada Lovelace, Alan Turing 等"]
    + ["Grace Hopper", ABSTRACT_A, ABSTRACT_B, "{", "}", "$x$", "\\textbf{", "·", "等", "\ufeff", "\r"]
)
LINE_FILES = st.lists(st.one_of(LINES, st.text(max_size=40)), max_size=30).map("\n".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=400), LINE_FILES))
def test_any_text_file_loads_or_raises_corpus_error(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.txt"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            c = load_corpus(path)
        except CorpusError:
            return
        assert c.papers
        assert all(p.title and len(p.title) <= 90 for p in c.papers)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=600), st.sampled_from(["c.txt", "c.jsonl"]))
def test_any_bytes_load_or_raise_corpus_error(data, name):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            load_corpus(path)
        except CorpusError:
            pass


JSON_VALUES = st.one_of(
    st.none(), st.integers(), st.text(max_size=30), st.lists(st.text(max_size=10), max_size=3)
)
JSON_RECORDS = st.dictionaries(
    st.sampled_from(["id", "_id", "title", "abstract", "text", "authors", "area", "url"]), JSON_VALUES
).map(json.dumps)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=60), JSON_RECORDS), max_size=10))
def test_any_jsonl_loads_or_raises_corpus_error(rows):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        path.write_text("\n".join(rows), encoding="utf-8", errors="surrogatepass")
        try:
            c = load_corpus(path)
        except CorpusError:
            return
        assert len({p.id for p in c.papers}) == len(c.papers)


# --------------------------------------------------------------------------------------------------
# The shared corpora (skipped when absent)
# --------------------------------------------------------------------------------------------------


def shared(relative: str) -> Path:
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is not available")
    return path


def test_iclr_abstracts_txt():
    c = load_corpus(shared("iclr2024/abstracts.txt"))
    assert len(c.papers) == 1996
    assert c.skipped == () and c.duplicates == 0
    assert all(p.title and len(p.title) <= 90 for p in c.papers)
    assert sum(p.et_al for p in c.papers) == sum(len(p.authors) == 10 and p.et_al for p in c.papers) > 0


def test_iclr_papers_jsonl():
    c = load_corpus(shared("iclr2024/papers.jsonl"))
    assert len(c.papers) == 2275
    assert len(c.skipped) == 21 and all("no abstract" in s.reason for s in c.skipped)
    assert c.papers[0].id == "iclr2024-0001"
    assert c.papers[0].title == "Robot Fleet Learning via Policy Merging"
    assert sum(1 for p in c.papers if not p.area) == 286 - 7  # 7 of the 286 area-less have no abstract either


def test_scifact_corpus_jsonl():
    c = load_corpus(shared("scifact/corpus.jsonl"))
    assert len(c.papers) == 5183
    assert c.skipped == () and c.duplicates == 0
    assert all(p.authors == () and p.area == "" for p in c.papers)
