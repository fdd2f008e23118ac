# ruff: noqa: E501  (the exports are kept as the reference managers write them)
"""Reference-manager exports load (issue 33 item 7): BibTeX as Zotero, Mendeley, Google Scholar and
arXiv write it, RIS and CSL JSON; real titles, authors "First Last", LaTeX decoded, links; an entry
without an abstract is reported and skipped."""

from __future__ import annotations

import json
from pathlib import Path

from retrieval.corpus import load_corpus

ZOTERO_BIB = r"""
@article{muller_schrodinger_2023,
	title = {Schr{\"o}dinger {Bridges} for {Na\"{\i}ve} Diffusion},
	volume = {12},
	url = {https://example.org/paper},
	doi = {10.1234/abcd.5678},
	abstract = {We study {Schr\"odinger} bridges \& their use in diffusion models, with $\ell_p$ costs --- and show 50\% faster sampling.},
	journal = {Journal of {ML}},
	author = {M{\"u}ller, J{\"o}rg and van der Berg, Jan and {Google Brain Team} and Smith, Jr., John},
	year = {2023},
}

@misc{scholar_entry,
  title={A Google Scholar Export Without an Abstract},
  author={Doe, Jane and Roe, Richard},
  year={2022}
}

@misc{vaswani2017attention,
      title={Attention Is All You Need},
      author={Ashish Vaswani and Noam Shazeer and others},
      year={2017},
      eprint={1706.03762},
      archivePrefix={arXiv},
      primaryClass={cs.CL},
      abstract={The dominant sequence transduction models are based on complex recurrent or convolutional neural networks. We propose the Transformer.}
}
"""

ZOTERO_RIS = """\
TY  - JOUR
TI  - Graph Networks for Molecules
AU  - Lovelace, Ada
AU  - Turing, Alan
AB  - We propose a graph network for molecules. It predicts binding affinity.
DO  - 10.5555/graph.2024
UR  - https://example.org/graph
PY  - 2024
ER  -{sp}

TY  - CONF
T1  - A Conference Paper Without an Abstract
A1  - Hopper, Grace
ER  -{sp}
""".format(sp=" ")  # RIS ends a record with "ER  - " (a trailing space)

CSL = [
    {
        "id": "http://zotero.org/users/1/items/ABC",
        "type": "article-journal",
        "title": "Calibrated Uncertainty for Graph Neural Networks",
        "author": [{"family": "Ruiz", "given": "Ana"}, {"family": "Mensah", "given": "Kofi"},
                   {"literal": "The GNN Consortium"}],
        "abstract": "Graph neural networks are often overconfident. We calibrate them per node degree.",
        "DOI": "10.1000/gnn.1",
    },
    {"id": "no-abstract", "type": "book", "title": "A Book", "author": [{"family": "Knuth", "given": "Donald"}]},
]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_bibtex_as_zotero_scholar_and_arxiv_write_it(tmp_path):
    path = write(tmp_path / "refs.bib", ZOTERO_BIB)
    corpus = load_corpus(path)
    first, arxiv = corpus.papers
    assert (first.title, first.title_derived) == ("Schrödinger Bridges for Naïve Diffusion", False)
    assert first.authors == ("Jörg Müller", "Jan van der Berg", "Google Brain Team", "John Smith, Jr.")
    assert first.abstract == (
        "We study Schrödinger bridges & their use in diffusion models, with $\\ell_p$ costs — and show 50% "
        "faster sampling."
    )
    assert first.url == "https://doi.org/10.1234/abcd.5678"  # the DOI first
    assert first.area == ""
    assert (arxiv.title, arxiv.authors, arxiv.et_al) == ("Attention Is All You Need", ("Ashish Vaswani", "Noam Shazeer"), True)
    assert arxiv.url == "https://arxiv.org/abs/1706.03762"
    assert [(s.line, s.field) for s in corpus.skipped] == [(13, "abstract")]
    assert "A Google Scholar Export Without an Abstract" in corpus.skipped[0].why
    assert corpus.blocks == 3 == len(corpus.papers) + len(corpus.skipped)


def test_ris_and_csl_json(tmp_path):
    ris = load_corpus(write(tmp_path / "a.ris", ZOTERO_RIS))
    (paper,) = ris.papers
    assert (paper.title, paper.authors, paper.url) == (
        "Graph Networks for Molecules", ("Ada Lovelace", "Alan Turing"), "https://doi.org/10.5555/graph.2024"
    )
    assert [(s.line, s.field) for s in ris.skipped] == [(11, "abstract")]
    csl = load_corpus(write(tmp_path / "b.json", json.dumps(CSL, indent=2)))
    (paper,) = csl.papers
    assert paper.title == "Calibrated Uncertainty for Graph Neural Networks" and not paper.title_derived
    assert paper.authors == ("Ana Ruiz", "Kofi Mensah", "The GNN Consortium")
    assert paper.url == "https://doi.org/10.1000/gnn.1"
    assert [s.field for s in csl.skipped] == ["abstract"]


def test_a_folder_reads_every_format_and_one_paper_once(tmp_path):
    write(tmp_path / "a.bib", ZOTERO_BIB)
    write(tmp_path / "b.ris", ZOTERO_RIS)
    # the same paper pasted in the text format, its authors cut: one paper, the fuller list kept
    write(tmp_path / "c.txt", "Lovelace et al.\n\nWe propose a graph network for molecules. It predicts binding affinity.\n")
    corpus = load_corpus(tmp_path)
    assert [Path(f).name for f in corpus.files] == ["a.bib", "b.ris", "c.txt"]
    assert [p.title for p in corpus.papers] == [
        "Schrödinger Bridges for Naïve Diffusion", "Attention Is All You Need", "Graph Networks for Molecules"
    ]
    assert corpus.duplicates == 1 and corpus.duplicate_details[0].startswith(f"{tmp_path / 'c.txt'}:1: duplicate of")
    assert corpus.blocks == len(corpus.papers) + corpus.duplicates + len(corpus.skipped)


def test_a_broken_entry_is_reported_and_the_rest_loads(tmp_path):
    text = ZOTERO_BIB + "\n@article{broken, title={Half an entry\n\n" + ZOTERO_BIB.replace("muller", "x").replace("vaswani", "y")
    corpus = load_corpus(write(tmp_path / "refs.bib", text))
    assert len(corpus.papers) == 2  # the second copies are duplicates
    assert any(s.field == "record" for s in corpus.skipped)
    assert corpus.blocks == len(corpus.papers) + corpus.duplicates + len(corpus.skipped)
