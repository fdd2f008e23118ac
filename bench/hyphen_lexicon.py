"""Rebuild ``retrieval/data/hyphen_lexicon.tsv``: the vocabulary :mod:`retrieval.hyphenation` asks
whether a word broken at a line end is written solid or with a hyphen.

Fitted on the even-indexed papers of ``../shared/corpora/iclr2024/papers.jsonl`` only (the odd ones
are where ``bench/pdf_paste.py --split odd`` measures it). Kept: every hyphenated word whose parts
are letters, and every solid word that such a hyphenated word would read as when joined
(``pretrained`` beside ``pre-trained``), plus the solid words seen at least twice that the English
word list lacks (``hyperparameters``, ``dataset``: domain words a broken line must join back), each
with its count; and ``-second`` for a second part that compounds take with a hyphen as a rule
(``-based``: after 5 or more different first parts, 9 times in 10 or more). One
``word<TAB>count`` line per word, sorted.

Usage::

    PYTHONPATH=. python bench/hyphen_lexicon.py [--data ../shared/corpora/iclr2024] \
        [--out retrieval/data/hyphen_lexicon.tsv]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from retrieval.hyphenation import LEXICON, word_core

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "corpora" / "iclr2024"
_HYPHENATED = re.compile(r"^[a-z]+(?:-[a-z]+)+$")
_SOLID = re.compile(r"^[a-z]{4,}$")


def fit(abstracts: list[str]) -> dict[str, int]:
    """The lexicon of some abstracts (see the module docstring)."""
    from spellchecker import SpellChecker

    words = SpellChecker(language="en").word_frequency.dictionary
    counts = Counter(word_core(token) for text in abstracts for token in text.split())
    hyphenated = {w: c for w, c in counts.items() if _HYPHENATED.match(w)}
    joined = {w.replace("-", "") for w in hyphenated}
    # a break at any one of the hyphens: "state-of-the-art" read as "stateof-the-art" and so on
    for w in hyphenated:
        parts = w.split("-")
        for k in range(1, len(parts)):
            joined.add("-".join([*parts[: k - 1], parts[k - 1] + parts[k], *parts[k + 1 :]]))
    out = dict(hyphenated)
    for w, c in counts.items():
        if w in joined or (_SOLID.match(w) and c >= 2 and w not in words):
            out[w] = c
    # second parts that compounds take with a hyphen as a rule ("-based" after 5 or more different
    # first parts, and 9 times in 10 or more against a solid word ending with them)
    heads: dict[str, set[str]] = {}
    for w in hyphenated:
        first, _, second = w.rpartition("-")
        heads.setdefault(second, set()).add(first)
    for second, firsts in heads.items():
        if len(firsts) < 5 or len(second) < 3:
            continue
        with_hyphen = sum(c for w, c in hyphenated.items() if w.endswith("-" + second))
        solid = sum(c for w, c in counts.items() if w.endswith(second) and w != second and "-" not in w
                    and w[: -len(second)] in words)  # fmt: skip
        if with_hyphen >= 9 * solid:
            out["-" + second] = with_hyphen
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=ROOT / "retrieval" / "data" / LEXICON)
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.data / "papers.jsonl").open(encoding="utf-8")]
    abstracts = [
        r["abstract"] for k, r in enumerate(rows) if k % 2 == 0 and (r.get("abstract") or "").strip()]
    lexicon = fit(abstracts)
    args.out.write_text("".join(f"{w}\t{c}\n" for w, c in sorted(lexicon.items())), encoding="utf-8")
    print(f"{len(lexicon):,} words from {len(abstracts):,} abstracts (even half) -> {args.out}")


if __name__ == "__main__":
    main()
