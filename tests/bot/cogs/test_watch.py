"""/watch through the real discord.py path (issue 14 item 2): saved queries, the DM after a
reindex (only papers it added, at most 10 per watch), a 403 that pauses and tells, /forgetme."""

from __future__ import annotations

import asyncio

from bot.services.watch import PAUSED_NOTICE, PER_WATCH
from tests.bot.cogs.test_admin import one_file_corpus, reindex
from tests.bot.conftest import CORPUS


def uid(user: dict) -> int:
    return int(user["id"])


async def delivered(h) -> None:
    """Wait for the background DM deliveries of the watch cog."""
    cog = h.bot.get_cog("Watch")
    for _ in range(50):
        await asyncio.sleep(0)
    while cog.deliveries:
        await asyncio.gather(*list(cog.deliveries))


async def test_add_list_remove_and_bad_input(harness):
    h = harness
    options = {"query": "reinforcement learning", "area": "Theory"}
    added = await h.run_command("watch", options, subcommand="add")
    assert added.callback_type == 4 and added.ephemeral
    assert "Watching “reinforcement learning” · area: Theory (number" in added.content
    listed = await h.run_command("watch", subcommand="list")
    assert "**1.** “reinforcement learning” · area: Theory" in listed.content
    bad = await h.run_command("watch", {"query": '"unclosed'}, subcommand="add")
    assert "never closed" in bad.content and "Try:" in bad.content
    assert len(await h.bot.store.list_watches(uid(h.alice))) == 1
    other = await h.run_command("watch", {"id": 1}, subcommand="remove", user=h.bob)
    assert "You have no watch number 1" in other.content
    gone = await h.run_command("watch", {"id": 1}, subcommand="remove")
    assert "Stopped watching “reinforcement learning”" in gone.content
    empty = await h.run_command("watch", subcommand="list")
    assert "You have no watches" in empty.content


async def test_the_cap_comes_from_config(make_harness):
    h = await make_harness(max_watches_per_user=1)
    await h.run_command("watch", {"query": "learning"}, subcommand="add")
    second = await h.run_command("watch", {"query": "models"}, subcommand="add")
    assert "You already have 1 watch, the most allowed" in second.content


async def test_a_reindex_dms_only_the_papers_it_added(harness, tmp_path):
    h = harness
    await reindex(h, one_file_corpus(tmp_path, 0))  # serve one file; the other comes back next
    await h.run_command("watch", {"query": "learning"}, subcommand="add")
    await h.run_command("watch", {"query": "zzzqqq nothing"}, subcommand="add")
    await h.run_command("watch", {"query": "learning"}, subcommand="add", user=h.bob)
    before = {p.id for p in h.bot.engine.index.papers}
    report = await reindex(h, CORPUS)
    assert report.content == "✅ Reindex complete."
    await delivered(h)
    new_ids = {p.id for p in h.bot.engine.index.papers} - before
    expected = h.bot.engine.search("learning", 100).hits
    expected_new = [hit.paper.id for hit in expected if hit.paper.id in new_ids]
    for user in (h.alice, h.bob):
        (dm,) = h.fake.dms_to(uid(user))  # one DM per user
        assert dm.status == 200 and "The corpus was reindexed" in dm.json["content"]
        (embed,) = dm.json["embeds"]  # the watch with no new match is left out
        assert embed["title"].startswith("“learning” — ")
        lines = embed["description"].splitlines()
        shown = [line.split("(`")[1].rstrip("`)") for line in lines if "(`" in line]
        assert shown == expected_new[:PER_WATCH]  # /search's order, only papers this reindex added
        if len(expected_new) > PER_WATCH:
            assert f"+{len(expected_new) - PER_WATCH} more: `/search query:learning`" in embed["description"]
    # the DMs went out after the reindex report
    last_report = max(i for i, r in enumerate(h.requests) if r in report.requests)
    first_dm = min(h.requests.index(r) for r in h.fake.dms_to(uid(h.alice)))
    assert first_dm > last_report


async def test_closed_dms_pause_the_watches_and_the_next_command_says_so(harness, tmp_path):
    h = harness
    await reindex(h, one_file_corpus(tmp_path, 0))
    await h.run_command("watch", {"query": "learning"}, subcommand="add")
    h.fake.closed_dms.add(uid(h.alice))
    await reindex(h, CORPUS)
    await delivered(h)
    (refused,) = h.fake.dms_to(uid(h.alice))
    assert refused.status == 403
    assert await h.bot.store.active_watches() == []  # paused
    told = await h.run_command("lists")
    assert told.callback_type == 4
    followups = [r for r in told.requests if r.method == "POST" and r.path.startswith("/webhooks/")]
    assert [f.json["content"] for f in followups] == [PAUSED_NOTICE] and followups[0].ephemeral
    again = await h.run_command("lists")
    assert not [r for r in again.requests if r.path.startswith("/webhooks/")]  # told once
    resumed = await h.run_command("watch", subcommand="list")
    assert "were paused (DMs closed) and are on again" in resumed.content
    assert len(await h.bot.store.active_watches()) == 1


async def test_forgetme_deletes_watches(harness):
    h = harness
    await h.run_command("watch", {"query": "learning"}, subcommand="add")
    ask = await h.run_command("forgetme")
    assert "1 watch" in ask.content
    done = await h.click(ask.message, ask.custom_id(label="Confirm"))
    assert "1 watch" in done.content
    assert await h.bot.store.list_watches(uid(h.alice)) == []
