"""Titles derived from an abstract, for papers whose source gives none (display only, never indexed).

:func:`derive_title` reads the opening of an abstract (:class:`Reading`) and builds a short plain-text
title from its own words: the paper's **name** when it coins one ("we introduce SAEBench, a ..."),
chosen among the name-shaped words by a small logistic model; then the name's **long form** when the
text spells its acronym out ("... Single-Step Completion Policy (SSCP)"), else the **phrase** of the
abstract (a run of content words and connectors inside one clause) with the highest expected
content-word overlap with the real title under a logistic word model. A term the authors coin in
lowercase ("... a phenomenon that we call teacher hacking") leads the title when there is no name.

Both models' weights, and the per-word title rates they read, are in ``titles_model.json`` beside
this module, fitted on the even half of the ICLR 2024 papers by ``bench/fit_titles.py`` (which
rebuilds the file deterministically); ``bench/titles.py`` measures the titles on the odd half.
:data:`TITLE_RULES_VERSION` names the rules and the model (the derived titles' file records it).
"""

from __future__ import annotations

import json
import logging
import math
import operator
import re
import zlib
from functools import cache
from itertools import repeat
from pathlib import Path

import numpy as np

from retrieval.markup import ELLIPSIS, strip_markup, truncate
from retrieval.tokenize import analyze_word, tokenize

logger = logging.getLogger(__name__)

TITLE_LIMIT = 90
MODEL_PATH = Path(__file__).with_name("titles_model.json")
_RULES = "titles-3.0"  # bumped whenever a rule here changes what titles say (the model file has its CRC)
_HEAD = 1500  # characters of the abstract read: a title is found in its opening

# Words that may join the content words of a phrase ("policy learning *for* robots"); every other
# stopword (pronouns, auxiliaries, "that", "which" ...) ends it.
_JOINS = frozenset(
    "of for in on with via and to from by under over through the a an across into without".split()
)
_CONNECTORS = frozenset("for via with in on from under through".split())  # may join a second phrase
_LIKELY = 0.05  # see Reading.best_phrase
_LEADS = frozenset("a an the our novel new".split())  # not part of a long form
# Contribution statements: a subject, then (after at most one adverb) an introducing verb.
_SUBJECTS = frozenset("we paper work study here".split())
_INTRO = ("propos", "introduc", "present", "develop", "design", "devis", "build", "construct", "creat",
          "contribut", "releas", "curat", "describ", "call", "term", "dub", "coin", "name")  # fmt: skip
_NAMING = frozenset("called named dubbed termed coined namely call term dub coin name".split())
_HEAD_NOUNS = frozenset(
    "method approach framework model algorithm system agent benchmark dataset technique architecture "
    "pipeline toolkit library suite network strategy paradigm module optimizer scheme attack metric "
    "policy solver defense layer operator estimator mechanism tool platform encoder sampler".split()
)
_SUBJECT_WORDS = frozenset("we they it which who can could may might would must should will cannot".split())
_NAME_JOINS = frozenset("of for from in on with is as and to".split())  # inside a Title Case name
_ABBREVIATIONS = frozenset("e.g. i.e. et al. vs. etc. cf. resp. fig. eq.".split())
_PUNCT = ',;:!?()[]{}"“”'
_PIECE = re.compile(r"[^\s,;:!?()\[\]{}\"“”]+|[,;:!?()\[\]{}\"“”]")
_EMPHASIS = re.compile(
    r"\\(?:emph|textit|textbf|textsc)\{([^{}]{2,50})\}|(?<!\w)(?:\*\*?|__?)([^*_\s][^*_]{1,50}?)(?:\*\*?|__?)(?!\w)"
    r"|``([^`'\"]{2,50})(?:''|\")|[\"“]([^\"“”]{2,50})[\"”]"
)
_SHAPED = re.compile(r"(?!\d)\S+?[A-Z0-9]")  # a capital or digit after a first non-digit: GNNCert, ∞-Diff
_PLAIN = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*")  # a word the tokenizer reads as it is
_ACRONYM = re.compile(r"[A-Z].*[A-Z]")
_VERSION = re.compile(r"\d{1,2}(?:\.\d)?")
_GLUED = re.compile(r"(?<=[a-z0-9)'])\.(?=[A-Z][a-z])")  # "editing.Our method": two sentences
_CAPWORD = re.compile(r"[A-Z][a-z]{2,}(?:-[a-z]+)*")  # Eureka, Zipformer


