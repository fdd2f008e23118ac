"""Snippets analyse only the words that can hold a query token (the rest is not stemmed): the
sentences' tokens found and the highlighted spans are exactly those of the full analysis."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.markup import strip_markup
from retrieval.models import Paper, Snippet
from retrieval.query import parse_query
from retrieval.search import SNIPPET_LIMIT, _found, _idf, _sentence_spans, snippet_spans, stem_cores
from retrieval.sentences import split_sentences
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


# -- the whole snippet against the reference (every sentence tokenized in full) -------------------


def reference_snippet(paper: Paper, stems: set[str], index=None, limit: int = SNIPPET_LIMIT) -> Snippet:
    """The snippet as it was computed before the core-regex scan: every sentence fully tokenized,
    every chosen sentence's spans from the full ``match_spans``."""
    text, spans = _sentence_spans(paper)
    if not spans:
        return Snippet(text="", sentences=(), matches=())
    found = [stems & set(tokenize(text[a:b])) for a, b in spans]
    weights = {t: _idf(index, t) for t in stems}
    scored = [(math.fsum(weights[t] for t in f), i, f) for i, f in enumerate(found)]
    best = max(scored, key=lambda s: (s[0], -s[1]))
    chosen = [best[1]]
    if best[0] > 0 and len(spans) > 1:

        def gain(s):
            return math.fsum(weights[t] for t in s[2] - best[2])

        others = [s for s in scored if s[1] != best[1]]
        second = max(others, key=lambda s: (gain(s), s[0], -abs(s[1] - best[1])))
        if gain(second) == 0:
            second = scored[best[1] + 1] if best[1] + 1 < len(scored) else scored[best[1] - 1]
        if spans[best[1]][1] - spans[best[1]][0] + spans[second[1]][1] - spans[second[1]][0] + 3 <= limit:
            chosen = sorted([best[1], second[1]])
    matches = []
    for i in chosen:
        a, b = spans[i]
        matches.extend((a + x, a + y) for x, y, _ in match_spans(text[a:b], stems))
    return Snippet(text=text, sentences=tuple(spans[i] for i in chosen), matches=tuple(matches))


TRICKY_TEXT = TRICKY + [
    "-model", "model-", "x--y", "a-b-c", "MODEL", "Models'", "model's", "re-ranking", "reranking",
    "self-attention", "selfattention", "x", "3", "L2", "Café", "café", "naive", "強化學習", "强化学习",
    "$\\alpha$-divergence", "\\cite{x}", "**bold**", "e.g.,", "Fig.", "1.5", "U.S.", "’s", "O’Brien",
    "ﬁne-tuning", "fine-tuning", "Ångström", "co-operate", "cooperate", "state-of-the-art",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(st.sampled_from(TRICKY_TEXT + SEED), min_size=1, max_size=60),
    query=st.lists(st.sampled_from(TRICKY_TEXT + SEED), min_size=1, max_size=4),
    seps=st.lists(st.sampled_from([" ", ", ", ". ", ". A ", " (", ") ", "-", " - ", "; ", "\n\n", "'"]),
                  min_size=1, max_size=30),  # fmt: skip
    limit=st.sampled_from([SNIPPET_LIMIT, 60, 1000]),
)
def test_snippet_equals_the_reference_on_tricky_text(words, query, seps, limit):
    abstract = "".join(w + seps[i % len(seps)] for i, w in enumerate(words))
    paper = Paper("x", "A title", (), False, "", abstract)
    stems = set(tokenize(" ".join(query)))
    assert snippet_spans(paper, stems, None, limit) == reference_snippet(paper, stems, None, limit)


def test_snippet_equals_the_reference_on_the_bundled_corpus(seed_papers, seed_index):
    core = seed_index.core
    for paper in seed_papers:
        tokens = tokenize(strip_markup(paper.abstract))
        queries = [set(tokens[i : i + n]) for n in (1, 3) for i in range(0, len(tokens), 11)]
        queries += [{"model"}, {"learn", "x"}, set(tokenize("reinforcement learning")), set()]
        for stems in queries:
            assert snippet_spans(paper, stems, core) == reference_snippet(paper, stems, core), stems


def test_search_hits_carry_the_reference_snippet_and_matched_words(seed_index):
    for query in ["sparse autoencoders", "model", "flow-matching diffusion", "reinforcement learning x",
                  "graph neural networks", "强化学习"]:  # fmt: skip
        parsed = parse_query(query)
        stems = {t for w in parsed.words for t in w.tokens}
        for hit in seed_index.search(query, 10).hits:
            assert hit.snippet == reference_snippet(hit.paper, stems, seed_index.core)
            tokens = set(tokenize(hit.paper.title)) | set(tokenize(hit.paper.abstract))
            expected = tuple(dict.fromkeys(w.surface for w in parsed.words if set(w.tokens) & tokens))
            assert hit.matched_terms == expected


def test_holds_equals_contains_for_long_and_short_terms(seed_index):
    from retrieval.search import _holds

    core = seed_index.core
    terms = [core.vocab.term(t) for t in range(0, len(core.vocab), 7)] + ["nosuchterm"]
    assert any(int(core.long_slot[core.vocab[t]]) >= 0 for t in terms[:-1])  # both kinds are tried
    assert any(int(core.long_slot[core.vocab[t]]) < 0 for t in terms[:-1])
    docs = list(range(len(core)))
    for term in terms:
        assert _holds(core, term, docs) == [core.contains(d, term) for d in docs], term
