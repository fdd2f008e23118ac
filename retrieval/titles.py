"""Titles derived from an abstract, for papers whose source gives none (display only, never indexed).

:func:`derive_title` builds a short plain-text title from the opening of an abstract;
:func:`title_rules_version` names the rules (the derived titles' file beside an index records it).
bench/titles.py measures the titles against the real ICLR 2024 ones.
"""

from __future__ import annotations

import functools
import importlib
import logging
import math
import re
import sys

from retrieval.markup import (
    _TRAILING_JUNK,
    ELLIPSIS,
    _restore_literals,
    strip_markup,
    truncate,
)

logger = logging.getLogger(__name__)


class _LazyRe:
    """A regex compiled on first use: importing this module (every fresh process does) compiles none
    of the ~40 patterns, and a process that never derives a title never compiles the title ones.
    After the first use the pattern's methods are plain attributes, as fast as the compiled ones."""

    _METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):  # noqa: ANN204 - only reached before the first compile
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for method in self._METHODS:
            setattr(self, method, getattr(compiled, method))
        self.pattern, self.flags, self.groups = compiled.pattern, compiled.flags, compiled.groups
        return getattr(compiled, name)


TITLE_LIMIT = 90


# Asides a title leaves out: "(e.g. ...)", "(MLP)", "(i)", "[12]". Each alternative starts with a
# bracket, so the regex engine only tries positions holding one; the space before goes with it.
_PARENTHETICAL = _LazyRe(
    r" ?(?:\((?:e\.g\.|i\.e\.|see|cf\.|resp\.)[^()]{0,120}\)|(?<=\s)\([A-Za-z][\w\-+./]{0,15}\)(?=[\s,.;:]|$)"
    r"|\((?:[ivx]{1,4}|\d{1,2}|[a-h])\)|\[[^\[\]]{0,120}\])"
)


_TRAILING_STOPWORDS = frozenset(
    "a an the of for and or to in on with by from via that which as at into its their our is are "
    "be this these than between under over using based within across".split()
)


def _plain_sentence(md: str) -> str:
    """A markdown-ish fragment without emphasis markers or escapes, spaces normalised."""
    if "*" in md:
        md = md.replace("*", "")
    if "_" in md:
        md = re.sub(r"(?<!\w)_{1,2}|_{1,2}(?!\w)", "", md)
    if "\\" in md:
        md = md.replace("\\", "")
    md = md.replace(" ,", ",")
    if "  " in md or "\t" in md or "\n" in md:
        md = " ".join(md.split())
    return md.strip()


def _capitalize(text: str) -> str:
    """Capitalise the first word if it is an ordinary lowercase word (leave dLLMs, s-OTDD and the
    symbol ε alone)."""
    if not ("a" <= text[:1] <= "z"):
        return text
    space = text.find(" ")
    word = text if space == -1 else text[:space]
    if word.islower() and (
        word.isascii() or not any(c.isalpha() and not c.islower() for c in word if not c.isascii())
    ):
        return word[0].upper() + text[1:]
    return text


def _strip_trailing_stopwords(phrase: str) -> str:
    words = phrase.split(" ")
    while len(words) > 1 and words[-1].lower().strip(",;:") in _TRAILING_STOPWORDS:
        words.pop()
    return " ".join(words).rstrip(" ,;:")


def _schwartz_hearst(short: str, long: str) -> str | None:
    """The long form of abbreviation ``short`` at the end of ``long`` (Schwartz & Hearst, 2003): each
    of its letters, from the last, found further left in ``long``, the first one starting a word."""
    low = long.lower()
    if len(low) != len(long):
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in long)
    at = len(low)
    for s_idx in range(len(short) - 1, -1, -1):
        c = short[s_idx].lower()
        if not c.isalnum():
            continue
        at = low.rfind(c, 0, at)
        # the first letter of the abbreviation must start a word
        while s_idx == 0 and at > 0 and low[at - 1].isalnum():
            at = low.rfind(c, 0, at)
        if at < 0:
            return None
    start = long.rfind(" ", 0, at) + 1
    return long[start:].strip()


_LONG_FORM_LEAD = _LazyRe(r"^(?:the|an?|our|novel|new)\s+", re.I)


_WORD_PARTS = _LazyRe(r"[^\s-]+")


def _initials(short: str, long: str) -> str | None:
    """The words at the end of ``long`` whose initials spell ``short`` ("test-time adaptation" for
    TTA, "adversarial adaptive sampling" for AAS: Schwartz & Hearst alone finds the shortest,
    "adaptive sampling"), or None."""
    letters = [c for c in short.lower() if c.isalpha()]
    if len(letters) != len(short) or len(letters) < 2:
        return None
    i = len(long) - 1
    while i >= 0 and (long[i] == "-" or long[i].isspace()):
        i -= 1
    if i > 0:  # back to the start of the last word (after the last "-" or space before it)
        i += 1 - len(long[: i + 1].rsplit(None, 1)[-1].rsplit("-", 1)[-1])
    if i < 0 or long[i].lower()[:1] != letters[-1]:
        return None  # (the last word's initial decides most cases, without a scan)
    parts = _WORD_PARTS.findall(long[-(12 * len(letters) + 40) :].lower())
    tail = parts[-len(letters) :]
    if len(tail) != len(letters) or any(p[0] != c for p, c in zip(tail, letters, strict=True)):
        return None
    at = len(long)
    for _ in range(len(letters)):
        at = long.lower().rfind(tail.pop(), 0, at)
    return long[long.rfind(" ", 0, at) + 1 :].strip()


@functools.lru_cache(maxsize=256)  # the name's long form is asked for again by the description
def _long_form(abbr: str, before: str) -> str | None:
    """The expansion of ``(abbr)`` that ends ``before``, validated for length and shape: by the
    compiled pass (retrieval/_titlescan.c ``long_form``, the same answer) for ASCII strings, else
    by :func:`_long_form_rules`."""
    _t_scan()
    compiled = _t_long_form_c
    if compiled is not None:
        long = compiled(abbr, before)  # type: ignore[operator]
        if long is not False:
            return long  # type: ignore[no-any-return]
    return _long_form_rules(abbr, before)


def _long_form_rules(abbr: str, before: str) -> str | None:
    """:func:`_long_form` by the rules (the definition)."""
    # a plural abbreviation (SEs) spells a plural long form (Super Experts)
    core = abbr[:-1] if abbr.endswith("s") and abbr[:-1].isupper() and len(abbr) > 2 else abbr
    words = before.split()
    window = " ".join(words[-min(len(core) + 5, len(core) * 2) :])
    long = _initials(core, window) or _schwartz_hearst(core, window)
    if not long or len(long) <= len(abbr) or long.lower().startswith(abbr.lower()):
        return None
    long = _LONG_FORM_LEAD.sub("", long.lstrip("*_\"“")).strip(" ,*_\"”")
    if not long or len(long.split()) > len(core) + 3 or "," in long:
        return None
    return long


def _ellipsize(text: str, limit: int) -> str:
    """Word-boundary truncation for titles: no dangling 'of'/'the' or open parenthesis before "…"."""
    cut = truncate(text, limit)
    if not cut.endswith(ELLIPSIS):
        return cut
    head = cut[: -len(ELLIPSIS)]
    opened = head.rfind("(")
    if opened > len(head) // 2 and head.count("(") > head.count(")"):
        head = head[:opened]  # "... foundation model called MOTOR (Many Outcome…" -> "... MOTOR…"
    return _strip_trailing_stopwords(head).rstrip(_TRAILING_JUNK) + ELLIPSIS


_TITLE_RULES = "titles-2026.24"  # bumped whenever a rule here changes what titles say

# The description hook. retrieval/keyphrase.py, when it exists, supplies the words after "Name: "
# (or the whole title when no name is found). Its contract:
#   describe(head, name) -> str
#     head   the title region: the opening 1,500 characters, newlines as spaces, \textbf{}/**
#            emphasis dropped, a sentence end glued to the next word spaced ("editing.Our" ->
#            "editing. Our"), one leading space (what the name rules read)
#     name   the name this module found ("SAEBench"), or None
#   It returns a plain phrase of words from ``head`` (no "Name:" prefix, no ellipsis), or "" to keep
#   this module's own description. It is asked after the long form of the name's acronym ("SSCP:
#   Single-Step Completion Policy" stays) and before the appositive, statement and first-sentence
#   rules, which then run only when it has no phrase. This module capitalises the phrase, drops a
#   leading name, cuts it to the title limit and strips markup. An exception is logged and the rules'
#   description kept. The module must be cheap to import (data loaded lazily). KEYPHRASE_VERSION, a
#   string in it, changes whenever its output changes: it is part of TITLE_RULES_VERSION (which
#   bench/titles.py prints; no cache holds a derived title, so no cache depends on it).
_UNSET = object()
_describe_hook: object = _UNSET


def _keyphrase_module():  # noqa: ANN202
    module = sys.modules.get("retrieval.keyphrase")  # (import_module's own lookup costs ~1 µs)
    # not a module another thread is still importing (threads serving searches derive the titles of
    # the papers they show, the first ones at once): import_module waits for it to finish
    if module is not None and not getattr(module.__spec__, "_initializing", False):
        return module
    try:
        return importlib.import_module("retrieval.keyphrase")
    except ModuleNotFoundError as exc:
        if exc.name != "retrieval.keyphrase":
            raise
        return None


def _describe():  # noqa: ANN202
    """keyphrase.describe, or None without that module (resolved once, on first use)."""
    global _describe_hook
    if _describe_hook is _UNSET:
        module = _keyphrase_module()
        _describe_hook = getattr(module, "describe", None)
    return _describe_hook


def title_rules_version() -> str:
    """The version of everything that decides a derived title: these rules and the keyphrase
    module's (bench/titles.py prints it beside its figures). No index depends on it: the derived
    titles' file beside a cache names it, and editing the rules rewrites only that file."""
    module = _keyphrase_module()
    if module is None:
        return _TITLE_RULES
    # (a module without its version still changes the key: its descriptions are not the rules')
    return f"{_TITLE_RULES}+{getattr(module, 'KEYPHRASE_VERSION', 'keyphrase')}"


def __getattr__(attr: str) -> str:  # TITLE_RULES_VERSION, computed on first use (PEP 562)
    if attr == "TITLE_RULES_VERSION":
        return title_rules_version()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")

# A title is found in the opening of an abstract, and a name only in the sentences around its
# contribution statements ("we propose ...", "this paper introduces ..."): every scan below runs
# over that region, never over the whole text, and each regex is tried only where str.find put it.
_TITLE_HEAD = 1500
_T_NO_STATEMENT = 400  # the region when the abstract makes no statement


# (the words of _T_LEAD, in its order: the compiled scan's sites() reads them)
_T_LEAD_OPENERS = ("that", "how", "a way to")  # (a space in one: \s+)
_T_LEAD_DETERMINERS = ("a", "an", "the", "our", "two", "three", "several")
_T_LEAD_ADJECTIVE_WORDS = (
    "novel", "new", "simple", "general", "generic", "unified", "principled", "efficient", "effective",
    "powerful", "lightweight", "scalable", "first", "straightforward", "comprehensive", "systematic",
    "theoretical", "practical",
)
_T_LEAD_JOINS = ("and", "yet")
_T_LEAD = _LazyRe(
    "(?:" + "|".join(w.replace(" ", r"\s+") + r"\s+" for w in _T_LEAD_OPENERS) + ")?"
    "(?:(?:" + "|".join(_T_LEAD_DETERMINERS) + r")\s+)?"
    "(?:(?:" + "|".join(_T_LEAD_ADJECTIVE_WORDS) + r")[,\s]+"
    "(?:" + "|".join(w + r"\s+" for w in _T_LEAD_JOINS) + ")?)*",
    re.I,
)
# the words _T_LEAD can start with: a text whose first word is none of them (in ASCII) has no lead
_T_LEAD_FIRST = frozenset(
    "that how a an the our two three several novel new simple general generic unified principled "
    "efficient effective powerful lightweight scalable first straightforward comprehensive systematic "
    "theoretical practical".split()
)


