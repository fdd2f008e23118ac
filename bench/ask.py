"""/ask answer quality, in one run: which sentence is quoted first, learned against today's rules and
two baselines, on data the learned choice was not fitted on.

* **Sentence roles**: the shipped role classifier (:mod:`retrieval.roles`) on CSAbstruct's test split,
  macro-F1 beside a position-only classifier fitted the same way.
* **SciFact**: SciFact's 505 train claims with annotated evidence sentences, each asked over SciFact's
  5,183 abstracts, in 5 folds grouped by claim: the learned choice answers a fold with a model fitted
  (``bench/fit_answer.py``'s recipe) on the other four and the project's fit half.
* **Own questions** (``bench/data/ask_iclr2024.jsonl``, written by hand by reading the ICLR 2024
  abstracts, as a reader would ask them; each names its kind, its gold paper and gold sentences,
  verbatim substrings of that paper's abstract): the ``held-out`` half (by a hash of the question id,
  :func:`split_of`, fixed before any model was fitted) is answered by the shipped model, which never
  saw it, all of it and from q104 on (:data:`FRESH_FROM`: the hand-set rules were tuned on
  q001-q103, so only the later questions compare them fairly); the ``fit`` half is shown for the
  record.
* **Absent topics** (``bench/data/ask_absent.jsonl``): 20 questions on topics the ICLR corpus does
  not cover; the reply must quote nothing.

Metrics: ``answer@1`` the first quote answers (comes from a gold paper and overlaps a gold sentence on
at least half of the shorter, letters and digits only); ``answer@3`` one of the first three does;
``paper@1`` the reply's first paper is a gold paper. Rows: the learned choice; today's hand-set rules
(``bench/answer_rules.py``); ``overlap``, the sentences of the top three BM25 papers sharing most
distinct question words (the first BM25 paper first); ``lead``, the first sentence of the top BM25
paper; and the ceiling, how often the answer is among the learned choice's candidates at all.
``silent``: replies that quote nothing (the learned choice abstains; each misses all three metrics).

Usage::

    PYTHONPATH=. python bench/ask.py                     # the evaluation (a few minutes)
    PYTHONPATH=. python bench/ask.py --check             # only validate the question file
    PYTHONPATH=. python bench/ask.py --latency 100000    # also /ask latency at 100k abstracts

The data file is checked before anything runs (``--check`` does only that): every gold substring is
verbatim in its paper's abstract, the paper is in ``abstracts.txt``, and no question shares more than
:data:`MAX_SHARED_RUN` consecutive words with a gold sentence, names aside.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

from bench.fit_answer import (  # noqa: E402
    FOLDS,
    Asked,
    Example,
    FitData,
    build_data,
    examples,
    fit_answer,
    iclr_questions,
    quote_hits,
    role_report,
    served_params,
)
from retrieval.answer import answer, paper_sentences  # noqa: E402
from retrieval.answer_model import load_model  # noqa: E402
from retrieval.corpus import load_corpus  # noqa: E402
from retrieval.index import BM25Params, Index, build_index  # noqa: E402
from retrieval.markup import strip_markup  # noqa: E402
from retrieval.models import Paper  # noqa: E402
from retrieval.query import plain_query  # noqa: E402
from retrieval.search import rank  # noqa: E402
from retrieval.sentences import split_sentences  # noqa: E402
from retrieval.tokenize import tokenize  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "iclr2024"
DEFAULT_DATA = ROOT / "bench" / "data" / "ask_iclr2024.jsonl"
DEFAULT_ABSENT = ROOT / "bench" / "data" / "ask_absent.jsonl"
KINDS = ("definition", "method", "finding", "motivation")
#: A question shares at most this many consecutive words with any of its gold sentences.
MAX_SHARED_RUN = 3


@dataclass(frozen=True)
class Question:
    qid: str
    kind: str
    question: str
    paper: str  # id in papers.jsonl
    gold: tuple[str, ...]
    names: tuple[str, ...] = ()

    @property
    def half(self) -> str:
        """``held-out`` or ``fit``: see :func:`split_of`."""
        return split_of(self.qid)


def split_of(qid: str) -> str:
    """The question's half, fixed by a hash of its id before any model was fitted: ``held-out``
    questions are never fitted or tuned on (they score the answer choice); ``fit`` ones may be."""
    return "held-out" if hashlib.sha256(f"ask-heldout:{qid}".encode()).digest()[0] % 2 else "fit"


def load_questions(path: Path = DEFAULT_DATA) -> list[Question]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out.append(
                    Question(row["id"], row["kind"], row["question"], row["paper"], tuple(row["gold"]),
                             tuple(row.get("names", ())))
                )
    return out


def load_source(corpus: Path = DEFAULT_CORPUS) -> dict[str, dict]:
    """``papers.jsonl`` rows by id (titles and the verbatim abstracts)."""
    with (corpus / "papers.jsonl").open(encoding="utf-8") as fh:
        return {row["id"]: row for row in map(json.loads, fh)}


# -- the data checks ---------------------------------------------------------------------------------

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def _is_name(word: str, position: int) -> bool:
    """A name, acronym or symbol: digits, capitals past the first letter, or a capital mid-sentence."""
    return any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]) or (
        position > 0 and word[:1].isupper()
    )


def shared_run(question: str, gold: str, names: Iterable[str] = ()) -> tuple[int, str]:
    """Longest run of consecutive words the question shares with ``gold`` (case-insensitive), names
    aside: a word written as a name in either text (see :func:`_is_name`) or listed in ``names``
    breaks a run instead of extending it. Returns the run's length and its words."""
    q_words, g_words = _words(question), _words(gold)
    name_set = {w.casefold() for n in names for w in _words(n)}
    name_set |= {w.casefold() for text in (q_words, g_words) for i, w in enumerate(text) if _is_name(w, i)}

    def seq(words: list[str]) -> list[str | None]:
        return [None if w.casefold() in name_set else w.casefold() for w in words]

    a, b = seq(q_words), seq(g_words)
    best, best_end = 0, 0
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] is not None and a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                if cur[j] > best:
                    best, best_end = cur[j], i
        prev = cur
    return best, " ".join(q_words[best_end - best : best_end])


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def gold_keys(q: Question) -> tuple[str, ...]:
    return tuple({_norm(strip_markup(g)) for g in q.gold} | {_norm(g) for g in q.gold})


