"""Derived titles: properties every title keeps (on the bundled corpus, the pasted fixture and any
text) and a few behaviour tests of the rules. How close they come to real titles is measured by
bench/titles.py against the ICLR 2024 titles, not pinned here: a golden table would only copy what
the rules print today."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import titles as text
from retrieval.corpus import load_corpus
from retrieval.markup import ELLIPSIS, strip_markup
from retrieval.titles import TITLE_LIMIT, TITLE_RULES_VERSION, derive_title
from retrieval.tokenize import tokenize
from tests.retrieval.conftest import SAEBENCH
from tests.retrieval.fixtures import pasted_corpus

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"a", "an", "the", "of", "for", "and", "or", "to", "in", "on", "with", "by", "from", "via"}


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    seeds = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    return seeds + [b.abstract for b in pasted_corpus.BLOCKS]


def test_every_title_is_a_short_clean_line(abstracts):
    for abstract in abstracts:
        title = derive_title(abstract)
        assert 0 < len(title) <= TITLE_LIMIT, abstract[:60]
        assert "\n" not in title and "$" not in title and "\\" not in title, title
        assert not title.endswith(ELLIPSIS), title
        assert title.split()[-1].lower() not in SMALL and title[-1] not in ",;:-(", title
        first = title.split()[0]
        ordinary = first.isascii() and first.isalpha() and first.islower()
        assert not ordinary, title  # an ordinary first word is capitalised (ε, dLLMs and 离线 stay)


def test_every_title_word_comes_from_its_abstract(abstracts):
    # Titles are extractive: each content word is one the abstract uses (so a search for a word of
    # the title finds its paper, and nothing is made up).
    for abstract in abstracts:
        title_words = set(tokenize(derive_title(abstract)))
        assert title_words, abstract[:60]
        assert title_words <= set(tokenize(strip_markup(abstract))), (derive_title(abstract), abstract[:80])


def test_loaded_papers_carry_the_derived_titles():
    for paper in load_corpus(ROOT / "data" / "corpus").papers:
        assert paper.title == derive_title(paper.abstract)


def test_rules_have_a_version():
    assert isinstance(TITLE_RULES_VERSION, str) and TITLE_RULES_VERSION.startswith("titles-")


# -- the description hook (retrieval/keyphrase.py) --------------------------------------------------


def test_the_keyphrase_hook_supplies_the_description(hook):
    calls, answer = hook
    answer["value"] = "sparse autoencoder evaluation across eight metrics"
    assert derive_title(SAEBENCH) == "SAEBench: Sparse autoencoder evaluation across eight metrics"
    head, name = calls[0]
    assert name == "SAEBench" and head.startswith(" Sparse autoencoders") and "\n" not in head


_SSCP = "Offline RL is slow. We propose the Single-Step Completion Policy (SSCP), which distils."


def test_an_acronyms_long_form_leads_and_the_hook_adds_what_it_lacks(hook):
    calls, answer = hook
    answer["value"] = "distilled flow policy"
    assert derive_title(_SSCP) == "SSCP: Single-Step Completion Policy for distilled flow policy"
    assert calls == [(calls[0][0], "SSCP")]
    # a key phrase that holds the long form: what follows it, with the text's own connector
    answer["value"] = "Single-Step Completion Policy (SSCP) in offline reinforcement learning"
    assert derive_title(_SSCP) == "SSCP: Single-Step Completion Policy in offline reinforcement learning"


@pytest.mark.parametrize(
    "value",
    [
        "",
        None,
        RuntimeError("bug in the hook"),
        "completion policy",  # only the long form's words
        "Single-Step Completion Policy (SSCP) training",  # the long form, and no connector after it
        "Single-Step Completion Policy for RL",  # less than two words after the connector
        "SSCP-based offline policies",  # the name again
        "offline " + "x" * 60 + " policies",  # too long, and no connector to cut it at
    ],
)
def test_an_acronyms_long_form_stays_alone_without_more_to_say(hook, value):
    _, answer = hook
    answer["value"] = value
    assert derive_title(_SSCP) == "SSCP: Single-Step Completion Policy"


def test_the_hooks_words_after_a_long_form_are_cut_before_a_connector_to_fit(hook):
    _, answer = hook
    answer["value"] = "flow policies for offline control with " + "many words " * 8
    title = derive_title(_SSCP)
    assert title == "SSCP: Single-Step Completion Policy for flow policies for offline control"
    assert len(title) <= TITLE_LIMIT


@pytest.mark.parametrize("value", ["", None, RuntimeError("bug in the hook")])
def test_without_an_answer_from_the_hook_the_rules_description_stays(hook, value):
    _, answer = hook
    answer["value"] = value
    assert derive_title(SAEBENCH) == "SAEBench: Evaluation suite for sparse autoencoders"


def test_the_hooks_phrase_is_cut_to_the_title_limit_and_loses_a_leading_name(hook):
    _, answer = hook
    answer["value"] = "SAEBench: " + "sparse autoencoder evaluation " * 10
    title = derive_title(SAEBENCH)
    assert title.startswith("SAEBench: Sparse autoencoder evaluation") and title.count("SAEBench") == 1
    assert len(title) <= TITLE_LIMIT and not title.endswith(ELLIPSIS)


def test_the_keyphrase_version_is_part_of_the_title_rules_version(monkeypatch):
    fake = types.ModuleType("retrieval.keyphrase")
    fake.KEYPHRASE_VERSION = "kp-7"
    monkeypatch.setitem(sys.modules, "retrieval.keyphrase", fake)
    assert text.title_rules_version().endswith("+kp-7")
    assert text.TITLE_RULES_VERSION == text.title_rules_version()
    fake.KEYPHRASE_VERSION = "kp-8"
    assert text.TITLE_RULES_VERSION.endswith("+kp-8")
    del fake.KEYPHRASE_VERSION  # a module without a version still changes the key
    assert text.TITLE_RULES_VERSION.endswith("+keyphrase")


# -- behaviour -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        (  # an acronym defined where the method is proposed: the acronym, then its long form
            "Offline RL needs fast policies. We propose the Single-Step Completion Policy (SSCP), which "
            "distils a flow into one step. It is fast.",
            "SSCP: Single-Step Completion Policy",
        ),
        (  # a named contribution with an appositive
            "Sparse autoencoders are popular. We introduce SAEBench, a comprehensive evaluation suite for "
            "sparse autoencoders. It has eight metrics.",
            "SAEBench: Evaluation suite for sparse autoencoders",
        ),
        (  # the name comes last in the sentence ("..., called X")
            "Panoramas are hard. In this paper, we present our indoor panorama outpainting model using "
            "latent diffusion, called PanoDiffusion. It works well.",
            "PanoDiffusion: Indoor panorama outpainting model using latent diffusion",
        ),
        (  # no name: the object of the contribution statement, cut at its clause break
            "Preference data is noisy. We study diverging preferences in human-labeled preference datasets, "
            "which we find to be common.",
            "Diverging preferences in human-labeled preference datasets",
        ),
        (  # no statement at all: the first sentence, cut at a clause break, never an ellipsis
            "Graph neural networks suffer from over-smoothing when they grow deep, which limits them.",
            "Graph neural networks suffer from over-smoothing when they grow deep",
        ),
    ],
)
def test_rules(abstract, title):
    assert derive_title(abstract) == title


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        # a plain Capitalised word is the name when the text introduces it explicitly
        (
            "Speech models are slow. We describe a faster transformer, called "
            "Zipformer. It uses ScaledAdam.",
            "Zipformer",
        ),
        (
            "Reward design is hard. We bridge this gap and present Eureka, a "
            "reward design algorithm.",
            "Eureka",
        ),
        ("Editing videos flickers. Our method, FLATTEN, enforces consistency along flow paths.", "FLATTEN"),
        (
            "We study distillation. The resulting framework VQGraph achieves the "
            "best accuracy on graphs.",
            "VQGraph",
        ),
        # a long form introduced with its acronym: the acronym is the name
        ("This work introduces Video Diffusion Transformer (VDT), which uses transformers for video.", "VDT"),
        # emphasis around the name does not hide it
        (
            "Backdoors are a threat. We propose our defense, **BaDExpert**, which "
            "finds backdoor inputs.",
            "BaDExpert",
        ),
        # an acronym in parentheses after a named phrase (with lowercase words in it) is the name
        (
            "Air quality is hard to forecast. This paper presents a novel approach named Physics guided "
            "Neural Network for Air Quality Prediction (AirPhyNet). It uses diffusion physics.",
            "AirPhyNet",
        ),
        # any introducing verb, also "pioneer"
        (
            "Dynamic scenes are hard. In this work, we pioneer Semantic Flow, a neural semantic "
            "representation of dynamic scenes.",
            "Semantic Flow",
        ),
        # "our X" with a name-like X
        (
            "Radiology reports are long. We show that our LLM-CXR trained this way aligns images and text.",
            "LLM-CXR",
        ),
        # a project page in lowercase names what the text spells with capitals
        (
            "Class-incremental learning forgets. We regularise decision boundaries with virtual outliers. "
            "OVOR needs no replay buffer. Code: https://github.com/x/ovor.",
            "OVOR",
        ),
        # a named method beats the background acronym it modifies ("an effective PTQ method called X")
        ("PTQ is popular. PTQ fails on lidar. We propose an effective PTQ method called LiDAR-PTQ, which "
         "works for 3D detection.", "LiDAR-PTQ"),
    ],
)
def test_the_introduced_name_leads_the_title(abstract, name):
    title = derive_title(abstract)
    assert title.startswith(name), title


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        # the acronym defined where it is proposed, though a later statement names it first
        (
            "Simplicial networks are slow. In this work, we propose a scalable simplicial-aware neural "
            "network (SaNN) model with a constant run-time. We prove that SaNN is strictly more powerful "
            "than the Simplicial Weisfeiler-Lehman (SWL) test.",
            "SaNN",
        ),
        # an acronym defined in the sentence of an introducing statement, far from its verb
        (
            "LLMs hallucinate. To this end, we design a simple yet effective framework to enhance question "
            "answering with LLMs, based on the summarized retrieval (SuRe). SuRe helps LLMs answer.",
            "SuRe",
        ),
        # "which we call X"
        (
            "Robots generalise poorly. We propose a policy conditioning method using rough trajectory "
            "sketches, which we call RT-Trajectory, that is practical and easy to specify.",
            "RT-Trajectory",
        ),
        # a name followed by its long form: "X (Long Form)"
        (
            "Structure learning is hard. Regularization via a smooth penalty yields CoLiDE (Concomitant "
            "Linear DAG Estimation), a regression-based criterion amenable to optimization.",
            "CoLiDE",
        ),
        # a name of one capital, a hyphen and more (T-MARS, R-EDL)
        (
            "Web data has text in images. Our simple and scalable approach, T-MARS (Text Masking and "
            "Re-Scoring), filters out pairs where the text dominates.",
            "T-MARS",
        ),
        # a name right after a head noun and a comma, introduced a few words before
        (
            "In this paper, we introduce 8 novel embodied question answering (EQA) tasks. We have developed "
            "a novel large-scale dataset, EQA-MX, with over 8 million diverse embodied QA samples.",
            "EQA-MX",
        ),
        (
            "This paper proposes a novel neural layer, LogicMP, which performs mean-field variational "
            "inference over a Markov Logic Network (MLN).",
            "LogicMP",
        ),
        # {\bf X} as well as \textbf{X}
        (
            "Dynamic graphs shift. We propose a simple yet novel method called \\textbf{Fre}quency "
            "\\textbf{E}nhanced Continuous-Time \\textbf{Dy}namic \\textbf{G}raph ({\\bf FreeDyG}) "
            "model for link prediction.",
            "FreeDyG",
        ),
        # a version number and a LaTeX suffix are part of the name
        (
            "We introduce MIntRec2.0, a large-scale benchmark dataset for multimodal intent recognition.",
            "MIntRec2.0",
        ),
        ("We introduce PixArt-$\\alpha$, a Transformer-based text-to-image diffusion model.", "PixArt-α"),
        # the named object of "we propose", not a part it is built with (PDM is defined in the same
        # statement, which alone would make it the name)
        (
            "Time series mix scales. Based on this observation, we propose TimeMixer as a fully MLP-based "
            "architecture with Past-Decomposable-Mixing (PDM) and Future-Multipredictor-Mixing (FMM) blocks. "
            "PDM mixes seasonal and trend parts; FMM ensembles predictors. PDM is light.",
            "TimeMixer",
        ),
        # a name introduced with "named X, ..." is not replaced by a later acronym of the sentence
        (
            "We design a new family of hybrid CNN-ViT neural networks, named FasterViT, with a focus on "
            "high image throughput for computer vision (CV) applications. FasterViT is fast.",
            "FasterViT",
        ),
    ],
)
def test_more_ways_a_name_is_introduced(abstract, name):
    title = derive_title(abstract)
    assert title.startswith(name + ":"), title


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        # a comma after the verb, "the" before the name
        (
            "Sign languages lack data. We introduce, Sign2GPT, a novel framework for sign language "
            "translation that uses pretrained vision and language models.",
            "Sign2GPT",
        ),
        (
            "Graph streams are large. In this work, we propose the Mayfly, the first neural data structure "
            "for summarizing graph streams. The Mayfly replaces handcrafted data structures.",
            "Mayfly",
        ),
        # a two-letter acronym does not replace the phrase it abbreviates
        (
            "Instruction-tuned models struggle. This paper presents Instructive Decoding (ID), a simple yet "
            "effective approach that augments instruction-tuned models.",
            "Instructive Decoding",
        ),
        # \textsf{} like \textbf{}; a head noun such as "sampler" before the name
        (
            "We present a novel unified bilevel optimization-based framework, \\textsf{PARL}, formulated to "
            "address policy alignment in reinforcement learning.",
            "PARL",
        ),
        (
            "Phylogenetics is combinatorial. We demonstrate that our amortized posterior sampler, PhyloGFN, "
            "produces diverse evolutionary hypotheses. PhyloGFN is competitive.",
            "PhyloGFN",
        ),
        # a hyphenated compound with lowercase words inside
        (
            "Tables are hard for LLMs. We propose the Chain-of-Table framework, where tabular data is used "
            "in the reasoning chain.",
            "Chain-of-Table",
        ),
        # a coined word before a phrase of plain words, both introduced (guards the "the" above)
        (
            "Retrosynthesis is hard. We introduce the Markov Bridge Model, a generative framework for "
            "dependent distributions. We then introduce RetroBridge, a template-free retrosynthesis "
            "modeling approach that achieves state-of-the-art results.",
            "RetroBridge",
        ),
    ],
)
def test_yet_more_ways_a_name_is_introduced(abstract, name):
    title = derive_title(abstract)
    assert title.startswith(name + ":"), title


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        (  # the first sentence before the name is only "We introduce": the phrase after the name
            "We introduce MVDream, a diffusion model that is able to generate consistent multi-view images "
            "from a given text prompt. Learning from 2D and 3D data helps.",
            "MVDream: Diffusion model",
        ),
        (
            "In this paper, we present TOSS, which introduces text to the task of novel view synthesis (NVS) "
            "from just a single RGB image. While Zero123 works, it is ambiguous.",
            "TOSS: Introduces text to the task of novel view synthesis",
        ),
        (  # nothing about the name follows it: the name alone
            "We introduce Lemur and Lemur-Chat, openly accessible language models optimized for both natural "
            "language and coding. Code: https://github.com/x/Lemur.",
            "Lemur",
        ),
    ],
)
def test_a_statements_lead_is_never_the_description(abstract, title):
    assert derive_title(abstract) == title



@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        # a name followed by its appositive, then a background acronym further on: the name stays
        ("We introduce Heron, a new Vision Language Model (VLM) able to read charts and tables. Heron "
         "answers questions about plots.", "Heron"),
        ("To predict videos, we propose an efficient model, named Kite, by stretching the pretrained "
         "text-to-image (T2I) models along time. Kite is fast.", "Kite"),
        # a sentence end with no space after it ("editing.Our method")
        ("Editing videos frame by frame makes them flicker. We introduce optical flow into the attention of "
         "video diffusion models.Our method, GLIDE, makes the frames agree. It needs no training.",
         "GLIDE"),
        # a head noun, a colon, the name
        ("We propose a new self-explainable graph neural network (GNN) model: TreeCook. TreeCook turns "
         "decision trees into recipes for graphs.", "TreeCook"),
        # an appositive in a statement's sentence whose verb names nothing ("address ... with X, a")
        ("Weather models are slow and costly to run. We address these limits with StormODE, a "
         "continuous-time model of advection. It is trained on reanalysis data.", "StormODE"),
    ],
)
def test_names_among_other_capitalised_words(abstract, name):
    title = derive_title(abstract)
    assert title.startswith(name + ":"), title


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        # "denoted as"
        ("Spherical data is everywhere. In this paper, we focus on spherical measures and introduce a new "
         "metric for these measures, denoted as Linear Spherical Transport (LST). It is fast.", "LST"),
        # "this <long form> (X) approach": the paper's own thing, named where it is defined
        ("Language models make up facts. We find that this Sampling by Contrasting Heads (SaCH) approach "
         "is able to reduce the errors. SaCH needs no training.", "SaCH"),
        # a name in markdown emphasis after a head noun
        ("Labels are costly. To address both limits, we propose distillation from optimisation, a simple "
         "framework. Our instantiation of this framework, _SkyFlow_, achieves the best results.",
         "SkyFlow"),
        # a head noun further into the object, with its comma
        ("Tabular models are brittle. We propose a prototype-based tabular representation learning "
         "framework, ProTab, for tabular prediction tasks. The core of ProTab is a projection space "
         "(P-Space) of prototypes.", "ProTab"),
        # a head noun after a second introducing verb of the sentence
        ("Prompt tuning hurts calibration. Introducing the Average Feature Spread (AFS), we establish its "
         "link with calibration error and present a novel method, Calibrated Prompt Search (CaPS), for "
         "tuning prompts at test time. AFS is cheap to compute, and CaPS lowers the error.", "CaPS"),
        # a lowercase long form right after an introducing verb, against a background acronym
        ("Deep learning has led to the development of physics-informed neural networks (PINNs) for "
         "solving PDEs. PINNs need many tasks. We address this gap "
         "by introducing a novel hardness-aware task sampler (HATS) for meta-learning of PINNs. We "
         "derive an optimal sampling rule.", "HATS"),
    ],
)
def test_names_introduced_in_other_words(abstract, name):
    title = derive_title(abstract)
    assert title.startswith(name + ":"), title


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        # LaTeX emphasis inside emphasis
        (r"Reasoning from scratch is costly. To address these issues, we propose \textbf{\textit{Idea "
         r"Transfer} (IT)}, which explores analogous problems. IT helps.", "Idea Transfer: "),
        # a lowercase long form after "called", and its acronym (not the earlier "called *Borda count*")
        ("Voting rules aggregate preferences according to a rule called *Borda count*. We show this can "
         "fail. As a step towards fixing it, we introduce a class of methods called *distributional "
         "reward shaping* (DRS). DRS methods estimate a distribution of rewards.",
         "DRS: Distributional reward shaping"),
        # a lowercase name with its appositive, right after an introducing verb
        ("Diffusion samplers draw independent samples. We tackle the question of how to improve "
         "diversity. We propose particle steering, an extension of diffusion sampling where a joint "
         "potential couples the samples.", "Particle steering: Extension of diffusion sampling"),
        # "the <long form> (X) approach proposed in this work"
        ("Solving PDEs with neural networks needs good samples. We propose a minmax formulation for it. "
         "The adversarial mixed sampling (AMS) approach proposed in this work is the first to do so.",
         "AMS: Adversarial mixed sampling"),
        # a long form whose words' initials spell the acronym, not the shortest spelling
        ("Bayesian neural networks are costly. We present Sparse Subspace Variational Inference (SSVI), "
         "the first fully sparse framework for training them.",
         "SSVI: Sparse Subspace Variational Inference"),
    ],
)
def test_names_in_emphasis_lowercase_or_spelled_by_initials(abstract, title):
    assert derive_title(abstract).startswith(title), derive_title(abstract)


def test_a_participle_before_a_comma_introduces_nothing():
    title = derive_title(
        "In the debate game, two agents provide supporting evidence. Given the proposed evidence, a proxy "
        "of a human judge evaluates which decision is better justified."
    )
    assert not title.startswith("Evidence"), title


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        # someone else's named method counts less than the paper's, and a name keeps its longer
        # spelling in parentheses ("R-EDL (Relaxed-EDL)") instead of turning into it
        ("A newly-arising uncertainty method named Evidential Deep Learning (EDL), which gives "
         "uncertainty in one pass, has garnered interest. EDL obtains Dirichlet parameters. However, EDL "
         "is overconfident. Therefore, we propose the R-EDL (Relaxed-EDL) method by relaxing these "
         "settings. R-EDL treats the prior weight as a parameter.", "R-EDL"),
        # a Capitalised phrase, then a head noun
        ("Backdoors threaten face forgery detectors. To achieve this goal, this paper proposes Silent "
         "Trigger Face framework, which enables clean-label backdoor attacks on detectors.",
         "Silent Trigger Face"),
        # what the framework is for ("to enhance X (Y)") is not what it is
        ("LLMs hallucinate on open questions. To this end, we design a simple yet effective framework to "
         "enhance open-domain QA (ODQA) with LLMs, based on the summarized retrieval (SuRe). SuRe helps "
         "LLMs predict more accurate answers.", "SuRe"),
        # a task's name counts less than the model's
        ("This paper introduces Instruction-guided Object Counting (IOC), a new task that lets counters "
         "follow user instructions. We build a benchmark for it. As a first approach to the IOC task, we "
         "propose a model called Ins-Counter. Ins-Counter follows the instructions.", "Ins-Counter"),
        # a long form between dashes, its acronym quoted in parentheses
        ("Visual cortex is hard to map. Moving beyond conventional approaches, we introduce a data-driven "
         "method that generates captions for voxels. Our method -- Semantic Captioning Using Brain "
         'Alignments ("BrainCAP") -- builds upon a contrastive vision-language model.', "BrainCAP"),
        # not "the proposed MOO framework" (a participle), nor the acronym after "the MAZero algorithm"
        ("Long-tailed recognition is hard. We cast it as multi-objective optimization (MOO). We develop a "
         "recognition method termed PLOX upon the proposed MOO framework. Extensive evaluations "
         "demonstrate that PLOX works.", "PLOX"),
        ("Sample efficiency is poor in MARL. To tackle this issue, we propose the MAZero algorithm, which "
         "combines a centralized model with Monte Carlo Tree Search (MCTS) for policy search. MAZero is "
         "efficient.", "MAZero"),
    ],
)
def test_the_papers_own_name_among_others(abstract, name):
    title = derive_title(abstract)
    assert title.startswith(name + ":"), title


def test_a_name_is_described_where_it_is_defined():
    # the name wins at a later mention; its description is still the long form it was defined with
    title = derive_title(
        "Sampling from unnormalised densities is hard. In this work, we present Sparse Kernel Flows "
        "(SKF), a sampling-based framework with partial trajectories. Through experiments, we "
        "demonstrate that SKF gives more accurate estimates than earlier samplers."
    )
    assert title == "SKF: Sparse Kernel Flows", title


def test_a_capitalised_word_is_not_a_name_unless_introduced():
    title = derive_title(
        "Transformers, however, are slow on long inputs. We propose sparse routing for long inputs."
    )
    assert title.startswith("Sparse routing for long inputs"), title


def test_a_statement_that_only_points_back_is_passed_over():
    # "we address this gap" names nothing: the next statement says what the paper contributes
    title = derive_title(
        "Graph transformers scale poorly. We address this gap with a new design. We propose sparse "
        "graph transformers with linear attention. They are fast."
    )
    assert title.startswith("Sparse graph transformers with linear attention"), title


def test_a_clause_after_the_name_is_not_its_description():
    # "X, which ..." is a clause about X, not a description: the statement's object is used instead
    for abstract in (
        "Instruction data is noisy. We introduce Alpagasus, which is finetuned on only 9k examples.",
        "Instruction data is noisy. We propose a data selection strategy for instruction tuning, and "
        "we introduce Alpagasus, which is finetuned on only 9k examples.",
    ):
        title = derive_title(abstract)
        assert title.startswith("Alpagasus"), title
        assert "which" not in title.lower(), title


def test_a_statement_that_only_names_a_kind_of_thing_is_passed_over():
    # "a data-driven approach" says what kind of thing, not what about: the next statement does
    title = derive_title(
        "Quantum kernels are hard to design. We propose a data-driven approach. We then design quantum "
        "kernels for molecules with neural architecture search."
    )
    assert title.startswith("Quantum kernels for molecules"), title


def test_a_label_before_a_colon_does_not_make_a_second_colon():
    # "we propose a new principle: X" -- the one-word label is dropped, the title has one colon
    title = derive_title(
        "Alignment assumes more data helps. Challenging this, we propose a new principle: *preference "
        "data vary in difficulty, and hard examples hinder alignment*. Building on this principle, we "
        "introduce *Selective DPO*, which filters out overly difficult examples."
    )
    assert title.count(":") <= 1, title
    assert title.startswith("Selective DPO: Preference data vary in difficulty"), title


def test_a_bare_generic_phrase_is_passed_over():
    # "two core challenges" says only that there are challenges: the next statement is used
    title = derive_title(
        "Medical models lack clinical grounding. We address two core challenges: data and "
        "evaluation. We propose rationale datasets for grounded tumor segmentation."
    )
    assert title.startswith("Rationale datasets for grounded tumor segmentation"), title


@pytest.mark.parametrize(
    "abstract, title",
    [
        # a participle or preposition left at the end by a cut takes an object that is not there
        ("Reward hacking is known. We propose a controlled experimental setup involving: (i) an oracle "
         "teacher and (ii) a student.", "Controlled experimental setup"),
        ("Agents fail. This paper investigates: (1) What is the resilience of various system structures "
         "(e.g., A$\\rightarrow$B$\\rightarrow$C, A$\\leftrightarrow$B$\\leftrightarrow$C) under faulty "
         "agents, on different downstream tasks?", "What is the resilience of various system structures"),
    ],
)
def test_a_cut_leaves_no_dangling_participle_or_preposition(abstract, title):
    assert derive_title(abstract) == title


@pytest.mark.parametrize(
    "abstract, title",
    [
        # a first sentence cut by the length cap ends before its unfinished last phrase
        ("Selecting representatives based on voters' preferences is a fundamental problem in social "
         "choice theory. Voters cannot quantify affinity.",
         "Selecting representatives based on voters' preferences is a fundamental problem"),
        ("Multiplayer symmetric constant-sum games with more than two players in a competitive setting "
         "are hard. Equilibria are not unique.",
         "Multiplayer symmetric constant-sum games with more than two players"),
    ],
)
def test_a_first_sentence_cut_by_the_cap_ends_at_a_finished_phrase(abstract, title):
    assert derive_title(abstract) == title


def test_a_compound_adjective_is_not_a_name():
    title = derive_title("Graphs are hard. We show that our LLM-based approach finds good molecules quickly.")
    assert not title.startswith("LLM-based:"), title


def test_common_field_acronyms_are_not_taken_for_the_name():
    title = derive_title(
        "LLMs hallucinate. We propose a retrieval step for LLMs that checks each claim against GPT-4 "
        "outputs and BERT scores. LLMs improve."
    )
    assert not title.startswith(("LLMs:", "GPT-4:", "BERT:")), title
    assert title.startswith("Retrieval step for LLMs"), title


def test_latex_in_the_kept_words_is_shown_as_unicode():
    title = derive_title(r"We propose $\epsilon$-greedy tree search for planning. It is simple.")
    assert title == "ε-greedy tree search for planning"


@pytest.mark.parametrize(("abstract", "title"), [("", "Untitled"), ("   ", "Untitled"), ("{}", "Untitled")])
def test_degenerate_abstracts(abstract, title):
    assert derive_title(abstract) == title


def test_long_unbroken_text_stays_within_the_limit():
    assert len(derive_title("x" * 5000)) <= TITLE_LIMIT
    assert len(derive_title("word " * 2000)) <= TITLE_LIMIT
    assert len(derive_title("We propose " + "A" * 300 + ", a method.")) <= TITLE_LIMIT


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=600))
def test_any_text_gets_a_title_within_the_limit(text):
    title = derive_title(text)
    assert 0 < len(title) <= TITLE_LIMIT and "\n" not in title


def test_without_a_name_a_field_acronym_keeps_the_rules_phrase_only_when_it_names_the_topic(hook):
    _, answer = hook
    answer["value"] = "Bayes optimal risk on unseen tasks"
    # "ICL" is a coined word the key phrase lacks, but no word of the phrase is said again
    background = (
        "Transformers learn in context. We study ICL in one of its simplest setups, linear regression."
    )
    assert derive_title(background) == "Bayes optimal risk on unseen tasks"
    # the same phrase about what the text repeats ("setups" three times) stays
    topical = background + " Such setups are common; the setups we use are standard."
    assert derive_title(topical).startswith("ICL in one of its simplest setups")


def test_a_named_papers_phrase_with_a_coined_word_stays_only_when_it_names_the_topic(hook):
    _, answer = hook
    answer["value"] = "instruction tuning of sparse experts"
    background = (
        "Sparse experts are cheap. We introduce Moeflan, a model that beats Flan-PaLM-62B on four hard "
        "benchmark suites."
    )
    assert derive_title(background) == "Moeflan: Instruction tuning of sparse experts"
    topical = background + " Benchmark suites matter; the suites are hard, and benchmark suites are public."
    assert derive_title(topical) == "Moeflan: Model that beats Flan-PaLM-62B on four hard benchmark suites"


def test_a_half_imported_keyphrase_module_is_waited_for(monkeypatch):
    """Another thread importing retrieval.keyphrase puts it in sys.modules before its body has run
    (the build's fingerprint thread asks for TITLE_RULES_VERSION while titles are derived): the title
    rules must not use it then (a NameError in describe), but wait for the import."""
    import importlib
    import sys
    import types

    half = types.ModuleType("retrieval.keyphrase")
    half.__spec__ = importlib.machinery.ModuleSpec("retrieval.keyphrase", None)
    half.__spec__._initializing = True
    whole = sys.modules.get("retrieval.keyphrase") or importlib.import_module("retrieval.keyphrase")
    monkeypatch.setitem(sys.modules, "retrieval.keyphrase", half)
    monkeypatch.setattr(importlib, "import_module", lambda name: whole)
    assert text._keyphrase_module() is whole
    half.__spec__._initializing = False
    assert text._keyphrase_module() is half