def _t_lead_end(text: str, pos: int = 0) -> int:
    """``_T_LEAD.match(text, pos).end()``, without the regex when the first word cannot start it."""
    first = text[pos : pos + 20].split(None, 1)
    if first:
        word = first[0].split(",", 1)[0]
        if word.isascii() and word.lower() not in _T_LEAD_FIRST:
            return pos
    return _T_LEAD.match(text, pos).end()


# ([A-Z] factored out: the engine skips to a capital, not tries both alternatives everywhere)
_T_NAME = _LazyRe(r"[A-Z](?:[a-z]*[A-Z0-9][\w+*-]*|[a-z]+-[A-Z][\w-]*)")
_T_GENERIC = frozenset(
    "LLM LLMs MLLM MLLMs VLM VLMs GPU GPUs CPU TPU CNN CNNs RNN RNNs GNN GNNs RL DRL MARL NLP CV SOTA AI "
    "ML DL VAE VAEs GAN GANs MLP MLPs ViT ViTs BERT GPT GPT-2 GPT-3 GPT-4 GPT-3.5 ChatGPT SGD Adam PDE "
    "PDEs ODE ODEs SDE SDEs MDP MDPs POMDP DNN DNNs LM LMs II III IV OOD IID KL MSE DP FL SSL TD CLIP API "
    "APIs RGB NeRF NeRFs ImageNet CIFAR CIFAR-10 CIFAR-100 MNIST COCO LoRA ReLU RLHF DPO PPO QA VQA MoE "
    "LLaMA LLaMA-2 Llama-2 Transformer Transformers USA GPT-4V T2I I2I KG KGs SAM DNA RNA NP AUC NTK "
    "IoU SVM PCA HMM BO GP GPs EM MCMC MLE ERM SAT SMT NeurIPS ICLR ICML CVPR Chain-of-Thought "
    "Chain-of-Thoughts Tree-of-Thought Tree-of-Thoughts Mixture-of-Experts Text-to-Image Text-to-Video "
    "Image-to-Image".split()
)
_T_NAMING = (
    "propos", "introduc", "present", "call", "dub", "term", "nam", "develop", "coin", "design", "build",
    "construct", "releas", "creat", "curat", "contribut", "our", "denot",
)
_T_APPOSITION = _LazyRe(r"\*?\s*(?:,|:|\s(?:is|as|—|-))\s*(?:an?\s+|the\s+)?")
_T_CALLED = _LazyRe(r"[\s,]*\b(?:called|named|termed|dubbed|coined|denoted(?: as)?|namely|i\.e\.)$", re.I)
# A statement whose object starts so ("we address this gap", "we study such an algorithm") names
# nothing by itself: the next statement, or the first sentence, is tried instead.
_T_ANAPHORA = frozenset("this these that those such it its them they and or but how whether why".split())
_T_SMALL = frozenset("a an the of for and or to in on with by from via at as into is are".split())
# the words after a comma, and after a space, that open a clause (a space in one: any run of spaces)
_T_CUT_SPACES = r"\s+"
_T_CUT_AFTER_COMMA = (
    "which", "that", "where", "while", "and", "but", "thus", "so", "achieving", "allowing", "enabling",
    "leading", "resulting",
)
_T_CUT_AFTER_SPACE = (
    "which", "that", "where", "whereby", "while", "whereas", "so that", "such that", "because", "since",
    "achieving", "allowing", "enabling", "in order to", "thereby",
)
# where a phrase ends: a clause word (after a comma, more of them), a sentence or clause mark, a dash
# (the compiled scan's cut() finds the same place: _t_cut_at)
_T_CUT = _LazyRe(  # (the lookahead of the first characters: the engine skips to them)
    rf"(?=[,;:.!?\s])(?:,\s*(?:{'|'.join(_T_CUT_AFTER_COMMA)})\b"
    rf"|\s(?:{'|'.join(_T_CUT_AFTER_SPACE).replace(' ', _T_CUT_SPACES)})\b|[;:.!?](?:\s|$)|\s[-–—]\s)"
)


# words that take an object or a complement: one left at the end of a cut phrase dangles ("a setup
# involving", "structures under", "and can therefore be")
_T_AUXILIARIES = frozenset(
    "has have had can could will would may might must should was were be been being".split()
)
_T_DANGLING = (
    _T_SMALL
    | _TRAILING_STOPWORDS
    | _T_AUXILIARIES
    | frozenset(
        "involving including using leveraging utilizing exploiting combining incorporating integrating "
        "requiring containing comprising yielding providing considering regarding concerning following "
        "given such both each either whose who not also therefore thus through among without towards just "
        "toward against about upon during after before beyond like versus".split()
    )
)
_T_ARTICLES = frozenset(("a", "an", "the"))
# where an unfinished last phrase starts, when a cap (not a clause break) cut the text
_T_OPENERS = (_T_SMALL - _T_ARTICLES) | _T_AUXILIARIES | frozenset(
    "that which where whose who through among between under over within across without towards toward "
    "against about upon during after before beyond than using based".split()
)


def _t_finish(parts: list[str], capped: bool) -> str:
    """Join a cut phrase's words. No dangling last word; when a cap cut the text mid-phrase, the
    unfinished last phrase (one word after its opener, or an article and one word: "... a
    fundamental problem in social", "... through a binarized") is dropped, as long as four words
    stay, unless a dangling word was that phrase. Only so short a phrase: a longer one's words are
    often the real title's."""
    kept = len(parts)
    while len(parts) > 1 and parts[-1].lower().strip(",;:") in _T_DANGLING:
        parts.pop()
    if capped and len(parts) == kept:  # (a dangling word dropped was the unfinished phrase)
        for i in range(len(parts) - 1, max(len(parts) - 4, 3), -1):
            # "... problem in social", "... risks through a binarized"
            if parts[i].lower() in _T_OPENERS and (
                i >= len(parts) - 2 or parts[i + 1].lower() in _T_ARTICLES
            ):
                del parts[i:]
                while len(parts) > 1 and parts[-1].lower().strip(",;:") in _T_DANGLING:
                    parts.pop()
                break
    return " ".join(parts).strip(" ,;:-–—")


def _t_clip(text: str, words: int = 12) -> str:
    """A phrase cut at its first clause break (after a few characters), at most ``words`` words, no
    dangling last word nor, when the word cap cut it, unfinished short last phrase: by the compiled
    pass (retrieval/_titlescan.c ``clip``, the same phrase) for ASCII text, else :func:`_t_clip_rules`."""
    _t_scan()
    compiled = _t_clip_c
    if compiled is not None:
        phrase = compiled(text, words)  # type: ignore[operator]
        if phrase is not False:
            return phrase  # type: ignore[no-any-return]
    return _t_clip_rules(text, words)


def _t_clip_rules(text: str, words: int = 12) -> str:
    """:func:`_t_clip` by the rules (the definition)."""
    pieces = text.split(None, words + 1)
    text = " ".join(pieces[: words + 1])  # the break is searched in these words only
    cut = _t_cut_at(text, min(len(text), 12))
    if cut != -1:
        text = text[:cut]
    if "(" in text or "[" in text:
        text = _PARENTHETICAL.sub("", text)
    # a label before an early colon ("principle: preference data vary ..."): what follows is the phrase
    colon = text.find(": ", 0, 14)
    if colon > 0 and " " not in text[:colon].strip():
        text = text[colon + 2 :].lstrip("*_")  # (emphasis markers are dropped from titles anyway)
    return _t_finish(text.split(None, words)[:words], capped=cut == -1 and len(pieces) > words)


_T_BREAK_WORDS = frozenset("which that where whereby while whereas who because since thereby".split())
_T_NAMED_WORDS = ("called", "named", "namely", "dubbed", "termed")
_T_NAMED = _LazyRe(
    r"(?:(?:" + "|".join(_T_NAMED_WORDS) + r")\s+|--\s+|—\s*)?[\"“*]*(?:as\s+)?[\"“*]*"
    r"(?P<n>[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,4})"
)
# A Capitalised phrase followed by a comma, colon or parenthesis: a name when a naming verb comes
# just before it ("we present Eureka, a ...", "this work introduces Video Diffusion Transformer (VDT)").
_T_INTRODUCED_KINDS = ("framework", "method", "model", "approach", "algorithm", "benchmark", "dataset")
_T_INTRODUCED = _LazyRe(  # ("we introduce, Sign2GPT, a ...", "we propose the Mayfly, the first ...")
    r"(?P<s>[a-z]*),?\s+(?:the\s+)?[\"“*]*(?P<n>[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,4})"
    r"(?=[\"”*]*\s*[,:(—]|(?P<k>[\"”*]*\s+(?:" + "|".join(_T_INTRODUCED_KINDS) + r")[\s,.]))"
)  # ("this paper proposes Poisoned Forgery Face framework, which ..."; not "the proposed MOO framework")
# "our method, FLATTEN", "the resulting framework VQGraph": the word just before a candidate
_T_HEAD_NOUNS = frozenset(
    "method approach framework model algorithm system agent benchmark dataset technique architecture "
    "pipeline toolkit library suite network strategy paradigm module optimizer scheme attack metric "
    "policy solver defense layer operator estimator mechanism tool platform encoder decoder regularizer "
    "simulator engine environment sampler predictor generator detector classifier planner controller "
    "learner".split()
)
# the words w with w.removesuffix("s") in _T_HEAD_NOUNS ("method", "methods"): one set lookup
_T_HEAD_NOUN_FORMS = frozenset({n + "s" for n in _T_HEAD_NOUNS} | {n for n in _T_HEAD_NOUNS if n[-1:] != "s"})
_T_HEAD_NOUN_ANY = _T_HEAD_NOUNS | _T_HEAD_NOUN_FORMS  # w in it: w or w.removesuffix("s") is one
_T_LOWER_NAMED = _LazyRe(
    r"(?:as\s+)?[*_\"“]*[a-z][\w-]*(?: [a-z][\w-]*){0,4}[*_\"”]* \((?P<n>[A-Z][\w-]*[A-Z][\w-]*)\)"
)
_T_LOWER_APPOSED = _LazyRe(r"(?P<n>[a-z][a-z-]+(?: [a-z][a-z-]+){0,3}), an? ")


def _t_lower_apposed(head: str, at: int) -> re.Match[str] | None:
    """``_T_LOWER_APPOSED.match(head, at)``, tried only when the first comma after ``at`` opens
    ", a" and at most four words come before it (the phrase holds no comma)."""
    comma = head.find(",", at)
    if comma == -1 or head[comma : comma + 3] != ", a" or head.count(" ", at, comma) > 3:
        return None
    return _T_LOWER_APPOSED.match(head, at)


_T_NAMING_LINKS = frozenset("namely called named dubbed termed denoted".split())
_T_LOWER_CAMEL = _LazyRe(r" [a-z]{1,2}[A-Z][A-Za-z0-9-]*[a-z0-9]")  # iTransformer, dLLMs
_T_CAMEL = _LazyRe(r"[a-z][A-Z]")


def _t_camel(token: str) -> bool:
    """``_T_CAMEL.search(token)``: a lowercase letter then a capital (a text of one case has none)."""
    return not token.islower() and not token.isupper() and _T_CAMEL.search(token) is not None


