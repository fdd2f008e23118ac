"""How high a derived title's content-word Jaccard can go, measured on ICLR 2024 (issue 10 item 9).

``bench/titles.py`` measures the titles paperbot derives; this script measures what any title taken
from the abstract's own words could reach, so that a target (the median Jaccard of bench/titles.py)
can be read against a ceiling rather than against hope. Every title below keeps the name today's title
leads with
(``SAEBench: ...``, the part before ``": "`` when the abstract holds it), and is scored exactly as
``bench/titles.py`` scores (:func:`titles.jaccard`: index tokens, stemmed, stopwords out). Printed:

* **today**: the titles ``retrieval.titles.derive_title`` gives.
* **best phrase (oracle)**: for each paper, the best title of the form ``Name: phrase``, where the
  phrase is any run of 1 to 10 words of one clause of the abstract (between punctuation), starting
  and ending on a content word, chosen *knowing the real title*. What a perfect chooser among the
  abstract's own phrases would reach.
* **learned word bags**: a model of "this word of the abstract is in the real title", fitted on the
  even-indexed papers and measured on the odd ones (held out), then the title taken as the name plus
  the model's k most likely words, in no order and with no grammar, for k = 4 .. 8. No phrase made of
  the abstract's words, and chosen by the same model, can score above the best of these bags by more
  than luck: a readable phrase is a bag with constraints. Two models: a logistic regression (numpy,
  always run) and gradient-boosted trees (LightGBM, run when it is installed: ``pip install
  lightgbm``). Their inputs are what an abstract tells of a word (how often it is said, where first,
  in the first sentence, in the contribution statement, capitalised mid-sentence, hyphenated, an
  acronym, its length) and what the corpus tells (its idf over the 2,275 abstracts).

Usage::

    PYTHONPATH=. python bench/title_ceiling.py [--data ../shared/corpora/iclr2024]
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_titles import fit_logistic  # noqa: E402
from titles import DEFAULT_DATA, TARGETS, jaccard, load  # noqa: E402

from retrieval import titles as derived  # noqa: E402
from retrieval.titles import derive_title  # noqa: E402
from retrieval.tokenize import tokenize  # noqa: E402

_WORD = re.compile(r"[A-Za-z0-9$\\][\w\-'$\\{}^]*|[.;:!?(),\[\]]")
_STATEMENT_VERB = re.compile(
    r"^(?:propose|proposes|introduce|introduces|present|presents|develop|design|devise|build|construct|create)$",
    re.I,
)
_STATEMENT_SUBJECT = frozenset("we paper work study also then here".split())
_STATEMENT_WORDS = 15  # words after "we propose" that are the statement's
_MAX_PHRASE = 10
BREAKS = derived._model()["_breaks"]  # words no title phrase holds (bench/fit_titles.py learns them)
FEATURES = (
    "log count", "first at", "first 12 words", "first sentence", "capitalised", "hyphenated",
    "statement", "acronym", "log length", "idf", "idf x log count", "df <= 2",
)


def leading_name(title: str, abstract: str) -> str | None:
    """The name a derived title leads with (``SAEBench`` of ``SAEBench: A ...``), when the abstract
    holds it."""
    if ": " not in title:
        return None
    name = title.split(": ", 1)[0]
    return name if len(name.split()) <= 4 and name.casefold() in abstract.casefold() else None


_memo: dict[str, tuple[str, ...]] = {}


def tokens_of(word: str) -> tuple[str, ...]:
    found = _memo.get(word)
    if found is None:
        found = _memo[word] = tuple(tokenize(word))
    return found


class Abstract:
    """An abstract read for the ceiling: its words, clauses, and what it says of each index token."""

    def __init__(self, text: str, name: str | None) -> None:
        self.words: list[str] = []
        self.clauses: list[list[int]] = []
        sentence_of: list[int] = []
        sentence, clause = 0, []
        for m in _WORD.finditer(text):
            w = m.group()
            if w in ".;:!?(),[]":
                if clause:
                    self.clauses.append(clause)
                    clause = []
                sentence += w in ".!?"
                continue
            clause.append(len(self.words))
            self.words.append(w)
            sentence_of.append(sentence)
        if clause:
            self.clauses.append(clause)
        statement = next(
            (
                i for i, w in enumerate(self.words)
                if i and _STATEMENT_VERB.match(w) and self.words[i - 1].lower() in _STATEMENT_SUBJECT
            ),
            -1,
        )
        self.name_tokens = set(tokens_of(name)) if name else set()
        self.stats: dict[str, dict[str, float]] = {}
        for i, w in enumerate(self.words):
            starts = i == 0 or sentence_of[i] != sentence_of[i - 1]
            for k in tokens_of(w):
                s = self.stats.get(k)
                if s is None:
                    s = self.stats[k] = {
                        "count": 0, "first": i, "first_sentence": 0, "capital": 0, "hyphen": 0,
                        "statement": 0, "acronym": 0,
                    }
                s["count"] += 1
                s["first_sentence"] = max(s["first_sentence"], sentence_of[i] == 0)
                s["capital"] = max(s["capital"], not starts and w[:1].isupper())
                s["hyphen"] = max(s["hyphen"], "-" in w)
                s["statement"] = max(s["statement"], 0 <= statement < i <= statement + _STATEMENT_WORDS)
                s["acronym"] = max(s["acronym"], sum(c.isupper() for c in w) >= 2)

    def features(self, df: Counter[str], papers: int) -> tuple[list[str], np.ndarray]:
        """The abstract's tokens other than the name's, and a row of :data:`FEATURES` for each."""
        n = max(len(self.words), 1)
        keys, rows = [], []
        for k, s in self.stats.items():
            if k in self.name_tokens:
                continue
            idf = math.log(papers / (df[k] + 0.5))
            keys.append(k)
            rows.append((
                math.log(s["count"]), s["first"] / n, s["first"] < 12, s["first_sentence"], s["capital"],
                s["hyphen"], s["statement"], s["acronym"], math.log(len(k)), idf, idf * math.log(s["count"]),
                df[k] <= 2,
            ))
        return keys, np.array(rows, dtype=float).reshape(-1, len(FEATURES))

    def best_phrase(self, name: str | None, real: str) -> float:
        """The best Jaccard of ``name: phrase`` over the abstract's phrases, knowing the real title."""
        real_tokens = set(tokenize(real))
        if not real_tokens:
            return 0.0
        best = 0.0
        for clause in self.clauses:
            for a, i in enumerate(clause):
                if not tokens_of(self.words[i]) or self.words[i].lower() in BREAKS:
                    continue
                have = set(self.name_tokens)
                for j in clause[a : a + _MAX_PHRASE]:
                    have.update(tokens_of(self.words[j]))
                    if not tokens_of(self.words[j]):
                        continue  # a phrase ends on a content word
                    best = max(best, len(have & real_tokens) / len(have | real_tokens))
        return best


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def bag_scores(
    held: list[int], probabilities: dict[int, tuple[list[str], np.ndarray]], read: list[Abstract],
    pairs: list[tuple[str, str]], k: int,
) -> list[float]:
    scores = []
    for i in held:
        keys, p = probabilities[i]
        chosen = {keys[j] for j in np.argsort(-p, kind="stable")[:k]} | read[i].name_tokens
        real = set(tokenize(pairs[i][0]))
        scores.append(len(chosen & real) / len(chosen | real) if chosen and real else 0.0)
    return scores


