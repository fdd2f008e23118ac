"""Follow-ups on the ICLR 2024 abstracts: two-turn conversations, the second turn a reply to the first
answer, measured through the bot's own path (the answer embed built, its conversation read back from
it, the follow-up decided and answered by ``bot.services.conversation``).

The conversations (``bench/data/chat_iclr2024.jsonl``) were written by hand by reading the abstracts,
as people chat: a first question about a paper, then a second turn that means little on its own
("what data did they test it on?", "how much compute does that save?"), paraphrased (at most
:data:`MAX_SHARED_RUN` consecutive words shared with its gold sentence, checked here, names aside).
Kinds: ``continue`` with a gold sentence (the aspect asked: method, data, result, limitation, term),
``change`` (the second turn names a new subject, with its own gold paper and sentence) and ``continue``
without gold (asking for the authors, the venue, similar papers or a save: ``aspect`` says which).

The split was fixed when the file was written, before any tuning: **half A** = the odd numbers of each
kind (c001, c003, ..., s001, ..., a001, ...) is what the sentence chooser and the subject-change
threshold are fitted on (``--fit``); **half B** = the even numbers is held out. Figures are printed for
both halves; the held-out one is the honest one.

Printed, per half and for all:

* ``turn-1 paper@1``: the first answer cites the conversation's paper first;
* ``turn-2 answer@1 with context``: the reply to the follow-up quotes first a gold sentence of the gold
  paper (what the bot does: decide, then answer from the cited papers or afresh);
* ``turn-2 answer@1 without context``: the follow-up asked alone, as a new question;
* ``from a cited paper``: of the continuing follow-ups, the share answered from a paper the first
  answer cited;
* ``subject changes detected``: of the ``change`` conversations, the share answered afresh (and their
  answer@1);
* ``requests routed``: authors / venue / similar / save follow-ups recognised, about the first paper;
* ``/ask paper:``: the /ask questions of ``bench/data/ask_iclr2024.jsonl`` answered from their gold paper
  alone, as ``/ask question paper:`` does, beside the first-turn answerer restricted to that paper.

Usage::

    PYTHONPATH=. python bench/chat.py            # the evaluation (about 30 s)
    PYTHONPATH=. python bench/chat.py --check    # only validate the conversations file
    PYTHONPATH=. python bench/chat.py --misses B # also print the misses of half B (A: the fitted half)
    PYTHONPATH=. python bench/chat.py --fit      # refit retrieval/followup_model.json on half A first
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.ask import (  # noqa: E402
    DEFAULT_CORPUS,
    MAX_SHARED_RUN,
    _norm,
    gold_keys,
    load_questions,
    load_source,
    served_map,
    served_params,
    shared_run,
)
from bot.services.conversation import Thread, answer_in_thread, decide  # noqa: E402
from bot.ui.answers import thread_of  # noqa: E402
from bot.ui.embeds import answer_embed  # noqa: E402
from retrieval.answer import answer  # noqa: E402
from retrieval.corpus import load_corpus  # noqa: E402
from retrieval.followup import (  # noqa: E402
    FEATURES,
    MODEL_PATH,
    FollowUpModel,
    answer_about,
    answer_follow_up,
    load_model,
    sentence_features,
    subject_shift,
)
from retrieval.index import Index, build_index  # noqa: E402
from retrieval.models import Answer, Paper  # noqa: E402
from retrieval.sentences import split_sentences  # noqa: E402

DEFAULT_DATA = ROOT / "bench" / "data" / "chat_iclr2024.jsonl"
ASPECTS = ("method", "data", "result", "limitation", "term")
REQUESTS = ("authors", "venue", "similar", "save")
TARGETS = {"with context": 0.65, "from a cited paper": 0.90, "subject changes detected": 0.80}
#: Milliseconds each follow-up took to decide and answer (filled by :func:`run`).
TIMES: list[float] = []
#: L2 penalties tried for the sentence chooser; the one with the best leave-one-out answer@1 on half A wins.
L2_GRID = (0.1, 0.3, 1.0, 3.0)


@dataclass(frozen=True)
class Conversation:
    cid: str
    kind: str  # continue | change
    aspect: str  # method | data | result | limitation | term | authors | venue | similar | save | ""
    first: str
    first_paper: str
    second: str
    second_paper: str | None
    gold: tuple[str, ...]

    @property
    def half(self) -> str:
        return "A" if int(self.cid[1:]) % 2 else "B"

    @property
    def group(self) -> str:
        if self.kind == "change":
            return "change"
        return "request" if self.aspect in REQUESTS else "continue"


def load_conversations(path: Path = DEFAULT_DATA) -> list[Conversation]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            first, second = row["turns"]
            out.append(Conversation(
                row["id"], row["kind"], row.get("aspect", ""), first["text"], first["paper"], second["text"],
                second.get("paper"), tuple(second.get("gold", ())),
            ))
    return out


def check(conversations: Sequence[Conversation], source: dict[str, dict], served: set[str]) -> list[str]:
    """Every problem of the data file, one line each (empty when it is sound)."""
    problems = []
    seen = set()
    for c in conversations:
        if c.cid in seen:
            problems.append(f"{c.cid}: duplicate id")
        seen.add(c.cid)
        if c.kind not in ("continue", "change"):
            problems.append(f"{c.cid}: kind {c.kind!r}")
        for pid in (c.first_paper, c.second_paper):
            if pid is None:
                continue
            row = source.get(pid)
            if row is None:
                problems.append(f"{c.cid}: paper {pid} is not in papers.jsonl")
            elif _norm(row["abstract"]) not in served:
                problems.append(f"{c.cid}: paper {pid} is not in abstracts.txt")
        if c.group == "request":
            continue
        if not c.gold or c.second_paper is None:
            problems.append(f"{c.cid}: no gold sentence")
            continue
        abstract = source.get(c.second_paper, {}).get("abstract", "")
        for gold in c.gold:
            if gold not in abstract:
                problems.append(f"{c.cid}: gold is not verbatim in {c.second_paper}: {gold[:60]!r}")
                continue
            for sentence in split_sentences(abstract):
                if _norm(gold) in _norm(sentence) or _norm(sentence) in _norm(gold):
                    n, run = shared_run(c.second, sentence)
                    if n > MAX_SHARED_RUN:
                        problems.append(f"{c.cid}: shares {n} consecutive words with its gold: {run!r}")
    counts = {g: sum(c.group == g for c in conversations) for g in ("continue", "change", "request")}
    if counts["continue"] < 40:
        problems.append(f"only {counts['continue']} continuing conversations with a gold (at least 40)")
    if counts["change"] < 10:
        problems.append(f"only {counts['change']} conversations that change subject (at least 10)")
    return problems


# -- one conversation, the bot's way ----------------------------------------------------------------


@dataclass
class Turns:
    conversation: Conversation
    first: Answer
    thread: Thread | None
    papers: list[Paper]  # the thread's papers, in citation order


def first_turn(index: Index, c: Conversation) -> Turns:
    """The first answer, shown as the bot shows it, and the conversation read back from that embed."""
    first = index.answer(c.first)
    thread = thread_of([answer_embed(first)]) if first.sentences else None
    papers = [p for p in (index.get(pid) for pid in (thread.paper_ids if thread else ())) if p is not None]
    return Turns(c, first, thread, papers)


def quotes_gold(result: Answer, gold_paper: str, keys: tuple[str, ...]) -> bool:
    return bool(result.sentences) and result.sentences[0].paper.id == gold_paper and any(
        key in _norm(result.sentences[0].text) for key in keys
    )


@dataclass
class Outcome:
    conversation: Conversation
    first_ok: bool  # the first answer cites the conversation's paper first
    intent: str
    reply: Answer | None  # the follow-up's answer (None for a request)
    alone: Answer  # the follow-up asked as a new question
    target: str | None  # the paper a request is about
    cited: tuple[str, ...]


def run(index: Index, conversations: Sequence[Conversation], ids: dict[str, str]) -> list[Outcome]:
    outcomes = []
    for c in conversations:
        t = first_turn(index, c)
        cited = t.thread.paper_ids if t.thread else ()
        first_ok = bool(cited) and cited[0] == ids[c.first_paper]
        started = time.perf_counter()
        decision = decide(index, t.papers, c.second)
        reply: Answer | None = None
        if decision.intent == "new":
            reply = index.answer(decision.question)
        elif decision.intent == "ask" and t.thread is not None:
            reply = answer_in_thread(index, decision, t.thread)
        TIMES.append((time.perf_counter() - started) * 1000)
        target = decision.papers[0].id if decision.papers and decision.intent in REQUESTS else None
        outcomes.append(Outcome(c, first_ok, decision.intent, reply, index.answer(c.second), target, cited))
    return outcomes


# -- figures -------------------------------------------------------------------------------------------


def _share(hits: int, n: int) -> str:
    return f"{hits / n:.3f} ({hits}/{n})" if n else "  -  "


def figures(outcomes: Sequence[Outcome], ids: dict[str, str]) -> dict[str, tuple[int, int]]:
    cont = [o for o in outcomes if o.conversation.group == "continue"]
    change = [o for o in outcomes if o.conversation.group == "change"]
    requests = [o for o in outcomes if o.conversation.group == "request"]

    def gold(o: Outcome, result: Answer | None) -> bool:
        c = o.conversation
        return result is not None and c.second_paper is not None and quotes_gold(
            result, ids[c.second_paper], gold_keys(c)  # type: ignore[arg-type]
        )

    return {
        "turn-1 paper@1": (sum(o.first_ok for o in cont), len(cont)),
        "with context": (sum(gold(o, o.reply) for o in cont), len(cont)),
        "without context": (sum(gold(o, o.alone) for o in cont), len(cont)),
        "from a cited paper": (
            sum(bool(o.reply and o.reply.sentences and o.reply.sentences[0].paper.id in o.cited)
                for o in cont),
            len(cont),
        ),
        "subject changes detected": (sum(o.intent == "new" for o in change), len(change)),
        "new subject answer@1": (sum(gold(o, o.reply) for o in change), len(change)),
        "requests routed": (
            sum(o.intent == o.conversation.aspect and o.target == (o.cited[:1] or (None,))[0]
                for o in requests),
            len(requests),
        ),
        "requests mistaken elsewhere": (
            sum(o.intent in REQUESTS for o in outcomes if o.conversation.group != "request"),
            sum(o.conversation.group != "request" for o in outcomes),
        ),
    }


def print_figures(outcomes: Sequence[Outcome], ids: dict[str, str]) -> dict[str, dict[str, tuple[int, int]]]:
    halves = {
        "A (fitted)": [o for o in outcomes if o.conversation.half == "A"],
        "B (held out)": [o for o in outcomes if o.conversation.half == "B"],
        "all": list(outcomes),
    }
    table = {name: figures(group, ids) for name, group in halves.items()}
    print(f"\n  {'':30s}" + "".join(f"{name:>20s}" for name in halves))
    for key in table["all"]:
        print(f"  {key:30s}" + "".join(f"{_share(*table[name][key]):>20s}" for name in halves))
    cont_b = [o for o in halves["B (held out)"] if o.conversation.group == "continue"]
    print("\n  held-out answer@1 with context, by what the follow-up asks:")
    for aspect in ASPECTS:
        group = [o for o in cont_b if o.conversation.aspect == aspect]
        hits = figures(group, ids)["with context"][0] if group else 0
        print(f"    {aspect:12s} {_share(hits, len(group))}")
    return table


def print_misses(outcomes: Sequence[Outcome], ids: dict[str, str], half: str) -> None:
    print(f"\nmisses of half {half} (with context)")
    for o in outcomes:
        c = o.conversation
        if c.half != half or c.group == "request":
            continue
        keys = gold_keys(c)  # type: ignore[arg-type]
        if o.reply is not None and c.second_paper and quotes_gold(o.reply, ids[c.second_paper], keys):
            continue
        print(f"- {c.cid} [{c.aspect or c.kind}] {c.first!r} -> {c.second!r} ({o.intent})")
        if o.reply is not None and o.reply.sentences:
            print(f"    got  {o.reply.sentences[0].paper.id}: {o.reply.sentences[0].text[:120]}")
        print(f"    gold {ids.get(c.second_paper or '', '?')}: {c.gold[0][:120]}")


# -- /ask paper: --------------------------------------------------------------------------------------


def ask_paper_figures(index: Index, ids: dict[str, str]) -> None:
    """The /ask questions answered from their gold paper alone: what /ask paper: runs (the answerer within
    the paper, the follow-up chooser when it finds nothing) beside each of the two alone."""
    questions = [q for q in load_questions() if q.paper in ids]
    ours = chooser = theirs = 0
    for q in questions:
        paper = index.get(ids[q.paper])
        doc = index.position(ids[q.paper])
        if paper is None or doc is None:
            continue
        keys = gold_keys(q)
        ours += quotes_gold(answer_about(index, [paper], q.question), paper.id, keys)
        chooser += quotes_gold(answer_follow_up(index, [paper], q.question), paper.id, keys)
        theirs += quotes_gold(answer(index, q.question, within=[doc]), paper.id, keys)
    n = len(questions)
    print(f"\n/ask paper: the {n} questions of bench/data/ask_iclr2024.jsonl, answered from their gold paper")
    print(f"  what /ask paper: runs                 answer@1 {_share(ours, n)}")
    print(f"  the answerer within the paper alone   answer@1 {_share(theirs, n)}")
    print(f"  the follow-up chooser alone           answer@1 {_share(chooser, n)}")


# -- fitting (half A only) -------------------------------------------------------------------------------


def _groups(index: Index, conversations: Sequence[Conversation], ids: dict[str, str]) -> list[tuple]:
    """(features, gold mask) per continuing conversation whose gold sentence is among the candidates."""
    groups = []
    for c in conversations:
        t = first_turn(index, c)
        if t.thread is None or c.second_paper is None:
            continue
        rows, matrix = sentence_features(index, t.papers, c.second, t.thread.root, t.thread.quotes)
        keys = gold_keys(c)  # type: ignore[arg-type]
        gold = ids[c.second_paper]
        y = np.array([float(r.paper.id == gold and any(k in _norm(r.text) for k in keys)) for r in rows])
        groups.append((matrix, y))
    return groups


def _objective(groups: Sequence[tuple], w: np.ndarray, l2: float) -> float:
    """The penalised log-likelihood: log P(a gold sentence) summed over the conversations."""
    total = -0.5 * l2 * float(w @ w)
    for x, y in groups:
        if y.sum():
            s = x @ w
            top = s.max()
            total += float(np.log(np.exp(s[y > 0] - top).sum()) - np.log(np.exp(s - top).sum()))
    return total


def fit_logit(groups: Sequence[tuple], l2: float, iters: int = 50) -> np.ndarray:
    """Conditional logit (a softmax over each conversation's sentences, the gold ones its target), L2
    penalised, by Newton's method: deterministic."""
    d = len(FEATURES)
    w = np.zeros(d)
    for _ in range(iters):
        grad = -l2 * w
        hess = -l2 * np.eye(d)
        for x, y in groups:
            if not y.sum():
                continue
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            # The gold sentences' share, computed apart: their probability may underflow in p.
            q = np.where(y > 0, np.exp(s - s[y > 0].max()), 0.0)
            q /= q.sum()
            grad += x.T @ (q - p)
            mp, mq = x.T @ p, x.T @ q
            hess += (x.T * q) @ x - np.outer(mq, mq) - ((x.T * p) @ x - np.outer(mp, mp))
        step = np.linalg.solve(hess, -grad)
        # Backtracking: a full Newton step may overshoot where the classes nearly separate.
        scale = 1.0
        while scale > 1e-4 and _objective(groups, w + scale * step, l2) < _objective(groups, w, l2):
            scale /= 2
        step = scale * step
        w = w + step
        if np.abs(step).max() < 1e-8:
            break
    return w


def _top_hits(groups: Sequence[tuple], w: np.ndarray) -> int:
    return sum(int(y[int(np.argmax(x @ w))] > 0) for x, y in groups if len(y))


def fit(index: Index, conversations: Sequence[Conversation], ids: dict[str, str]) -> FollowUpModel:
    """The sentence chooser and the subject-change threshold, fitted on half A only."""
    half_a = [c for c in conversations if c.half == "A"]
    groups = _groups(index, [c for c in half_a if c.group == "continue"], ids)
    print(f"fitting on half A: {len(groups)} continuing conversations")
    best: tuple[int, float] | None = None
    for l2 in L2_GRID:
        loo = sum(
            _top_hits([groups[k]], fit_logit([g for j, g in enumerate(groups) if j != k], l2))
            for k in range(len(groups))
        )
        print(f"  L2 {l2:<4}: leave-one-out answer@1 on half A {_share(loo, len(groups))}")
        if best is None or loo > best[0]:
            best = (loo, l2)
    assert best is not None  # noqa: S101 - the grid is not empty
    weights = fit_logit(groups, best[1])
    shown = ", ".join(f"{k} {v:+.2f}" for k, v in zip(FEATURES, weights, strict=True))
    print(f"  chosen L2 {best[1]}; weights: {shown}")

    # The threshold: the middle of the widest gap between follow-ups (continuing ones and requests) and
    # subject changes that best separates them on half A.
    points = []
    for c in half_a:
        t = first_turn(index, c)
        points.append((subject_shift(index, t.papers, c.second), c.group == "change"))
    values = sorted({v for v, _ in points})
    cuts = [(a + b) / 2 for a, b in zip(values, values[1:], strict=False)] or [values[0] if values else 1.0]

    def balanced(cut: float) -> float:
        changes = [v > cut for v, change in points if change]
        stays = [v <= cut for v, change in points if not change]
        return (sum(changes) / max(len(changes), 1)) + (sum(stays) / max(len(stays), 1))

    threshold = max(cuts, key=lambda cut: (round(balanced(cut), 9), -cut))
    accuracy = balanced(threshold) / 2
    print(f"  subject-change threshold {threshold:.4f} (balanced accuracy on half A {accuracy:.3f})")
    stamp = f"bench/chat.py --fit on half A of {DEFAULT_DATA.name}: L2 {best[1]}"
    return FollowUpModel(dict(zip(FEATURES, map(float, weights), strict=True)), threshold, stamp)


# -- main ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--check", action="store_true", help="only validate the conversations file")
    parser.add_argument("--fit", action="store_true", help=f"refit {MODEL_PATH.name} on half A first")
    parser.add_argument("--misses", choices=("A", "B"), help="print the misses of half A or B")
    args = parser.parse_args(argv)

    conversations = load_conversations(args.data)
    source = load_source(args.corpus)
    corpus = load_corpus(args.corpus / "abstracts.txt")
    problems = check(conversations, source, {_norm(p.abstract) for p in corpus.papers})
    for line in problems:
        print(f"{args.data.name}: {line}")
    if problems:
        return 1
    counts = {g: sum(c.group == g for c in conversations) for g in ("continue", "change", "request")}
    print(f"{len(conversations)} conversations ({counts['continue']} continuing with a gold sentence, "
          f"{counts['change']} changing subject, {counts['request']} requests); data checks pass")
    if args.check:
        return 0

    ids = served_map(corpus.papers, source)
    started = time.perf_counter()
    index = build_index(corpus.papers, served_params())
    print(f"index: {len(index):,} ICLR 2024 abstracts ({time.perf_counter() - started:.1f} s)")
    if args.fit:
        model = fit(index, conversations, ids)
        MODEL_PATH.write_text(json.dumps(model.to_json(), indent=2) + "\n", encoding="utf-8")
        load_model.cache_clear()
        print(f"wrote {MODEL_PATH.relative_to(ROOT)}")
    model = load_model()
    print(f"model: {model.fitted_on}; subject-change threshold {model.shift_threshold}")

    outcomes = run(index, conversations, ids)
    table = print_figures(outcomes, ids)
    print("\ntargets (held-out half B)")
    for key, target in TARGETS.items():
        hits, n = table["B (held out)"][key]
        value = hits / n if n else math.nan
        print(f"  {key} {value:.3f} >= {target:.2f}: {'PASS' if value >= target else 'FAIL'}")
    times = sorted(TIMES)
    print(f"\nfollow-up decided and answered (of the ICLR abstracts): p50 {times[len(times) // 2]:.1f} ms, "
          f"p99 {times[min(len(times) - 1, int(len(times) * 0.99))]:.1f} ms over {len(times)}")
    ask_paper_figures(index, ids)
    if args.misses:
        print_misses(outcomes, ids, args.misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
