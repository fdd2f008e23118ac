"""Fit the derived titles' models and write ``retrieval/titles_model.json`` (deterministically).

Reads ``../shared/corpora/iclr2024/papers.jsonl`` only, and fits on its EVEN-indexed papers only
(the odd half is what ``bench/titles.py --split`` reports as held out). What it fits:

* **word rates**: for each index token said in the opening of 3 or more even abstracts, how often
  the real title holds it when the abstract does (smoothed log-odds; learned "generic" words have a
  low one). While the word model is fitted, each abstract's own title is left out of the rates it
  reads (leave-one-out), so the model does not learn to trust a rate that saw the answer.
* **common names**: name-shaped strings (LLM, GPT-4, ImageNet) and how many even abstracts say them.
* **name model**: a conditional logit over the name candidates of :class:`retrieval.titles.Reading`
  and "none" (which candidate is the ``Name`` of the real title ``Name: ...``?), and the probability
  above which the likeliest candidate leads the title: the highest that gives the even half the Name
  share of bench/titles.py's target (90 %), a wrong name costing little (one word more).
* **word model**: a logistic regression of "this token of the abstract is in the real title".
* **title size**: the expected number of tokens of a real title (the phrase chooser's denominator),
  chosen on the even half's median Jaccard (then the fewest titles with no common word, then the mean).

Usage::

    PYTHONPATH=. python bench/fit_titles.py [--data ../shared/corpora/iclr2024] \
        [--out retrieval/titles_model.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from titles import DEFAULT_DATA, jaccard, load, shown, title_name  # noqa: E402

from retrieval import titles  # noqa: E402
from retrieval.tokenize import tokenize  # noqa: E402

_PRIOR = 5.0  # pseudo-abstracts at the base rate behind each word's rate
_BREAK_DF = 25  # a word said in this many even abstracts and in none of their titles breaks a phrase
_MIN_DF = 3  # words and names said in fewer even abstracts are not kept
_L2 = 1e-3
_NAME_SHARE = (
    0.90  # the name threshold is the highest that names this share of the even papers (bench/titles.py)
)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 30) -> np.ndarray:
    """Weights (bias first) of an L2-regularised logistic regression, by Newton's method."""
    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x1 @ w)))
        gradient = x1.T @ (p - y) + l2 * len(x) * w
        hessian = (x1 * (p * (1 - p))[:, None]).T @ x1 + l2 * len(x) * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit(names: tuple[str, ...], rows: list[list[float]], y: list[float]) -> dict[str, float]:
    """Logistic weights by name (bias first), rounded so that the file is the same on every run."""
    x = np.array(rows, dtype=float)
    w = fit_logistic(x, np.array(y), l2=_L2, steps=50)
    return {"bias": round(float(w[0]), 4)} | {
        f: round(float(v), 4) for f, v in zip(names, w[1:], strict=True)
    }


def phrase_breaks(even: list[tuple[str, str]], readings: list[titles.Reading]) -> list[str]:
    """Words no phrase holds: said in _BREAK_DF or more even abstracts and in none of their real
    titles ("show", "outperforms", "additionally")."""
    said: Counter[str] = Counter()
    titled: Counter[str] = Counter()
    for (real, _), r in zip(even, readings, strict=True):
        words = set(r.low)
        said.update(words)
        titled.update(words & set(re.findall(r"[^\s,;:!?()\[\]{}\"“”]+", real.lower())))
    return sorted(w for w, n in said.items() if n >= _BREAK_DF and not titled[w] and tokenize(w))


def name_share(pairs: list[tuple[str, str]], derived: list[str]) -> float:
    """bench/titles.py's Name share: of the real titles ``Name: ...`` whose Name the abstract says,
    the share of derived titles that say it."""
    named = [
        (shown(name), mine) for (real, abstract), mine in zip(pairs, derived, strict=True)
        if (name := title_name(real)) and name.casefold() in abstract.casefold()
    ]  # fmt: skip
    return sum(name in mine.casefold() for name, mine in named) / max(len(named), 1)


def right(c: titles.Candidate, real: str | None) -> bool:
    """Whether a title led by candidate ``c`` names the real title's Name (as bench/titles.py
    checks it: the Name, or the long form that follows an acronym)."""
    if real is None:
        return False
    name = shown(real)
    return c.text.casefold() == name or (c.long or "").casefold() == name