def summary(scores: list[float]) -> str:
    median = statistics.median(scores)
    verdict = "reaches" if median >= TARGETS["jaccard"] else "below"
    return (
        f"median {median:.3f}  mean {statistics.fmean(scores):.3f}  "
        f"no common word {sum(s == 0 for s in scores) / len(scores):5.1%}   ({verdict} the target "
        f"{TARGETS['jaccard']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    started = time.perf_counter()
    pairs = load(args.data)
    derived = [derive_title(abstract) for _, abstract in pairs]
    names = [leading_name(t, a) for t, (_, a) in zip(derived, pairs, strict=True)]
    read = [Abstract(a, n) for (_, a), n in zip(pairs, names, strict=True)]
    df: Counter[str] = Counter()
    for _, abstract in pairs:
        df.update(set(tokenize(abstract)))
    held = list(range(1, len(pairs), 2))
    print(f"ICLR 2024: {len(pairs)} papers with an abstract; {sum(n is not None for n in names)} derived "
          f"titles lead with a name; held out: the {len(held)} odd-indexed papers")
    today = [jaccard(derived[i], pairs[i][0]) for i in held]
    print(f"\ntoday's derived titles                 {summary(today)}")
    oracle = [read[i].best_phrase(names[i], pairs[i][0]) for i in held]
    print(f"best phrase of the abstract (oracle)   {summary(oracle)}")

    rows = [read[i].features(df, len(pairs)) for i in range(len(pairs))]
    real_tokens = [set(tokenize(real)) for real, _ in pairs]
    labels = [
        np.array([k in real for k in keys], dtype=float)
        for (keys, _), real in zip(rows, real_tokens, strict=True)
    ]
    train = [i for i in range(len(pairs)) if i % 2 == 0 and len(rows[i][0])]
    x = np.vstack([rows[i][1] for i in train])
    y = np.concatenate([labels[i] for i in train])
    mean, sd = x.mean(0), x.std(0) + 1e-9
    x_held = np.vstack([rows[i][1] for i in held if len(rows[i][0])])
    y_held = np.concatenate([labels[i] for i in held if len(rows[i][0])])
    print(f"\nword model: {len(y)} words of {len(train)} even papers fitted, {len(y_held)} words held out "
          f"({y.mean():.1%} and {y_held.mean():.1%} of them in the real title)")

    models: dict[str, object] = {}
    w = fit_logistic((x - mean) / sd, y)
    models["logistic regression"] = lambda f: 1.0 / (1.0 + np.exp(-(w[0] + ((f - mean) / sd) @ w[1:])))
    try:
        import lightgbm
    except ImportError:
        print("(LightGBM is not installed: pip install lightgbm to add the boosted trees' bags)")
    else:
        trees = lightgbm.LGBMClassifier(
            n_estimators=400, learning_rate=0.03, num_leaves=31, random_state=0, n_jobs=2, verbose=-1
        ).fit(x, y)
        models["boosted trees (LightGBM)"] = lambda f: trees.predict_proba(f)[:, 1]
    for label, predict in models.items():
        held_p = predict(x_held)  # type: ignore[operator]
        print(f"\n{label}: held-out log-loss {log_loss(held_p, y_held):.4f} "
              f"(a constant {log_loss(np.full_like(y_held, y.mean()), y_held):.4f})")
        probabilities = {
            i: (rows[i][0], predict(rows[i][1]) if len(rows[i][0]) else np.zeros(0)) for i in held  # type: ignore[operator]
        }
        for k in range(4, 9):
            scores = bag_scores(held, probabilities, read, pairs, k)
            print(f"  name + its {k} likeliest words          {summary(scores)}")
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