_T_ACRONYM_AFTER = _LazyRe(r"\s*\([\"“*]*([A-Z][\w-]*[A-Z][\w-]*)[\"”*]*\)")  # (MOTOR), ("BrainSCUBA")
_T_URL_NAME = _LazyRe(r"https?://\S+?/([A-Za-z][\w.-]{2,30}?)/?(?=[\s).,;]*(?:\s|$))")
_T_DEFINED_BONUS = 7
_T_OBJECT_BONUS = 4
_T_TITLE_COMPOUND = _LazyRe(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)+")  # Context-Aware, Multi-Granularity
_T_NAME_WORD = _LazyRe(r"[A-Z][a-z]*[A-Z0-9][\w+*-]*|[A-Z][a-z]+-[A-Z][\w-]*")
_T_COMMA_CAPITAL = _LazyRe(r", [\"“*_]*[A-Z]")  # (two literal scans: a class [,:] costs 6x)
_T_COLON_CAPITAL = _LazyRe(r": [\"“*_]*[A-Z]")
_T_STOP_NAME = frozenset(
    "The This These Our We In A An Code Our Data Project Page Github GitHub Anonymous Main Master Home "
    "Index Tree Blob Repo Site Website Demo Paper".split()
)


def _t_window(head: str, i: int, n: int = 200) -> str:
    """head[i:i+n] without a word cut at its end."""
    text = head[i : i + n]
    if i + n < len(head) and head[i + n] != " ":
        text = text[: text.rfind(" ") + 1]
    return text


# One scan finds every place a statement or a name may start: "we ", "this ", the naming words
# ("called", "named" ...) and the introducing verbs. The literal leading space keeps the regex
# engine on its fast path (it only tries positions after a space); the text given to it starts
# with a space.
_T_KEYWORD_WORDS = (  # (in this order: the first that matches at a place wins)
    "we", "this", "our", "resulting", "called", "call", "named", "dubbed", "termed", "coined", "denoted",
    "namely", "referred to as", "refer to as", "propos", "introduc", "present",
)
_T_KEYWORDS = _LazyRe(  # (a plain alternation after a literal: several times faster than with groups)
    " (?:" + "|".join(_T_KEYWORD_WORDS) + ")"
)
# what each keyword starts: 1 a statement, 2 a name after a naming word, 3 "our X", 4 "propose X";
# the words of kinds 1-3 are whole words (a space follows), those of kind 4 stems
_T_KEYWORD_KIND = {
    "we": 1, "this": 1, "called": 2, "call": 2, "named": 2, "dubbed": 2, "termed": 2, "coined": 2,
    "denoted": 2, "namely": 2, "referred to as": 2, "refer to as": 2, "our": 3, "resulting": 3,
    "propos": 4, "introduc": 4, "present": 4,
}
# the same keyed by the match (" we"), "this" as kind 0 (a statement only before paper/work/...)
_T_MATCH_KIND = {" " + word: 0 if word == "this" else kind for word, kind in _T_KEYWORD_KIND.items()}
# by the keyword's index in _T_KEYWORD_WORDS: (kind, length of the match)
_T_INDEX_KIND = [(_T_MATCH_KIND[" " + word], len(word) + 1) for word in _T_KEYWORD_WORDS]


def _t_scan():  # noqa: ANN202
    """The compiled keyword scan (retrieval/_titlescan.c, configured on first use), or None; its
    other scans are :data:`_t_openings_c`, :data:`_t_cut_c` and :data:`_t_glued_c` (None with it)."""
    global _t_scan_c, _t_site_hits_c, _t_head_noun_c, _t_openings_c, _t_cut_c, _t_glued_c, _t_sites_c
    global _t_front_c, _t_long_form_c, _t_clip_c
    if _t_scan_c is _UNSET:
        try:
            from retrieval import _titlescan  # type: ignore[attr-defined]
        except ImportError:
            _t_scan_c = _t_site_hits_c = _t_head_noun_c = _t_openings_c = _t_cut_c = _t_glued_c = None
            _t_sites_c = _t_front_c = _t_long_form_c = _t_clip_c = None
        else:
            current = getattr(_titlescan, "VERSION", None) == 8  # (a stale build is not used)
            if current:
                _titlescan.configure(_T_KEYWORD_WORDS, [kind for kind, _ in _T_INDEX_KIND])
                _titlescan.configure_cut(_T_CUT_AFTER_COMMA, _T_CUT_AFTER_SPACE)
                _titlescan.configure_clip(_T_DANGLING, _T_OPENERS, _T_ARTICLES)
                _titlescan.configure_sites(_T_SUBJECTS, sorted(_T_STATEMENT_STARTS))
                _titlescan.configure_head_nouns(sorted(_T_HEAD_NOUN_FORMS))
                _titlescan.configure_rules({
                    "statement_adverbs": _T_STATEMENT_ADVERBS, "statement_forms": _T_STATEMENT_FORMS,
                    "intro_verbs": _T_INTRO_VERBS, "lead_openers": _T_LEAD_OPENERS,
                    "lead_determiners": _T_LEAD_DETERMINERS, "lead_adjectives": _T_LEAD_ADJECTIVE_WORDS,
                    "lead_joins": _T_LEAD_JOINS, "lead_first": sorted(_T_LEAD_FIRST),
                    "introduced_kinds": _T_INTRODUCED_KINDS, "named_words": _T_NAMED_WORDS,
                    "generic": _T_GENERIC, "head_noun_any": _T_HEAD_NOUN_ANY, "naming_links": _T_NAMING_LINKS,
                })
                _titlescan.configure_front(
                    _t_paren_defined, _t_comma_named, _T_INTRO_VERBS, _T_OBJECT_BONUS, _T_DEFINED_BONUS
                )
            _t_front_c = _titlescan.front if current else None
            _t_long_form_c = _titlescan.long_form if current else None
            _t_clip_c = _titlescan.clip if current else None
            _t_sites_c = _titlescan.sites if current else None
            _t_scan_c = _titlescan.hits if current else None
            _t_head_noun_c = _titlescan.head_noun_at if current else None
            _t_site_hits_c = _titlescan.site_hits if current else None
            _t_openings_c = _titlescan.openings if current else None
            _t_cut_c = _titlescan.cut if current else None
            _t_glued_c = _titlescan.glued if current else None
    return _t_scan_c


_t_scan_c: object = _UNSET
_t_site_hits_c: object = _UNSET
_t_head_noun_c: object = _UNSET
_t_openings_c: object = _UNSET
_t_cut_c: object = _UNSET
_t_glued_c: object = _UNSET
_t_sites_c: object = _UNSET
_t_front_c: object = _UNSET
_t_long_form_c: object = _UNSET
_t_clip_c: object = _UNSET


def _t_opening_names(head: str, hi: int) -> list[tuple[str, int]]:
    """(word, start) of the name-like words in head[:hi]: the matches of _T_NAME ("FLATTEN"), then
    those of _T_LOWER_CAMEL less their space ("iTransformer"); by the compiled scan (the same
    matches, read left to right) or by the regexes."""
    _t_scan()
    openings = _t_openings_c
    if openings is not None:
        names, camels = openings(head, hi)
        return [(head[a:b], a) for a, b in names] + [(head[a + 1 : b], a + 1) for a, b in camels]
    return [(m.group(0), m.start()) for m in _T_NAME.finditer(head, 0, hi)] + [
        (m.group(0)[1:], m.start() + 1) for m in _T_LOWER_CAMEL.finditer(head, 0, hi)
    ]


def _t_keyword_hits(lower: str) -> list[tuple[int, int, int]]:
    """(start, end, kind) of every match of _T_KEYWORDS in ``lower``, in text order: by the compiled
    scan (the same matches: a character comparison at each space), else by the regex."""
    scan = _t_scan()
    if scan is not None:
        return scan(lower)
    return [(m.start(), m.end(), _T_MATCH_KIND[m.group()]) for m in _T_KEYWORDS.finditer(lower)]


def _t_site_hits(lower: str) -> list[tuple[int, int, int]]:
    """The keyword hits :func:`_t_sites` acts on: those of :func:`_t_keyword_hits` less the ones it
    passes over whatever came before them (a whole-word keyword not followed by a space; "this" not
    followed by paper/work/study/article; "we" or "this paper" not followed by the first three
    letters of a statement word). By the compiled scan (the same hits), else by this loop."""
    _t_scan()
    sites = _t_site_hits_c
    if sites is not None:
        return sites(lower)
    out: list[tuple[int, int, int]] = []
    for start, end, kind in _t_keyword_hits(lower):
        if kind != 4:
            if lower[end : end + 1] != " ":
                continue
            if kind <= 1:
                at = end + 1
                if kind == 0:
                    if not lower.startswith(_T_SUBJECTS, at):
                        continue
                    at = lower.find(" ", at) + 1
                if lower[at : at + 3] not in _T_STATEMENT_STARTS:
                    continue
        out.append((start, end, kind))
    return out


def _t_cut_at(text: str, pos: int) -> int:
    """Where _T_CUT first matches in ``text`` from ``pos`` (-1 for nowhere): by the compiled scan (the
    same place, read left to right), else by the regex."""
    _t_scan()
    cut = _t_cut_c
    if cut is not None:
        return cut(text, pos)
    m = _T_CUT.search(text, pos)
    return -1 if m is None else m.start()


_T_STATEMENT_ADVERBS = (
    "first", "then", "further", "also", "here", "thus", "therefore", "newly", "formally", "systematically",
    "empirically", "theoretically",
)
_T_STATEMENT_VERBS = (
    "propos", "introduc", "present", "develop", "design", "devis", "build", "construct", "creat", "contribut",
    "releas", "stud(?:y|ie)", "investigat", "show", "demonstrat", "analy[sz]", "explor", "address", "tackl",
    "consider", "examin", "revisit", "formulat", "establish", "provid", "offer", "deriv", "prov",
    "identif(?:y|ie)", "leverag", "focus(?:e)?(?:s)? on", "put(?:s)? forward", "characteri[sz]", "unveil",
    "curat", "collect", "pioneer",
)
# the verbs' alternatives spelled out, in the order the regex tries them (sites() reads them)
_T_STATEMENT_FORMS = (
    "propos", "introduc", "present", "develop", "design", "devis", "build", "construct", "creat", "contribut",
    "releas", "study", "studie", "investigat", "show", "demonstrat", "analys", "analyz", "explor", "address",
    "tackl", "consider", "examin", "revisit", "formulat", "establish", "provid", "offer", "deriv", "prov",
    "identify", "identifie", "leverag", "focuses on", "focuse on", "focuss on", "focus on", "puts forward",
    "put forward", "characteris", "characteriz", "unveil", "curat", "collect", "pioneer",
)
_T_STATEMENT = _LazyRe(
    rf"(?:(?:{'|'.join(_T_STATEMENT_ADVERBS)}) )?(?P<v>{'|'.join(_T_STATEMENT_VERBS)})"
    r"(?:e?s|e)?(?=[\s:,])[\s:]*"
)
# the first three letters of every word a statement can start with (each alternative above opens
# with three plain letters, tested): a text opening otherwise is no statement, the regex is not tried
_T_STATEMENT_STARTS = frozenset(w[:3] for w in _T_STATEMENT_ADVERBS + _T_STATEMENT_VERBS)
_T_SUBJECTS = ("paper ", "work ", "study ", "article ")
# verbs after which a Capitalised phrase followed by "," ":" "(" is the name being introduced
_T_INTRO_VERBS = frozenset(
    "propos introduc present develop design devis build construct creat contribut releas curat "
    "collect pioneer".split()
)


def _t_introduced(head: str, at: int) -> re.Match[str] | None:
    """The name right after an introducing verb's stem at ``at`` (:data:`_T_INTRODUCED`). The name's
    capital opens (after quote marks) one of the first three words there: the regex is tried only then."""
    words = head[at : at + 200].split(None, 3)
    if (
        len(words) == 4
        and not "A" <= words[0].lstrip("\"“*")[:1] <= "Z"
        and not "A" <= words[1].lstrip("\"“*")[:1] <= "Z"
        and not "A" <= words[2].lstrip("\"“*")[:1] <= "Z"
    ):
        return None
    n = _T_INTRODUCED.match(head, at)
    if n is not None and n.group("k") and n.group("s").endswith("ed") and head[at - 11 : at - 6] != " our ":
        return None  # "the proposed MOO framework" is someone else's or a part; "our proposed X model" ours
    return n