def check_questions(questions: Sequence[Question], source: dict[str, dict], served: set[str]) -> list[str]:
    """Every problem of the data file, one line each (empty when it is sound).

    ``served``: normalised abstracts of the papers ``abstracts.txt`` holds.
    """
    problems: list[str] = []
    seen_ids: set[str] = set()
    seen_questions: set[str] = set()
    for q in questions:
        where = f"{q.qid}"
        if q.qid in seen_ids:
            problems.append(f"{where}: duplicate id")
        seen_ids.add(q.qid)
        if _norm(q.question) in seen_questions:
            problems.append(f"{where}: duplicate question")
        seen_questions.add(_norm(q.question))
        if q.kind not in KINDS:
            problems.append(f"{where}: kind {q.kind!r} is not one of {', '.join(KINDS)}")
        row = source.get(q.paper)
        if row is None:
            problems.append(f"{where}: paper {q.paper} is not in papers.jsonl")
            continue
        if _norm(row["abstract"]) not in served:
            problems.append(f"{where}: paper {q.paper} is not in abstracts.txt")
        if not q.gold:
            problems.append(f"{where}: no gold sentence")
        for gold in q.gold:
            if gold not in row["abstract"]:
                problems.append(f"{where}: gold is not verbatim in the abstract of {q.paper}: {gold[:60]!r}")
                continue
            # The whole sentence around the gold substring is what the question must not copy.
            for sentence in split_sentences(row["abstract"]):
                if _norm(gold) in _norm(sentence) or _norm(sentence) in _norm(gold):
                    n, run = shared_run(q.question, sentence, q.names)
                    if n > MAX_SHARED_RUN:
                        problems.append(f"{where}: shares {n} consecutive words with its gold sentence: "
                                        f"{run!r}")
    counts = {k: sum(1 for q in questions if q.kind == k) for k in KINDS}
    if len(questions) < 80:
        problems.append(f"only {len(questions)} questions (at least 80)")
    for kind, count in counts.items():
        if count < 20:
            problems.append(f"only {count} {kind} questions (at least 20)")
    return problems


