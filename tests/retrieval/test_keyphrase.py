"""Key-phrase descriptions (retrieval/keyphrase.py): properties every description keeps, on the
bundled corpus, the pasted fixture and any text, and behaviour on real abstracts of the bundled
corpus where the rule-based description (the statement's object or the first sentence) misses what
the abstract is about. How close the words come to real titles is measured by bench/titles.py."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import keyphrase
from retrieval.corpus import load_corpus
from retrieval.keyphrase import MAX_WORDS, describe, names_the_topic
from retrieval.titles import derive_title
from retrieval.tokenize import tokenize
from tests.retrieval.fixtures import pasted_corpus

ROOT = Path(__file__).resolve().parents[2]
DANGLING = set("a an the of for and or to in on with by from via under".split())


def _head(abstract: str) -> str:
    """The abstract as derive_title hands it over: one line, a leading space."""
    return " " + " ".join(abstract.split())


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    seeds = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    return seeds + [b.abstract for b in pasted_corpus.BLOCKS]


@pytest.fixture(scope="module")
def seeds() -> dict[str, str]:
    return {p.abstract[:40]: p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers}


def _seed(seeds: dict[str, str], opening: str) -> str:
    (abstract,) = [a for key, a in seeds.items() if key.startswith(opening)]
    return abstract


def test_a_description_is_a_short_phrase_that_ends_on_a_content_word(abstracts):
    described = 0
    for abstract in abstracts:
        phrase = describe(_head(abstract))
        if not phrase:
            continue
        described += 1
        words = phrase.split()
        assert 2 <= len(words) <= MAX_WORDS, phrase
        assert words[-1].lower() not in DANGLING and words[0].lower() not in DANGLING, phrase
        assert "\n" not in phrase and "…" not in phrase, phrase
    assert described >= 30  # (the bundled corpus has 40 abstracts, all long enough)


def test_every_word_of_a_description_is_the_abstracts(abstracts):
    for abstract in abstracts:
        phrase = describe(_head(abstract))
        for word in phrase.split():
            assert word.strip("()[]") in abstract, (word, phrase)


def test_each_part_of_a_description_is_a_run_of_the_abstracts_words(abstracts):
    # at most two phrases of the text, the second joined by the word the text puts before it
    for abstract in abstracts:
        phrase = describe(_head(abstract))
        if not phrase:
            continue
        flat = " ".join(re.sub(r"[^\w\s$\\-]", " ", abstract).split()).lower()
        plain = " ".join(re.sub(r"[^\w\s$\\-]", " ", phrase).split()).lower()
        # some split of the phrase into one or two pieces has every piece in the text
        words = plain.split()
        splits = [[plain]] + [[" ".join(words[:i]), " ".join(words[i:])] for i in range(1, len(words) - 1)]
        assert any(all(f" {piece} " in f" {flat} " for piece in pieces) for pieces in splits), phrase


def test_the_name_is_not_part_of_its_own_description(seeds):
    abstract = _seed(seeds, "The rapid advancement of Diffusion")
    named = describe(_head(abstract), "DiffuGuard")
    assert named and "diffuguard" not in named.lower(), named


def test_a_short_text_is_left_to_the_callers_rules():
    # a few words repeat nothing: no statistics to go on
    assert describe(" We propose sparse routing for long inputs. It is fast.") == ""
    assert describe("") == "" and describe("   ") == ""


@pytest.mark.parametrize(
    "opening",
    [
        # each opens with background; the statement-or-first-sentence rules gave a title sharing no word
        # with the abstract's three most repeated content words
        "In pure exploration problems, a statis",  # was "In pure exploration problems, a statistician ..."
        "The rapid advancement of Diffusion Larg",  # was "DiffuGuard: Training-free defense framework"
        "The alignment of large language models",  # was "Selective DPO: Preference data vary in difficulty"
        "Post-training of language models (LMs)",  # was "Controlled experimental setup"
        "Medical AI models excel at tumor detect",  # was "Rationale dataset to tackle the lack of ..."
        "Collecting gold-standard phenotype data",  # was "Semi-supervised learning setting"
    ],
)
def test_the_description_names_what_the_abstract_is_about(seeds, opening):
    abstract = _seed(seeds, opening)
    top = {word for word, _ in Counter(tokenize(abstract)).most_common(3)}
    phrase = describe(_head(abstract))
    assert set(tokenize(phrase)) & top, (phrase, top)


@pytest.mark.parametrize(
    "opening",
    [
        # the rules gave the opening sentence: "Leveraging the intrinsic importance ..., recent
        # research", "Recent advances have significantly improved our ...", "Selecting
        # representatives based on voters' ..."
        "Leveraging the intrinsic importance dif",
        "Recent advances have significantly impr",
        "Selecting representatives based on vote",
    ],
)
def test_a_background_opening_is_not_the_description(seeds, opening):
    abstract = _seed(seeds, opening)
    phrase = describe(_head(abstract))
    assert phrase and phrase.split()[:3] != abstract.split()[:3], phrase


def test_a_second_phrase_is_joined_by_the_texts_own_connector():
    abstract = (
        "Sparse autoencoders are widely used to interpret language models. Sparse autoencoders learn "
        "features from activations, and sparse autoencoders are evaluated on proxy metrics. We propose "
        "a benchmark of sparse autoencoders for interpretability research with eight metrics. The "
        "benchmark covers interpretability, feature disentanglement and probing. Interpretability "
        "research needs such metrics, since interpretability claims rest on them. We evaluate more than "
        "two hundred sparse autoencoders across seven architectures and release the benchmark."
    )
    phrase = describe(_head(abstract)).lower()
    assert "sparse autoencoders" in phrase, phrase
    assert "interpretability" in phrase, phrase
    # joined by a word the text itself puts there, not one made up
    for connector in re.findall(r" (for|of|via|with|in|on|from|under|over|through) ", f" {phrase} "):
        assert f" {connector} " in abstract.lower()


def test_a_word_alone_is_not_joined_as_a_second_phrase():
    # "learning" scores (said six times) and has "of" before it once ("the speed of learning:"), but
    # the text never links it to the representations: "... for grasping of learning" reads as
    # nonsense, so the phrase stays the text's own "contact-based object representations for grasping"
    abstract = (
        "Robots must grasp tools they have never seen. We propose contact-based object representations "
        "for grasping, learned from tactile signals. What limits robots is the speed of learning: "
        "a robot that meets a new tool needs fast learning, and learning from few touches is hard. "
        "Contact-based object representations make learning faster, since the contact-based object "
        "representations encode where a hand touches a tool. Across forty tools, our contact-based "
        "object representations improve grasp success over visual ones and keep learning stable."
    )
    for phrase in (describe(_head(abstract)), keyphrase._describe(_head(abstract))):  # C, Python
        assert phrase == "contact-based object representations for grasping", phrase


def test_a_participle_after_series_is_kept():
    # "series" ends in "s" but is no plural: "forecasting" is the head noun, not a verb missing its object
    abstract = (
        "Time series forecasting is central to energy planning and traffic control. Yet time series "
        "forecasting models fail when the data hold anomalies. We propose a training method that keeps time "
        "series forecasting accurate when a tenth of the points are corrupted, by filtering the corrupted "
        "points first. On six benchmarks of time series forecasting, the method lowers the error by a fifth "
        "and stays close to a model trained on clean data, at almost no extra cost."
    )
    for phrase in (describe(_head(abstract)), keyphrase._describe(_head(abstract))):  # C, Python
        assert phrase == "Time series forecasting", phrase


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=1500))
def test_any_text_gets_a_phrase_or_nothing(text):
    phrase = describe(text)
    assert isinstance(phrase, str)
    assert phrase == "" or 2 <= len(phrase.split()) <= MAX_WORDS


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            "we propose a novel method for graph learning with sparse attention of the model in "
            "networks , . ( ) GNN GNNs graphs sparse-attention via and or to".split()
        ),
        min_size=60,
        max_size=250,
    )
)
def test_word_soup_never_ends_on_a_connector(words):
    phrase = describe(" " + " ".join(words))
    if phrase:
        assert phrase.split()[-1].lower() not in DANGLING, phrase
        assert phrase.split()[0].lower() not in DANGLING, phrase


def test_names_the_topic_asks_for_a_word_the_text_repeats():
    text = " Graph transformers scale badly. Graph transformers need sparse attention on graphs. We see."
    assert names_the_topic("Sparse graph transformers", text)  # "graph" is said three times
    assert not names_the_topic("Controlled experimental setup", text)
    assert not names_the_topic("Of the and", text)  # connectors are no topic


@pytest.mark.parametrize(
    "opening",
    [
        # the rules' phrase shared no word with the abstract's three most repeated content words:
        "The rapid advancement of Diffusion Larg",  # was "DiffuGuard: Training-free defense framework"
        "Post-training of language models (LMs)",  # was "Controlled experimental setup"
        "Collecting gold-standard phenotype data",  # was "Semi-supervised learning setting"
    ],
)
def test_a_derived_title_that_misses_the_topic_takes_the_key_phrase(seeds, opening):
    abstract = _seed(seeds, opening)
    top = {word for word, _ in Counter(tokenize(abstract)).most_common(3)}
    title = derive_title(abstract)
    assert set(tokenize(title)) & top, (title, top)


def test_a_long_form_or_a_topical_phrase_is_kept(seeds):
    # the rules' phrase is the acronym's long form, or names the topic ("InfoNCE", "Gaussian" and
    # "representations" are said again and again): it leads the title (a long form is followed by
    # key words of the abstract it lacks)
    abstract = _seed(seeds, "Generative models such as diffusion")
    sscp = derive_title(abstract)
    assert sscp.startswith("SSCP: Single-Step Completion Policy"), sscp
    added = sscp[len("SSCP: Single-Step Completion Policy") :].split()
    assert not added or len(added) >= 3 and all(w in abstract for w in added), sscp
    infonce = derive_title(_seed(seeds, "Contrastive learning has become a corner"))
    assert infonce.startswith("InfoNCE objective induces Gaussian structure"), infonce


def test_a_sentence_end_without_its_space_ends_the_phrase():
    filler = "Results hold across many settings and several seeds. " * 8
    abstract = (
        "Tree averaging parsers combine many unsupervised parsers. We propose tree averaging parsers "
        "for unsupervised parsing.Tree averaging parsers beat each single parser. " + filler
    )
    phrase = describe(_head(abstract))
    assert phrase and "." not in phrase, phrase


def test_the_rules_phrase_stays_when_it_opens_with_the_papers_repeated_term():
    from retrieval.keyphrase import opens_with_a_term

    head = " We propose Beam Enumeration to enumerate. Beam Enumeration is fast; beam enumeration"
    assert opens_with_a_term("Beam Enumeration to exhaustively enumerate", head)
    assert not opens_with_a_term("Beam search to enumerate", head)
    assert not opens_with_a_term("Beam", head)


def test_the_rules_phrase_stays_when_it_coins_a_word_the_key_phrase_lacks():
    from retrieval.keyphrase import coins_a_word_missed

    rules = "SWE-bench, an evaluation framework of 2,294 problems"
    assert coins_a_word_missed(rules, "software engineering problems from GitHub issues")
    assert not coins_a_word_missed(rules, "SWE-bench of software engineering problems")
    assert not coins_a_word_missed(rules, "software engineering problems", name="SWE-bench")
    assert not coins_a_word_missed("an evaluation framework of problems", "software problems")


_BEAM = (
    "Generative molecular design with language-based molecular generative models samples many sub-sequences, "
    "and molecular generative models rarely explain which molecular substructures matter for sample "
    "efficiency. We propose Beam Enumeration to exhaustively enumerate the most probable sub-sequences from "
    "language-based molecular generative models and show that molecular substructures can be extracted from "
    "them. When coupled with reinforcement learning, the extracted molecular substructures make the "
    "generative models explainable and improve sample efficiency. Beam Enumeration is general, and Beam "
    "Enumeration improves sample efficiency of molecular generative models on drug discovery tasks with an "
    "oracle budget of a few thousand calls."
)
_SWE = (
    "Language models resolve few real software engineering problems drawn from GitHub issues, and evaluating "
    "language models on real software engineering problems is hard. We introduce SWE-bench, an evaluation "
    "framework of 2,294 software engineering problems drawn from real GitHub issues and corresponding pull "
    "requests across 12 popular Python repositories. Given a codebase along with a description of an issue "
    "to be resolved, a language model is tasked with editing the codebase to address the issue. Resolving "
    "issues in SWE-bench frequently requires understanding and coordinating changes across multiple "
    "functions, classes, and even files simultaneously, calling for language models to interact with "
    "execution environments."
)


def test_a_derived_title_keeps_the_term_and_the_coined_word_of_the_rules_phrase():
    # the key phrase is asked for every paper, but a title keeps the paper's own term (leading the
    # rules' phrase or the key phrase, as the chooser prefers) and its coined word (the key phrases
    # here: "Probable sub-sequences from language-based molecular generative models", "2,294 software
    # engineering problems drawn from real GitHub issues ...")
    assert derive_title(_BEAM).startswith("Beam Enumeration")
    assert derive_title(_SWE).startswith("SWE-bench, an evaluation framework")


def test_a_verb_after_a_plural_or_a_modal_ends_the_phrase(seeds):
    # "Most of the existing models generate either segmentation masks ...", "SAEs trained on randomly
    # initialized transformers produce auto-interpretability scores ...", "... metrics ... can
    # distinguish trained transformers": the verbs are not part of a key phrase
    medical = describe(_head(_seed(seeds, "Medical AI models excel at")))
    sae = describe(_head(_seed(seeds, "Sparse autoencoders (SAEs) are widely")))
    for phrase in (medical, sae):
        assert phrase, phrase
        assert not {"generate", "produce", "distinguish", "excel"} & set(phrase.lower().split()), phrase


def test_the_rules_phrase_stays_when_it_opens_with_the_abstracts_subject_and_the_key_phrase_is_short(seeds):
    from retrieval.keyphrase import opens_with_its_subject

    head = " Sparse autoencoders (SAEs) are widely used. We test SAE metrics; SAEs trained on noise"
    assert opens_with_its_subject("Sparse autoencoders are widely used", head)
    assert not opens_with_its_subject("Trained transformers", head)
    assert not opens_with_its_subject("Sparse autoencoders are widely used", head.replace("SAE", "it"))
    # the bundled SAE paper: its key phrase is two words ("Trained transformers"), so the title
    # keeps what the whole abstract is about (a search for "sparse autoencoders" depends on it)
    abstract = _seed(seeds, "Sparse autoencoders (SAEs) are widely")
    assert derive_title(abstract).startswith("Sparse autoencoders")


def test_a_term_with_its_appositive_leads_the_title_when_no_name_was_found():
    from retrieval.keyphrase import opens_with_a_name

    assert opens_with_a_name("motion guidance, a zero-shot technique", None) == "motion guidance"
    assert opens_with_a_name("∞-Diff, a generative diffusion model defined in", None) == "∞-Diff"
    assert opens_with_a_name("∞-Diff, a generative diffusion model", "∞-Diff") is None
    assert opens_with_a_name("Images with diffusion models on complex motions", None) is None
    assert opens_with_a_name("a tool, a model and a method for images", None) is None
    assert opens_with_a_name("``Bespoke solvers'', a custom ODE solver", None) == "Bespoke solvers"


def test_a_name_of_several_words_is_taken_out_of_its_key_phrase():
    from retrieval.titles import _t_without_name

    name = "Linear Log-Normal Attention"
    assert _t_without_name("Linear Log-Normal Attention of transformer models", name) == "transformer models"
    assert _t_without_name("Batch Calibration (BC) for large language models", "Batch Calibration") == (
        "large language models"
    )
    assert _t_without_name("Sampling with linear log-normal attention", name) == ""
    assert _t_without_name("Efficient long sequences with Linear Log-Normal Attention", name) == (
        "Efficient long sequences"
    )
    assert _t_without_name("transformer models", name) == "transformer models"


def test_a_parenthesis_of_several_words_is_a_phrase_of_its_own():
    # "... Reinforcement Learning from Human Feedback (Safe RLHF), a novel algorithm ...": the
    # parenthesis is not glued to the words before it ("Human Feedback Safe of ..."); a one-word
    # acronym in parentheses stays with its phrase ("human-object interactions (HOI)")
    words = "robust policy learning methods " * 12
    text = (
        f" We study {words}. We propose Safe Reinforcement Learning from Human Feedback (Safe RLHF), a"
        " novel algorithm for Safe Reinforcement Learning of value alignment. Safe Reinforcement"
        " Learning from Human Feedback improves Safe Reinforcement Learning."
    )
    from retrieval import keyphrase

    chunks = [c[0] for c in keyphrase._chunks(text)[0]]
    assert ["Safe", "RLHF"] in chunks and ["Human", "Feedback"] in chunks, chunks
    hoi = keyphrase._chunks(f" We study {words}. We detect human-object interactions (HOI) in {words}.")[0]
    assert ["human-object", "interactions", "(HOI)"] in [c[0] for c in hoi]


def test_a_word_any_paper_of_the_field_uses_does_not_keep_the_rules_phrase():
    from retrieval.keyphrase import coins_a_word_missed

    key = "stealthy jailbreak prompts"
    long_ = "Jailbreak attack against aligned {} models with many prompts"
    for word in ("LLMs", "GPT-4", "NeRF-based", "60k", "SGD", "CIFAR-10"):
        assert not coins_a_word_missed(long_.format(word), key, name="AutoDAN"), word
    for word in ("HyperAttention", "SWE-bench", "Magic123"):
        assert coins_a_word_missed(long_.format(word), key, name="AutoDAN"), word
    # an acronym may be the paper's own: without a name, or in a short phrase
    assert coins_a_word_missed(long_.format("VDP"), key)
    assert coins_a_word_missed("Caption-free MIA framework", key, name="MoFit")
    assert not coins_a_word_missed("Caption-free LLMs framework", key, name="MoFit")


def test_a_description_does_not_open_with_the_verb_after_to():
    from retrieval.keyphrase import _without_leading_verb

    head = " We aim to learn transferable representations for segmentation tasks."
    phrase = "learn transferable representations for segmentation tasks"
    assert _without_leading_verb(phrase, head) == "transferable representations for segmentation tasks"
    assert _without_leading_verb(phrase, head.replace("to learn", "we learn")) == phrase  # not after "to"
    assert _without_leading_verb("learn representations", head) == "learn representations"  # one word left
    assert _without_leading_verb("model compression methods", " to model compression methods") == (
        "model compression methods"  # a noun too
    )
    # describe() gives the same in the C and the Python passes: the step comes after either
    from retrieval import keyphrase

    text = " ".join(["We aim to learn transferable representations for segmentation tasks."] * 8)
    assert not keyphrase.describe(" " + text).startswith("learn")


_RANKED = " " + " ".join(
    [
        "the study of these things is hard and people often look at them from a distance today.",
        "Here sparse kernel regression matters, and sparse kernel regression is studied, and sparse kernel "
        "regression again.",
        *["Many readers think about weather, food, travel, music, sport, art, books, films, cities."] * 3,
        "Then latent graph alignment helps, and latent graph alignment is used, and latent graph alignment "
        "again, latent graph alignment. The graph is big.",
    ]
)
_RANK_WEIGHTS = ("_R_SUM", "_R_WORDS", "_R_TOP", "_R_MEAN", "_R_AT", "_R_JOINED", "_R_BEFORE", "_R_ONE")


def test_the_key_phrase_is_ranked_by_where_it_starts_and_how_its_words_score(monkeypatch):
    # "latent graph alignment" has the higher value (said once more, "graph" twice more) but starts
    # late and leans on one word: the rank prefers the earlier "sparse kernel regression"
    from retrieval import keyphrase

    assert describe(_RANKED).startswith("sparse kernel regression")  # the C pass, if built
    assert keyphrase._describe(_RANKED).startswith("sparse kernel regression")
    monkeypatch.setattr(keyphrase, "_c", None)
    for name in _RANK_WEIGHTS:
        monkeypatch.setattr(keyphrase, name, 0.0)
    assert keyphrase._describe(_RANKED) == "latent graph alignment"  # the value alone


def _spelled(golf: int, networks: int) -> str:
    return " " + " ".join(
        [
            "Molecular conformations matter for chemistry, and the energies are hard to compute.",
            *["Here graph neural networks are trained, and so on."] * networks,
            *["Many readers think about weather, food, travel, music, sport, art, books, films, cities."] * 3,
            *["To reduce the cost, a gradual optimization learning framework is trained on them."] * golf,
        ]
    )


def test_a_phrase_whose_initials_spell_the_name_is_preferred(monkeypatch):
    # "graph neural networks" is said more often; "gradual optimization learning framework" spells
    # GOLF, the title's name, which the real title then often spells out
    from retrieval import keyphrase

    text = _spelled(golf=2, networks=3)
    for describe_ in (describe, keyphrase._describe):  # the C pass, if built, and the Python one
        assert describe_(text, "GOLF") == "gradual optimization learning framework"
        assert describe_(text, None) == "graph neural networks"
        assert describe_(text, "GOAL") == "graph neural networks"  # no A among the initials
        assert describe_(text, "OLF") == "graph neural networks"  # the first initial is not O
        assert describe_(text, "Golf") == "graph neural networks"  # one capital spells nothing
    monkeypatch.setattr(keyphrase, "_c", None)
    monkeypatch.setattr(keyphrase, "_R_ACRONYM", 0.0)
    assert keyphrase._describe(text, "GOLF") == "graph neural networks"


@pytest.mark.parametrize(
    ("name", "words", "spelled"),
    [
        ("GOLF", "Gradual Optimization Learning Framework", True),
        ("SSRL", "Self-supervised representation learning", True),  # a hyphenated part's initial
        ("MCNN", "memory-consistent neural network", True),
        ("DIMAP", "Data-independent Module-Aware Pruning", True),
        ("GCL", "graph contrastive learning (GCL)", True),  # a word in parentheses has no initial
        ("GCL", "(GCL) graph contrastive learning", True),
        ("GCL", "graph learning", False),
        ("GCL", "contrastive graph learning", False),  # in order
        ("GCL", "new graph contrastive learning", False),  # the first initial is the name's first
        ("RL", "3D reinforcement learning", True),  # an initial is a letter
        ("EL", "Élan learning", False),  # an ASCII letter
        ("LP", "--- -label propagation", True),
    ],
)
def test_the_initials_of_a_phrase_spell_a_name(name, words, spelled):
    from retrieval.keyphrase import _spells

    letters = [c.lower() for c in name if "A" <= c <= "Z"]
    assert _spells(letters, words.split()) is spelled


# the word score's inputs: a text of 60 words or more, where each feature has one word that has it
_WORDS_READ = " " + " ".join(
    [
        "Graph routing is hard for large networks today.",  # "graph", "routing": early
        *["Many readers think about weather, food, travel, music, sport, art, books, films, cities."] * 4,
        "Here we propose adaptive message routing for self-supervised graph learning (SSL).",
        "The self-supervised objective and message passing help; message routing scales.",
    ]
)


def test_the_word_score_reads_where_a_word_is_first_said_its_form_and_its_uses(monkeypatch):
    from retrieval import keyphrase

    seen: list[tuple] = []
    real = keyphrase._score

    def record(*features):  # noqa: ANN002, ANN202
        seen.append(features)
        return real(*features)

    monkeypatch.setattr(keyphrase, "_score", record)
    _, scores, _, n, stated = keyphrase._chunks(_WORDS_READ)
    by = dict(zip(scores, seen, strict=True))  # key -> its features (scored in that order)
    words = _WORDS_READ.split()
    assert stated == words.index("adaptive")
    # count, capital, statement, generic, length, at, hyphen, paren, head, early, object
    count, capital, statement, generic, length, at, hyphen, paren, head, early, obj = by["routing"]
    assert (count, length, early, at) == (3, 7, True, 1 / n)
    assert head == pytest.approx(2 / 3)  # "Graph routing is", "message routing for", not "routing scales"
    assert statement and obj  # "we propose adaptive message routing": the statement's object
    assert by["self-supervised"][6] and not by["routing"][6]  # hyphenated
    assert by["ssl"][7] and not by["graph"][7]  # "(SSL)"
    assert by["ssl"][1]  # a capital mid-sentence
    assert not by["objective"][9] and by["objective"][5] > 0.8  # said late
    assert words.index("think") == 10 and by["think"][9]  # early: among the first 12 words
    assert words.index("weather,") == 12 and not by["weather,"[:-1]][9]
    assert not by["objective"][10] and by["adaptive"][10]  # not the statement's object
    assert by["message"][8] == 0 and by["scale"][8] == 1  # never / always ends a chunk


def test_the_word_score_rises_and_falls_with_each_feature():
    from retrieval.keyphrase import _score

    plain = dict(count=2, capital=False, statement=False, generic=False, length=6, at=0.5, hyphen=False,
                 paren=False, head=0.5, early=False, obj=False)
    base = _score(**plain)
    ups = dict(count=4, capital=True, statement=True, length=10, at=0.1, hyphen=True, early=True, obj=True)
    downs = dict(generic=True, length=3, at=0.9, paren=True, head=1.0)
    for name, value in ups.items():
        assert _score(**{**plain, name: value}) > base, name
    for name, value in downs.items():
        assert _score(**{**plain, name: value}) < base, name