_NAME_FEATURES = (
    "log_count",
    "first_at",
    "paren",
    "defined",
    "named",
    "after_noun",
    "before_noun",
    "apposed",
    "our",
    "introduced",
    "statement",
    "mid_sentence",
    "url",
    "acronym",
    "digit",
    "capword",
    "multi",
    "log_common",
    "short",
    "first_defined",
    "initials",
    "long_title",
    "in_run",
    "plural",
    "compound",
    "emphasis",
    "lowercase",
    "in_long",
    "before_data",
)
_WORD_FEATURES = (
    "log_count",
    "first_at",
    "early",
    "first_sentence",
    "capital",
    "hyphen",
    "statement",
    "acronym",
    "paren",
    "coined",
    "rate",
    "known",
    "log_df",
    "log_length",
)
_URL = re.compile(r"https?://\S+?/([A-Za-z][\w.-]{2,30}?)/?(?=[\s).,;]*(?:\s|$))")
_in_use: dict | None = None


def _model() -> dict:
    if _in_use is None:
        with MODEL_PATH.open(encoding="utf-8") as fh:
            use_model(json.load(fh))
    return _in_use  # type: ignore[return-value]


def use_model(model: dict | None) -> None:
    """Derive titles with ``model`` (bench/fit_titles.py, while it fits), or the shipped one (None)."""
    global _in_use
    _in_use = model
    _STATIC.clear()
    if model is not None:  # the weights in feature order, the bias first
        for kind, names in (("name", _NAME_FEATURES), ("word", _WORD_FEATURES)):
            weights = model.get(f"{kind}_weights", {})
            model[f"_{kind}"] = [weights.get("bias", 0.0)] + [weights.get(f, 0.0) for f in names]
        model["_breaks"] = frozenset(model.get("breaks", ()))


def rate_logit(n: int, t: int, base: float, prior: float) -> float:
    """The smoothed log-odds that a word the abstract says is in the title, of a word said in ``n``
    abstracts and in ``t`` of their titles (``prior`` pseudo-abstracts at the base rate ``base``)."""
    return math.log((t + prior * base) / (n - t + prior * (1 - base)))


@cache
def title_rules_version() -> str:
    """The rules' version and the model file's CRC: a derived titles' file of other rules is ignored."""
    return f"{_RULES}+{zlib.crc32(MODEL_PATH.read_bytes()):08x}"


def __getattr__(attr: str) -> str:  # TITLE_RULES_VERSION, read on first use (PEP 562)
    if attr == "TITLE_RULES_VERSION":
        return title_rules_version()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


_KEYS: dict[str, tuple[str, ...]] = {}
_STATIC: dict[str, list[float]] = {}  # a word's features that do not depend on the abstract


def _keys(word: str) -> tuple[str, ...]:
    found = _KEYS.get(word)
    if found is None:
        if len(_KEYS) > 200_000:  # a bounded memo: a writer of a million titles meets many words
            _KEYS.clear()
        # a plain word is one word of the tokenizer's (its memo, no scan); anything else is tokenized
        found = _KEYS[word] = analyze_word(word)[0] if _PLAIN.fullmatch(word) else tuple(tokenize(word))
    return found


def _static(key: str) -> list[float]:
    """rate, known, log_df and log_length of a key (memoised)."""
    found = _STATIC.get(key)
    if found is None:
        model = _model()
        rate = model["word_rates"].get(key)
        if len(_STATIC) > 200_000:
            _STATIC.clear()
        found = _STATIC[key] = (
            [rate[1] - model["base_rate_logit"], 1.0, math.log1p(rate[0]), math.log(len(key))]
            if rate
            else [0.0, 0.0, 0.0, math.log(len(key))]
        )
    return found


def _initials(long: str | None) -> str:
    """The initials of a long form's words and hyphenated parts ("Single-Step Completion" -> "SSC")."""
    return "".join(p[0] for p in (long or "").replace("-", " ").split() if p[0].isalnum()).upper()


def _capitals(name: str) -> str:
    return "".join(c for c in name if c.isupper() or c.isdigit()) or "-"