def fit_choice(
    names: tuple[str, ...], rows: list[list[float]], y: list[float], groups: list[int]
) -> dict[str, float]:
    """A conditional logit (Newton's method): each abstract chooses among its candidates and "none"
    (score 0); ``y`` marks the right candidates (the first of them is the choice, else "none")."""
    x = np.hstack([np.ones((len(rows), 1)), np.array(rows, dtype=float)])
    g = np.array(groups)
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    target = np.zeros(len(rows))
    for a, b in zip(starts, np.r_[starts[1:], len(rows)], strict=True):
        hits = np.flatnonzero(np.array(y[a:b]) > 0)
        if len(hits):
            target[a + hits[0]] = 1.0
    w = np.zeros(x.shape[1])
    for _ in range(50):
        e = np.exp(np.clip(x @ w, -30, 30))
        p = e / (1.0 + np.add.reduceat(e, starts))[np.searchsorted(starts, np.arange(len(rows)), "right") - 1]
        m = np.add.reduceat(x * p[:, None], starts)  # per abstract: the features' expectation
        gradient = x.T @ (target - p) - _L2 * len(starts) * w
        hessian = (x * p[:, None]).T @ x - m.T @ m + _L2 * len(starts) * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w += step
        if np.abs(step).max() < 1e-8:
            break
    return {"bias": round(float(w[0]), 4)} | {
        f: round(float(v), 4) for f, v in zip(names, w[1:], strict=True)
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=titles.MODEL_PATH)
    args = parser.parse_args()
    even = load(args.data)[0::2]
    real_keys = [set(tokenize(real)) for real, _ in even]
    real_names = [title_name(real) for real, _ in even]
    model: dict = {"word_rates": {}, "common_names": {}, "base_rate_logit": 0.0, "name_threshold": 1.0,
                   "name_weights": {"bias": -30.0}, "word_weights": {"bias": 0.0}, "title_tokens": 7.0,
                   "name_in_title": 0.5}  # fmt: skip
    titles.use_model(model)
    readings = [titles.Reading(abstract) for _, abstract in even]

    # word rates and common names, counted over the even half
    said: Counter[str] = Counter()
    in_title: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for r, keys in zip(readings, real_keys, strict=True):
        words = {k for keys in r.keys for k in keys}
        said.update(words)
        in_title.update(words & keys)
        named.update(list(r.candidates))
    base = sum(in_title.values()) / sum(said.values())
    base_logit = titles.rate_logit(0, 0, base, _PRIOR)
    model["base_rate_logit"] = round(base_logit, 4)
    model["word_rates"] = {
        k: [n, round(titles.rate_logit(n, in_title[k], base, _PRIOR), 3)]
        for k, n in sorted(said.items())
        if n >= _MIN_DF
    }
    model["common_names"] = {t: n for t, n in sorted(named.items()) if n >= _MIN_DF}
    model["breaks"] = phrase_breaks(even, readings)
    titles.use_model(model)

    # the name model, each abstract's own use left out of the common names
    name_rows, name_y, groups = [], [], []
    for a, (r, real) in enumerate(zip(readings, real_names, strict=True)):
        for c in r.candidates.values():
            model["common_names"][c.text] = named[c.text] - 1
            name_rows.append(r.name_features(c))
            name_y.append(float(right(c, real)))
            groups.append(a)
            model["common_names"][c.text] = named[c.text]
    model["common_names"] = {t: n for t, n in model["common_names"].items() if n >= _MIN_DF}
    model["name_weights"] = fit_choice(titles._NAME_FEATURES, name_rows, name_y, groups)
    titles.use_model(model)
    model["name_threshold"] = 0.1  # (the word model is fitted with the names this finds; see below)

    # the word model, each abstract's own title left out of the rates it reads
    word_rows, word_y = [], []
    leads = []
    for r, keys in zip(readings, real_keys, strict=True):
        found = r.name()
        name = found.text if found else r.coined
        leads.append(name)
        tokens, rows = r.word_features(name)
        for k, x in zip(tokens, rows.tolist(), strict=True):
            n, t = said[k] - 1, in_title[k] - (k in keys)
            known = n >= _MIN_DF
            x[10] = titles.rate_logit(n, t, base, _PRIOR) - base_logit if known else 0.0
            x[11], x[12] = float(known), float(np.log1p(n)) if known else 0.0
            word_rows.append(x)
            word_y.append(float(k in keys))
    model["word_weights"] = fit(titles._WORD_FEATURES, word_rows, word_y)
    titles.use_model(model)
    with_name = [(set(tokenize(n)), keys) for n, keys in zip(leads, real_keys, strict=True) if n]
    model["name_in_title"] = round(sum(bool(n & k) for n, k in with_name) / max(len(with_name), 1), 3)

    # the name threshold: the highest that names the paper as often as _NAME_SHARE on the even half
    model["title_tokens"] = 5.0
    shares = {}
    for t in (0.2, 0.15, 0.12, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02, 0.01):
        model["name_threshold"] = t
        shares[t] = name_share(even, [titles.derive_title(abstract) for _, abstract in even])
        if shares[t] >= _NAME_SHARE:
            break
    model["name_threshold"] = max(
        shares, key=lambda t: (shares[t] >= _NAME_SHARE, t if shares[t] >= _NAME_SHARE else shares[t])
    )

    # the title size that gives the best median Jaccard on the even half
    scores = {}
    for size in np.arange(3.0, 12.5, 0.5):
        model["title_tokens"] = float(size)
        each = [jaccard(titles.derive_title(abstract), real) for real, abstract in even]
        scores[float(size)] = (statistics.median(each), -sum(j == 0 for j in each), statistics.fmean(each))
    model["title_tokens"] = max(scores, key=lambda s: scores[s])
    model = {k: v for k, v in model.items() if not k.startswith("_")}
    args.out.write_text(json.dumps(model, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n",
                        encoding="utf-8")  # fmt: skip
    print(
        f"{len(even)} even papers: {len(model['word_rates'])} word rates, {len(model['common_names'])} "
        f"common names; name threshold {model['name_threshold']} (even Name share "
        f"{shares[model['name_threshold']]:.1%}), title size {model['title_tokens']} "
        f"(even median Jaccard {scores[model['title_tokens']][0]:.3f}); wrote {args.out}"
    )


if __name__ == "__main__":
    main()