# -- the evaluation ----------------------------------------------------------------------------------

#: One reply: the quotes (paper, sentence) in reply order, and the paper it puts first.
Reply = tuple[list[tuple[Paper, str]], Paper | None]
Answerer = Callable[[Index, str], Reply]


def learned_answer(index: Index, question: str) -> Reply:
    """The bot's answer (:func:`retrieval.answer.answer`, with the model in use)."""
    result = answer(index, question)
    quotes = [(s.paper, s.text) for s in result.sentences]
    return quotes, (quotes[0][0] if quotes else None)


def rules_answer(index: Index, question: str) -> Reply:
    """Today's hand-set rules (bench/answer_rules.py)."""
    from bench import answer_rules

    result = answer_rules.answer(index, question)
    quotes = [(s.paper, s.text) for s in result.sentences]
    return quotes, (quotes[0][0] if quotes else None)


def _plain_top(index: Index, question: str, n: int) -> list[int]:
    return rank(index, plain_query(question).terms, n)[0].tolist()


def lead_baseline(index: Index, question: str) -> Reply:
    """The first sentence of the paper BM25 ranks first for the question's words."""
    docs = _plain_top(index, question, 1)
    if not docs:
        return [], None
    paper = index.papers[docs[0]]
    return [(paper, s) for s in paper_sentences(paper)[:1]], paper


def overlap_baseline(index: Index, question: str) -> Reply:
    """The sentences of the top three BM25 papers that share most distinct words with the question
    (ties: the higher-ranked paper, then the earlier sentence); the first BM25 paper first."""
    docs = _plain_top(index, question, 3)
    words = set(plain_query(question).terms)
    scored = []
    for r, doc in enumerate(docs):
        paper = index.papers[doc]
        for i, sentence in enumerate(paper_sentences(paper)):
            scored.append((-len(words & set(tokenize(sentence))), r, i, paper, sentence))
    scored.sort(key=lambda x: x[:3])
    return [(p, s) for *_, p, s in scored[:3]], (index.papers[docs[0]] if docs else None)


@dataclass(frozen=True)
class Outcome:
    """One question's reply: its first quote answers, one of its first three does, its first paper
    is a gold paper."""

    answer1: bool
    answer3: bool
    paper1: bool
    silent: bool  # the reply quotes nothing


@dataclass
class Scored:
    """answer@1, answer@3 and paper@1 over some questions, their number, and how many replies quote
    nothing (each of those misses all three)."""

    answer1: float
    answer3: float
    paper1: float
    n: int
    silent: int = 0


def score(index: Index, asked: Sequence[Asked], answerer: Answerer) -> tuple[Scored, list[Outcome]]:
    """How ``answerer`` does on ``asked``, and per question whether its first quote answers, one of its
    first three does, and its first paper is a gold one: a quote answers when it comes from a gold
    paper and overlaps a gold sentence on at least half of the shorter
    (:func:`bench.fit_answer.quote_hits`)."""
    outcomes = []
    for q in asked:
        quotes, top = answerer(index, q.question)
        hits = [quote_hits(q.gold, paper, text) for paper, text in quotes[:3]]
        first_paper = top is not None and top.id in q.gold.spans
        outcomes.append(Outcome(bool(hits) and hits[0], any(hits), first_paper, not quotes))
    return summarise(outcomes), outcomes


def summarise(outcomes: Sequence[Outcome]) -> Scored:
    n = len(outcomes) or 1
    return Scored(sum(o.answer1 for o in outcomes) / n, sum(o.answer3 for o in outcomes) / n,
                  sum(o.paper1 for o in outcomes) / n, len(outcomes), sum(o.silent for o in outcomes))


