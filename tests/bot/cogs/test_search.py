"""/search, /paper, /similar and their controls, through the real discord.py path."""

from __future__ import annotations

import re

import pytest

from retrieval.models import Paper

EPHEMERAL = 64


def ids_of(exchange) -> list[str]:
    return [
        field["value"].strip("`")
        for e in exchange.embeds
        for field in e.get("fields", [])
        if field["name"] == "ID"
    ]


async def test_search_replies_with_a_page_of_embeds(harness):
    ex = await harness.run_command("search", {"query": "reinforcement learning"})
    assert ex.callback_type == 4
    assert ex.ephemeral
    assert "reinforcement learning" in ex.content and "page 1/" in ex.content
    expected = harness.bot.engine.search("reinforcement learning", harness.bot.settings.page_size)
    assert ids_of(ex) == [h.paper.id for h in expected.hits]
    assert f"{expected.total} papers" in ex.content
    first = ex.embeds[0]
    names = [f["name"] for f in first["fields"]]
    assert names[:4] == ["Authors", "Area", "ID", "Score"]
    labels = [c.get("label") or c.get("placeholder") for c in ex.components_flat()]
    assert "◀ Previous" in labels and "Next ▶" in labels
    assert any("Save a paper" in (x or "") for x in labels)
    # allowed_mentions none on every message the bot sends
    assert ex.callback.json["data"]["allowed_mentions"] == {"parse": []}


async def test_search_public_is_not_ephemeral(harness):
    ex = await harness.run_command("search", {"query": "reinforcement learning", "public": True})
    assert ex.callback_type == 4
    assert not ex.ephemeral


async def test_paging_matches_retrieval_both_ways(harness):
    engine = harness.bot.engine
    ex = await harness.run_command("search", {"query": "learning", "limit": 3})
    page1 = ids_of(ex)
    nxt = await harness.click(ex.message, ex.custom_id(label="Next"))
    assert nxt.callback_type == 7
    assert ids_of(nxt) == [h.paper.id for h in engine.search("learning", 3, offset=3).hits]
    assert "page 2/" in nxt.content
    back = await harness.click(nxt.message, nxt.custom_id(label="Previous"))
    assert ids_of(back) == page1
    prev_button = next(c for c in back.components_flat() if c.get("label") == "◀ Previous")
    assert prev_button.get("disabled") is True


async def test_controls_refused_for_another_user(harness):
    ex = await harness.run_command("search", {"query": "learning", "public": True})
    other = await harness.click(ex.message, ex.custom_id(label="Next"), user=harness.bob)
    assert other.callback_type == 4
    assert other.ephemeral
    assert "someone else's search" in other.content
    assert harness.fake.messages[int(ex.message["id"])]["content"] == ex.content  # unchanged


async def test_save_select_saves_to_default_list(harness):
    ex = await harness.run_command("search", {"query": "reinforcement learning"})
    paper_id = ids_of(ex)[1]
    saved = await harness.select(ex.message, ex.custom_id(placeholder="Save"), [paper_id])
    assert saved.callback_type == 4 and saved.ephemeral
    assert "Saved" in saved.content and paper_id in saved.content
    user_id = int(harness.alice["id"])
    assert paper_id in await harness.bot.store.saved_ids(user_id)
    again = await harness.select(ex.message, ex.custom_id(placeholder="Save"), [paper_id])
    assert "already" in again.content


async def test_similar_select_opens_similar_page(harness):
    ex = await harness.run_command("search", {"query": "reinforcement learning"})
    paper_id = ids_of(ex)[0]
    sim = await harness.select(ex.message, ex.custom_id(placeholder="similar"), [paper_id])
    assert sim.callback_type == 4 and sim.ephemeral
    expected = harness.bot.engine.similar(paper_id, 25)[: harness.bot.settings.page_size]
    assert ids_of(sim) == [h.paper.id for h in expected]
    assert paper_id not in ids_of(sim)


async def test_timeout_disables_controls(harness):
    ex = await harness.run_command("search", {"query": "learning"})
    edits = await harness.timeout_views()
    assert edits and edits[0].requests[0].method == "PATCH"
    assert edits[0].requests[0].path.endswith("/messages/@original")
    message = harness.fake.messages[int(ex.message["id"])]
    assert all(c.get("disabled") for c in ex.components_flat(message))


