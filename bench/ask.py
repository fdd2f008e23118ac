"""/ask answer quality on the ICLR 2024 abstracts: answer@1, answer@3 and paper@1, by question kind,
beside two baselines, over the whole corpus in one run.

The questions (``bench/data/ask_iclr2024.jsonl``) were written by hand by reading the abstracts, as a
reader would ask them: each names its kind (``definition``, ``method``, ``finding``,
``motivation``), its gold paper (the ``id`` of ``papers.jsonl``) and one or more gold sentences,
verbatim substrings of that paper's abstract. A quote answers the question when it comes from the
gold paper and contains one of the gold substrings (compared on letters and digits only, so LaTeX
and spacing do not matter).

* ``answer@1``: the first quoted sentence answers the question;
* ``answer@3``: one of the first three quoted sentences does;
* ``paper@1``: the question's own paper ranking puts the gold paper first.

Baselines, both on the plain BM25 ranking of the question's words and on the answerer's ranking:
``lead`` quotes the first sentence of the top paper; ``overlap`` quotes the sentence of the top three
papers that shares most distinct question words. Questions fall in two halves by a hash of their id
(:func:`split_of`), fixed before the answer model was first fitted: ``fit`` may be fitted and tuned on,
``held-out`` never is.

Usage::

    PYTHONPATH=. python bench/ask.py                     # the evaluation (about a minute)
    PYTHONPATH=. python bench/ask.py --check             # only validate the question file
    PYTHONPATH=. python bench/ask.py --misses            # also print every miss
    PYTHONPATH=. python bench/ask.py --ablations         # also score the answerer with one idea off at a time
    PYTHONPATH=. python bench/ask.py --latency 100000    # also /ask latency and stability at 100k abstracts
    PYTHONPATH=. python bench/ask.py --variant okapi     # another BM25 variant than the bot's default

The data file is checked before anything runs (``--check`` does only that): every gold substring is
verbatim in its paper's abstract, the paper is in ``abstracts.txt``, and no question shares more than
:data:`MAX_SHARED_RUN` consecutive words with a gold sentence, names aside.
"""

from __future__ import annotations

import argparse
import dataclasses
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

from retrieval.answer import answer, paper_sentences, rank_papers  # noqa: E402
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
KINDS = ("definition", "method", "finding", "motivation")
#: A question shares at most this many consecutive words with any of its gold sentences.
MAX_SHARED_RUN = 3
TARGETS = {"answer@1": 0.65, "answer@3": 0.85, "paper@1": 0.90}
#: answer@1 beats both baselines by at least this much.
TARGET_MARGIN = 0.15


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


@dataclass
class Outcome:
    question: Question
    quotes: list[tuple[str, str]]  # (paper id in the index, sentence), in reply order
    top_paper: str | None

    def answer_at(self, gold_paper: str, keys: tuple[str, ...], k: int) -> bool:
        return any(
            pid == gold_paper and any(key in _norm(text) for key in keys) for pid, text in self.quotes[:k]
        )


Answerer = Callable[[Index, str], tuple[list[tuple[str, str]], str | None]]


def system_answer(index: Index, question: str) -> tuple[list[tuple[str, str]], str | None]:
    result = answer(index, question)
    top = rank_papers(index, question, 1)
    return [(s.paper.id, s.text) for s in result.sentences], (index.papers[top[0]].id if top else None)


def _plain_top(index: Index, question: str, n: int) -> list[int]:
    return rank(index, plain_query(question).terms, n)[0].tolist()


def _lead(index: Index, docs: list[int]) -> tuple[list[tuple[str, str]], str | None]:
    if not docs:
        return [], None
    paper = index.papers[docs[0]]
    return [(paper.id, s) for s in paper_sentences(paper)[:1]], paper.id