def _row(name: str, s: Scored) -> None:
    print(f"  {name:44s} {s.answer1:9.3f} {s.answer3:9.3f} {s.paper1:8.3f} {s.silent:7d}")


def _header(title: str) -> None:
    print(f"\n{title}")
    print(f"  {'':44s} {'answer@1':>9s} {'answer@3':>9s} {'paper@1':>8s} {'silent':>7s}")


def _oracle(examples_: Sequence[Example]) -> float:
    return sum(e.gold.any() for e in examples_) / (len(examples_) or 1)


def scifact_folds(data: FitData, role_weights: npt.NDArray[np.float32]) -> dict[str, Scored]:
    """SciFact's train claims, each answered over SciFact's 5,183 abstracts by a model fitted
    without its fold (and the other rows: rules and baselines, which fit nothing)."""
    from retrieval.answer_model import using

    index = data.scifact_index
    claims = [e.asked for e in data.scifact]
    outcomes: list[Outcome] = []
    for fold in range(FOLDS):
        model = fit_answer(data, role_weights, leave_out=fold, log=lambda _line: None)
        held = [c for c in claims if c.group == fold]
        with using(model):
            outcomes += score(index, held, learned_answer)[1]
    got = {"learned choice (held-out folds)": summarise(outcomes)}
    got["today's rules"] = score(index, claims, rules_answer)[0]
    got["baseline: overlap (top-3 BM25 papers)"] = score(index, claims, overlap_baseline)[0]
    got["baseline: lead (first sentence, top BM25 paper)"] = score(index, claims, lead_baseline)[0]
    return got