async def test_area_autocomplete(harness):
    ex = await harness.autocomplete("search", {"query": "x", "area": "reinf"}, "area")
    assert ex.callback_type == 8
    names = [c["name"] for c in ex.choices]
    assert names and all("Reinforcement" in n for n in names)
    assert len(ex.choices) <= 25


async def test_area_autocomplete_empty_prefix_lists_at_most_25(harness):
    ex = await harness.autocomplete("search", {"query": "x", "area": ""}, "area")
    assert 0 < len(ex.choices) <= 25


async def test_no_hits_names_the_area_filter(harness):
    ex = await harness.run_command(
        "search", {"query": "reinforcement", "area": "Theory · Interpretability and Visualization"}
    )
    if ex.content.startswith("**Search**"):
        pytest.skip("the corpus has an RL paper in that area")
    assert ex.ephemeral
    assert "No paper in area" in ex.content and "papers in *" in ex.content
    # the areas offered are ones where the query does find papers
    areas = {h.paper.area for h in harness.bot.engine.search("reinforcement", 20).hits}
    offered = re.findall(r"\*([^*]+)\*", ex.content.split("papers in", 1)[1])
    assert offered and set(offered) <= areas


async def test_an_unknown_area_suggests_only_near_names(harness):
    far = await harness.run_command("search", {"query": "learning", "area": "Quantum Basket Weaving"})
    assert "There is no area “Quantum Basket Weaving”" in far.content
    assert "*" not in far.content and "area option" in far.content  # no far-fetched suggestion
    near = await harness.run_command("search", {"query": "learning", "area": "Theroy"})
    assert "There is no area “Theroy”. Did you mean *Theory" in near.content
    assert "Deep Learning" not in near.content


async def test_an_unknown_area_with_no_near_name_says_how_to_pick_one(harness):
    ex = await harness.run_command("search", {"query": "learning", "area": "-quantum"})
    assert "There is no area “-quantum”" in ex.content
    assert "none" not in ex.content and "area option" in ex.content