def _linear(weights: list[float], x: list[float]) -> float:
    """The bias (weights[0]) plus the weights times the features, clipped to +-30."""
    return max(-30.0, min(30.0, sum(map(operator.mul, weights[1:], x), weights[0])))


def _logistic(weights: list[float], x: list[float]) -> float:
    return 1.0 / (1.0 + math.exp(-_linear(weights, x)))


class Candidate:
    """A name-shaped string of the abstract and what its uses say of it."""

    __slots__ = ("count", "first", "flags", "long", "text")

    def __init__(self, text: str, first: int) -> None:
        self.text, self.first, self.count = text, first, 0
        self.flags: set[str] = set()
        self.long: str | None = None  # the words its letters spell, where it is defined: "(SSCP)"


class Reading:
    """An abstract's opening read once: its words (parallel lists), clauses, contribution statements,
    name candidates and coined term, and the features the models score (``bench/fit_titles.py`` fits
    on the same features)."""

    def __init__(self, abstract: str) -> None:
        head = abstract[:_HEAD]
        if len(abstract) > _HEAD:
            head = head[: head.rfind(" ") + 1] or head
        head = _GLUED.sub(". ", head)
        # what the authors set apart (*motion guidance*, "shadow cones", \\emph{X}): often the name
        self.emphasis = {
            " ".join(strip_markup(m.group(m.lastindex or 0)).split()) for m in _EMPHASIS.finditer(head)
        }
        if any(c in head for c in "$\\*_`~"):
            head = strip_markup(head)  # LaTeX as Unicode (PixArt-α), no emphasis markers
        text: list[str] = []
        sentence: list[int] = []
        clause: list[int] = []
        before: list[str] = []
        after: list[str] = []
        s = c = 0
        mark = "."  # the punctuation before the next word ("." at a sentence's start)
        for piece in _PIECE.findall(head):
            if piece in _PUNCT:
                c += 1
                if text and not after[-1]:
                    after[-1] = piece
                s += piece in "!?"
                mark = "." if piece in "!?" else piece
                continue
            ends = piece[-1] == "." and piece.lower() not in _ABBREVIATIONS
            word = (piece.rstrip(".") if ends else piece).strip("'‘’*_")
            if word[-2:] in ("'s", "’s"):
                word = word[:-2]
            if word:
                text.append(word)
                sentence.append(s)
                clause.append(c)
                before.append(mark)
                after.append("")
                mark = ""
            if ends:
                if text and not after[-1]:
                    after[-1] = "."
                s, c, mark = s + 1, c + 1, "."
        self.text, self.sentence, self.clause, self.before, self.after = text, sentence, clause, before, after
        self.low = [w.lower() for w in text]
        self.keys = [_keys(w) for w in text]
        self.statement = self._statements()
        self.coined = self._coined()
        self.candidates = self._candidates(abstract)

    def _statements(self) -> list[bool]:
        """Per word: whether it is among the 15 words after a contribution statement's verb."""
        low, n = self.low, len(self.low)
        marks = [False] * n
        for i, w in enumerate(low):
            if w in _SUBJECTS:
                for j in (i + 1, i + 2):
                    if j < n and low[j].startswith(_INTRO) and self.sentence[j] == self.sentence[i]:
                        marks[j + 1 : j + 16] = [True] * len(marks[j + 1 : j + 16])
                        break
        return marks

    def _occurrence(self, i: int, j: int, found: dict[str, Candidate], text: str) -> None:
        """Record a use of candidate ``text`` spanning words i..j-1."""
        c = found.get(text)
        if c is None:
            c = found[text] = Candidate(text, i)
        c.count += 1
        low, flags, n = self.low, c.flags, len(self.low)
        prev = low[i - 1] if i else ""
        if self.before[i] == "(" and self.after[j - 1] == ")":
            flags.add("paren")
            long = self.long_form(i)
            if long:
                c.long = c.long or long
                flags.add("defined")
                if not any("defined" in o.flags for o in found.values() if o is not c):
                    flags.add("first_defined")
        if prev in _NAMING or (prev == "as" and i > 1 and low[i - 2] in ("to", "dub", "dubbed")):
            flags.add("named")
        if prev in _HEAD_NOUNS or (self.before[i] == "," and i > 1 and low[i - 2] in _HEAD_NOUNS):
            flags.add("after_noun")
        if j < n and low[j] in _HEAD_NOUNS and not self.after[j - 1]:
            flags.add(
                "before_data" if low[j] in ("benchmark", "dataset", "corpus", "suite") else "before_noun"
            )
        if self.after[j - 1] in (",", ":") and j < n and low[j] in ("a", "an", "the"):
            flags.add("apposed")
        if "our" in low[max(0, i - 3) : i]:
            flags.add("our")
        if self.statement[i]:
            flags.add("statement")
            if any(w.startswith(_INTRO) for w in low[max(0, i - 4) : i]):
                flags.add("introduced")
        if self.before[i] != ".":
            flags.add("mid_sentence")

    def _candidates(self, abstract: str) -> dict[str, Candidate]:
        """Name-shaped words (GNNCert, iTransformer, T-MARS, ∞-Diff), capitalised words mid-sentence
        (Eureka), runs of capitalised words (Group Preference Optimization) and the last folder of a
        link (github.io/IceFormer/), with what their uses say."""
        found: dict[str, Candidate] = {}
        text, before, n = self.text, self.before, len(self.text)
        for i, t in enumerate(text):
            if t.islower() and t.isalpha():
                continue  # (most words: no name)
            if len(t) >= 2 and (_SHAPED.match(t) or (before[i] != "." and _CAPWORD.fullmatch(t))):
                if i + 1 < n and not self.after[i] and _VERSION.fullmatch(text[i + 1]):
                    self._occurrence(i, i + 2, found, f"{t} {text[i + 1]}")  # NaturalSpeech 2, Habitat 3.0
                elif t[:4] != "http":
                    self._occurrence(i, i + 1, found, t)
        i = 0
        while i < n:  # Title Case runs of 2-5 words inside one clause, not opening a sentence
            j = i
            while (
                j < n
                and self.clause[j] == self.clause[i]
                and (
                    text[j][:1].isupper()
                    or (j > i and self.low[j] in _NAME_JOINS and j + 1 < n and text[j + 1][:1].isupper())
                )
            ):
                j += 1
            if 2 <= j - i <= 5 and before[i] != ".":
                self._occurrence(i, j, found, " ".join(text[i:j]))
            i = max(j, i + 1)
        for i, j in self._lowercase_names():
            self._occurrence(i, j, found, " ".join(text[i:j]))
        if "http" in abstract:
            folded = {t.casefold(): c for t, c in found.items()}
            for m in _URL.finditer(abstract):  # (the folder names one said in the text, in another case)
                t = m.group(1).removesuffix(".git").replace("_", " ")
                c = folded.get(t.casefold()) or found.setdefault(t, Candidate(t, n))
                c.count += 1
                c.flags.add("url")
        return found

    def _lowercase_names(self) -> list[tuple[int, int]]:
        """Lowercase names (words i..j-1): set apart ("we propose *motion guidance*"), or the object of
        an introducing verb set off by punctuation ("we introduce latent intuitive physics, a ...",
        "we propose stack attention: an ...", "... (LIP)")."""
        low, text, after, n = self.low, self.text, self.after, len(self.low)
        out = []
        for i, w in enumerate(low[:-1]):
            if not (self.statement[i + 1] and w.startswith(_INTRO)):
                continue
            j = k = i + 1 + (low[i + 1] in ("the", "a", "an"))
            while k < n and k - j < 4 and text[k].islower() and self.keys[k]:
                k += 1
                if after[k - 1]:
                    break
            if j < k and after[k - 1] in (",", ":", "("):
                out.append((j, k))
        for e in self.emphasis:
            words = e.split()
            if 1 <= len(words) <= 5:
                first = words[0]
                for i in range(n - len(words) + 1):
                    if text[i] == first and text[i : i + len(words)] == words:
                        out.append((i, i + len(words)))
        return out

    def _coined(self) -> str | None:
        """A term the authors coin in lowercase: "that we call teacher hacking", "termed label
        smoothing", "which we dub hallucination snowballing" (1 to 4 words up to punctuation)."""
        low, text, n = self.low, self.text, len(self.low)
        stop = _JOINS | {"that", "which", "this", "it", "is", "these", "them", "as"}
        for i, w in enumerate(low[:-1]):
            if w not in _NAMING or (w.startswith("name") and low[i + 1] == "after"):
                continue
            j = i + 1 + (low[i + 1] == "as")
            if low[j] in ("this", "these", "it", "them", "such") and j + 2 < n:  # "we term this effect X"
                j += 1 + (low[j] != "it" and low[j] != "them" and not self.after[j])
            k = j
            while k < n and k - j < 4 and text[k].islower() and low[k] not in stop:
                k += 1
                if self.after[k - 1]:
                    break
            if (
                j < k
                and (k == n or self.after[k - 1] or low[k] in stop)
                and any(self.keys[x] for x in range(j, k))
            ):
                return " ".join(text[j:k])
        return None

    def long_form(self, i: int) -> str | None:
        """The words before ``(X)`` (word ``i``) whose initials or letters spell X (Schwartz & Hearst):
        "Single-Step Completion Policy (SSCP)" -> "Single-Step Completion Policy"."""
        short = self.text[i]
        letters = [c.lower() for c in short if c.isalpha()]
        if len(letters) < 2 or i == 0:
            return None
        core = letters[:-1] if short.endswith("s") and len(letters) > 2 else letters
        start = max(0, i - len(core) - 3)
        text = " ".join(
            w
            for w, c in zip(self.text[start:i], self.clause[start:i], strict=True)
            if c == self.clause[i - 1]
        )
        low = text.lower()
        at = len(low)
        for k in range(len(core) - 1, -1, -1):
            at = low.rfind(core[k], 0, at)
            while k == 0 and at > 0 and low[at - 1].isalnum():
                at = low.rfind(core[k], 0, at)
            if at < 0:
                return None
        long = text[text.rfind(" ", 0, at) + 1 :]
        while long.split(" ", 1)[0].lower() in _LEADS and " " in long:
            long = long.split(" ", 1)[1]
        if (
            len(long) <= len(short)
            or long.lower().startswith(short.lower())
            or len(long.split()) > len(core) + 2
        ):
            return None
        return long

    # -- features ------------------------------------------------------------------------------------

    def name_features(self, c: Candidate) -> list[float]:
        """What the name model reads of a candidate (:data:`_NAME_FEATURES`, in order)."""
        t, f = c.text, c.flags
        return [
            math.log(c.count),
            c.first / max(len(self.text), 1),
            *(float(k in f) for k in _NAME_FEATURES[2:13]),
            float(sum(ch.isupper() for ch in t) >= 2 and " " not in t),
            float(any(ch.isdigit() for ch in t)),
            float(bool(_CAPWORD.fullmatch(t))),
            float(" " in t),
            math.log1p(_model()["common_names"].get(t, 0)),
            float(len(t) <= 3),
            float("first_defined" in f),
            float(_initials(c.long) == _capitals(t)),
            float(bool(c.long) and all(w[:1].isupper() for w in c.long.split() if w not in _NAME_JOINS)),
            float(" " not in t and any(t in o and " " in o for o in self.candidates)),
            float(len(t) > 2 and t[-1] == "s" and t[:-1].isupper()),
            float("-" in t and all(p.isalpha() and (p.islower() or p[1:].islower()) for p in t.split("-"))),
            float(t in self.emphasis),
            float(t.islower()),
            float(any(t in o.long.split() for o in self.candidates.values() if o.long)),
            float("before_data" in f),
        ]

    def word_features(self, name: str | None = None) -> tuple[list[str], np.ndarray]:
        """The index tokens of the opening, the name's own aside, and a row of what the word model
        reads of each (:data:`_WORD_FEATURES`, in order; a flag is 1 when any use of the token has it)."""
        skip = set(_keys(name)) if name else set()
        text, low, before, statement = self.text, self.low, self.before, self.statement
        seen: dict[str, list[int]] = {}  # token -> [count, first word, flags of its uses or-ed]
        for i, keys in enumerate(self.keys):
            if not keys:
                continue
            w = text[i]
            flags = (statement[i] << 2) | ((before[i] == "(") << 4) | (("-" in w) << 1)
            if w != low[i]:  # (most words are lowercase)
                flags |= (before[i] != "." and w[0].isupper()) | ((_ACRONYM.search(w) is not None) << 3)
            for k in keys:
                x = seen.get(k)
                if x is None:
                    seen[k] = [1, i, flags]
                else:
                    x[0] += 1
                    x[2] |= flags
        keys = [k for k in seen if k not in skip]
        if not keys:
            return keys, np.zeros((0, len(_WORD_FEATURES)))
        coined = set(_keys(self.coined)) if self.coined else set()
        count, first, flags = np.array([seen[k] for k in keys], dtype=np.int64).T
        bits = (flags[:, None] >> np.arange(5)) & 1  # capital, hyphen, statement, acronym, paren
        opening = np.array([s == 0 for s in self.sentence], dtype=float)
        x = np.column_stack([
            np.log(count), first / max(len(text), 1), first < 12, opening[first], bits,
            [k in coined for k in keys], np.array([_static(k) for k in keys]),
        ]).astype(float)  # fmt: skip
        return keys, x

    # -- choices -------------------------------------------------------------------------------------

    def name_scores(self) -> list[tuple[float, Candidate]]:
        """Each candidate's probability of being the paper's name (a choice among the candidates and
        "none", whose score is 0: a conditional logit), likeliest first."""
        weights = _model()["_name"]
        scores = []
        for c in self.candidates.values():
            scores.append((math.exp(_linear(weights, self.name_features(c))), c))
        total = 1.0 + sum(e for e, _ in scores)
        return sorted(((e / total, c) for e, c in scores), key=lambda pc: -pc[0])

    def name(self) -> Candidate | None:
        """The candidate likeliest to be the paper's name, when likely enough."""
        scores = self.name_scores()
        return scores[0][1] if scores and scores[0][0] > _model()["name_threshold"] else None

    def best_phrase(self, name: str | None, limit: int, first: str | None = None) -> str:
        """The description of at most ``limit`` characters with the highest expected content-word
        Jaccard with the real title (its tokens' title probabilities summed, over the expected size of
        the union): a phrase, or ``first`` (the name's long form) when given, then maybe a second
        phrase after the connector the text puts before it ("... for <phrase>"). A phrase is a run of
        up to 10 words of one clause, content words and the connectors between them."""
        model = _model()
        weights, breaks = model["_word"], model["_breaks"]
        keys, x = self.word_features(name)
        z = np.clip(x @ np.array(weights[1:]) + weights[0], -30.0, 30.0)
        p = dict(zip(keys, (1.0 / (1.0 + np.exp(-z))).tolist(), strict=True))
        name_keys = set(_keys(name)) if name else set()
        hit0 = model["name_in_title"] * len(name_keys)
        size0 = len(name_keys) + model["title_tokens"]
        text, low, keys, clause = self.text, self.low, self.keys, self.clause
        n = len(text)
        # Content words: not a word no title says (bench/fit_titles.py learns them: "show",
        # "outperforms"), a verb after its subject ("we *design*") or a participle before its
        # complement ("distilled from"). A phrase does not end inside a run of them ("quantum | advantage").
        verbs = {i + 1 for i, w in enumerate(low) if w in _SUBJECT_WORDS}
        content = [
            bool(keys[i]) and low[i] not in breaks and i not in verbs
            and not (low[i].endswith("ed") and i + 1 < n and low[i + 1] in _JOINS)
            for i in range(n)
        ]  # fmt: skip
        # A word whose tokens are this unlikely in the title never starts nor ends the best phrase:
        # the phrase without it scores higher (a token of probability p raises hit / (size - hit)
        # only when p > hit / size, about 0.2). Skipping them makes the search several times shorter.
        get = p.get
        likely = [
            get(ks[0], 0.0) >= _LIKELY
            if len(ks) == 1
            else bool(ks) and sum(map(get, ks, repeat(0.0))) >= _LIKELY * len(ks)
            for ks in keys
        ]  # fmt: skip
        ends = [
            likely[i] and content[i] and not (i + 1 < n and content[i + 1] and clause[i] == clause[i + 1])
            for i in range(n)
        ]  # fmt: skip
        best, best_score, phrases = None, -1.0, []  # phrases: (i, j, characters, tokens) of each
        for i in range(n):
            if not (likely[i] and content[i]):
                continue
            seen, hit, size, chars = set(name_keys), hit0, size0, -1
            for j in range(i, min(i + 10, n)):
                chars += len(text[j]) + 1
                if (
                    clause[j] != clause[i]
                    or not (content[j] or (low[j] in _JOINS and not keys[j]))
                    or chars > limit
                ):
                    break
                for k in keys[j]:
                    if k not in seen:
                        seen.add(k)
                        hit += p.get(k, 0.0)
                        size += 1
                if ends[j]:
                    phrases.append((i, j + 1, chars, seen - name_keys))
                    # (after a name, one word says little: "Hallucination snowballing: Model")
                    if first is None and (j > i or not name) and hit / (size - hit) > best_score:
                        best, best_score = (i, j + 1), hit / (size - hit)
        if first is None and best is None:
            return ""
        head = first if first is not None else " ".join(text[best[0] : best[1]])  # type: ignore[index]
        have = (set(_keys(head)) | name_keys) - name_keys
        hit = hit0 + sum(p.get(k, 0.0) for k in have)
        size = size0 + len(have)
        best_score = hit / (size - hit)
        second = None
        for i, j, chars, new in phrases:
            overlaps = first is None and i < best[1] and j > best[0]  # type: ignore[index]
            if j - i < 2 or overlaps or low[i - 1] not in _CONNECTORS or clause[i - 1] != clause[i]:
                continue  # (a word alone joined reads as nonsense: "... of learning")
            if len(head) + chars + len(low[i - 1]) + 2 <= limit:
                new = new - have
                gain = hit + sum(p.get(k, 0.0) for k in new)
                if gain / (size + len(new) - gain) > best_score:
                    second, best_score = (i, j), gain / (size + len(new) - gain)
        if second is not None:
            head += f" {low[second[0] - 1]} " + " ".join(text[second[0] : second[1]])
        return head