def _t_compound_adjective(token: str) -> bool:
    """``LLM-based``, ``GNN-driven``, ``ViT-free``: a word about something else, not a name."""
    tail = token.rsplit("-", 1)[-1] if "-" in token else ""
    return len(tail) >= 3 and tail.isalpha() and tail.islower()


def _t_sites(
    head: str, lower: str, limit: int = 3
) -> tuple[list[tuple[int, int, str]], list[tuple[str, int]]]:
    """:func:`_t_sites_rules`, by the compiled scan's sites() (the same lists, in one pass in C) where
    it decides, else by the rules."""
    _t_scan()
    sites = _t_sites_c
    if sites is not None:
        out = sites(head, lower, limit)
        if out is not None:
            return out
    return _t_sites_rules(head, lower, limit)


def _t_sites_rules(
    head: str, lower: str, limit: int = 3
) -> tuple[list[tuple[int, int, str]], list[tuple[str, int]]]:
    """The first few contribution statements ("we propose", "this paper first introduces") as
    (start, where the object starts after any "a novel", verb), in text order, and the names
    introduced explicitly ("..., called Zipformer", "(by) presenting Vocos, a ...") with their
    positions. ``lower`` is
    ``head`` lowercased, both starting with a space."""
    statements: list[tuple[int, int, str]] = []
    named: list[tuple[str, int]] = []
    for start, end, kind in _t_site_hits(lower):  # the space after a keyword is left for the next one
        if kind != 4:
            if lower[end : end + 1] != " ":
                continue  # "well", "ours"
            if kind <= 1 and len(statements) >= limit:
                continue
        end += 1
        if kind <= 1:  # 0: "this", 1: "we"
            if kind == 0:
                if not lower.startswith(_T_SUBJECTS, end):
                    continue
                end = lower.find(" ", end) + 1
            s = _T_STATEMENT.match(lower, end) if lower[end : end + 3] in _T_STATEMENT_STARTS else None
            if s is not None:
                verb = s.group("v")
                # (start, its object after "a novel ...", verb)
                statements.append((start + 1, _t_lead_end(head, s.end()), verb))
                if verb in _T_INTRO_VERBS:  # "we present Eureka, a ...", "we introduce X (XY)"
                    n = _t_introduced(head, s.start("v") + len(verb))
                    if n is not None:
                        named.append((n.group("n"), n.start("n")))
        elif kind == 2:
            n = _T_NAMED.match(head, end)
            if n is None and _t_after_head_noun(head, start + 1):
                # "a class of methods called *distributional preference learning* (DPL)": a
                # lowercase long form, then its acronym
                n = _T_LOWER_NAMED.match(head, end)
            if n is not None:
                named.append((n.group("n"), n.start("n")))
        elif kind == 4:
            n = _t_introduced(head, end - 1)
            word_end = lower.find(" ", end - 1, end + 12)
            if n is None and word_end != -1:  # "(we establish ... and) present a novel method, Calibrated"
                n = _t_after_head_noun_of(head, _t_lead_end(head, word_end + 1))
                if n is None and lower[word_end - 2 : word_end] != "ed":
                    # "we propose particle guidance, an extension of ...": a lowercase name; not
                    # "given the proposed evidence, a proxy ..."
                    coined = _t_lower_apposed(head, word_end + 1)
                    if coined is not None:
                        named.append((coined.group("n")[0].upper() + coined.group("n")[1:], word_end + 1))
                        continue
            if n is not None:
                named.append((n.group("n"), n.start("n")))
        else:  # "our method, FLATTEN", "our novel algorithm, REValueD", "the resulting framework VQGraph"
            n = _T_NAME_AT.match(head, end)  # "our LLM-CXR", "our KW-Design method"
            if n is not None and n.group("n") not in _T_GENERIC and not _t_compound_adjective(n.group("n")):
                named.append((n.group("n"), n.start("n")))
                continue
            first = lower.find(" ", end, end + 20)
            second = lower.find(" ", first + 1, first + 20) if first != -1 else -1
            for a, b in ((end, first), (first + 1, second)):
                if b != -1 and lower[a:b].rstrip(",") in _T_HEAD_NOUN_FORMS:
                    n = _T_NAMED.match(head, b + 1)
                    if n is not None:
                        named.append((n.group("n"), n.start("n")))
                    break
    return statements, named


def _t_after_head_noun_of(head: str, obj: int) -> re.Match[str] | None:
    """The name after a head noun in the first three words at ``obj`` ("framework, PARL"), or in
    the first six with a comma ("a prototype-based tabular representation learning framework, PTaRL")."""
    _t_scan()
    at = _t_head_noun_c(head, obj) if _t_head_noun_c is not None and obj >= 0 else _t_head_noun_at(head, obj)
    return _T_NAMED.match(head, at) if at != -1 else None


def _t_head_noun_at(head: str, obj: int) -> int:
    """Where :func:`_t_after_head_noun_of` tries _T_NAMED: where the word after the head noun is
    found from ``obj``, or -1 (the compiled head_noun_at() finds the same)."""
    words = head[obj : obj + 100].split(None, 7)[:7]
    for k in range(min(6, len(words) - 1)):
        word = words[k]
        if word[-1] == ",":
            word = word.rstrip(",")
        elif k >= 3:
            continue
        if word in _T_HEAD_NOUN_FORMS:
            return head.find(words[k + 1], obj)
    return -1


_T_TASK = _LazyRe(r"\)?,? an? (?:new |novel |challenging )?(?:task|problem|setting)\b")
_T_OURS = (" we ", " our ", " us ", "this paper", "this work", "this study", "here,", " ours")


def _t_ours(lower: str, pos: int) -> bool:
    """The sentence up to ``pos`` is about the authors' work ("we present a method named X"), not
    someone else's ("a newly-arising method named Evidential Deep Learning (EDL), ...")."""
    sentence = lower[lower.rfind(". ", 0, pos) + 1 : pos]
    for w in _T_OURS:
        if w in sentence:
            return True
    return False


def _t_apposed(head: str, lo: int, hi: int) -> list[tuple[str, int]]:
    """Name-like words in head[lo:hi] followed by ", a " or ", an " ("with ClimODE, a ..."), each
    a whole word (after a space, in quotes or emphasis at most), found by str.find."""
    out: list[tuple[str, int]] = []
    k = head.find(", a", lo, hi)
    while k != -1:
        nxt = head[k + 3 : k + 5]
        stop = k + 4 if nxt[:1] == " " else k + 5 if nxt == "n " else 0
        if stop and stop <= hi:
            space = head.rfind(" ", max(lo - 1, 0), k)
            if space != -1:
                word = head[space + 1 : k]
                start = space + 1 + len(word) - len(word.lstrip("\"“*"))
                m = _T_NAME_WORD.match(head, start, k)
                if m is not None and not head[m.end() : k].strip("\"”*"):
                    out.append((m.group(), start))
        k = head.find(", a", k + 3, hi)
    return out


def _t_next_word(head: str, at: int) -> str:
    words = head[at : at + 20].split(None, 1)
    return words[0].strip(",.;:").lower() if words else ""


def _t_in_statement(head: str, statements: list[tuple[int, int, str]], pos: int) -> bool:
    """``pos`` is in the sentence of a statement introducing something ("we propose ... X")."""
    return any(
        s0 < pos and verb in _T_INTRO_VERBS and head.find(". ", s0, pos) == -1 for s0, _, verb in statements
    )


_T_LEAD_ADJECTIVES = frozenset(
    "a an the our novel new simple general generic unified principled efficient effective powerful "
    "lightweight scalable first straightforward yet and".split()
)


def _t_named_by_verb(lower: str, pos: int) -> bool:
    """What starts at ``pos`` is the object of an introducing verb ("by introducing a novel ...")."""
    for word in reversed(lower[max(0, pos - 80) : pos].replace(",", " ").split()[-6:]):
        if word not in _T_LEAD_ADJECTIVES:
            return word.startswith(_T_LEAD_VERBS)
    return False


def _t_own_kind(head: str, lower: str, start: int, long: str) -> bool:
    """``this|our <long form> (X) <head noun>``, ``the <long form> (X) <head noun> proposed``: the
    paper's own thing, named where it is defined."""
    before = lower[max(0, start - 2 - len(long) - 6) : start - 2 - len(long)].split()[-1:]
    close = head.find(")", start)
    after = lower[close + 2 : close + 60].split(None, 2)[:2]
    if not after or after[0] not in _T_HEAD_NOUN_FORMS:
        return False
    return before in (["this"], ["our"]) or (
        before == ["the"] and len(after) == 2 and after[1].startswith(_T_LEAD_VERBS)
    )


def _t_previous_words(head: str, start: int) -> list[str]:
    """The two words before ``start``, lowercased, without commas, quotes or emphasis."""
    return head[max(0, start - 40) : start].lower().replace(",", " ").strip(" \"“*:_").split()[-2:]


def _t_after_head_noun(head: str, start: int) -> bool:
    words = _t_previous_words(head, start)
    if len(words) == 2 and words[1] in _T_NAMING_LINKS:
        words = words[:1]
    return bool(words) and words[-1] in _T_HEAD_NOUN_ANY


_T_NAME_AT = _LazyRe(
    r"[\"“*_]*(?P<n>(?:[A-Z][a-z]*-?[A-Z0-9][\w+*-]*|[A-Z][a-z]+(?:-[a-z]+)*-[A-Z][\w-]*|[a-z]{1,2}[A-Z][\w-]+)"
    r"(?:\.\d\w*|\$\\[A-Za-z]+\$)?)"  # MIntRec2.0, PixArt-$\alpha$
)
# "a novel framework, PARL, ...", "a GPT based model, Duolando", "the resulting framework VQGraph"


def _t_explicit(token: str) -> str | None:
    """An explicitly introduced phrase trimmed to the name (no trailing "The", no "LLMs")."""
    words = token.rstrip("-").split()
    while len(words) > 1 and (words[-1] in _T_STOP_NAME or words[-1].lower() in _T_SMALL):
        words.pop()
    token = " ".join(words).removesuffix("'s")
    if len(token) < 3 or token in _T_GENERIC or words[0] in _T_STOP_NAME:
        return None
    return token


def _t_front_rules(
    head: str, lower: str, statements: list[tuple[int, int, str]]
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], dict[str, int]]:
    """The first candidates of :func:`_t_candidates` (found, explicit ones, bonus): at each
    statement's object a name after a head noun ("a novel framework, PARL": explicit), names apposed
    ("ClimODE, a ..."), the name-like object ("we propose FooNet to ..."); each name-like word in
    parentheses, or before them with its long form inside; each ", X" or ": X" after a head noun
    that a naming word or an introducing statement comes before. The compiled scan's front() finds
    the same (and calls :func:`_t_paren_defined` and :func:`_t_comma_named` itself)."""
    found: list[tuple[str, int]] = []
    explicit: list[tuple[str, int]] = []
    bonus: dict[str, int] = {}
    for _, j, verb in statements:
        obj = j
        end = head.find(". ", obj)
        end = len(head) if end == -1 else end
        m = _t_after_head_noun_of(head, obj)  # "a novel framework, PARL", "a GPT based model, Duolando"
        if m is not None:
            explicit.append((m.group("n"), m.start("n")))
        found += _t_apposed(head, obj, end)  # "we address these limitations with ClimODE, a ..."
        m = _T_NAME_AT.match(head, obj)  # "we propose FooNet to ..."
        if m is not None:
            found.append((m.group("n"), m.start("n")))
            token, after = m.group("n"), head[m.end() : m.end() + 2]
            if (  # what is proposed, more than a part defined later ("TimeMixer ... with PDM"); not
                # the first word of a longer phrase ("PINN Adaptive ...", "Context-Aware Multiple ...")
                verb in _T_INTRO_VERBS
                and not (after[:1] == " " and after[1:].isupper())
                and not _T_TITLE_COMPOUND.fullmatch(token)
            ):
                bonus[token] = max(bonus.get(token, 0), _T_OBJECT_BONUS)
    i = head.find("(")
    while i != -1:  # "... Completion Policy (SSCP)", "Mutual Scoring (MuSc)"
        m = _T_NAME_AT.match(head, i + 1)
        if m is not None:
            found.append((m.group("n"), m.start("n")))
        elif head[i - 1 : i] == " ":  # "T-MARS (Text Masking and Re-Scoring)": a name, then its long form
            defined = _t_paren_defined(head, i)
            if defined is not None:
                found.append(defined)
                bonus[defined[0]] = max(bonus.get(defined[0], 0), _T_DEFINED_BONUS)
        i = head.find("(", i + 1)
    commas = list(_T_COMMA_CAPITAL.finditer(head)) if "," in head else []  # (a memchr first: see _t_has)
    if _t_has(head, ": "):
        commas = sorted(commas + list(_T_COLON_CAPITAL.finditer(head)), key=lambda m: m.start())
    for m in commas:  # "a novel approach, GeneOH Diffusion, ...", "dataset, EQA-MX"
        named = _t_comma_named(head, lower, statements, m.start())
        if named is not None:
            found.append(named)
    return found, explicit, bonus