async def test_no_hits_without_filters_suggests_fewer_words(harness):
    ex = await harness.run_command("search", {"query": "zzzzqqq xylophonium"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "No paper matches" in ex.content and "fewer" in ex.content


async def test_query_error_marks_position(harness):
    ex = await harness.run_command("search", {"query": 'agents "unclosed phrase'})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "The quote at character 8 is never closed" in ex.content
    assert "agents ⟦here⟧" in ex.content
    assert 'Try: `agents "unclosed phrase"`' in ex.content


async def test_an_exclusion_alone_asks_for_a_word_to_search_for(harness):
    ex = await harness.run_command("search", {"query": "-reward"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "add a word to search for" in ex.content and "Try: `learning -reward`" in ex.content
    assert "searchable" not in ex.content


async def test_a_query_error_example_with_backticks_stays_inline_code(harness):
    ex = await harness.run_command("search", {"query": 'a`b "unclosed'})
    assert 'Try: `` a`b "unclosed" ``' in ex.content


async def test_search_in_a_dm(harness):
    ex = await harness.run_command("search", {"query": "reinforcement learning"}, guild=False)
    assert ex.callback_type == 4 and ex.embeds


async def test_chinese_locale_still_answers_in_english(harness):
    ex = await harness.run_command("search", {"query": "reinforcement learning"}, locale="zh-CN")
    assert "papers · page 1/" in ex.content


async def test_paper_shows_full_abstract_with_save_button(harness):
    paper = harness.bot.engine.index.papers[0]
    ex = await harness.run_command("paper", {"id": paper.id})
    assert ex.callback_type == 4 and ex.ephemeral
    assert paper.id in ex.text
    text = " ".join(e.get("description") or "" for e in ex.embeds)
    assert len(text) > 200
    button = ex.custom_id(label="Save")
    saved = await harness.click(ex.message, button)
    assert "Saved" in saved.content


async def test_paper_unknown_id(harness):
    ex = await harness.run_command("paper", {"id": "nope-123"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "no paper with id" in ex.content and "/search" in ex.content


async def test_paper_id_autocomplete(harness):
    paper = harness.bot.engine.index.papers[3]
    ex = await harness.autocomplete("paper", {"id": paper.id[:4]}, "id")
    assert ex.callback_type == 8
    assert paper.id in [c["value"] for c in ex.choices]
    assert all(len(c["name"]) <= 100 for c in ex.choices)


async def test_similar_command_pages(harness):
    paper = harness.bot.engine.index.papers[0]
    ex = await harness.run_command("similar", {"id": paper.id})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "Similar to" in ex.content
    assert paper.id not in ids_of(ex)


async def test_abstract_with_everyone_is_sent_with_no_mentions(harness, monkeypatch):
    engine = harness.bot.engine
    original = engine.index.papers[0]
    evil = Paper(
        id=original.id,
        title="@everyone look",
        authors=("@here",),
        et_al=False,
        area=original.area,
        abstract="Ping @everyone and <@&123> " + original.abstract,
    )
    monkeypatch.setattr(engine, "require", lambda pid: evil)
    ex = await harness.run_command("paper", {"id": original.id})
    assert ex.callback.json["data"]["allowed_mentions"] == {"parse": []}
    assert "@everyone" in ex.text


async def test_huge_paper_is_shortened_not_rejected(harness, monkeypatch):
    engine = harness.bot.engine
    base = engine.index.papers[0]
    huge = Paper(
        id=base.id,
        title="T" * 400,
        authors=tuple(f"Author Number {i}" for i in range(300)),
        et_al=True,
        area=base.area,
        abstract=("A sentence about reinforcement learning and $\\alpha$ values. " * 400),
        url="https://example.org/" + "x" * 100,
    )
    monkeypatch.setattr(engine, "require", lambda pid: huge)
    ex = await harness.run_command("paper", {"id": base.id})
    assert ex.callback_type == 4
    total = sum(
        len(e.get("title") or "")
        + len(e.get("description") or "")
        + sum(len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
        + len((e.get("footer") or {}).get("text") or "")
        for e in ex.embeds
    )
    assert total <= 6000 and all(len(e.get("description") or "") <= 4096 for e in ex.embeds)
    assert "…" in ex.text and "et al." in ex.text


def long_paper(base, sentences: int) -> Paper:
    text = " ".join(f"Sentence {k} says that the policy improves on task {k}." for k in range(sentences))
    return Paper(id=base.id, title="A Paper With A Long Abstract", authors=("Ada Lovelace",), et_al=False,
                 area=base.area, abstract=text)  # fmt: skip


async def test_paper_shows_a_long_abstract_whole_over_several_messages(harness, monkeypatch):
    """Issue 33 item 8: a 10,000-character abstract is shown whole, over 3 messages (the first with
    the buttons), and the reply says it goes on."""
    engine = harness.bot.engine
    base = engine.index.papers[0]
    paper = long_paper(base, 180)
    assert 9_000 < len(paper.abstract) < 11_000
    monkeypatch.setattr(engine, "require", lambda pid: paper)
    ex = await harness.run_command("paper", {"id": base.id})
    messages = ex.messages
    assert len(messages) == 3
    first = messages[0]["embeds"][0]
    assert first["footer"]["text"] == "the abstract goes on in the next 2 messages"
    text = " ".join(e.get("description") or "" for m in messages for e in m["embeds"])
    assert all(f"Sentence {k} says" in text for k in range(180))
    for m in messages:
        assert sum(len(e.get("description") or "") for e in m["embeds"]) <= 6000
    rows = messages[0].get("components") or []
    labels = [c.get("label") for row in rows for c in row.get("components", [])]
    assert any("Save" in (label or "") for label in labels)  # the buttons are under the start
    assert not messages[1].get("components") and not messages[2].get("components")


async def test_paper_too_long_for_the_messages_comes_whole_as_a_file(harness, monkeypatch):
    engine = harness.bot.engine
    base = engine.index.papers[0]
    paper = long_paper(base, 700)  # ~40,000 characters
    monkeypatch.setattr(engine, "require", lambda pid: paper)
    ex = await harness.run_command("paper", {"id": base.id})
    assert len(ex.messages) == 1
    [(_, filename, data)] = ex.callback.files
    assert filename == f"abstract-{base.id}.md" and paper.abstract in data.decode("utf-8")
    footer = ex.embeds[0]["footer"]["text"]
    size = f"{len(paper.abstract):,}"
    assert footer == f"the abstract is {size} characters: all of it is in {filename}, attached"


async def test_a_derived_title_is_said_to_be_derived(harness):
    paper = harness.bot.engine.index.papers[0]
    assert paper.title_derived  # the bundled corpus gives no titles
    ex = await harness.run_command("paper", {"id": paper.id})
    assert ex.embeds[0]["footer"]["text"] == "title derived from the abstract (the source gives none)"
    search = await harness.run_command("search", {"query": "reinforcement learning"})
    assert all("title derived from the abstract" in e["footer"]["text"] for e in search.embeds)
