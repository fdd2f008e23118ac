"""The ICLR 2024 abstracts pasted as a PDF copy pastes them, read back by the text-format reader.

Every paper of ``../shared/corpora/iclr2024/papers.jsonl`` with an abstract is written as a person
copying it from the paper's PDF would paste it (seeded, one random generator per paper):

* a title line for half of them (above the area line, or alone when the paper has no area);
* the area line when the paper has one (286 do not: then the title is above the authors);
* the authors with affiliation marks on half of the names (``Smith1``, ``Jones1,2``, ``Lee∗``,
  ``Kim†‡``, ``Park¹``);
* an ``Abstract`` heading line for a third of them;
* the abstract with every line wrapped at a width drawn from 60-80 columns, words broken at line
  ends as TeX breaks them (its English hyphenation patterns, via pyphen; a word that has hyphens is
  broken after one of them), and no blank line inside a paper for half of them (the others have
  the seed format's blank lines between the fields).

Papers are separated by a blank line. Printed, for the papers read (``--split odd``, the default:
the half :mod:`retrieval.hyphenation`'s vocabulary was not fitted on; ``even``; ``all``):

* **papers loaded exactly**: title, area, authors and abstract (whitespace-collapsed) all as written
  (target >= 99 %); **fake papers**: papers loaded that are not one of those written (0);
* **titles given = titles shown**: of the papers pasted with a title line, the share shown with that
  exact title (not a derived one) (100 %);
* **words restored exactly**: of the words broken at a line end, the share read back as written
  (``representa-`` ``tion`` -> ``representation``, ``self-`` ``supervised`` ->
  ``self-supervised``), split into typesetter's breaks and breaks at a real hyphen;
* the seconds the reader took.

Needs pyphen (``pip install -e '.[bench]'``). Usage::

    PYTHONPATH=. python bench/pdf_paste.py [--data ../shared/corpora/iclr2024] [--split odd|even|all]
        [--show 5]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from retrieval.corpus import load_corpus, own_title  # noqa: E402
from retrieval.corpus_fields import Record  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "corpora" / "iclr2024"
MARKS = ["1", "2", "1,2", "∗", "†", "‡", "†‡", "¹", "²"]
_WORD = re.compile(r"^([^\w]*)(\w+)(.*)$")


@dataclass
class Written:
    """One paper as written to the paste, and where."""

    title: str | None
    area: str
    authors: tuple[str, ...]
    abstract: str  # whitespace collapsed
    first_line: int = 0
    breaks: list[tuple[int, str, int]] = field(default_factory=list)  # (word index, word as written, cut)
    shown: str | None = None  # the title as a paper shows it (LaTeX as Unicode)


def _hyphenator():  # noqa: ANN202 (pyphen.Pyphen)
    import pyphen

    return pyphen.Pyphen(lang="en_US")


def wrap(text: str, width: int, rng: random.Random, dic) -> tuple[list[str], list[tuple[int, int]]]:  # noqa: ANN001
    """``text`` in lines of at most ``width`` columns, breaking a word that does not fit where TeX
    could (its patterns; after a hyphen for a word that has one) when some of it fits. Returns the
    lines and the words broken: their index in ``text.split()`` and where the next line starts in them."""
    words = text.split()
    lines: list[str] = []
    broken: list[tuple[int, int]] = []
    line = ""
    k = 0
    rest: str | None = None
    while k < len(words):
        word = words[k] if rest is None else rest
        if not line:
            line, rest, k = word, None, k + 1
            continue
        if len(line) + 1 + len(word) <= width:
            line, rest, k = f"{line} {word}", None, k + 1
            continue
        room = width - len(line) - 1
        cut: tuple[int, bool] | None = None
        if rest is None and rng.random() < 0.9:
            if "-" in word[1:-1]:
                at = [j + 1 for j in range(1, len(word) - 2) if word[j] == "-" and j + 1 <= room]
                cut = (max(at), True) if at else None
            elif not any(c in word for c in "\\$_{}*"):  # (no LaTeX or markdown: TeX shows neither)
                m = _WORD.match(word)
                if m and m.group(2).isalpha() and len(m.group(2)) >= 5:
                    lead = len(m.group(1))
                    at = [lead + p for p in dic.positions(m.group(2)) if p >= 2 and len(m.group(2)) - p >= 3]
                    at = [p for p in at if p + 1 <= room]
                    cut = (max(at), False) if at else None
        if cut is not None:
            j, real = cut
            lines.append(f"{line} {word[:j]}" if real else f"{line} {word[:j]}-")
            broken.append((k, j))
            line, rest = "", word[j:]
            continue
        lines.append(line)
        line = ""
    if line:
        lines.append(line)
    return lines, broken


def paste(rows: list[dict], seed: int = 0) -> tuple[str, list[Written]]:
    """The paste of ``rows`` (``title``, ``authors``, ``area``, ``abstract``) and what each is."""
    dic = _hyphenator()
    out: list[str] = []
    written: list[Written] = []
    number = 1
    for k, row in enumerate(rows):
        rng = random.Random(seed * 1_000_003 + k)
        abstract = " ".join(row["abstract"].split())
        names = tuple(" ".join(a.split()) for a in row["authors"] if a.strip())
        area = (row.get("area") or "").strip()
        title = " ".join(row["title"].split()) if rng.random() < 0.5 else None
        shown = own_title(Record("", None, title, (), False, "", "", None)) if title else None
        marked = [n + rng.choice(MARKS) if rng.random() < 0.5 else n for n in names]
        header = [title] if title else []
        header += [area] if area else []
        header.append(", ".join(marked))
        if rng.random() < 1 / 3:
            header.append("Abstract")
        lines, broken = wrap(abstract, rng.randint(60, 80), rng, dic)
        spaced = rng.random() < 0.5
        block = "\n\n".join([*header, "\n".join(lines)]) if spaced else "\n".join([*header, *lines])
        words = abstract.split()
        breaks = [(j, words[j], cut) for j, cut in broken]
        written.append(Written(title, area, names, abstract, number, breaks, shown))
        out.append(block)
        number += block.count("\n") + 2
    return "\n\n".join(out) + "\n", written


@dataclass
class Figures:
    papers: int = 0
    exact: int = 0
    fields: int = 0  # every field right, the words broken at line ends aside
    fake: int = 0
    titled: int = 0
    titles_shown: int = 0
    breaks: int = 0
    restored: int = 0
    hyphen_breaks: int = 0
    hyphen_restored: int = 0
    skipped: int = 0
    seconds: float = 0.0
    ceiling_exact: int = 0  # papers whose every break the text's own usage decides right
    ceiling_words: int = 0
    wrong: list[tuple[Written, object]] = field(default_factory=list)


def measure(rows: list[dict], seed: int = 0, every: list[dict] | None = None) -> Figures:
    """Paste ``rows``, read the paste back, and count; with ``every`` (the whole corpus), also the
    ceiling (:func:`ceiling`)."""
    text, written = paste(rows, seed)
    figures = Figures(papers=len(written))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pasted.txt"
        path.write_text(text, encoding="utf-8")
        started = time.perf_counter()
        corpus = load_corpus(path)
        figures.seconds = time.perf_counter() - started
    figures.skipped = len(corpus.skipped)
    by_key = {_key(w.abstract): w for w in written}
    found = set()
    for paper in corpus.papers:
        w = by_key.get(_key(paper.abstract))
        if w is None:  # its abstract is no paper's: made of pieces
            figures.fake += 1
            continue
        found.add(w.first_line)
        shown = None if paper.title_derived else paper.title
        fields_right = (shown, paper.area, paper.authors) == (w.shown, w.area, w.authors)
        exact = fields_right and " ".join(paper.abstract.split()) == w.abstract
        figures.exact += exact
        figures.fields += fields_right
        if not exact:
            figures.wrong.append((w, paper))
        if w.title:
            figures.titled += 1
            figures.titles_shown += shown == w.shown
        got = paper.abstract.split()
        for j, word, _ in w.breaks:
            hyphen = "-" in word[1:-1]
            ok = len(got) == len(w.abstract.split()) and got[j] == word
            figures.breaks += 1
            figures.restored += ok
            figures.hyphen_breaks += hyphen
            figures.hyphen_restored += ok and hyphen
    figures.wrong += [(w, None) for w in written if w.first_line not in found]
    if every is not None:
        ceiling(written, every, figures)
    return figures


def _core(word: str) -> str:
    return re.sub(r"^\W+|\W+$", "", word).lower()


def ceiling(written: list[Written], every: list[dict], figures: Figures) -> None:
    """What any reader that decides a line-end break from the text's own usage can reach: for each
    broken word, the written form (``pre-trained``) against the other (``pretrained``) counted in the
    rest of the same abstract, else in every abstract of ``every`` (all of ICLR 2024: more than the
    paste shows a reader); a tie, or a word met nowhere else, is counted as right. A paper whose
    fields are all right (as measured) and whose every break is decided right is the most ``papers
    loaded exactly`` can count."""
    corpus = Counter(_core(x) for row in every for x in (row.get("abstract") or "").split())
    for w in written:
        local = Counter(_core(x) for x in w.abstract.split())
        right = True
        for _, word, cut in w.breaks:
            real = word[cut - 1] == "-"
            head = word[: cut - 1] if real else word[:cut]
            forms = _core(head + "-" + word[cut:]), _core(head + word[cut:])
            mine, other = forms if real else forms[::-1]
            counts = local if local[mine] > 1 or local[other] else corpus
            good = counts[mine] - 1 >= counts[other]
            figures.ceiling_words += good
            right &= good
        figures.ceiling_exact += right
    figures.ceiling_exact = min(figures.ceiling_exact, figures.fields)


def _key(abstract: str) -> str:
    """An abstract as ids compare it: a line-break join or a kept hyphen aside, the same text."""
    return re.sub(r"[\W_]+", "", abstract).lower()


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f} % ({part:,}/{whole:,})" if whole else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=["odd", "even", "all"], default="odd")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print N papers not loaded exactly")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.data / "papers.jsonl").open(encoding="utf-8")]
    keep = {"odd": lambda k: k % 2 == 1, "even": lambda k: k % 2 == 0, "all": lambda k: True}[args.split]
    kept = [r for k, r in enumerate(rows) if keep(k) and (r.get("abstract") or "").strip()]
    f = measure(kept, args.seed, every=rows)
    print(f"ICLR 2024 pasted as from PDFs: {f.papers:,} papers ({args.split} half), seed {args.seed}")
    print(f"papers loaded exactly        {_pct(f.exact, f.papers)}   target >= 99 %")
    print(f"  every field right          {_pct(f.fields, f.papers)}   (the words broken at line ends aside)")
    print(f"fake papers                  {f.fake}   target 0")
    print(f"blocks skipped (reported)    {f.skipped}")
    print(f"titles given = titles shown  {_pct(f.titles_shown, f.titled)}   target 100 %")
    print(f"words restored exactly       {_pct(f.restored, f.breaks)} of the words broken at a line end")
    typeset = f.breaks - f.hyphen_breaks
    print(f"  typesetter's breaks        {_pct(f.restored - f.hyphen_restored, typeset)}")
    print(f"  breaks at a real hyphen    {_pct(f.hyphen_restored, f.hyphen_breaks)}")
    print(f"read in                      {f.seconds:.2f} s")
    print("ceiling, deciding each break by the text's own usage (this abstract, else all of ICLR 2024):")
    print(f"  papers loaded exactly      <= {_pct(f.ceiling_exact, f.papers)}")
    print(f"  words restored exactly     <= {_pct(f.ceiling_words, f.breaks)}")
    for w, paper in f.wrong[: args.show]:
        print("--- written:", w.title, "|", w.area, "|", w.authors[:3], "|", w.abstract[:100])
        if paper is None:
            print("    not loaded")
        else:
            shown = None if paper.title_derived else paper.title
            print("    read:   ", shown, "|", paper.area, "|", paper.authors[:3], "|", paper.abstract[:100])


if __name__ == "__main__":
    main()
