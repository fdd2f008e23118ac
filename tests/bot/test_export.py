"""bot.export: BibTeX that BibTeX and LaTeX both accept, Markdown, and JSON that parses back."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.export import (
    JSON_FORMAT,
    JSON_VERSION,
    ascii_fold,
    citation_key,
    citation_keys,
    latex_escape,
    parse_json,
    to_bibtex,
    to_json,
    to_markdown,
)
from bot.store import ListInfo, PaperSnapshot, SavedItem

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def item(pid: str = "ab12cd34ef56", **changes: object) -> SavedItem:
    fields: dict[str, object] = {
        "list_name": "reading",
        "paper_id": pid,
        "title": "Single-Step Completion Policy",
        "authors": ("Prajwal Koirala", "Cody Fleming"),
        "et_al": False,
        "area": "Reinforcement Learning · Batch/Offline",
        "abstract": r"We propose the \textit{Single-Step Completion Policy} (SSCP) with $O(n^2)$ cost.",
        "url": "https://example.org/paper?id=1&x=50%",
        "note": "",
        "saved_at": T0,
        "in_corpus": True,
    }
    fields.update(changes)
    return SavedItem(**fields)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- helpers


def snapshot(record: PaperSnapshot) -> dict[str, object]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(PaperSnapshot)}


def check_latex(out: str) -> None:
    """Fail unless ``out`` is safe in a BibTeX field and in LaTeX.

    BibTeX: braces (escaped or not) never close more than opened and end balanced.
    LaTeX: plain braces balanced, math delimiters paired, no bare ``& % # _ ^ $`` in text,
    no bare ``% #`` in math, no trailing backslash.
    """
    total = plain = 0
    mode: str | None = None
    i = 0
    while i < len(out):
        ch = out[i]
        if ch == "\\":
            nxt = out[i + 1 : i + 2]
            assert nxt, f"trailing backslash in {out!r}"
            if nxt in "([":
                assert mode is None, out
                mode = nxt
            elif nxt in ")]":
                assert mode == {")": "(", "]": "["}[nxt], out
                mode = None
            elif nxt in "{}":
                total += 1 if nxt == "{" else -1
                assert total >= 0, out
            elif nxt.isascii() and nxt.isalpha():
                i += 1
                while i + 1 < len(out) and out[i + 1].isascii() and out[i + 1].isalpha():
                    i += 1
                i += 1
                continue
            i += 2
            continue
        if ch == "$":
            token = "$$" if out.startswith("$$", i) else "$"
            if mode is None:
                mode = token
            else:
                assert mode == token, out
                mode = None
            i += len(token)
            continue
        if ch in "{}":
            delta = 1 if ch == "{" else -1
            total += delta
            plain += delta
            assert total >= 0 and plain >= 0, out
        elif mode is None:
            assert ch not in "&%#_^", f"bare {ch!r} in text of {out!r}"
        else:
            assert ch not in "%#", f"bare {ch!r} in math of {out!r}"
        i += 1
    assert mode is None, f"unclosed math in {out!r}"
    assert total == 0 and plain == 0, f"unbalanced braces in {out!r}"


def parse_bib(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """Structural BibTeX reader: (type, key, fields) per entry, braces counted as BibTeX does."""
    entries = []
    i = 0
    while (at := text.find("@", i)) != -1:
        head = re.match(r"@(\w+)\{", text[at:])
        assert head, f"bad entry start at {at}: {text[at : at + 30]!r}"
        start = j = at + head.end()
        depth = 1
        while depth:
            assert j < len(text), "entry never closed"
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        body = text[start : j - 1]
        i = j
        kind = head.group(1).lower()
        if kind == "comment":
            continue
        key, _, rest = body.partition(",\n")
        fields: dict[str, str] = {}
        k = 0
        while (m := re.compile(r"\s*(\w+) = \{").match(rest, k)) is not None:
            depth, v = 1, m.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(rest[v], 0)
                v += 1
            fields[m.group(1)] = rest[m.end() : v - 1]
            k = v
            if rest[k : k + 1] == ",":
                k += 1
        assert rest[k:].strip() == "", f"junk after fields: {rest[k:]!r}"
        entries.append((kind, key, fields))
    return entries


# ---------------------------------------------------------------------------------------- LaTeX


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("A & B 50% #1 snake_case x^2", r"A \& B 50\% \#1 snake\_case x\^{}2"),
        (r"keeps $\alpha_i^2$ and \textit{this}", r"keeps $\alpha_i^2$ and \textit{this}"),
        (r"math with $50%$ inside", r"math with $50\%$ inside"),
        ("costs $5 and $10", r"costs \$5 and \$10"),
        ("display $$a+b$$ ok", "display $$a+b$$ ok"),
        (r"paren \(x_1\) and \[y\]", r"paren \(x_1\) and \[y\]"),
        ("unbalanced {open", r"unbalanced \textbraceleft{}open"),
        ("close} first", r"close\textbraceright{} first"),
        ("{balanced}", "{balanced}"),
        (r"escaped \{ alone", r"escaped \textbraceleft{} alone"),
        (r"markdown \*bold\* \_x\_", r"markdown *bold* \_x\_"),
        ("trailing \\", r"trailing \textbackslash{}"),
        ("line\n\nbreaks\tand  spaces", "line breaks and spaces"),
        (r"already \& escaped \%", r"already \& escaped \%"),
        (r"Schr\"odinger and \'", r"Schr\"odinger and \'{}"),
        ("a < b > c | d", r"a \textless{} b \textgreater{} c \textbar{} d"),
        ("$0$$1$", "$0${}$1$"),  # two inline formulas must not read as display math
        (r"$a\\$b$", r"$a\\$b\$"),  # \\ is a line break, so the next $ closes the math
    ],
)
def test_latex_escape_examples(raw: str, expected: str) -> None:
    assert latex_escape(raw) == expected
    check_latex(latex_escape(raw))


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(max_size=80), st.text(alphabet=st.sampled_from("\\{}$%&#_^~ ab()[]*'\"\n"), max_size=60)
    )
)
def test_latex_escape_is_always_safe(raw: str) -> None:
    check_latex(latex_escape(raw))


# ---------------------------------------------------------------------------------------- BibTeX


def test_citation_keys() -> None:
    assert citation_key(item()) == "koirala_ab12cd34"
    assert citation_key(item("2401.12345")) == "koirala_240112345"
    assert citation_key(item(authors=("Bernhard Schölkopf",))) == "scholkopf_ab12cd34"
    assert citation_key(item(authors=("Łukasz Kaiser",))) == "kaiser_ab12cd34"
    assert citation_key(item(authors=("Turing, Alan",))) == "turing_ab12cd34"
    assert citation_key(item(authors=("Martin Luther King Jr.",))) == "king_ab12cd34"
    assert citation_key(item(authors=("张伟",))) == "paper_ab12cd34"
    assert citation_key(item(authors=())) == "paper_ab12cd34"
    assert re.fullmatch(r"koirala_[0-9a-f]{8}", citation_key(item("论文")))
    clash = [item("ab12cd34xxxxxx"), item("ab12cd34yyyyyy"), item("ab12cd34zzzzzz")]
    keys = citation_keys(clash)
    assert list(keys.values()) == ["koirala_ab12cd34", "koirala_ab12cd34_2", "koirala_ab12cd34_3"]
    assert ascii_fold("Ærøskøbing ß") == "AEroskobing ss"


def test_bibtex_entries_are_structurally_valid() -> None:
    items = [
        item(),
        item("p2", authors=("Tom and Jerry", "Doe, John"), et_al=True, note="read {this} 100%"),
        item("p3", title="Braces {unbalanced and $math", abstract="", url=None, authors=()),
        item("p4", title="Weird } closing", abstract="50% & _under_ #hash $x$ \\", area=""),
    ]
    text = to_bibtex(items, exported_at=T0)
    entries = parse_bib(text)
    assert [kind for kind, _, _ in entries] == ["misc"] * 4
    keys = [key for _, key, _ in entries]
    assert len(set(keys)) == 4 and keys[0] == "koirala_ab12cd34"
    for _, _, fields in entries:
        for name, value in fields.items():
            if name == "url":  # verbatim for biblatex: only the braces matter
                assert "{" not in value and "}" not in value
            else:
                check_latex(value)
    first, second, third, fourth = (fields for _, _, fields in entries)
    assert first["title"] == "{Single-Step Completion Policy}"
    assert first["author"] == "Prajwal Koirala and Cody Fleming"
    assert first["note"] == "Reinforcement Learning · Batch/Offline"
    assert first["url"] == "https://example.org/paper?id=1&x=50%"
    assert r"\textit{Single-Step Completion Policy}" in first["abstract"]
    assert first["keywords"] == "reading"
    assert second["author"] == "{Tom and Jerry} and {Doe, John} and others"
    assert second["annote"] == r"read {this} 100\%"
    assert "author" not in third and "abstract" not in third and "url" not in third
    assert "note" not in fourth


def test_bibtex_groups_by_list_and_cites_each_paper_once() -> None:
    items = [
        item("p1", list_name="reading"),
        item("p2", list_name="reading"),
        item("p1", list_name="ml"),
        item("p3", list_name="ml"),
        item("p2", list_name="dupes only"),
    ]
    text = to_bibtex(items, exported_at=T0)
    entries = parse_bib(text)
    assert [key for _, key, _ in entries] == ["koirala_p1", "koirala_p2", "koirala_p3"]
    assert entries[0][2]["keywords"] == "reading, ml"
    assert text.index("@comment{list: reading}") < text.index("koirala_p1") < text.index("@comment{list: ml}")
    assert "@comment{list: dupes only}" not in text  # nothing new in it: no empty group header
    assert to_bibtex([], exported_at=T0).startswith("@comment{Exported by paperbot")


# ---------------------------------------------------------------------------------------- Markdown


def test_markdown_single_list() -> None:
    items = [item("p1", note="first line\nsecond line"), item("p2", et_al=True, in_corpus=False, url=None)]
    md = to_markdown(items, exported_at=T0)
    assert md.startswith("# reading\n")
    assert "2 saved papers" in md
    assert "1. **Single-Step Completion Policy**" in md and "2. **Single-Step Completion Policy**" in md
    assert "Prajwal Koirala, Cody Fleming et al." in md
    assert "Reinforcement Learning · Batch/Offline · `p1`" in md
    assert "   > first line\n   > second line" in md
    assert "no longer in the corpus" in md


def test_markdown_groups_lists_including_empty_ones() -> None:
    lists = [ListInfo("reading", 1, T0), ListInfo("to_do", 0, T0), ListInfo("ml", 1, T0)]
    md = to_markdown([item("p1"), item("p2", list_name="ml")], lists=lists, exported_at=T0)
    assert md.startswith("# Saved papers\n")
    assert md.index("## reading (1)") < md.index(r"## to\_do (0)") < md.index("## ml (1)")
    assert "_(empty)_" in md


# ---------------------------------------------------------------------------------------- JSON


def test_json_round_trip() -> None:
    items = [
        item("p1", note="n", et_al=True, saved_at=T0 + timedelta(seconds=1)),
        item("p2", list_name="ml", url=None, in_corpus=False, authors=()),
    ]
    lists = [ListInfo("reading", 1, T0), ListInfo("ml", 1, T0), ListInfo("empty", 0, T0)]
    text = to_json(items, lists=lists, exported_at=T0)
    doc = json.loads(text)
    assert (doc["format"], doc["version"]) == (JSON_FORMAT, JSON_VERSION)
    parsed = parse_json(text, note_max=500, id_max=200)
    assert parsed.errors == ()
    assert [(lst.name, lst.created_at, len(lst.items)) for lst in parsed.lists] == [
        ("reading", T0, 1),
        ("ml", T0, 1),
        ("empty", T0, 0),
    ]
    for original, (lst, back) in zip(
        items,
        [(parsed.lists[0], parsed.lists[0].items[0]), (parsed.lists[1], parsed.lists[1].items[0])],
        strict=True,
    ):
        assert lst.name == original.list_name
        # Export and import speak of the same record: every snapshot column comes back as it went out.
        assert isinstance(back, PaperSnapshot) and isinstance(original, PaperSnapshot)
        assert snapshot(back) == snapshot(original)
        # (Whether it was in the corpus is the store's to know, not the file's.)
        assert (back.note, back.saved_at) == (original.note, original.saved_at)


def test_parse_json_reports_bad_records_and_caps_messages() -> None:
    records = [{"id": f"x{i}"} for i in range(70)]  # no title
    parsed = parse_json(json.dumps(records), note_max=500, id_max=200)
    assert parsed.lists[0].items == ()
    assert len(parsed.errors) == 51 and parsed.errors[-1] == "… and 20 more problems"
    lone_surrogate = '[{"id": "ok", "title": "bad \\ud800 text"}]'
    assert parse_json(lone_surrogate, note_max=500, id_max=200).lists[0].items[0].title == "bad ? text"


# -- derived titles (issue 33 item 2) -------------------------------------------------------------


def test_a_derived_title_is_never_passed_off_as_the_papers_own():
    from bot.export import DERIVED_TITLE, derived_titles, render_export
    from retrieval.models import Paper
    from retrieval.titles import derive_title

    abstract = "We propose FooNet, a graph network for molecules. It predicts binding affinity."
    own = item("own12345", title="FooNet: Graph Networks for Molecules", abstract=abstract)
    mine = item("der12345", title=derive_title(abstract), abstract=abstract)
    more = abstract + " More."
    gone = item("gon12345", title=derive_title(more), abstract=more)  # no longer in the corpus
    papers = {
        "own12345": Paper("own12345", own.title, own.authors, False, "", abstract),
        "der12345": Paper("der12345", mine.title, mine.authors, False, "", abstract, title_derived=True),
    }
    assert derived_titles([own, mine, gone], papers.get) == {"der12345", "gon12345"}
    bib = render_export("bib", [own, mine, gone], corpus=papers.get)
    entries = bib.split("@misc{")[1:]
    assert "title = {{FooNet: Graph Networks for Molecules}}" in entries[0]
    for entry in entries[1:]:
        assert "  title = " not in entry and f". {DERIVED_TITLE}: FooNet" in entry
    md = render_export("md", [own, mine], corpus=papers.get)
    assert "**FooNet: Graph Networks for Molecules**\n" in md
    assert f"**{mine.title}** _({DERIVED_TITLE.lower()})_" in md
    doc = json.loads(render_export("json", [own, mine], corpus=papers.get))
    assert [(i["id"], i["title_derived"]) for i in doc["lists"][0]["items"]] == [
        ("own12345", False), ("der12345", True)
    ]
