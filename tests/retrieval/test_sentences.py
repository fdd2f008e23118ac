"""Tests of retrieval.sentences: where sentences end in abstracts as people paste them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.markup import strip_markup
from retrieval.sentences import _BOUNDARY_CANDIDATE, _candidates, match_label, sentences, split_sentences

SHARED = Path(__file__).resolve().parents[3] / "shared" / "corpora"


def test_split_sentences_basic():
    assert split_sentences("One here. Two there! Three? Four.") == [
        "One here.",
        "Two there!",
        "Three?",
        "Four.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Methods (e.g., transformers) work. Next one.",
        "Models, i.e. Transformers, work. Next one.",
        "As Smith et al. Showed in 2020, it works. Next one.",
        "See Fig. 3 and Eq. 2 for details. Next one.",
        "The rate is 1.5 times higher. Next one.",
        "Code at https://github.com/a/b.Tool and www.site.org/x. Next one.",
        "Samples are i.i.d. Gaussian draws. Next one.",
        "J. Smith wrote it. Next one.",
        "Baselines vs. Transformers differ. Next one.",
        "We use Python 3.11 and GPT-3.5 (v2.1.0) here. Next one.",
        "As in Fig. 2, the gap is 0.5 points. Next one.",
    ],
)
def test_split_sentences_does_not_split_abbreviations(text):
    sentences = split_sentences(text)
    assert len(sentences) == 2, sentences
    assert sentences[1] == "Next one."


def test_split_sentences_missing_space_after_period():
    text = "It is useful across settings and models.Recent work by [Lee 2022] helps.Yet this fails."
    assert split_sentences(text) == [
        "It is useful across settings and models.",
        "Recent work by [Lee 2022] helps.",
        "Yet this fails.",
    ]
    assert split_sentences("raised by Dang et al.Lastly, we show it.") == [
        "raised by Dang et al.",
        "Lastly, we show it.",
    ]
    assert split_sentences("is it possible?In this work we show it.") == [
        "is it possible?",
        "In this work we show it.",
    ]


def test_split_sentences_quotes_brackets_and_paragraphs():
    assert split_sentences('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert split_sentences("First para\n\nsecond para") == ["First para", "second para"]
    assert split_sentences("") == []
    assert split_sentences("   ") == []


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab .!?\u2026\n\u3002", max_size=40), st.integers(0, 45))
def test_boundary_candidates_are_the_regex_matches(text, start):
    assert _candidates(text, start) == [m.start() for m in _BOUNDARY_CANDIDATE.finditer(text, start)]


def test_boundary_candidates_on_real_abstracts(seed_papers):
    for paper in seed_papers:
        for text in (paper.abstract, strip_markup(paper.abstract)):
            assert _candidates(text, 0) == [m.start() for m in _BOUNDARY_CANDIDATE.finditer(text)]


# --------------------------------------------------------------------------------------------------


# -- structured abstracts ------------------------------------------------------------------------


def test_labels_start_a_sentence_and_are_not_part_of_it():
    text = (
        "Hypertension has become common in recent years.AIM: To describe its course. METHODS: We "
        "enrolled 20 adults. RESULTS Of the 32,441 samples 16 were positive. CONCLUSION(S) It matters."
    )
    got = [(s.label, s.text, s.labelled) for s in sentences(text)]
    assert got == [
        ("", "Hypertension has become common in recent years.", False),
        ("AIM", "To describe its course.", True),
        ("METHODS", "We enrolled 20 adults.", True),
        ("RESULTS", "Of the 32,441 samples 16 were positive.", True),
        ("CONCLUSION(S)", "It matters.", True),
    ]
    for s in sentences(text):
        assert text[s.start : s.end] == s.text
    # The label carries to the section's later sentences.
    later = sentences(
        "BACKGROUND & AIMS Liver disease is rising. It costs much. METHODS AND RESULTS we ran it."
    )
    assert [(s.label, s.text) for s in later] == [
        ("BACKGROUND & AIMS", "Liver disease is rising."),
        ("BACKGROUND & AIMS", "It costs much."),
        ("METHODS AND RESULTS", "we ran it."),
    ]


def test_labels_in_title_case_chinese_and_glued_mid_sentence():
    def pairs(text: str) -> list[tuple[str, str]]:
        return [(s.label, s.text) for s in sentences(text)]

    assert pairs("Background: Nets are big. Materials and Methods: We test.") == [
        ("Background", "Nets are big."),
        ("Materials and Methods", "We test."),
    ]
    assert pairs("目的：探讨某病。方法：回顾分析20例。【结果】有效率为85.5%。") == [
        ("目的", "探讨某病。"),
        ("方法", "回顾分析20例。"),
        ("结果", "有效率为85.5%。"),
    ]
    assert pairs("Data from 2010 METHODS: We did it.") == [
        ("", "Data from 2010"),
        ("METHODS", "We did it."),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "AIM is a planning tool.",  # a name, not a label (a short label needs a capital or colon after)
        "DATA were collected daily.",  # no head word: "DATA" alone labels nothing
        "BERT: a model of text.",
        "Note: this holds.",
        "RESULTS",  # nothing after it
    ],
)
def test_words_that_are_not_labels(text):
    assert match_label(text) is None


def test_acronym_after_a_label_stays_in_the_sentence():
    assert match_label("CONCLUSION ABPI but not CIMT correlates.") == ("CONCLUSION", 11)
    assert match_label("RESULTS miR-375 was down-regulated.") == ("RESULTS", 8)


def test_a_url_ending_at_a_glued_full_stop():
    text = "Code is at https://github.com/o/safe-rlhf.Warning: This paper has harmful text. Next one."
    assert split_sentences(text) == [
        "Code is at https://github.com/o/safe-rlhf.",
        "Warning: This paper has harmful text.",
        "Next one.",
    ]


# -- real abstracts --------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.mark.skipif(not (SHARED / "scifact").is_dir(), reason="no ../shared/corpora")
def test_scifact_evidence_sentences_are_sentences_of_ours():
    """SciFact's annotators split its abstracts into sentences by hand: nearly every evidence
    sentence (label aside) is exactly one of ours, and no sentence of the corpus opens with a label."""
    corpus = {row["_id"]: row["text"] for row in _jsonl(SHARED / "scifact" / "corpus.jsonl")}
    same = total = 0
    for row in _jsonl(SHARED / "scifact" / "rationales_train.jsonl"):
        ours = {s.text for s in sentences(corpus[row["doc_id"]])}
        for gold in row["gold_sentences"]:
            label = match_label(gold)
            total += 1
            same += (gold[label[1] :] if label else gold).strip() in ours
    assert total == 1025
    assert same / total >= 0.98, same
    head = re.compile(r"(BACKGROUND|OBJECTIVES?|AIMS?|METHODS|RESULTS|CONCLUSIONS?|FINDINGS|DESIGN)\b")
    labelled = 0
    for text in corpus.values():
        for s in sentences(text):
            assert not head.match(s.text), s.text
            assert text[s.start : s.end] == s.text
            labelled += s.labelled
    assert labelled > 2500  # SciFact's structured abstracts: ~3,400 labels


@pytest.mark.skipif(not (SHARED / "iclr2024").is_dir(), reason="no ../shared/corpora")
def test_iclr_abstracts_glued_sentences_split_and_abbreviations_do_not():
    rows = {row["id"]: row["abstract"] for row in _jsonl(SHARED / "iclr2024" / "papers.jsonl")}
    glued = 0
    for abstract in rows.values():
        got = sentences(abstract)
        for s in got:
            # no sentence ends on an abbreviation, and none starts inside a decimal or version number
            assert not re.search(r"\b(e\.g|i\.e|et al|Fig|vs)\.$", s.text), s.text
            before = abstract[: s.start].rstrip()
            assert not re.match(r"\d", s.text) or not re.search(r"\d\.$", before), s.text
        for m in re.finditer(r"[a-z]{3,}\.(?=[A-Z][a-z]+\s)", abstract):
            glued += 1
            assert any(s.start == m.end() for s in got), abstract[m.start() - 40 : m.end() + 30]
    assert glued > 300
    text = rows["iclr2024-0014"]
    assert "during training." in [s.text[-16:] for s in sentences(text)]
