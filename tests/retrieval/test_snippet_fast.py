"""Snippets analyse only the words that can hold a query token (the rest is not stemmed): the
sentences' tokens found and the highlighted spans are exactly those of the full analysis."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.search import _found, stem_cores
from retrieval.text import split_sentences, strip_markup
from retrieval.tokenize import match_spans, tokenize

# Words whose stems are not plain openings of the word (Snowball's exceptions, apostrophes kept in
# tokens, hyphen parts joined), plus ordinary ones, LaTeX and other scripts.
TRICKY = [
    "dying", "die", "died", "lying", "lies", "tying", "tie", "skies", "sky", "idly", "gently", "early",
    "studies", "study", "bird's-eye", "can't", "they're", "3'UTR", "3'UTR-dependent", "O'Nyong-Nyong",
    "flow-matching", "Flow-Matching", "models", "modelling", "generalization", "generalisation",
    "diffusion", "policies", "Policy", "\\alpha", "\\textit{bold}", "naïve", "Über", "学习", "e.g.",
    "x-ray", "X-rays", "non-asymptotic", "data", "datum", "news", "ugly", "only", "singly", "atlas",
]  # fmt: skip
SEED = ["sparse", "autoencoders", "reinforcement", "learning", "offline", "bounds", "the", "of", "and"]


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(st.sampled_from(TRICKY + SEED), min_size=1, max_size=30),
    query=st.lists(st.sampled_from(TRICKY + SEED), min_size=1, max_size=4),
    seps=st.lists(st.sampled_from([" ", ", ", ". ", " (", ") ", "-", " - ", "; "]), min_size=1, max_size=30),
)
def test_sentence_tokens_and_spans_equal_the_full_analysis(words, query, seps):
    text = "".join(w + seps[i % len(seps)] for i, w in enumerate(words))
    stems = set(tokenize(" ".join(query)))
    cores = stem_cores(stems)
    for sentence in [text, *split_sentences(text)]:
        assert _found(sentence, stems, cores) == stems & set(tokenize(sentence)), (sentence, stems)
        assert match_spans(sentence, stems, cores) == match_spans(sentence, stems), (sentence, stems)


def test_snowball_exceptions_are_found(seed_papers):
    for word, stem in [("dying", "die"), ("lying", "lie"), ("tying", "tie")]:
        assert tokenize(word) == [stem]
        assert _found(f"Cells were {word} fast.", {stem}, stem_cores({stem})) == {stem}
    # Every sentence of the bundled corpus, for queries made of its own words.
    for paper in seed_papers:
        display = strip_markup(paper.abstract)
        tokens = tokenize(display)
        for i in range(0, len(tokens), 7):
            stems = set(tokens[i : i + 3])
            cores = stem_cores(stems)
            for sentence in split_sentences(display):
                assert _found(sentence, stems, cores) == stems & set(tokenize(sentence))
                assert match_spans(sentence, stems, cores) == match_spans(sentence, stems)
