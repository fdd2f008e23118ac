"""/club through the real discord.py path (issue 14 item 3): a server's reading list, changed by
members with Manage Server or a configured role (checked by the bot), shown to all, exportable."""

from __future__ import annotations

import discord

from bot.services.club import NOT_AN_EDITOR, NOT_IN_A_SERVER

MANAGE = (discord.Permissions.general() | discord.Permissions.text()).value  # includes Manage Server
EDITOR_ROLE = 1700000000000000001


def ids(h) -> list[str]:
    return [p.id for p in h.bot.engine.index.papers]


async def as_member_with_role(h, name, options, subcommand, role_id):
    """Run a command as alice holding ``role_id`` (the harness's members hold no role)."""
    data, _ = h._command_options(name, options, subcommand, None)
    payload = h._base(2, user=None, guild=True, data=data, permissions=None, locale="en-US")
    payload["member"]["roles"] = [str(role_id)]
    return await h.inject(payload)


async def test_in_a_dm_club_says_it_works_in_a_server(harness):
    for sub, options in (("show", {}), ("add", {"id": ids(harness)[0]}), ("remove", {"id": "x"})):
        ex = await harness.run_command("club", options, subcommand=sub, guild=False)
        assert ex.content == NOT_IN_A_SERVER and ex.ephemeral
    export = await harness.run_command("export", {"format": "md", "scope": "club"}, guild=False)
    assert export.content == NOT_IN_A_SERVER


async def test_only_editors_change_it_everyone_reads_it(harness):
    h = harness
    first, second = ids(h)[:2]
    refused = await h.run_command("club", {"id": first}, subcommand="add")
    assert refused.content == NOT_AN_EDITOR and refused.ephemeral
    added = await h.run_command("club", {"id": first, "note": "week 1"}, subcommand="add", permissions=MANAGE)
    assert "Added" in added.content and "to this server's reading list" in added.content
    assert not added.ephemeral  # the group sees what was added
    await h.run_command("club", {"id": second}, subcommand="add", permissions=MANAGE, user=h.bob)
    again = await h.run_command("club", {"id": first}, subcommand="add", permissions=MANAGE)
    assert "already on this server's reading list; nothing changed" in again.content
    shown = await h.run_command("club", subcommand="show", user=h.bob)  # any member reads it
    assert shown.ephemeral
    (embed,) = shown.embeds
    assert embed["title"].startswith("Reading list") and "(2)" in embed["title"]
    first_entry, second_entry = embed["description"].split("\n\n")
    assert f"(`{first}`)" in first_entry and f"added by <@{h.alice['id']}>" in first_entry
    assert "> week 1" in first_entry and f"<@{h.bob['id']}>" in second_entry
    assert shown.callback.json["data"]["allowed_mentions"] == {"parse": []}  # names, never pings
    public = await h.run_command("club", {"public": True}, subcommand="show")
    assert not public.ephemeral
    not_editor = await h.run_command("club", {"id": first}, subcommand="remove", user=h.bob)
    assert not_editor.content == NOT_AN_EDITOR
    removed = await h.run_command("club", {"id": first}, subcommand="remove", permissions=MANAGE)
    assert "Removed" in removed.content
    missing = await h.run_command("club", {"id": first}, subcommand="remove", permissions=MANAGE)
    assert f"Paper `{first}` is not on this server's reading list" in missing.content


async def test_a_configured_role_may_edit(make_harness):
    h = await make_harness(club_editor_role_ids=frozenset({EDITOR_ROLE}))
    pid = ids(h)[0]
    ex = await as_member_with_role(h, "club", {"id": pid}, "add", EDITOR_ROLE)
    assert "Added" in ex.content
    other = await as_member_with_role(h, "club", {"id": ids(h)[1]}, "add", EDITOR_ROLE + 1)
    assert other.content == NOT_AN_EDITOR


async def test_export_scope_club(harness):
    h = harness
    empty = await h.run_command("export", {"format": "md", "scope": "club"})
    assert "reading list is empty" in empty.content
    for pid in ids(h)[:3]:
        await h.run_command("club", {"id": pid}, subcommand="add", permissions=MANAGE)
    ex = await h.run_command("export", {"format": "md", "scope": "club"})
    (upload,) = [f for r in ex.requests for f in r.files]
    assert upload[1] == "paperbot-club.md"
    text = upload[2].decode()
    assert all(f"`{pid}`" in text for pid in ids(h)[:3])
    assert "3 papers from this server's reading list" in ex.content
    bib = await h.run_command("export", {"format": "bib", "scope": "club"})
    assert [f[1] for r in bib.requests for f in r.files] == ["paperbot-club.bib"]


async def test_forgetme_of_a_member_who_only_added_to_the_club_list(harness):
    """Issue 30 item 1: no lists, no watches, one /club add. /forgetme finds the row that names them,
    says what it does with it (the server keeps the paper, no longer saying who added it), and every
    member then sees "a former member" instead of their mention."""
    h = harness
    pid = ids(h)[0]
    await h.run_command("club", {"id": pid, "note": "week 1"}, subcommand="add", permissions=MANAGE)
    ask = await h.run_command("forgetme")
    assert "stores nothing about you" not in ask.content
    assert "1 paper you added to a server's reading list" in ask.content
    done = await h.click(ask.message, ask.custom_id(label="Confirm"))
    assert "stays on it, shown as added by a former member: your name is no longer on it" in done.content
    shown = await h.run_command("club", subcommand="show", user=h.bob)
    (embed,) = shown.embeds
    assert f"<@{h.alice['id']}>" not in embed["description"]
    assert "added by a former member" in embed["description"] and "> week 1" in embed["description"]
    again = await h.run_command("forgetme")
    assert "stores nothing about you" in again.content