def _t_paren_defined(head: str, i: int) -> tuple[str, int] | None:
    """(name, where its word starts) for a name-like word right before the "(" at ``i`` whose
    parentheses hold its long form ("T-MARS (Text Masking and Re-Scoring)"), else None."""
    at = head.rfind(" ", 0, i - 1) + 1
    m = _T_NAME_AT.fullmatch(head, at, i - 1)
    close = head.find(")", i, i + 120)
    if m is not None and close != -1 and m.group("n") not in _T_GENERIC:
        inside = head[i + 1 : close]
        long = _schwartz_hearst(m.group("n"), inside)
        if long is not None and long == inside.strip() and " " in long:
            return m.group("n"), at
    return None


def _t_comma_named(
    head: str, lower: str, statements: list[tuple[int, int, str]], pos: int
) -> tuple[str, int] | None:
    """The name after the ", " or ": " at ``pos`` when a head noun comes before it and a naming word
    before that ("dataset, EQA-MX") or it is a colon in an introducing statement ("... model:
    GraphChef"), else None."""
    noun = head[head.rfind(" ", 0, pos) + 1 : pos].lower()
    if noun in _T_HEAD_NOUN_ANY:
        n = _T_NAME_AT.match(head, pos + 2)  # a name-like word, not "model, Claude 2"
        before = lower[max(0, pos - 60) : pos].split()[-6:]
        if n is not None and (
            any(w.startswith(_T_NAMING) for w in before)  # "dataset, EQA-MX"
            # "we propose a new self-explainable Graph Neural Network (GNN) model: GraphChef"
            or (head[pos] == ":" and _t_in_statement(head, statements, pos))
        ):
            return n.group("n"), n.start("n")
    return None


def _t_candidates(
    head: str, lower: str, statements: list[tuple[int, int, str]], named: list[tuple[str, int]]
) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """Name candidates with their positions, and the bonus of explicit ones. Looked for where a
    name is introduced: after "called / named / dubbed / termed / coined / namely / refer to as",
    after "propose / introduce / present" ("we present Eureka, a ..."), at the object of each
    contribution statement, after a head noun there ("a novel framework, PARL"), in parentheses in
    its sentence ("... Policy (SSCP)"), in a project URL; with no statement, in the opening."""
    _t_scan()
    front = _t_front_c(head, lower, statements) if _t_front_c is not None else None
    found, more, bonus = front if front is not None else _t_front_rules(head, lower, statements)
    explicit = list(named) + more
    for token, start in explicit:
        token = _t_explicit(token)
        if token is None:
            continue
        after = _T_ACRONYM_AFTER.match(head, start + len(token))
        if (
            after is None
            and not (_t_camel(token) or token.replace("-", "").isupper())
            and head[start + len(token) : start + len(token) + 1] not in (",", ":")
            # nor "we propose the MAZero algorithm, which ... Monte Carlo Tree Search (MCTS)"
            and not (" " not in token and _t_next_word(head, start + len(token)) in _T_HEAD_NOUNS)
        ):
            # "named Physics guided Neural Network for Air Quality Prediction (AirPhyNet)"; not
            # "named FasterViT, with a focus on ... vision (CV)": FasterViT is a name already, nor
            # "we introduce Ferret, a new Multimodal Large Language Model (MLLM)": so is Ferret
            paren = head.find(" (", start + len(token), start + len(token) + 80)
            if paren != -1 and ". " not in head[start + len(token) : paren]:
                after = _T_ACRONYM_AFTER.match(head, paren)
        if (
            after
            and len(after.group(1)) >= 3
            and after.group(1) not in _T_GENERIC
            # not "the R-EDL (Relaxed-EDL) method": a name, then its longer spelling
            and not (len(after.group(1)) > len(token) and _T_NAME_AT.fullmatch(token))
        ):
            # "Video Diffusion Transformer (VDT)": VDT; not "Instructive Decoding (ID)": a
            # two-letter acronym is no name; the phrase is (nor a field's acronym: MLLM)
            token, start = after.group(1), after.start(1)
        found.append((token, start))
        # a name of someone else's work ("a newly-arising method named Evidential Deep Learning
        # (EDL)") or of a task ("we introduce X (IOD), a new task that ...") counts less
        weak = not _t_ours(lower, start) or _T_TASK.match(head, start + len(token))
        bonus[token] = max(bonus.get(token, 0), 8 if weak else 10)
    if _t_has(head, "://"):  # a project page ending in the name (github.com/x/FreeReg)
        for m in _T_URL_NAME.finditer(head):
            token = m.group(1).removesuffix(".git")
            if not any(c.isupper() for c in token):  # github.com/x/ovor: the text's OVOR
                at = lower.find(" " + token.lower())
                if at == -1 or head[at + 1 : at + 1 + len(token)].islower():
                    continue  # (shown as "Pgdvs", "Cvdm", such page-only names read badly)
                token = head[at + 1 : at + 1 + len(token)]
            if token in _T_STOP_NAME:
                continue
            at = head.find(token)
            if at == -1:
                at = lower.find(token.lower())
                if at == -1:
                    continue
                token = head[at : at + len(token)]
            found.append((token, at))
            bonus[token] = bonus.get(token, 0) + 4
    if not statements:  # "Our method, FLATTEN, ...", "Neuroformer is a ...": name-like words of the opening
        found += _t_opening_names(head, min(len(head), _T_NO_STATEMENT))
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for word, start in found:
        if start and (head[start - 1].isalnum() or head[start - 1] in "-\\"):
            continue  # inside a word, or a LaTeX command
        token = word.rstrip("-*_").removesuffix("'s")  # (_ZeroFlow_: markdown emphasis)
        if len(token) < 3 or token in _T_GENERIC or ("-" in token and _t_compound_adjective(token)):
            continue
        end = start + len(token)
        if head[end : end + 1] in ("'", "’") and head[end + 1 : end + 2].isalnum():
            continue  # SODA'22: a venue and year, not a name
        if head[end : end + 2] in (" 2", " 3", " 4") and not head[end + 2 : end + 3].isalnum():
            token = head[start : end + 2]  # NaturalSpeech 2
        out.append((token, start))
        if token not in seen and token not in bonus:
            seen.add(token)
            if _t_after_head_noun(head, start):
                bonus[token] = 10
    return out, bonus


def _t_name(
    head: str, lower: str, statements: list[tuple[int, int, str]], named: list[tuple[str, int]]
) -> tuple[str, int] | None:
    """The name the abstract gives its contribution (SAEBench, BESA, PassUntil) and where it is.

    Candidates, looked for in head[lo:hi] (around the contribution statements), are CamelCase,
    acronym-like or digit-bearing words (and Title-Case hyphenated ones such as Tree-Planner, when
    introduced), and any Capitalised word the text introduces explicitly ("..., called Zipformer",
    "we present Eureka, a ...", "our method, FLATTEN, ..."). An explicit introduction scores most,
    then "we propose/introduce/call ..." in the words before, an appositive ("X, a ..."), a
    Title-Case long form "(X)", a project URL ending in the name, and repeats. Common field acronyms
    (LLM, GNN, RL ...) are never the name.
    """
    found, bonus = _t_candidates(head, lower, statements, named)
    if not found:
        return None

    def introduced_at(pos: int) -> bool:  # "propose", "introduce", "call" ... in the 5 words before
        for w in lower[max(0, pos - 50) : pos].split()[-5:]:
            if w.startswith(_T_NAMING):
                return True
        return False

    best: tuple[int, int, str, int] | None = None
    seen: set[tuple[str, int]] = set()
    for token, start in found:  # each place a token was found: "(SaNN)" defines it, a later "SaNN" not
        if (token, start) in seen:
            continue
        seen.add((token, start))
        introduced = bonus.get(token, 0) >= 10 or introduced_at(start)
        if (
            not introduced
            and token not in bonus
            and "-" in token
            and token[1:2].islower()
            and token.split("-", 1)[0][1:].islower()
        ):
            continue  # Title-Case compounds (Group-Aware) are names only when introduced
        tail = head[start + len(token) : start + len(token) + 5].lstrip("*")
        appositive = tail.startswith((", a ", ", an ", ": a ", ": an", " is a", " is an", ", the"))
        score = (5 if introduced else 0) + (2 if appositive else 0) + bonus.get(token, 0)
        if head[start - 1 : start] == "(" and (best is None or score + 16 > best[0]):  # (12 + 3 + 1 at most)
            long = _long_form(token, head[max(0, start - 200) : start - 1])
            if long:  # "the Single-Step Completion Policy (SSCP)": an acronym defined here
                titled = sum(w[:1].isupper() for w in long.split()) * 2 >= len(long.split())
                introduced = (
                    introduced
                    or introduced_at(start - 1 - len(long))
                    # "we design a framework ... based on the summarized retrieval (SuRe)"; not a
                    # plural (POMDPs): a background term
                    or (
                        token[-1] != "s"
                        and _t_in_statement(head, statements, start)
                        # not what it is for: "a framework to enhance open-domain QA (ODQA)"
                        and lower[max(0, start - 2 - len(long) - 30) : start - 2 - len(long)].split()[-2:-1]
                        != ["to"]
                    )
                )
                # "we propose implicit representation-driven image resampling (IRAD)": the long form
                # is what an introducing verb names, capitalised or not
                titled = titled or _t_named_by_verb(lower, start - 2 - len(long))
                if _t_own_kind(head, lower, start, long):  # "this Decoding by ... (DoLa) approach"
                    introduced = titled = True
                if bonus.get(token, 0) < 8:  # (an explicit one has its own: "Hierarchical Attention (HAT)")
                    score += (7 if titled else 2) if introduced else (2 if titled else -2)
        if not (introduced or appositive or token in bonus):
            continue  # an acronym of the background (LLMs, SAEs) is not the paper's name
        if best is not None and score + 4 <= best[0]:
            continue  # repeats (at most 3) and CamelCase (1) cannot make up the difference
        score += min(head.count(token), 3)
        if _t_camel(token):
            score += 1  # a coined CamelCase word (ScaledAdam) more than an initialism (PTQ)
        elif " " in token:
            score -= 1  # and more than a phrase of plain words ("the Markov Bridge Model")
        if best is None or score > best[0]:
            best = (score, -start, token, start)
    if best is None or best[0] < 3:
        return None
    return best[2], best[3]


def _t_first_sentence(head: str) -> str:
    end = head.find(". ", 0, 400)
    return _t_clip(head[:end] if end != -1 else _t_window(head, 0), 14)