def _overlap(index: Index, question: str, docs: list[int]) -> tuple[list[tuple[str, str]], str | None]:
    words = set(plain_query(question).terms)
    scored = []
    for r, doc in enumerate(docs[:3]):
        for i, sentence in enumerate(paper_sentences(index.papers[doc])):
            scored.append((-len(words & set(tokenize(sentence))), r, i, index.papers[doc].id, sentence))
    scored.sort()
    return [(pid, s) for *_, pid, s in scored[:3]], (index.papers[docs[0]].id if docs else None)


BASELINES: dict[str, Answerer] = {
    "lead (BM25)": lambda index, q: _lead(index, _plain_top(index, q, 1)),
    "overlap (BM25)": lambda index, q: _overlap(index, q, _plain_top(index, q, 3)),
    "lead (question ranking)": lambda index, q: _lead(index, rank_papers(index, q, 1)),
    "overlap (question ranking)": lambda index, q: _overlap(index, q, rank_papers(index, q, 3)),
}


def run(index: Index, questions: Sequence[Question], answerer: Answerer) -> list[Outcome]:
    return [Outcome(q, *answerer(index, q.question)) for q in questions]


def scores(outcomes: Sequence[Outcome], gold_ids: dict[str, str]) -> dict[str, float]:
    n = len(outcomes) or 1
    a1 = sum(o.answer_at(gold_ids[o.question.qid], gold_keys(o.question), 1) for o in outcomes)
    a3 = sum(o.answer_at(gold_ids[o.question.qid], gold_keys(o.question), 3) for o in outcomes)
    p1 = sum(o.top_paper == gold_ids[o.question.qid] for o in outcomes)
    return {"answer@1": a1 / n, "answer@3": a3 / n, "paper@1": p1 / n, "n": len(outcomes)}


def groups(outcomes: Sequence[Outcome]) -> list[tuple[str, list[Outcome]]]:
    out = [("all", list(outcomes))]
    out += [(kind, [o for o in outcomes if o.question.kind == kind]) for kind in KINDS]
    out += [(h, [o for o in outcomes if o.question.half == h]) for h in ("fit", "held-out")]
    return out


def print_table(title: str, outcomes: Sequence[Outcome], gold_ids: dict[str, str]) -> None:
    print(f"\n{title}")
    print(f"  {'':12s} {'n':>4s} {'answer@1':>9s} {'answer@3':>9s} {'paper@1':>8s}")
    for name, group in groups(outcomes):
        s = scores(group, gold_ids)
        print(f"  {name:12s} {s['n']:4d} {s['answer@1']:9.3f} {s['answer@3']:9.3f} {s['paper@1']:8.3f}")


def print_misses(outcomes: Sequence[Outcome], gold_ids: dict[str, str], titles: dict[str, str]) -> None:
    print("\nmisses (answer@1)")
    for o in outcomes:
        q = o.question
        if o.answer_at(gold_ids[q.qid], gold_keys(q), 1):
            continue
        print(f"- {q.qid} [{q.kind}] {q.question}")
        print(f"    gold {gold_ids[q.qid]} {titles.get(gold_ids[q.qid], '')[:70]}: {q.gold[0][:110]}")
        print(f"    top paper {o.top_paper} {titles.get(o.top_paper or '', '')[:70]}")
        for pid, text in o.quotes[:3]:
            print(f"    quote {pid}: {text[:140]}")


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