def _capitalize(text: str) -> str:
    """The first word capitalised when it is an ordinary lowercase word (text-to-image; dLLMs, ε stay)."""
    first = text.split(" ", 1)[0].replace("-", "")
    return text[:1].upper() + text[1:] if first.isalpha() and first.islower() and first.isascii() else text


def _paired(title: str) -> str:
    """``title`` with every bracket paired: an unpaired one goes."""
    stack: list[int] = []
    drop: set[int] = set()
    for i, c in enumerate(title):
        if c in "([":
            stack.append(i)
        elif c in ")]":
            if stack and title[stack[-1]] == "([)]"[")]".index(c)]:
                stack.pop()
            else:
                drop.add(i)
    drop.update(stack)
    return "".join(c for i, c in enumerate(title) if i not in drop) if drop else title


def _derive(abstract: str) -> str:
    reading = Reading(abstract)
    name = reading.name()
    lead = _capitalize(name.text if name else reading.coined or "") or None
    room = TITLE_LIMIT - (len(lead) + 2 if lead else 0)
    long = name.long if name and name.long and len(name.long) <= room else None
    phrase = reading.best_phrase(lead, room, long)
    if not lead:
        return _capitalize(phrase)
    return f"{lead}: {_capitalize(phrase)}" if phrase else lead