# words that say what kind of thing a contribution is, not what it is about ("a data-driven approach")
_T_GENERIC_WORDS = _T_SMALL | frozenset(
    "approach approaches method methods framework frameworks model models algorithm algorithms technique "
    "techniques strategy strategies scheme system module setting settings problem problems task tasks "
    "way new novel simple general effective efficient more challenging practical key recent "
    "challenge challenges question questions issue issues limitation limitations gap gaps core main major "
    "fundamental important critical central crucial open aspect aspects contribution contributions "
    "direction directions two three several various different".split()
)


def _t_says_something(words: list[str]) -> bool:
    """At least two words of the phrase say what it is about."""
    said = 0
    for w in words:
        if w.lower().strip(",;:()") not in _T_GENERIC_WORDS:
            said += 1
            if said == 2:
                return True
    return False


def _t_rule_description(
    head: str, name: str | None, at: int, statements: list[tuple[int, int, str]]
) -> str:
    """What the paper contributes, by the rules: the long form of the name's acronym, else the
    appositive after the name ("X, a ..."), else the object of the first contribution statement
    that names something ("we propose ...", not "we address this gap"), else the first sentence.
    A phrase with cut math (an odd number of ``$``) is passed over."""
    if name is not None:
        after = _t_window(head, at + len(name))
        if after[:1] == ")":  # "... Single-Step Completion Policy (SSCP)": the long form
            long = _long_form(name, head[max(0, at - 200) : at - 1])
            if long:
                return long
            after = after[1:]
    if name is not None:
        m = _T_APPOSITION.match(after)
        if m:
            rest = after[m.end() :]
            phrase = _t_clip(rest[_t_lead_end(rest) :])
            words = phrase.split()  # not "X, which ...": a clause, not a description
            if (
                len(words) >= 2
                and words[0].lower() not in _T_BREAK_WORDS
                and not phrase.count("$") % 2
                and _t_says_something(words)
            ):
                return _capitalize(phrase)
    for _, j, _verb in statements:
        phrase = _t_clip(_t_window(head, j))
        if name is not None and phrase.startswith(name):
            phrase = phrase[len(name) :].lstrip(" ,:(")
        words = phrase.split()
        first = words[0].lower() if words else ""
        pointer = first in _T_ANAPHORA or first in _T_BREAK_WORDS  # "this gap", "which ..."
        if len(words) >= 2 and not pointer and not phrase.count("$") % 2 and _t_says_something(words):
            return _capitalize(phrase)
    return _capitalize(_t_first_sentence(head))


# the words of a statement's lead, before what it states ("In this paper, we present")
_T_LEAD_WORDS = frozenset(
    "in this paper work article study we here to end first also then further thus".split()
)
_T_LEAD_VERBS = ("propos", "introduc", "present", "describ", "develop", "design", "offer", "releas", "build")


def _t_only_lead(phrase: str) -> bool:
    """The phrase is only a statement's lead ("We introduce", "In this paper, we present")."""
    words = phrase.lower().replace(",", " ").split()
    return bool(words) and all(w in _T_LEAD_WORDS or w.startswith(_T_LEAD_VERBS) for w in words)


def _t_after_name(head: str, end: int) -> str:
    """The phrase right after a name ("MVDream, a diffusion model that ..." -> "diffusion model";
    "TOSS, which introduces text to ..." -> "introduces text to ..."), or "" (the name alone)."""
    after = _t_window(head, end)
    m = _T_APPOSITION.match(after)
    if m is None:
        return ""  # "Lemur and Lemur-Chat, ...": no phrase about the name
    rest = after[m.end() :]
    if rest.startswith(("which ", "that ")):
        rest = rest.split(" ", 1)[1]
    phrase = _t_clip(rest[_t_lead_end(rest) :])
    return phrase if not phrase.count("$") % 2 else ""


def _t_description(head: str, name: str | None, at: int, statements: list[tuple[int, int, str]]) -> str:
    """What the paper contributes, as a short phrase: the rules' phrase (:func:`_t_rule_description`)
    when it is the long form of the name's acronym (followed by the key phrase's words it lacks:
    :func:`_t_long_form_and_key`), or holds a coined word the key phrase lacks in a phrase that names
    the topic ("SWE-bench, an evaluation framework ..."), or opens with the text's subject and the key
    phrase is short; else the rules' phrase or the key-phrase title ("Semi-supervised learning setting"
    -> "Collecting gold-standard phenotype data with ACPs"; with no name, :func:`_t_key_and_rule`),
    whichever the chooser prefers (:func:`_t_rules_win`, told whether the rules' phrase opens with a
    term the abstract repeats: "Beam Enumeration to ..."). The key phrase is asked for every paper:
    its word pass is compiled (retrieval/_keyphrase.c)."""
    phrase = _t_rule_description(head, name, at, statements)
    hook = _describe()
    if hook is None:
        return phrase
    if name is not None and head[at + len(name) : at + len(name) + 1] == ")" and phrase == _long_form(
        name, head[max(0, at - 200) : at - 1]
    ):  # "SCM: Structural causal model for Dynamic Graph Neural Networks (DyGNNs)"
        return _t_long_form_and_key(phrase, head, name, hook)
    module = _keyphrase_module()
    opens = getattr(module, "opens_with_a_term", None)
    own_term = opens is not None and opens(phrase, head)  # "Beam Enumeration to ...": the chooser's say
    key = _t_key(hook, head, name)
    if not key:
        return phrase
    coins = getattr(module, "coins_a_word_missed", None)
    if coins is not None and coins(phrase, key, name):
        # only a phrase about what the text repeats: not "ICL in one of its simplest setups", "Key
        # recent innovations in NLP to do so" (ICL, NLP are not the paper's own), "FLAN-MoE-32B:
        # Surpasses the performance of Flan-PaLM-62B ..."
        # (a short one is kept: "MoFit: Caption-free MIA framework")
        topical = getattr(module, "names_the_topic", None)
        if topical is None or phrase.count(" ") < 3 or topical(phrase, head):
            return phrase
    subject = getattr(module, "opens_with_its_subject", None)
    if subject is not None and key.count(" ") < 2 and subject(phrase, head):
        return phrase  # "Sparse autoencoders are widely used to ...", not "Trained transformers"
    itself = getattr(module, "opens_with_a_name", None)
    term = itself(phrase, name) if itself is not None else None
    if term and term.casefold() not in key.casefold():
        keyed = f"{_capitalize(term)}: {_capitalize(key)}"  # "∞-Diff: Infinite-dimensional Hilbert space ..."
    elif name is None:
        # "Beam Enumeration to exhaustively enumerate ...": the term leads the key phrase
        keyed = (own_term and _t_term_and_key(phrase, key)) or _t_key_and_rule(key, phrase, head)
    else:
        keyed = _capitalize(key)
    return phrase if _t_rules_win(head, phrase, keyed, own_term, name is not None) else keyed


# The chooser: the rules' phrase or the key phrase's title, by what each looks like in the text.
# A logistic model of "the rules' phrase shares more content words with the real title" (weighted by
# the difference of the two Jaccards, ties left out), fitted on the even half of the ICLR 2024 title
# benchmark (the 766 of its papers whose rules' phrase is neither an acronym's long form nor holds a
# coined word the key phrase lacks, and whose two titles score differently) and checked on the odd
# half; refitted when the key phrase's word model changed (keyphrase-2026.13): no common word with
# the real title 4.0 -> 3.8 % (even), 4.2 -> 4.1 % (odd); median Jaccard 0.286 on both; mean
# 0.3111 -> 0.3133 (even), 0.3121 -> 0.3134 (odd). Each candidate's look
# (:func:`_t_look`): log(1 + its words), the mean log count in the text of its content words' stems,
# the share of those said 3 times or more, the share in the first sentence, where its first two words
# are in the text (0 to 1; 1 when not found), its clause words (up to 3), its share of generic words,
# its share of content words.
# The model takes the rules' phrase's look less the key's, then the rules' phrase's own place, generic
# and content shares, the two titles' word overlap, and whether the rules' phrase opens with a term
# the text repeats, the title has a name, and the rules' phrase is only the first sentence.
_T_CHOOSE_BIAS = -0.583
_T_CHOOSE_DIFF = (0.586, 0.664, 1.340, 0.705, 0.634, -0.667, -0.794, 1.454)
_T_CHOOSE_RULES = (-1.816, 1.157, 0.986)  # its place, generic share, content share
_T_CHOOSE_OVERLAP, _T_CHOOSE_TERM, _T_CHOOSE_NAMED, _T_CHOOSE_FIRST = 0.231, -1.160, -0.210, -1.776
_T_CHOOSE_STOP = frozenset(
    "a an the of for and or to in on with by from via at as into is are be been that this these which its "
    "it we our their than can such while when where who how not".split()
)
_T_CHOOSE_CLAUSE = frozenset(
    "is are was were be been has have had can could may might will would aims tends remains which that "
    "while whereas who because".split()
)
_T_CHOOSE_STRIP = ".,;:()[]\"'“”*"


_T_LOGS = [0.0] + [math.log(i) for i in range(1, 64)]


def stem_count(word: str, lower: str) -> int:
    """How often ``lower`` (a lowercased text) says ``word`` (lowercased, not empty): its stem, the
    word less a plural 's' and its last two letters (at least four kept), counted as a substring."""
    stem = word[:-1] if word[-1] == "s" else word
    return lower.count(stem[: max(4, len(stem) - 2)])


_t_look_c: object = _UNSET


def _t_look_compiled():  # noqa: ANN202
    """retrieval._keyphrase.look (the same numbers as :func:`_t_py_look` for ASCII texts: the
    chooser's cost per ICLR title 150k -> 100k instructions), or None when it is not built or the
    build predates it."""
    global _t_look_c
    if _t_look_c is _UNSET:
        try:
            from retrieval import _keyphrase  # type: ignore[attr-defined]
        except ImportError:
            _t_look_c = None
        else:
            _t_look_c = getattr(_keyphrase, "look", None)
    return _t_look_c


def _t_look(title: str, lower: str, first: str, counts: dict[str, int]) -> tuple[float, ...]:
    """What a candidate looks like in the text (``lower``: the title region lowercased, ``first``:
    its first sentence), as the chooser's model reads it (see above): the compiled pass when it
    reads the text (ASCII), else :func:`_t_py_look`."""
    look = _t_look_c if _t_look_c is not _UNSET else _t_look_compiled()
    if look is not None:
        numbers = look(title, lower, first, _T_CHOOSE_STOP, _T_CHOOSE_CLAUSE, _T_GENERIC_WORDS)  # type: ignore[operator]
        if numbers is not None:
            return numbers
    return _t_py_look(title, lower, first, counts)