def latency(papers: Sequence[Paper], questions: Sequence[Question], gold_ids: dict[str, str], size: int,
            small: list[Outcome], params: BM25Params) -> None:
    """/ask over the ICLR abstracts plus synthetic ones up to ``size`` papers: answer@1 there, how
    many first quotes stay the same as over ICLR alone, and the latency of ``Index.answer`` (the ICLR
    questions and synthetic ones: the generator's queries asked as "how does ... work?")."""
    from bench._synth import Generator

    started = time.perf_counter()
    extra = list(Generator(max(0, size - len(papers))).papers())
    index = build_index([*papers, *extra], params)
    print(f"\nICLR + synthetic: {len(index):,} papers (built in {time.perf_counter() - started:.0f} s)")
    big = run(index, questions, system_answer)
    s = scores(big, gold_ids)
    same = sum(1 for a, b in zip(small, big, strict=True) if a.quotes[:1] == b.quotes[:1])
    print(f"  answer@1 {s['answer@1']:.3f}  answer@3 {s['answer@3']:.3f}  paper@1 {s['paper@1']:.3f}; "
          f"first quote unchanged from the ICLR-only index: {same}/{len(big)}")
    synthetic = [f"how does {q} work?" for q in Generator(size).queries(200)]
    asked = [q.question for q in questions] + synthetic
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


def served_params(variant: str | None = None) -> BM25Params:
    """The ranking the bot serves with (its default settings and config/paperbot.toml), or ``variant``."""
    from bot.settings import load_settings

    params = load_settings().bm25
    return dataclasses.replace(params, variant=variant, delta=None) if variant else params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--variant", choices=("okapi", "l", "plus"), default=None,
                        help="BM25 variant (default: the bot's, from config/paperbot.toml)")
    parser.add_argument("--check", action="store_true", help="only validate the question file")
    parser.add_argument("--misses", action="store_true", help="print every answer@1 miss")
    parser.add_argument("--ablations", action="store_true", help="score with one idea off at a time")
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
    print(f"{len(questions)} questions ({counts}); data checks pass")
    if args.check:
        return 0

    to_index = served_map(corpus.papers, source)
    gold_ids = {q.qid: to_index[q.paper] for q in questions}
    titles = {to_index[sid]: row["title"] for sid, row in source.items() if sid in to_index}
    params = served_params(args.variant)
    started = time.perf_counter()
    index = build_index(corpus.papers, params)
    seconds = time.perf_counter() - started
    print(f"index: {len(index):,} ICLR 2024 abstracts, {params.key()} ({seconds:.1f} s)")

    ours = run(index, questions, system_answer)
    print_table("paperbot /ask", ours, gold_ids)
    base_scores = {}
    for name, fn in BASELINES.items():
        outcomes = run(index, questions, fn)
        base_scores[name] = scores(outcomes, gold_ids)
        print_table(f"baseline: {name}", outcomes, gold_ids)

    s = scores(ours, gold_ids)
    print("\ntargets")
    for key, target in TARGETS.items():
        print(f"  {key} {s[key]:.3f} >= {target:.2f}: {'PASS' if s[key] >= target else 'FAIL'}")
    best_base = max(b["answer@1"] for b in base_scores.values())
    margin = s["answer@1"] - best_base
    print(f"  answer@1 - best baseline answer@1 = {s['answer@1']:.3f} - {best_base:.3f} = {margin:+.3f} "
          f">= {TARGET_MARGIN:.2f}: {'PASS' if margin >= TARGET_MARGIN - 1e-9 else 'FAIL'}")

    if args.misses:
        print_misses(ours, gold_ids, titles)
    if args.ablations:
        from retrieval import answer as answer_module

        print("\nablations (one idea off at a time)")
        print(f"  {'':34s} {'answer@1':>9s} {'answer@3':>9s} {'paper@1':>8s} {'fit@1':>6s} {'held@1':>6s}")
        for name in answer_module.ABLATIONS:
            with answer_module.ablate(name):
                outcomes = run(index, questions, system_answer)
            sc = scores(outcomes, gold_ids)
            half = {h: scores([o for o in outcomes if o.question.half == h], gold_ids)
                    for h in ("fit", "held-out")}
            print(f"  {name:34s} {sc['answer@1']:9.3f} {sc['answer@3']:9.3f} {sc['paper@1']:8.3f}"
                  f" {half['fit']['answer@1']:6.3f} {half['held-out']['answer@1']:6.3f}")
    if args.latency:
        latency(corpus.papers, questions, gold_ids, args.latency, ours, params)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