def derive_title(abstract: str) -> str:
    """A display title derived from an abstract (the plain-text corpus has no titles).

    "We introduce SAEBench, a comprehensive evaluation suite ..." -> ``SAEBench: <its best phrase>``;
    "... the Single-Step Completion Policy (SSCP)" -> ``SSCP: Single-Step Completion Policy``;
    "... a similar phenomenon, that we call teacher hacking, ..." -> ``Teacher hacking: <phrase>``;
    otherwise the abstract's best phrase alone.

    Args:
        abstract: The abstract (LaTeX and markdown allowed); anything else is read as text.

    Returns:
        Plain text (LaTeX as Unicode, no emphasis markers, nothing escaped: whoever shows it
        escapes), brackets paired, at most :data:`TITLE_LIMIT` characters, never empty.
    """
    if not isinstance(abstract, str):
        abstract = "" if abstract is None else str(abstract)
    try:
        title = _derive(abstract)
    except Exception:  # a display aid must never break what shows it
        logger.exception("derive_title failed; showing the abstract's first words")
        title = ""
    if not title.strip():
        title = " ".join(strip_markup(abstract).split())
    title = " ".join(_paired(truncate(title, TITLE_LIMIT)).split()).strip(" ,;:-–—")
    return title if title.strip(ELLIPSIS) else "Untitled"