def _t_py_look(title: str, lower: str, first: str, counts: dict[str, int]) -> tuple[float, ...]:
    """:func:`_t_look` in Python (the definition). ``counts`` caches each content word's count in
    the text (the two candidates share words)."""
    n = c = often = in_first = clause = generic = 0
    logs = 0.0
    opening: list[str] = []
    stop, clauses, generics, strip = _T_CHOOSE_STOP, _T_CHOOSE_CLAUSE, _T_GENERIC_WORDS, _T_CHOOSE_STRIP
    for w in title.lower().split():
        w = w.strip(strip)
        if not w:
            continue
        n += 1
        if n <= 2:
            opening.append(w)
        if w in clauses:
            clause += 1
        if w in generics:
            generic += 1
        if len(w) > 3 and w not in stop:
            c += 1
            times = counts.get(w)
            if times is None:
                times = counts[w] = stem_count(w, lower)
            if times:
                logs += _T_LOGS[times] if times < 64 else math.log(times)
                if times >= 3:
                    often += 1
            if w in first:
                in_first += 1
    if not n:
        return (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    at = lower.find(" ".join(opening)) if n >= 2 else -1
    return (
        _T_LOGS[n + 1] if n < 63 else math.log(1 + n),
        logs / c if c else 0.0,
        often / c if c else 0.0,
        in_first / c if c else 0.0,
        at / len(lower) if at >= 0 else 1.0,
        float(min(clause, 3)),
        generic / n,
        c / n,
    )


def _t_rules_win(head: str, phrase: str, keyed: str, own_term: bool, named: bool) -> bool:
    """Whether the chooser's model prefers the rules' phrase to the key phrase's title ``keyed``."""
    return _t_choice(head, phrase, keyed, own_term, named) > 0


def _t_choice(head: str, phrase: str, keyed: str, own_term: bool, named: bool) -> float:
    """The chooser's score (log-odds that the rules' phrase is the better title)."""
    lower = head.lower()
    first_end = lower.find(". ")
    first = lower[: first_end if first_end > 0 else 400]
    counts: dict[str, int] = {}
    rules = _t_look(phrase, lower, first, counts)
    key = _t_look(keyed, lower, first, counts)
    d = _T_CHOOSE_DIFF
    z = (
        _T_CHOOSE_BIAS
        + d[0] * (rules[0] - key[0])
        + d[1] * (rules[1] - key[1])
        + d[2] * (rules[2] - key[2])
        + d[3] * (rules[3] - key[3])
        + d[4] * (rules[4] - key[4])
        + d[5] * (rules[5] - key[5])
        + d[6] * (rules[6] - key[6])
        + d[7] * (rules[7] - key[7])
    )
    z += _T_CHOOSE_RULES[0] * rules[4] + _T_CHOOSE_RULES[1] * rules[6] + _T_CHOOSE_RULES[2] * rules[7]
    mine, theirs = set(phrase.lower().split()), set(keyed.lower().split())
    z += _T_CHOOSE_OVERLAP * len(mine & theirs) / len(mine | theirs)
    if own_term:
        z += _T_CHOOSE_TERM
    if named:
        z += _T_CHOOSE_NAMED
    if 0 <= rules[4] * len(lower) <= 1.5:  # it opens the text: the first sentence (the rules' last resort)
        z += _T_CHOOSE_FIRST
    return z


# The chooser's block: what a title without a name says, from both the key phrase and the rules' phrase.
_T_RULE_WORDS = 4  # the rules' phrase's words kept after the key phrase (its core: real titles are short)
_T_RULE_TIMES = 2  # a word of that core the key phrase lacks is added only when the text repeats it
_T_RULE_STOPS = frozenset(
    "is are was were be been has have had can could may might will would which that where while whereas "
    "who whose because since thereby to".split()
)


def _t_term_and_key(phrase: str, key: str) -> str:
    """The term the rules' phrase opens with (its core, :func:`_t_rule_core`: "Beam Enumeration" of
    "Beam Enumeration to exhaustively enumerate ...") and after a colon the key phrase, cut before a
    connector of its own to fit the title limit, when the key phrase lacks the term; else ""."""
    core = _t_rule_core(phrase)
    if not core or core.casefold() in key.casefold():
        return ""
    words = _capitalize(key).split()
    room = TITLE_LIMIT - len(core) - 2
    while len(" ".join(words)) > room:
        cut = [i for i in range(2, len(words)) if words[i].lower() in _T_JOINS]
        if not cut:
            return ""
        del words[cut[-1] :]
    return f"{_capitalize(core)}: {' '.join(words)}"


def _t_rule_core(phrase: str) -> str:
    """The opening words of the rules' phrase, up to its first comma or clause word ("Sampling complex
    distributions is an important ..." -> "Sampling complex distributions"; "In deep metric learning,
    the ..." -> "deep metric learning"), at most :data:`_T_RULE_WORDS`, without generic or small words
    before its first word that says something ("Problem of curriculum RL" -> "curriculum RL"), nor
    dangling ones after its last, nor, when the cap cut it, an unfinished last phrase ("Transformers
    with a single"); "" when fewer than two words are left."""
    words: list[str] = []
    pieces = phrase.split()
    capped = len(pieces) > _T_RULE_WORDS
    for w in pieces[:_T_RULE_WORDS]:
        bare = w.rstrip(",;:.")
        if w[:1] == "(" or bare.lower() in _T_RULE_STOPS:
            capped = False
            break
        words.append(bare)
        if bare != w:
            capped = False
            break
    if capped:
        for i in range(len(words) - 1, max(len(words) - 3, 0), -1):
            if words[i].lower() in _T_OPENERS or words[i].lower() in _T_ARTICLES:
                del words[i:]
                break
    while words and words[0].lower() in _T_GENERIC_WORDS:
        words.pop(0)
    while words and words[-1].lower() in _T_DANGLING:
        words.pop()
    return " ".join(words) if len(words) >= 2 else ""


def _t_key_and_rule(key: str, phrase: str, head: str) -> str:
    """The title of an abstract with no name: the key phrase (what the abstract repeats), and after a
    colon the core of the rules' phrase (:func:`_t_rule_core`: what its statement or first sentence
    says) when that core holds a content word of four letters or more the key phrase lacks and the two
    fit in the title limit ("Parallel Tempering of restricted Boltzmann machines (RBM): Sampling complex
    distributions"); else the key phrase alone. Two views of the topic: when the key phrase misses the
    real title's words the statement's often has them: of the ICLR 2024 papers the rules find no name
    in, those whose title shares no content word with the real one went from 6.4 to 5.2 % on the half
    the two numbers above were chosen on, 9.1 to 7.4 % on the other."""
    key = _capitalize(key)
    core = _t_rule_core(phrase)
    if not core or len(key) + 2 + len(core) > TITLE_LIMIT:
        return key
    lower = key.casefold()
    text = head.casefold()
    for w in core.casefold().split():
        stem = w[:-1] if w[-1] == "s" else w
        if len(w) > 3 and w not in _T_GENERIC_WORDS and stem not in lower:
            if stem_count(w, text) >= _T_RULE_TIMES:
                return f"{key}: {_capitalize(core)}"
    return key


def _t_key(hook, head: str, name: str | None) -> str:  # noqa: ANN001
    """The key phrase of the abstract (retrieval/keyphrase.py) less a name of several words it
    holds, or "" when there is none or the hook fails (it is optional: the rules' phrase stands)."""
    try:
        key = hook(head, name)
    except Exception:
        logger.exception("keyphrase.describe failed; keeping the rules' phrase")
        return ""
    if key and name is not None and " " in name:  # a name of several words may be in its key phrase
        key = _t_without_name(key, name)
    return key or ""


def _t_long_form_and_key(long: str, head: str, name: str, hook) -> str:  # noqa: ANN001
    """The long form of the name's acronym, and the key phrase's words it lacks, joined by the
    text's own connector when the key phrase holds the long form ("Rayleigh Quotient Graph Neural
    Network for graph-level anomaly detection"), else by "for" ("Upper Confidence Bound for efficient
    CVaR RL algorithm in low-rank MDPs"). A long form alone spells out the name and says little of
    what the paper is about; on the ICLR 2024 titles the pair shares a word with the real title more
    often (no common word 6.8 -> 5.3 % on the half it was tuned on, 8.3 -> 6.7 % on the other). The
    key phrase is cut before a connector of its own to fit the title limit; the long form stays
    alone when nothing of two words or more is left, when the key phrase repeats only the long form
    or holds the name ("LDM-based"), or when it holds the long form with no connector after it (the
    long form is then its topic)."""
    key = _t_key(hook, head, name)
    if not key:
        return long
    at = key.casefold().find(long.casefold())
    if at != -1:
        words = key[at + len(long) :].split()
        while words and (words[0][:1] == "(" or words[0][-1:] == ")"):
            words.pop(0)  # the acronym after its long form
        if len(words) < 3 or words[0].lower() not in _T_JOINS:
            return long
        join = words.pop(0)
    else:
        known = set(long.casefold().split())
        words = key.split()
        if all(w.casefold() in known or w.lower() in _T_JOINS for w in words):
            return long
        join = "for"
    if name.casefold() in " ".join(words).casefold():  # ("LDM-based ..." would cut the title at LDM)
        return long
    room = TITLE_LIMIT - len(name) - len(long) - len(join) - 4  # "SCM: " + long + " for " + words
    while len(" ".join(words)) > room:
        cut = [i for i in range(2, len(words)) if words[i].lower() in _T_JOINS]
        if not cut:
            return long
        del words[cut[-1] :]
    return f"{long} {join} {' '.join(words)}" if len(words) >= 2 else long


def _t_without_name(key: str, name: str) -> str:
    """The key phrase less the name of several words it holds ("Linear Log-Normal Attention of
    transformer models" -> "transformer models"): the words after the name, without its acronym and
    the connector that joined them ("Batch Calibration (BC) for large language models"), else those
    before it; "" when neither part has two words."""
    at = key.casefold().find(name.casefold())
    if at == -1:
        return key
    after = key[at + len(name) :].split()
    while after and (after[0].lower() in _T_JOINS or after[0][:1] == "(" or after[0][-1:] == ")"):
        after.pop(0)
    before = key[:at].split()
    while before and before[-1].lower() in _T_JOINS:
        before.pop()
    part = after if len(after) >= 2 else before
    return " ".join(part) if len(part) >= 2 else ""


_T_JOINS = frozenset("for of via with in on from under over through".split())

_T_MARKUP = _LazyRe(
    r"\\(?:emph|textit|textbf|texttt|textsc|textsf|textrm|mathrm|mathsf|mathtt|text)\{([^{}$\\]*)\}|\{\\(?:bf|it|em|sc|tt)\s+([^{}$\\]*)\}"
    r"|\*\*|__"
)  # \textbf{DoLa}, {\bf FreeDyG}, **BaDExpert**
# $\textit{DoLa}$, $\textit{Open-endedness via Models of ...}$: the words
_T_DOLLAR_WORD = _LazyRe(r"\$([A-Za-z][\w-]*(?: [A-Za-z][\w-]*){0,12})\$")


_T_DOT_CAPITAL = _LazyRe(r"\.(?=[A-Z][a-z])")  # (a literal first: the engine's fast path)


def _t_unglue(head: str) -> str:
    """A sentence end with no space after it gets one ("... editing.Our method, FLATTEN, ...": two
    sentences): a full stop after a lowercase letter or ")" and before a capital and a lowercase
    letter. (A regex with that lookbehind costs several times more: it has no literal to skip to.)"""
    _t_scan()
    glued = _t_glued_c
    ends = glued(head) if glued is not None else _t_glued(head)
    if not ends:
        return head
    parts: list[str] = []
    last = 0
    for end in ends:
        parts.append(head[last:end])
        last = end
    parts.append(head[last:])
    return " ".join(parts)


def _t_glued(head: str) -> list[int]:
    """Where :func:`_t_unglue` puts a space, by the regex (the compiled scan's glued() finds the same)."""
    ends: list[int] = []
    for m in _T_DOT_CAPITAL.finditer(head, 1):
        before = head[m.start() - 1]
        if before == ")" or "a" <= before <= "z":
            ends.append(m.end())
    return ends


def _t_has(text: str, needle: str) -> bool:
    """``needle in text``, its first character looked for first. (CPython reads the text character
    by character for a needle of two or more characters, ~1 ns each, 3 µs for ": " in a title
    region; for one character it calls memchr, ~30x faster: most regions lack the first character.)"""
    return needle[0] in text and needle in text


def _t_lower(head: str) -> str:
    """``head.lower()`` with the same length, so positions found in one index the other."""
    lower = head.lower()
    if len(lower) != len(head):  # a few characters (İ) lowercase to two
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in head)
    return lower


def _t_markup_words(m: re.Match[str]) -> str:
    return m.group(1) or m.group(2) or ""