def count_hand_rules(path: Path) -> tuple[int, int]:
    """(hand constants, word lists) of a module: numeric literals other than 0 and 1; compiled regular
    expressions, strings of three or more words split into lists, and literal collections of three or
    more strings."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = lists = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value not in (0, 1):
            constants += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "compile":
                lists += 1
            elif node.func.attr == "split" and isinstance(node.func.value, ast.Constant) and len(
                str(node.func.value.value).split()
            ) >= 3:
                lists += 1
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and sum(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
        ) >= 3:
            lists += 1
    return constants, lists


#: The commit whose retrieval/answer.py held today's hand-set rules (bench/answer_rules.py keeps them).
RULES_COMMIT = "4ed0df4"


def _file_at(commit: str, path: str) -> Path | None:
    """``path`` as it was at ``commit``, written to a temporary file (None without git history)."""
    import subprocess
    import tempfile

    try:
        text = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, check=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    out = Path(tempfile.mkdtemp()) / Path(path).name
    out.write_text(text, encoding="utf-8")
    return out


#: The first of the project's questions that no hand-set rule was tuned on: q001-q103 were written
#: first and today's rules (bench/answer_rules.py) were adjusted while reading their figures.
FRESH_FROM = 104


def question_number(qid: str) -> int:
    """``q104`` -> 104."""
    return int(qid.lstrip("q"))


def load_absent(path: Path = DEFAULT_ABSENT) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line)["question"] for line in fh if line.strip()]


def served_map(papers: Sequence[Paper], source: dict[str, dict]) -> dict[str, str]:
    """papers.jsonl id -> id of the same paper in the index (matched on the abstract text)."""
    by_abstract = {_norm(p.abstract): p.id for p in papers}
    out = {}
    for sid, row in source.items():
        key = _norm(row["abstract"])
        if key in by_abstract:
            out[sid] = by_abstract[key]
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency(papers: Sequence[Paper], held_out: Sequence[Asked], size: int, params: BM25Params) -> None:
    """/ask over the ICLR abstracts plus synthetic ones up to ``size`` papers: the held-out half's
    answer@1 there, and the latency of ``Index.answer`` (the held-out questions and synthetic ones:
    the generator's queries asked as "how does ... work?")."""
    from bench._synth import Generator

    started = time.perf_counter()
    extra = list(Generator(max(0, size - len(papers))).papers())
    index = build_index([*papers, *extra], params)
    print(f"\nICLR + synthetic: {len(index):,} papers (built in {time.perf_counter() - started:.0f} s)")
    s, _ = score(index, held_out, learned_answer)
    print(f"  held-out half: answer@1 {s.answer1:.3f}  answer@3 {s.answer3:.3f}  paper@1 {s.paper1:.3f}")
    synthetic = [f"how does {q} work?" for q in Generator(size).queries(200)]
    asked = [q.question for q in held_out] + synthetic
    for q in asked[:20]:
        index.answer(q)  # warm-up
        index.search(q, 10)
    times: list[float] = []
    search_times: list[float] = []
    for _rep in range(3):  # the first pass reads each paper's sentences cold, the others warm
        for q in asked:
            t0 = time.perf_counter()
            index.answer(q)
            times.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            index.search(q, 10)
            search_times.append((time.perf_counter() - t0) * 1000)
    p50, p99 = statistics.median(times), percentile(times, 0.99)
    s50, s99 = statistics.median(search_times), percentile(search_times, 0.99)
    verdict = "PASS" if p99 <= 20.0 else "FAIL"
    print(f"  Index.answer over {len(times)} calls: p50 {p50:.2f} ms  p99 {p99:.2f} ms  "
          f"(target p99 <= 20 ms: {verdict})")
    print(f"  Index.search(q, 10) on the same questions, same run: p50 {s50:.2f} ms  p99 {s99:.2f} ms "
          f"(answer / search: p50 x{p50 / s50:.1f}, p99 x{p99 / s99:.1f}; the machine's load moves both)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--check", action="store_true", help="only validate the question file")
    parser.add_argument("--latency", type=int, metavar="N", help="also /ask at N papers (ICLR + synthetic)")
    args = parser.parse_args(argv)

    questions = load_questions(args.data)
    source = load_source(args.corpus)
    corpus = load_corpus(args.corpus / "abstracts.txt")
    served = {_norm(p.abstract) for p in corpus.papers}
    problems = check_questions(questions, source, served)
    for line in problems:
        print(f"{args.data.name}: {line}")
    if problems:
        return 1
    counts = ", ".join(f"{sum(q.kind == k for q in questions)} {k}" for k in KINDS)
    halves = ", ".join(f"{sum(q.half == h for q in questions)} {h}" for h in ("fit", "held-out"))
    print(f"{len(questions)} questions ({counts}; {halves}); data checks pass")
    if args.check:
        return 0
    started = time.perf_counter()
    model = load_model()
    shared = args.corpus.parent

    r = role_report(model.role_weights, shared)
    print(f"\nsentence roles, CSAbstruct test ({r['sentences']:,} sentences; fitted on train, chosen on dev)")
    print(f"  classifier     macro-F1 {r['macro_f1']:.3f}  accuracy {r['accuracy']:.3f}")
    print(f"  position only  macro-F1 {r['position_macro_f1']:.3f}  accuracy {r['position_accuracy']:.3f}")

    data = build_data(model.role_weights, shared, log=lambda _line: None)
    sci = scifact_folds(data, model.role_weights)
    _header(f"SciFact train claims over SciFact's {len(data.scifact_index):,} abstracts "
            f"({len(data.scifact)} claims, {FOLDS} folds grouped by claim)")
    for name, s in sci.items():
        _row(name, s)
    print(f"  {'ceiling: the answer among the candidates':44s} {_oracle(data.scifact):9.3f}")

    index = data.iclr_index
    held_out = iclr_questions(list(index.papers), "held-out", shared)
    fit_half = iclr_questions(list(index.papers), "fit", shared)
    fresh = [i for i, q in enumerate(held_out) if question_number(q.qid) >= FRESH_FROM]
    answerers: tuple[tuple[str, Answerer], ...] = (
        ("learned choice (shipped model)", learned_answer), ("today's rules", rules_answer),
        ("baseline: overlap (top-3 BM25 papers)", overlap_baseline),
        ("baseline: lead (first sentence, top BM25 paper)", lead_baseline),
    )
    per_question = {name: score(index, held_out, fn)[1] for name, fn in answerers}
    held_examples = examples(index, held_out)
    own: dict[str, Scored] = {}
    for title, rows, table in (
        (f"held-out half ({len(held_out)})", range(len(held_out)), None),
        (f"held-out half, q{FRESH_FROM:03d} onward ({len(fresh)}; no rule was tuned on them)", fresh, own),
    ):
        _header(f"own questions over ICLR 2024's {len(index):,} abstracts, {title}")
        for name, _fn in answerers:
            got = summarise([per_question[name][i] for i in rows])
            _row(name, got)
            if table is not None:
                table[name] = got
        print(f"  {'ceiling: the answer among the candidates':44s} "
              f"{_oracle([held_examples[i] for i in rows]):9.3f}")
    _header(f"own questions, fit half ({len(fit_half)}; the learned choice was fitted on them)")
    for name, fn in answerers[:2]:
        _row(name, score(index, fit_half, fn)[0])

    absent = load_absent()
    print(f"\nquestions on topics absent from the corpus ({len(absent)}, held out): replies quoting nothing")
    quiet: dict[str, int] = {}
    for name, fn in answerers[:2]:
        quiet[name] = sum(not fn(index, q)[0] for q in absent)
        print(f"  {name:44s} {quiet[name]:3d} / {len(absent)}")
    learned_quiet = quiet[answerers[0][0]]

    print(f"\ntargets (held-out; own questions: q{FRESH_FROM:03d} onward, which no rule was tuned on)")
    checks = []
    for label, got, base in (("SciFact", sci, sci["learned choice (held-out folds)"]),
                             ("own held-out", own, own["learned choice (shipped model)"])):
        rules = got["today's rules"]
        best_base = max(v.answer1 for k, v in got.items() if k.startswith("baseline"))
        checks += [
            (f"{label} paper@1 {base.paper1:.3f} >= today's {rules.paper1:.3f}", base.paper1 >= rules.paper1),
            (f"{label} answer@1 {base.answer1:.3f} >= today's rules {rules.answer1:.3f}",
             base.answer1 >= rules.answer1),
            (f"{label} answer@1 {base.answer1:.3f} >= best baseline {best_base:.3f} + 0.15",
             base.answer1 >= best_base + 0.15 - 1e-9),
        ]
    checks.insert(0, (f"SciFact answer@1 {sci['learned choice (held-out folds)'].answer1:.3f} >= 0.60",
                      sci["learned choice (held-out folds)"].answer1 >= 0.60))
    mine = own["learned choice (shipped model)"]
    checks.insert(1, (f"own held-out answer@1 {mine.answer1:.3f} >= 0.70", mine.answer1 >= 0.70))
    checks.insert(2, (f"own held-out answer@3 {mine.answer3:.3f} >= 0.85", mine.answer3 >= 0.85))
    checks.append((f"absent topics answered with nothing {learned_quiet} / {len(absent)}",
                   learned_quiet == len(absent)))
    for text, ok in checks:
        print(f"  {text}: {'PASS' if ok else 'FAIL'}")

    print("\nhand constants and word lists (numeric literals other than 0 and 1; regexes and word lists)")
    before = _file_at(RULES_COMMIT, "retrieval/answer.py")
    for name, path in ((f"retrieval/answer.py at {RULES_COMMIT} (today's rules)", before),
                       ("retrieval/answer.py", ROOT / "retrieval" / "answer.py"),
                       ("retrieval/roles.py", ROOT / "retrieval" / "roles.py"),
                       ("bench/answer_rules.py", ROOT / "bench" / "answer_rules.py")):
        if path is None:
            print(f"  {name:44s} (not in this checkout's history)")
            continue
        constants, lists = count_hand_rules(path)
        print(f"  {name:44s} {constants:4d} constants {lists:4d} word lists")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if args.latency:
        latency(corpus.papers, held_out, args.latency, params=served_params())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
