"""Table test of the titles derived for the 40 seed papers, plus the title heuristics one by one.

The seed corpus has no titles; every expected title below was read against its abstract. Papers that
name their contribution get a name-led title ("SSCP: Single-Step Completion Policy"); the others get
the object of their "we propose/show that/study ..." statement, or a trimmed first sentence ("…").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.corpus import load_corpus
from retrieval.text import TITLE_LIMIT, derive_title

ROOT = Path(__file__).resolve().parents[2]
SEED_DIR = ROOT / "data" / "corpus"
SEED_FILES = {"000": "000_052725e3e4cc1d6a.txt", "002": "002_89f75c7431d67b52.txt"}


def seed_abstracts() -> dict[tuple[str, int], str]:
    """(file prefix, line of the area line) -> abstract, read without the corpus parser."""
    out = {}
    for prefix, name in SEED_FILES.items():
        lines = (SEED_DIR / name).read_text(encoding="utf-8").split("\n")
        items = [(n, line.strip()) for n, line in enumerate(lines, start=1) if line.strip()][1:]
        for k in range(0, len(items), 3):
            out[(prefix, items[k][0])] = items[k + 2][1]
    return out


# fmt: off
EXPECTED_TITLES = [
    ("000",   3, 'SSCP: Single-Step Completion Policy'),
    ("000",   9, 'MISL: Mutual Information Skill Learning'),
    ("000",  15, 'SDM: Submodular Distribution Matching'),
    ("000",  21, 'Proofs of identification learning advantages for quantum functions'),
    ("000",  27, 'Super Experts (SEs)'),
    ("000",  33, 'SAEs trained on randomly initialized transformers produce auto-interpretability scores'),
    ("000",  39, 'InfoNCE objective induces Gaussian structure in representations'),
    ("000",  45, 'Sample complexity of learning an ε-optimal policy in CAMDPs under a generative model'),
    ("000",  51, 'Non-asymptotic guarantees for both algorithms'),
    ("000",  57, 'Bi-criteria approximation within the metric distortion framework'),
    ("000",  63, 'MoFit: A caption-free MIA framework that constructs synthetic conditioning inputs'),
    ("000",  69, 'DBD: Directional Bias-guided Defense'),
    ("000",  75, 'MultiAgentFinancialFraudBench: A large-scale benchmark'),
    ("000",  81, 'DiffuGuard: A training-free defense framework'),
    ("000",  87, 'JailbreakLoRA: A multi-task jailbreak LoRA training method that balances task utility'),
    ("000",  93, 'Detecting stereotype-inducing words and attributing neuron-level bias in LLMs'),
    ("000",  99, 'SC: Self-Consistency Fine-Tuning'),
    ("000", 105, 'ECIF: Extended Influence Function for Contrastive Loss'),
    ("000", 111, 'Data attribution evaluation framework for meta learning'),
    ("000", 117, 'Faithfulness-guided amortized explainer'),
    ("002",   3, 'Designing an "all-purpose" mean estimation algorithm'),
    ("002",   9, 'M3DT: A mixture-of-experts framework that tackles task scalability'),
    ("002",  15, 'Diverging preferences in human-labeled preference datasets'),
    ("002",  21, 'Bounds that bridge the expected empirical and population risks'),
    ("002",  27, 'MUDD: MUltiway Dynamic Dense Connections'),
    ("002",  33, 'Two-Stage L2D framework for multi-task learning'),
    ("002",  39, 'SAEBench: A comprehensive evaluation suite that measures SAE performance'),
    ("002",  45, 'Selective DPO: Filtering out overly difficult examples'),
    ("002",  51, 'Teacher Hacking'),
    ("002",  57, 'Developing models that can justify the segmentation or detection'),
    ("002",  63, 'Multiplayer symmetric constant-sum games with more than two players'),
    ("002",  69, 's-OTDD: Sliced Optimal Transport Dataset Distance'),
    ("002",  75, 'RATE: Rewrite-based Attribute Treatment Estimator'),
    ("002",  81, 'Unsupervised anytime interpolation based large displacement motion transfer method'),
    ("002",  87, 'Sparse autoencoders are a popular method for interpreting concepts represented in large…'),
    ("002",  93, 'Sample-efficient CI test that does not rely on the binarization process'),
    ("002",  99, 'SSA: Steady-State Adaptation'),
    ("002", 105, 'Large language model-based multi-agent systems have shown great abilities across various…'),
    ("002", 111, 'Position-aware neural network for Graph-of-Net'),
    ("002", 117, 'Doubly robust and semiparametrically efficient estimators'),
]
# fmt: on

# the papers whose abstracts name their method, model, benchmark or coined term
NAME_LED = {
    "SSCP", "MISL", "SDM", "Super Experts", "MoFit", "DBD", "MultiAgentFinancialFraudBench", "DiffuGuard",
    "JailbreakLoRA", "SC", "ECIF", "M3DT", "MUDD", "SAEBench", "Selective DPO", "Teacher Hacking", "s-OTDD",
    "RATE", "SSA",
}  # fmt: skip


@pytest.fixture(scope="module")
def abstracts() -> dict[tuple[str, int], str]:
    return seed_abstracts()


def test_table_covers_every_seed_paper(abstracts):
    assert len(EXPECTED_TITLES) == 40
    assert [(f, line) for f, line, _ in EXPECTED_TITLES] == list(abstracts)


@pytest.mark.parametrize(
    ("file", "line", "title"), EXPECTED_TITLES, ids=[f"{f}:{n}" for f, n, _ in EXPECTED_TITLES]
)
def test_seed_title(abstracts, file, line, title):
    assert derive_title(abstracts[(file, line)]) == title
    assert 0 < len(title) <= TITLE_LIMIT


def test_name_led_titles():
    leaders = {t.split(":")[0] if ":" in t else t.split(" (")[0] for _, _, t in EXPECTED_TITLES}
    assert NAME_LED <= leaders
    assert sum(1 for _, _, t in EXPECTED_TITLES if t.endswith("…")) == 2  # only trimmed first sentences


def test_titles_have_no_markdown_or_latex():
    for _, _, title in EXPECTED_TITLES:
        assert not any(c in title for c in "*_\\$`{}"), title


def test_loaded_papers_carry_these_titles():
    papers = load_corpus(SEED_DIR).papers
    assert [p.title for p in papers] == [t for _, _, t in EXPECTED_TITLES]


# --------------------------------------------------------------------------------------------------
# The heuristics, one at a time
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        pytest.param(
            r"Policies are slow. We propose the \textit{Single-Step Completion Policy} (SSCP), a "
            r"generative policy.",
            "SSCP: Single-Step Completion Policy",
            id="emphasised-name-with-abbreviation",
        ),
        pytest.param(
            "Graphs matter. We introduce a novel steady-state adaptation (SSA) algorithm that balances "
            "things.",
            "SSA: Steady-State Adaptation",
            id="lowercase-long-form-title-cased-generic-head-dropped",
        ),
        pytest.param(
            "Transformers are deep. We propose MUltiway Dynamic Dense (MUDD) connections, a simple method.",
            "MUDD: MUltiway Dynamic Dense Connections",
            id="abbreviation-with-head-noun",
        ),
        pytest.param(
            "SAEs are popular. We introduce SAEBench, a comprehensive evaluation suite that measures SAE "
            "performance across eight diverse metrics, spanning interpretability.",
            "SAEBench: A comprehensive evaluation suite that measures SAE performance",
            id="camelcase-name-with-description-cut-to-fit",
        ),
        pytest.param(
            "Alignment is hard. Building on this, we introduce *Selective DPO*, which filters out overly "
            "difficult examples.",
            "Selective DPO: Filtering out overly difficult examples",
            id="markdown-emphasised-name-with-relative-clause",
        ),
        pytest.param(
            "To this end, we propose a multi-agent framework AgentVerse that can orchestrate experts.",
            "AgentVerse: A multi-agent framework",
            id="name-closing-a-noun-phrase",
        ),
        pytest.param(
            "We propose a lightweight framework, Prompt Risk Control, for selecting a prompt.",
            "Prompt Risk Control: A lightweight framework",
            id="title-case-name-in-apposition",
        ),
        pytest.param(
            "Methods rely on principles, termed mutual information skill learning (MISL). We study them.",
            "MISL: Mutual Information Skill Learning",
            id="termed-with-abbreviation",
        ),
        pytest.param(
            "We investigate whether a similar phenomenon, that we call teacher hacking, can occur.",
            "Teacher Hacking",
            id="we-call",
        ),
        pytest.param(
            "Large learning rates help. We call such a phenomenon “benign oscillation”. It is good.",
            "Benign Oscillation",
            id="quoted-coined-name",
        ),
        pytest.param(
            "Kernels are slow. To fix this, we propose a new family of modern ConvNets, dubbed MogaNet, "
            "for vision.",
            "MogaNet: A family of modern ConvNets",
            id="dubbed-with-description-before-it",
        ),
        pytest.param(
            "We examine diverging preferences in human-labeled preference datasets. We also do more.",
            "Diverging preferences in human-labeled preference datasets",
            id="first-sentence-statement",
        ),
        pytest.param(
            "Recent work studied MDPs. In this work, we address this gap by studying the sample "
            r"complexity of learning an $\epsilon$-optimal policy in CAMDPs under a generative model.",
            "Sample complexity of learning an ε-optimal policy in CAMDPs under a generative model",
            id="by-studying-with-latex",
        ),
        pytest.param(
            "Contrastive learning is popular. In this work, we show that the InfoNCE objective induces "
            "Gaussian structure in representations that emerge from contrastive training.",
            "InfoNCE objective induces Gaussian structure in representations",
            id="show-that-cut-at-relative-clause",
        ),
        pytest.param(
            "Existing methods are slow. We propose a framework for detecting stereotype-inducing words and "
            "attributing neuron-level bias in LLMs, without the need for fine-tuning.",
            "Detecting stereotype-inducing words and attributing neuron-level bias in LLMs",
            id="framework-for-gerund",
        ),
        pytest.param(
            "We propose a model-based algorithm that operates under two settings. Medical AI models excel at "
            "tumor detection.",
            "We propose a model-based algorithm that operates under two settings",
            id="generic-object-rejected-then-first-sentence",
        ),
        pytest.param(
            "Graph Neural Networks are popular models for machine learning on graphs that typically "
            "follow the message-passing paradigm.",
            "Graph Neural Networks are popular models for machine learning on graphs that typically…",
            id="first-sentence-trimmed-with-ellipsis",
        ),
        pytest.param(
            "We propose a new method for reinforcement learning (RL) that is fast and simple to use in "
            "practice.",
            "Method for reinforcement learning that is fast and simple to use in practice",
            id="abbreviation-of-a-complement-is-not-the-name",
        ),
        pytest.param(
            "OOD is underexplored. We present WOODS: 10 challenging time series benchmarks covering a "
            "diverse range of data modalities, such as videos.",
            "WOODS: 10 challenging time series benchmarks covering a diverse range of data modalities",
            id="name-with-colon-description",
        ),
        pytest.param(
            "Benchmarks are coarse. We present FLASK (Fine-grained Language Model Evaluation based on "
            "Alignment SKill Sets), a protocol.",
            "FLASK: Fine-grained Language Model Evaluation based on Alignment SKill Sets",
            id="name-spelled-out-in-parentheses",
        ),
        pytest.param(
            "To this end, we propose CoVLM, which can guide the LLM to explicitly compose visual entities.",
            "CoVLM: Guiding the LLM to explicitly compose visual entities",
            id="which-can-verb",
        ),
        pytest.param(
            "Models are big. We introduce a pruning method, termed Wanda (Pruning by Weights and "
            "activations), designed to induce sparsity.",
            "Wanda: A pruning method",
            id="coined-name-with-a-parenthesis-that-does-not-spell-it",
        ),
    ],
)
def test_heuristic(abstract, title):
    assert derive_title(abstract) == title


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        ("", "Untitled"),
        ("   ", "Untitled"),
        ("\\", "Untitled"),
        ("{}", "Untitled"),
        ("$$", "$$"),
        ("*", "\\*"),
    ],
)
def test_degenerate_abstracts(abstract, title):
    assert derive_title(abstract) == title


def test_long_unbroken_text_stays_within_the_limit():
    assert len(derive_title("x" * 5000)) <= TITLE_LIMIT
    assert len(derive_title("word " * 2000)) <= TITLE_LIMIT
    assert len(derive_title("We propose " + "A" * 300 + ", a method.")) <= TITLE_LIMIT