def _t_head(abstract: str) -> str:
    """The title region the rules read (and the keyphrase hook gets): see the hook's contract."""
    head = abstract[:_TITLE_HEAD]
    if len(abstract) > _TITLE_HEAD:
        head = head[: head.rfind(" ") + 1] or head  # no word cut at the end
    if "\n" in head or "\t" in head:
        head = head.replace("\n", " ").replace("\t", " ")
    if "\\" in head or _t_has(head, "**") or _t_has(head, "__"):  # \textbf{DoLa}, **BaDExpert**: plain words
        if (  # (what _T_MARKUP needs: its scan tries every character)
            "**" in head
            or "__" in head
            or "{\\" in head
            or "\\emph" in head
            or "\\text" in head
            or "\\math" in head
        ):
            head = _T_MARKUP.sub(_t_markup_words, head)
            if "\\" in head:  # \textbf{\textit{Thought Propagation} (TP)}: the outer one too
                head = _T_MARKUP.sub(_t_markup_words, head)
        if "$" in head:
            head = _T_DOLLAR_WORD.sub(r"\1", head)
    return " " + _t_unglue(head)


# an acronym in parentheses after the words it stands for: a title spells a term once
_T_ACRONYM_ASIDE = _LazyRe(r" \(((?=[^()\s]{0,20}[A-Z])[^()\s]{1,20})\)(?=[\s,.;:]|$)")


def _t_without_asides(description: str, head: str) -> str:
    """``description`` less the acronyms in parentheses after the words they stand for
    ("Conflict-Driven Clause Learning (CDCL)"), but for one the field uses (LLMs, RL, SGD): a title
    says a term once, and by its acronym only when that is how every paper says it."""

    def aside(m: re.Match[str]) -> str:
        acronym = m.group(1)
        if (
            acronym in _T_GENERIC
            or not _long_form(acronym, description[max(0, m.start() - 200) : m.start()])
        ):
            return m.group(0)  # (an aside that is not the words' acronym: "... models (Nemesis)")
        return ""

    return _T_ACRONYM_ASIDE.sub(aside, description)


# words that place what follows among the work before the paper's ("Recent text-to-3D generation"):
# a title names its topic, not its age
_T_DATING = frozenset(
    "recent current existing modern traditional conventional previous standard typical "
    "popular mainstream state-of-the-art".split()
)


def _t_without_dating(description: str) -> str:
    """``description`` less a first word of :data:`_T_DATING`, when two words or more stay
    ("Current protein generative models on ..." -> "Protein generative models on ...")."""
    first, _, rest = description.partition(" ")
    if first.lower() in _T_DATING and " " in rest:
        return rest
    return description


def _t_gerund(verb: str) -> str:
    """The -ing form of a regular verb ("solve" -> "solving", "detect" -> "detecting"; "infer" ->
    "inferring", the one stressed last syllable among the verbs asked)."""
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    if verb.endswith("fer") and len(verb) == 5:  # infer, refer, defer (not offer)
        return verb + "ring"
    return verb + "ing"


def _t_without_kind(description: str) -> str:
    """``description`` less an opening that only says what kind of thing it is, a generic word and
    "for" or "of" ("Framework for open-vocabulary action recognition" -> "Open-vocabulary action
    recognition", "Problem of anomaly detection in tabular data" -> "Anomaly detection in tabular
    data"), and an article after it, when two words or more stay."""
    words = description.split(" ", 2)
    if len(words) < 3 or words[0].lower() not in _T_GENERIC_WORDS:
        return description
    rest = words[2]
    if words[1] == "to":  # "Method to detect AI-generated content" -> "Detecting AI-generated content"
        verb, _, after = rest.partition(" ")
        module = _keyphrase_module()
        if verb.endswith("ing"):  # "Approach to adapting pre-trained large language models ..."
            pass
        elif verb in getattr(module, "_TO_VERBS", ()) and verb.isascii() and verb.islower():
            rest = f"{_t_gerund(verb)} {after}"
        else:
            return description
    elif words[1] not in ("for", "of"):
        return description
    first, _, after = rest.partition(" ")
    if first.lower() in _T_ARTICLES:
        rest = after
    return rest if " " in rest else description


# what a verb takes after it, not a noun: an object, a clause, a preposition ("allow the", "raises
# concerns" is not told; "contain both", "eliminates the need")
_T_OBJECT_OPENERS = frozenset(
    "the a an us them it that to our their its this these those both how whether what as on from in "
    "with by for beyond such some more new multiple".split()
)
_T_BARE_OBJECT = frozenset("the a an us them it".split())


def _t_without_comma_tail(title: str) -> str:
    """``title`` less a last lowercase word after a comma: a clause or a list the cut left at its
    first word ("... Partial Differential Equations, grounded", "... for GNNs, aiming"). Titles of
    five words or more; a name after the comma stays ("..., NoiseDiffusion")."""
    comma = title.rfind(", ")
    if comma == -1 or " " in title[comma + 2 :] or title.count(" ") < 4:
        return title
    if not title[comma + 2 :].islower():
        return title
    words = title[:comma].split()
    while len(words) > 4 and words[-1].lower().rstrip(",") in _T_NAMED_WORDS:  # "..., namely, regret"
        words.pop()
    return _t_finish(words, False)


def _t_without_verb_at_end(title: str, lower: str) -> str:
    """``title`` less a last word that the text (``lower``: the title region lowercased) uses only
    as a verb or a preposition: wherever it says the word, as a word, an object or a clause follows
    it (:data:`_T_OBJECT_OPENERS`, no punctuation between), at least once an article or a pronoun
    ("Convex relaxations of ReLU networks: Advanced relaxations allow" -> "... Advanced relaxations",
    "Their representations contain", "... of Hessian along"). Titles of four words or more; not a
    word in -ing (a noun as often: "... for policy learning")."""
    space = title.rfind(" ")
    last = title[space + 1 :]
    if title.count(" ") < 3 or not (last.isascii() and last.isalpha() and last.islower()):
        return title
    if last.endswith("ing"):
        return title
    n = len(last)
    bare = False
    at = lower.find(last)
    while at != -1:
        end = at + n
        before, after = lower[at - 1 : at], lower[end : end + 1]
        if not (before.isalnum() or before == "-" or after.isalnum() or after == "-"):  # the word itself
            if after != " ":
                return title  # it ends a phrase or a sentence: not only a verb
            stop = lower.find(" ", end + 1)
            following = lower[end + 1 : stop if stop != -1 else len(lower)].rstrip(".,;:)")
            if following not in _T_OBJECT_OPENERS:
                return title
            bare = bare or following in _T_BARE_OBJECT
        at = lower.find(last, end)
    if not bare:
        return title
    return _t_finish(title[:space].split(), False)


def _derive(abstract: str) -> str:
    head = _t_head(abstract)
    lower = _t_lower(head)
    statements, named = _t_sites(head, lower)
    found = _t_name(head, lower, statements, named)
    name, at = found if found else (None, -1)
    if name is not None and head[at - 1 : at] != "(":
        # the name won at a later mention ("we demonstrate that DGFS ..."): it is described where
        # it is defined, by its long form ("... Diffusion Generative Flow Samplers (DGFS)")
        defined = head.find(f"({name})")
        if defined != -1 and _long_form(name, head[max(0, defined - 200) : defined]):
            at = defined + 1
    description = _t_description(head, name, at, statements)
    if name is not None:
        at_name = description.casefold().find(name.casefold())
        if at_name > 0:  # "... model using latent diffusion, called PanoDiffusion": name first
            description = _T_CALLED.sub("", description[:at_name].rstrip(" ,(*")).rstrip(" ,(")
            if _t_only_lead(description):  # "We introduce MVDream, ...": what follows the name
                description = _t_after_name(head, at + len(name))
        elif at_name == 0:
            description = description[len(name) :].lstrip(" ,:(*)")
            description = description[_t_lead_end(description) :]
    if "(" in description:  # "Large Language Models (LLMs) for ...": the long form says it
        description = _t_without_asides(description, head)
    description = _t_without_kind(_t_without_dating(description))
    description = _capitalize(description)
    if name is None:
        title = description
    else:
        # a description of one word only when it is a compound ("ToG: Think-on-Graph")
        title = f"{name}: {description}" if len(description.split()) >= 2 or "-" in description[1:] else name
    if "$" in title or "\\" in title:
        title = _capitalize(strip_markup(title))  # LaTeX as Unicode, on the few words kept only
    if len(title) > TITLE_LIMIT:
        title = _t_finish(title[: TITLE_LIMIT + 1].split()[:-1], capped=True)
    title = _t_without_verb_at_end(_t_without_comma_tail(title), lower)
    return title if title[:1].isalnum() or any(c.isalnum() for c in title) else ""


def derive_title(abstract: str) -> str:
    """Derive a display title from an abstract (the plain-text corpus has no titles).

    Preference order:

    1. A contribution the abstract names: "We propose the Single-Step Completion Policy (SSCP)" ->
       ``SSCP: Single-Step Completion Policy``; "We introduce SAEBench, a comprehensive evaluation suite
       that ..." -> ``SAEBench: A comprehensive evaluation suite ...``.
    2. A term the authors coin: "... termed mutual information skill learning (MISL)" -> ``MISL: Mutual
       Information Skill Learning``; "... that we call teacher hacking" -> ``Teacher Hacking``.
    3. The object of the first "we propose/show that/study ..." statement: "we examine diverging
       preferences in human-labeled preference datasets" -> ``Diverging preferences in ...``.
    4. The first sentence, trimmed.

    Phrases are cut at a clause boundary to fit; only a trimmed sentence gets an ellipsis.

    Args:
        abstract: The abstract (LaTeX and markdown allowed).

    Returns:
        Plain text (LaTeX converted, no emphasis markers, nothing escaped: whoever shows it
        escapes), at most 90 characters, never empty ("Untitled" when the abstract has no text).
    """
    if not isinstance(abstract, str):
        abstract = "" if abstract is None else str(abstract)
    try:
        title = _derive(abstract)
    except Exception:  # a title heuristic must never break loading a corpus
        logger.exception("derive_title failed; falling back to the first words")
        title = ""
    title = _t_brackets(_restore_literals(_plain_sentence(title)).rstrip(" .;:,"))
    if not title:
        title = _ellipsize(" ".join(strip_markup(abstract).split()), TITLE_LIMIT)
    return title or "Untitled"


_T_OPEN, _T_CLOSE = "([", ")]"


def _t_brackets(title: str) -> str:
    """``title`` with every parenthesis and bracket paired: a phrase cut from the text can close one
    it never opened ("ITIT: InTegrating Image Text)", "TAB: Temporal Accumulated Batch
    Normalization), a novel SNN ...") or open one it never closes ("... processes (including EDM,
    DDIM"). A stray closer goes, and the title ends there when a clause or sentence follows it; the
    title ends before the word holding an opener never closed, unless fewer than two words would
    stay (then only the opener goes). Dangling last words ("with", "of") go as usual."""
    if not any(c in title for c in "()[]"):
        return title
    out: list[str] = []
    opened: list[int] = []  # where in ``out`` each bracket still open stands
    for i, c in enumerate(title):
        if c in _T_OPEN:
            opened.append(len(out))
        elif c in _T_CLOSE:
            if opened and out[opened[-1]] == _T_OPEN[_T_CLOSE.index(c)]:
                opened.pop()
            else:
                if title[i + 1 : i + 2] in (",", ".", ";", ":"):  # "Normalization), a novel ..."
                    break
                continue  # "Hopfield Network) for ...": the closer goes
        out.append(c)
    text = "".join(out)
    if opened:
        at = opened[0]
        word = text.rfind(" ", 0, at) + 1  # the start of the word holding the opener: "O(N n"
        parts = text[:word].split()
        cut = _t_finish(parts, False)  # (drops dangling last words from ``parts``)
        if len(parts) >= 2:
            text = cut
        else:
            kept = set(opened)
            text = "".join(c for k, c in enumerate(text) if k not in kept)
    return " ".join(text.split()).strip(" ,;:-–—")
