"""/recommend through the real discord.py path (issue 14 item 1)."""

from __future__ import annotations

from collections import Counter

import pytest


def uid(user: dict) -> int:
    return int(user["id"])


def ids_of(exchange) -> list[str]:
    return [f["value"].strip("`") for e in exchange.embeds for f in e.get("fields", []) if f["name"] == "ID"]


def area_papers(h, n: int = 3) -> list:
    """``n`` papers of the bundled corpus's largest area."""
    papers = list(h.bot.engine.index.papers)
    area, _ = Counter(p.area for p in papers).most_common(1)[0]
    return [p for p in papers if p.area == area][:n]


async def test_recommend_pages_papers_like_the_saved_ones_with_because_lines(harness):
    h = harness
    saved = area_papers(h)
    for paper in saved:
        await h.run_command("save", {"id": paper.id})
    ex = await h.run_command("recommend")
    assert ex.callback_type == 4 and ex.ephemeral
    assert ex.content.startswith("**Recommended** from all your lists — ")
    shown = ids_of(ex)
    assert shown and not set(shown) & {p.id for p in saved}  # never a paper you saved
    titles = {p.id: p.title for p in saved}
    for embed in ex.embeds:
        because = next(f["value"] for f in embed["fields"] if f["name"] == "Because you saved")
        assert any(f"(`{pid}`)" in because for pid in titles), because
    assert any(c.get("label") == "Next ▶" for c in ex.components_flat())
    nxt = await h.click(ex.message, ex.custom_id(label="Next"))
    assert nxt.callback_type == 7 and not set(ids_of(nxt)) & set(shown)
    assert any("Save a paper" in (c.get("placeholder") or "") for c in ex.components_flat())


async def test_recommend_from_one_list_and_public(harness):
    h = harness
    first, second = area_papers(h, 2)
    await h.run_command("save", {"id": first.id, "list": "theory"})
    await h.run_command("save", {"id": second.id})
    ex = await h.run_command("recommend", {"list": "Theory", "public": True})
    assert not ex.ephemeral and ex.content.startswith("**Recommended** from your list “theory” — ")
    assert "“from" not in ex.content and "””" not in ex.content  # no quote inside a quote (issue 30 item 7)
    becauses = [f["value"] for e in ex.embeds for f in e["fields"] if f["name"] == "Because you saved"]
    assert becauses and all(f"(`{first.id}`)" in b for b in becauses)
    assert second.id not in ids_of(ex)  # saved elsewhere: still never recommended


async def test_recommend_without_saved_papers_says_how_to_start(harness):
    ex = await harness.run_command("recommend")
    assert ex.callback_type == 4 and ex.ephemeral and not ex.embeds
    assert "You have no saved papers yet" in ex.content and "/save" in ex.content
    await harness.run_command("list", {"name": "empty"}, subcommand="create")
    empty = await harness.run_command("recommend", {"list": "empty"})
    assert "Your list “empty” is empty" in empty.content
    missing = await harness.run_command("recommend", {"list": "nope"})
    assert missing.ephemeral and "nope" in missing.content


async def test_recommend_list_autocomplete_and_zh_cn(harness):
    await harness.run_command("save", {"id": area_papers(harness, 1)[0].id, "list": "theory"})
    ac = await harness.autocomplete("recommend", {"list": "th"}, "list")
    assert [c["value"] for c in ac.choices] == ["theory"]
    (put,) = [r for r in await harness.sync() if r.method == "PUT"]
    command = next(c for c in put.json if c["name"] == "recommend")
    assert command["description_localizations"]["zh-CN"]
    assert all(o["description_localizations"]["zh-CN"] for o in command["options"])


@pytest.mark.parametrize("saved", [1, 3])
async def test_the_service_ranks_like_the_library(harness, saved):
    from retrieval.recommend import recommend

    h = harness
    papers = area_papers(h, saved)
    for paper in papers:
        await h.run_command("save", {"id": paper.id})
    pool = await h.bot.services.recommend.pool(uid(h.alice))
    expected = recommend(h.bot.engine.index, [p.id for p in papers], h.bot.settings.recommend_pool)
    assert [r.paper.id for r in pool.recommendations] == [r.paper.id for r in expected]
