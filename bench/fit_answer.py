"""Fit the answer model shipped in ``retrieval/data/answer-v2.npz`` from ``../shared`` alone.

Three parts, each fitted on labelled data and chosen on data it was not fitted on:

1. **Sentence roles** (:mod:`retrieval.roles`): multinomial logistic regression over hashed sentence
   features, fitted on CSAbstruct's ``train`` split, its L2 strength chosen on ``dev``; ``bench/ask.py``
   reports it on ``test`` beside a position-only classifier.
2. **Answer choice** (:data:`retrieval.answer.FEATURES`): a conditional logit (one softmax over a
   question's candidate sentences, :func:`retrieval.answer.candidates`), fitted on SciFact's train
   claims with their annotated evidence sentences (``rationales_train.jsonl``, asked over SciFact's
   5,183 abstracts) and on the ``fit`` half of ``bench/data/ask_iclr2024.jsonl`` (asked over ICLR 2024).
   Its L2 strength is fixed (:data:`ANSWER_L2`) and every question weighs the same. The ``held-out``
   half of the questions is never read here.
3. **Answerable or not**: logistic regression on the best candidate's features, fitted on the
   fitting questions over their own corpus (answerable) and the 40 absent-topic questions of
   ``bench/data/ask_absent_fit.jsonl`` over ICLR 2024 (not); its threshold chosen
   (:func:`abstain_threshold`) on the bot's own case alone: the fit half over ICLR 2024 and those
   40. The 20 absent-topic questions ``bench/ask.py`` reports on are never read here. (SciFact's
   claims asked over ICLR and the project's questions over SciFact were the negatives before: the two
   corpora differ in so much besides the answer - structured abstracts, claims instead of questions -
   that the model learnt to tell the corpora apart, and let 7 of the 20 absent topics through.)

Everything is deterministic (full-batch optimisation from zeros, fixed order): the same ``../shared``
gives the same file. Usage::

    PYTHONPATH=. python bench/fit_answer.py           # fit and write the model file
    PYTHONPATH=. python bench/fit_answer.py --check   # fit and compare with the shipped file
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from retrieval.answer import FEATURES, candidates, reply_order  # noqa: E402
from retrieval.answer_model import MODEL_VERSION, AnswerModel, model_path, using  # noqa: E402
from retrieval.index import BM25Params, Index, build_index  # noqa: E402
from retrieval.models import Paper  # noqa: E402
from retrieval.roles import ROLE_DIM, ROLES, role_features  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpora"
FOLDS = 5

# -- sparse multinomial logistic regression (the role classifier) -----------------------------------


def fit_softmax(
    rows: Sequence[Sequence[int]], y: npt.NDArray[np.int64], dim: int, classes: int, l2: float,
    iters: int = 100, lr: float = 0.1,
) -> npt.NDArray[np.float64]:
    """Weights ``(dim, classes)`` of a multinomial logistic regression over sparse binary features
    (each row: the ids of its features), full-batch Adam from zeros (deterministic)."""
    n = len(rows)
    r = np.repeat(np.arange(n), [len(x) for x in rows])
    c = np.concatenate([np.asarray(x, dtype=np.int64) for x in rows])
    w = np.zeros((dim, classes))
    m, v = np.zeros_like(w), np.zeros_like(w)
    target = np.eye(classes)[y]
    for t in range(1, iters + 1):
        wc = w[c]
        logits = np.stack([np.bincount(r, weights=wc[:, k], minlength=n) for k in range(classes)], 1)
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        err = ((p - target) / n)[r]
        g = np.stack([np.bincount(c, weights=err[:, k], minlength=dim) for k in range(classes)], 1)
        g += l2 * w
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def predict_softmax(w: npt.NDArray[np.floating], rows: Sequence[Sequence[int]]) -> npt.NDArray[np.int64]:
    return np.array([int(np.argmax(w[list(x)].sum(axis=0))) for x in rows], dtype=np.int64)


def macro_f1(y: npt.NDArray[np.int64], p: npt.NDArray[np.int64], classes: int) -> float:
    """Mean over classes of F1 (a class never predicted nor present counts 0)."""
    out = []
    for k in range(classes):
        tp = int(((p == k) & (y == k)).sum())
        wrong = int(((p == k) != (y == k)).sum())
        out.append(2 * tp / (2 * tp + wrong) if tp else 0.0)
    return float(np.mean(out))


def load_csabstruct(split: str, shared: Path = SHARED) -> list[tuple[list[str], list[str]]]:
    with (shared / "csabstruct" / f"{split}.jsonl").open(encoding="utf-8") as fh:
        return [(row["sentences"], row["labels"]) for row in map(json.loads, fh)]


def role_rows(
    abstracts: Sequence[tuple[list[str], list[str]]], featurize: Callable[[list[str]], list[list[int]]]
) -> tuple[list[list[int]], npt.NDArray[np.int64]]:
    rows: list[list[int]] = []
    labels: list[int] = []
    for sentences, tags in abstracts:
        rows += featurize(sentences)
        labels += [ROLES.index(t) for t in tags]
    return rows, np.array(labels, dtype=np.int64)


def position_features(sentences: list[str]) -> list[list[int]]:
    """The position-only baseline's features: position fifth, first, second, last, abstract length."""
    n = len(sentences)
    return [
        [0, 1 + min(4, i * 5 // n), 6 if i == 0 else 7, 8 if i == 1 else 9, 10 if i == n - 1 else 11,
         12 + min(n, 12)]
        for i in range(n)
    ]


ROLE_L2 = (1e-4, 1e-3, 3e-3)


def fit_roles(shared: Path = SHARED, log: Callable[[str], None] = print) -> npt.NDArray[np.float32]:
    """The role classifier: fitted on CSAbstruct train, its L2 chosen on dev macro-F1."""
    train, y = role_rows(load_csabstruct("train", shared), role_features)
    dev, y_dev = role_rows(load_csabstruct("dev", shared), role_features)
    best: tuple[float, float, npt.NDArray[np.float64]] | None = None
    for l2 in ROLE_L2:
        w = fit_softmax(train, y, ROLE_DIM, len(ROLES), l2)
        f1 = macro_f1(y_dev, predict_softmax(w, dev), len(ROLES))
        log(f"  roles: l2 {l2:g}: dev macro-F1 {f1:.3f}")
        if best is None or f1 > best[0]:
            best = (f1, l2, w)
    assert best is not None
    log(f"  roles: chose l2 {best[1]:g}")
    return best[2].astype(np.float32)


def role_report(weights: npt.NDArray[np.floating], shared: Path = SHARED) -> dict[str, float]:
    """Macro-F1 and accuracy on CSAbstruct test of ``weights`` and of a position-only classifier
    (fitted here on train, as the role classifier was)."""
    test, y_test = role_rows(load_csabstruct("test", shared), role_features)
    pred = predict_softmax(weights, test)
    ptrain, py = role_rows(load_csabstruct("train", shared), position_features)
    pw = fit_softmax(ptrain, py, 32, len(ROLES), 1e-4, iters=300)
    ptest, _ = role_rows(load_csabstruct("test", shared), position_features)
    ppred = predict_softmax(pw, ptest)
    return {
        "macro_f1": macro_f1(y_test, pred, len(ROLES)), "accuracy": float((pred == y_test).mean()),
        "position_macro_f1": macro_f1(y_test, ppred, len(ROLES)),
        "position_accuracy": float((ppred == y_test).mean()), "sentences": len(y_test),
    }


# -- the labelled questions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Gold:
    """Where a question's answer is: per gold paper id, the answer's spans in the ``norm_text`` of
    that paper's abstract (letters and digits only, casefolded)."""

    spans: dict[str, list[tuple[int, int]]]


@dataclass
class Asked:
    """One labelled question: what it asks, where its answer is, and its group (for folds)."""

    source: str  # "scifact" or "iclr"
    qid: str
    question: str
    gold: Gold
    group: int  # fold


def norm_map(text: str) -> tuple[str, list[int]]:
    """``text`` reduced to letters and digits (casefolded), and each kept character's offset."""
    chars, where = [], []
    for i, ch in enumerate(text):
        if ch.isalnum():
            for c in ch.casefold():
                chars.append(c)
                where.append(i)
    return "".join(chars), where


def norm_text(text: str) -> str:
    return norm_map(text)[0]


def fold_of(key: str, folds: int = FOLDS) -> int:
    return hashlib.sha256(f"ask-fold:{key}".encode()).digest()[0] % folds


def scifact_papers(shared: Path = SHARED) -> list[Paper]:
    with (shared / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        return [
            Paper(id=str(row["_id"]), title=row.get("title") or "", authors=(), et_al=False, area="",
                  abstract=row.get("text") or "")
            for row in map(json.loads, fh)
        ]


def scifact_claims(papers: Sequence[Paper], shared: Path = SHARED) -> list[Asked]:
    """SciFact's train claims with their evidence sentences (pairs of one claim merged), each claim in
    the fold of its id."""
    texts = {p.id: p.abstract for p in papers}
    by_claim: dict[int, Asked] = {}
    with (shared / "scifact" / "rationales_train.jsonl").open(encoding="utf-8") as fh:
        for row in map(json.loads, fh):
            claim_id = int(row["claim_id"])
            asked = by_claim.setdefault(
                claim_id,
                Asked("scifact", f"scifact-{claim_id}", row["claim"], Gold({}), fold_of(str(claim_id))),
            )
            norm, where = norm_map(texts[row["doc_id"]])
            spans = asked.gold.spans.setdefault(row["doc_id"], [])
            for start, end in row["gold_char_spans"]:
                # the span's first and last kept characters, in normalised offsets
                a = np.searchsorted(where, start)
                b = np.searchsorted(where, end)
                spans.append((int(a), int(b)))
    return [by_claim[c] for c in sorted(by_claim)]


def iclr_questions(papers: Sequence[Paper], half: str, shared: Path = SHARED) -> list[Asked]:
    """The project's own questions of one half (``fit`` or ``held-out``), gold spans located in the
    served abstracts."""
    from bench.ask import DEFAULT_DATA, load_questions, load_source, served_map, split_of

    source = load_source(shared / "iclr2024")
    to_index = served_map(papers, source)
    texts = {p.id: p.abstract for p in papers}
    out = []
    for q in load_questions(DEFAULT_DATA):
        if split_of(q.qid) != half:
            continue
        pid = to_index[q.paper]
        norm = norm_text(texts[pid])
        spans = []
        for g in q.gold:
            key = norm_text(g)
            at = norm.find(key)
            if at >= 0:
                spans.append((at, at + len(key)))
        out.append(Asked("iclr", q.qid, q.question, Gold({pid: spans}), fold_of(q.qid)))
    return out


def iclr_papers(shared: Path = SHARED) -> list[Paper]:
    from retrieval.corpus import load_corpus

    return list(load_corpus(shared / "iclr2024" / "abstracts.txt").papers)


def quote_hits(gold: Gold, paper: Paper, quote: str) -> bool:
    """Whether a quote of ``paper`` is one of the gold answer sentences: the quote and a gold span
    overlap on at least half of the shorter (on letters and digits), so quotes split otherwise than
    the annotators split still count."""
    spans = gold.spans.get(paper.id)
    if not spans:
        return False
    q = norm_text(quote)
    if not q:
        return False
    norm = _norm_abstract(paper.abstract)
    at = norm.find(q)
    if at < 0:
        return any(norm[a:b] in q or q in norm[a:b] for a, b in spans)
    a0, b0 = at, at + len(q)
    return any(min(b, b0) - max(a, a0) >= 0.5 * min(b - a, b0 - a0) for a, b in spans)


_NORM_CACHE: dict[str, str] = {}


def _norm_abstract(abstract: str) -> str:
    got = _NORM_CACHE.get(abstract)
    if got is None:
        if len(_NORM_CACHE) > 20000:
            _NORM_CACHE.clear()
        got = _NORM_CACHE[abstract] = norm_text(abstract)
    return got


# -- candidates as matrices --------------------------------------------------------------------------


@dataclass
class Example:
    """A labelled question's candidates: features, which are gold, and their papers and texts."""

    asked: Asked
    x: npt.NDArray[np.float64]
    gold: npt.NDArray[np.bool_]
    docs: list[int]
    ids: list[str]  # paper id of each candidate
    texts: tuple[str, ...]


def examples(index: Index, asked: Sequence[Asked]) -> list[Example]:
    """Every question's candidates over ``index``, with gold marks."""
    out = []
    for a in asked:
        found = candidates(index, a.question)
        docs = [d for d, _ in found.pairs]
        gold = np.array(
            [quote_hits(a.gold, index.papers[d], t) for d, t in zip(docs, found.texts, strict=True)],
            dtype=bool,
        )
        out.append(Example(a, found.features, gold, docs, [index.papers[d].id for d in docs], found.texts))
    return out


# -- the conditional logit ---------------------------------------------------------------------------


def fit_clogit(
    data: Sequence[Example], weights: Sequence[float], l2: float, iters: int = 400, lr: float = 0.05
) -> npt.NDArray[np.float64]:
    """Weights of a conditional logit: each question's candidates share one softmax; the loss is
    minus the log of the probability given to its gold sentences (questions with no gold candidate
    teach nothing and are left out), each question weighted. Full-batch Adam from zeros."""
    used = [(e, w) for e, w in zip(data, weights, strict=True) if e.gold.any()]
    x = np.concatenate([e.x for e, _ in used])
    gold = np.concatenate([e.gold for e, _ in used])
    sizes = np.array([len(e.gold) for e, _ in used])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    qw = np.repeat(np.array([w for _, w in used]), sizes)
    total = sum(w for _, w in used)
    theta = np.zeros(x.shape[1])
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for t in range(1, iters + 1):
        s = x @ theta
        s -= np.repeat(np.maximum.reduceat(s, starts), sizes)
        e = np.exp(s)
        p = e / np.repeat(np.add.reduceat(e, starts), sizes)
        pg = np.where(gold, p, 0.0)
        q = pg / np.repeat(np.add.reduceat(pg, starts), sizes)
        g = x.T @ (qw * (p - q)) / total + l2 * theta
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return theta


def ranked(e: Example, theta: npt.NDArray[np.float64]) -> list[int]:
    """Candidate rows of ``e`` in reply order under ``theta`` (:func:`retrieval.answer.reply_order`)."""
    if not len(e.docs):
        return []
    return reply_order(e.x, e.x @ theta)


def score_examples(data: Sequence[Example], theta: npt.NDArray[np.float64]) -> dict[str, float]:
    """answer@1, answer@3 and paper@1 of the choice ``theta`` makes (first quote, first three
    distinct quotes, paper of the first quote)."""
    a1 = a3 = p1 = 0
    for e in data:
        order = _distinct(e, ranked(e, theta))
        a1 += bool(order) and bool(e.gold[order[0]])
        a3 += any(e.gold[j] for j in order[:3])
        p1 += bool(order) and e.ids[order[0]] in e.asked.gold.spans
    n = len(data) or 1
    return {"answer@1": a1 / n, "answer@3": a3 / n, "paper@1": p1 / n, "n": len(data)}


def _distinct(e: Example, order: list[int]) -> list[int]:
    seen: set[str] = set()
    out = []
    for j in order:
        if e.texts[j] not in seen:
            seen.add(e.texts[j])
            out.append(j)
    return out


#: The answer choice's L2 strength, fixed (not searched: a search over the SciFact folds would leak
#: into their held-out figures); every question weighs the same, SciFact's and the project's alike.
ANSWER_L2 = 1e-3
#: What the answerable model reads of the best candidate.
ANSWERABLE_FEATURES = ("cover", "cover_local", "held", "cover_pair", "nothing", "head_hit", "name_hit",
                       "paper_cover", "paper_best", "asked_held")
ABSENT_FIT = ROOT / "bench" / "data" / "ask_absent_fit.jsonl"


# -- answerable or not -------------------------------------------------------------------------------


def fit_logistic(x: npt.NDArray[np.float64], y: npt.NDArray[np.bool_], l2: float = 1e-3,
                 iters: int = 500, lr: float = 0.05) -> npt.NDArray[np.float64]:
    """Weights (and a bias, last) of an L2 logistic regression, classes weighted to balance."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    pos = max(1, int(y.sum()))
    neg = max(1, int((~y).sum()))
    sw = np.where(y, len(y) / (2 * pos), len(y) / (2 * neg))
    theta = np.zeros(xb.shape[1])
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for t in range(1, iters + 1):
        p = 1 / (1 + np.exp(-(xb @ theta)))
        g = xb.T @ (sw * (p - y)) / len(y) + l2 * np.r_[theta[:-1], 0.0]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return theta


def best_rows(data: Sequence[Example], theta: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    rows = [e.x[ranked(e, theta)[0]] for e in data if len(e.docs)]
    return np.array(rows) if rows else np.zeros((0, len(FEATURES)))


def served_params() -> BM25Params:
    """The ranking the bot serves with (its default settings and config/paperbot.toml)."""
    from bot.settings import load_settings

    return load_settings().bm25


# -- the whole fit -------------------------------------------------------------------------------------


@dataclass
class FitData:
    """The indexes and labelled candidates a fit reads (built once; bench/ask.py reuses them)."""

    scifact_index: Index
    iclr_index: Index
    scifact: list[Example]  # SciFact's train claims over SciFact
    own_fit: list[Example]  # the fit half of the project's questions over ICLR 2024
    absent: list[Example]  # ask_absent_fit.jsonl over ICLR 2024: topics it does not cover


def build_data(role_weights: npt.NDArray[np.float32], shared: Path = SHARED,
               log: Callable[[str], None] = print) -> FitData:
    """Both corpora's indexes (the bot's default BM25) and the fitting questions' candidates, with
    sentence roles from ``role_weights`` (the candidates' features do not depend on the answer
    weights)."""
    started = time.perf_counter()
    params = served_params()
    sf_papers = scifact_papers(shared)
    sf_index = build_index(sf_papers, params)
    ic_papers = iclr_papers(shared)
    ic_index = build_index(ic_papers, params)
    probe = AnswerModel(FEATURES, np.zeros(len(FEATURES)), role_weights)
    with using(probe):
        claims = scifact_claims(sf_papers, shared)
        own_questions = iclr_questions(ic_papers, "fit", shared)
        sf = examples(sf_index, claims)
        own = examples(ic_index, own_questions)
        absent = examples(ic_index, absent_questions())
    log(f"  data: {len(sf)} SciFact claims ({sum(e.gold.any() for e in sf)} with the answer among "
        f"the candidates), {len(own)} own questions of the fit half ({sum(e.gold.any() for e in own)}); "
        f"{time.perf_counter() - started:.0f} s")
    return FitData(sf_index, ic_index, sf, own, absent)


def absent_questions(path: Path = ABSENT_FIT) -> list[Asked]:
    """The absent-topic questions kept for fitting (no gold: nothing in the corpus answers them)."""
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [Asked("absent", row["id"], row["question"], Gold({}), 0) for row in rows]


def abstain_threshold(yes: Sequence[float], no: Sequence[float]) -> float:
    """The answerable probability below which to answer nothing: the one that decides most of the fit
    half's questions (``yes``, which the corpus answers: answered) and the absent-topic ones (``no``:
    silenced) right, each question one vote - a reader's question counts the same whether or not the
    corpus answers it; the lowest such threshold on ties. An absent-topic question with no candidate
    at all is silent anyway and is not in ``no``."""
    best, best_right = 0.0, len(yes)
    for t in sorted(set(no)):
        cut = float(np.nextafter(t, np.inf))  # silences t itself
        right = sum(p < cut for p in no) + sum(p >= cut for p in yes)
        if right > best_right:
            best, best_right = cut, right
    return best


def fit_answer(data: FitData, role_weights: npt.NDArray[np.float32], leave_out: int | None = None,
               log: Callable[[str], None] = print) -> AnswerModel:
    """The answer choice and the answerable model, fitted on ``data`` (without the SciFact claims of
    fold ``leave_out``, when given: those are the held-out fold)."""
    def kept(e: Example) -> bool:
        return leave_out is None or e.asked.source != "scifact" or e.asked.group != leave_out

    train = [e for e in [*data.scifact, *data.own_fit] if kept(e)]
    theta = fit_clogit(train, [1.0] * len(train), ANSWER_L2)
    # Answerable: the fitting questions over their own corpus (yes: SciFact's claims too, which
    # silences fewer of them - 16 of 505 instead of 22 - and as many absent-topic ones) and the
    # absent-topic questions for fitting (no), each class weighing the same. Only how well the best
    # sentence and its paper match the question.
    yes = best_rows(train, theta)
    no = best_rows(data.absent, theta)
    cols = [FEATURES.index(f) for f in ANSWERABLE_FEATURES]
    labels = np.r_[np.ones(len(yes), bool), np.zeros(len(no), bool)]
    fitted = fit_logistic(np.vstack([yes, no])[:, cols], labels)
    answerable = np.zeros(len(FEATURES) + 1)
    answerable[cols] = fitted[:-1]
    answerable[-1] = fitted[-1]
    probe = AnswerModel(FEATURES, theta, role_weights, answerable)
    p_yes = [probe.answerable_probability(row) for row in best_rows(data.own_fit, theta)]
    p_no = [probe.answerable_probability(row) for row in no]
    below = abstain_threshold(p_yes, p_no)
    silent = sum(not len(e.docs) for e in data.absent)
    log(f"  fitted on {len(train)} questions; abstains below {below:.3f}: "
        f"{sum(p < below for p in p_yes)} / {len(data.own_fit)} of the fit half, "
        f"{sum(p < below for p in p_no) + silent} / {len(data.absent)} absent-topic ones "
        f"({silent} without any candidate)")
    meta = {
        "version": MODEL_VERSION,
        "roles": "CSAbstruct train (L2 chosen on dev)",
        "answer": "SciFact rationales_train (all claims) + bench/data/ask_iclr2024.jsonl fit half",
        "abstain": "bench/data/ask_iclr2024.jsonl fit half against bench/data/ask_absent_fit.jsonl",
        "l2": ANSWER_L2, "questions": len(train),
    }
    return AnswerModel(FEATURES, theta, role_weights, answerable, below, meta)


def fit_all(shared: Path = SHARED, log: Callable[[str], None] = print) -> AnswerModel:
    role_weights = fit_roles(shared, log)
    data = build_data(role_weights, shared, log)
    return fit_answer(data, role_weights, log=log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the corpora folder of ../shared")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: the package's file)")
    parser.add_argument("--check", action="store_true", help="compare with the shipped file, write nothing")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    model = fit_all(args.shared)
    shipped = model_path()
    if args.check:
        old = AnswerModel.load(shipped)
        same = (
            old.abstain_below == model.abstain_below
            and np.array_equal(old.weights, model.weights)
            and np.array_equal(old.answerable, model.answerable)
            and np.array_equal(old.role_weights, model.role_weights.astype(np.float32))
        )
        print(f"rebuilt model {'equals' if same else 'DIFFERS FROM'} {shipped}")
        return 0 if same else 1
    out = args.out or shipped
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(out)
    print(f"wrote {out} ({out.stat().st_size:,} bytes) in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
