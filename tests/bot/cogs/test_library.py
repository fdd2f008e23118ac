"""Saved lists through the real discord.py path.

/save /unsave /saved /lists /list … /export /import /forgetme, their autocompletes and buttons.
"""

from __future__ import annotations

import json
import re

import discord
import pytest

from bot import render
from bot.cogs.library import TRANSLATIONS_ZH
from bot.services.transfer import export_filename
from bot.store import DEFAULT_LIST

EPHEMERAL = 64


def uid(user: dict) -> int:
    return int(user["id"])


def corpus_ids(h) -> list[str]:
    return [p.id for p in h.bot.engine.index.papers]


async def save(h, paper_id: str, *, user=None, **options):
    ex = await h.run_command("save", {"id": paper_id, **options}, user=user)
    assert ex.callback_type == 4 and ex.ephemeral, ex.requests
    return ex


def field_ids(ex) -> list[str]:
    """Paper ids shown in a /saved page, in order (the `id` on the second line of each field)."""
    ids = []
    for embed in ex.embeds:
        for f in embed.get("fields", []):
            match = re.search(r"`([^`]+)` · saved <t:\d+:d>", f["value"])
            if match:
                ids.append(match.group(1))
    return ids


# -- /save ------------------------------------------------------------------------------------------


async def test_save_then_save_again_updates_note(harness):
    h = harness
    pid = corpus_ids(h)[0]
    paper = h.bot.engine.get(pid)
    ex = await save(h, pid, note="read the appendix")
    assert ex.callback.json["data"]["flags"] & EPHEMERAL
    assert "Saved" in ex.content and pid in ex.content and f"“{DEFAULT_LIST}”" in ex.content
    assert render.title(paper.title)[:30] in ex.content
    page = await h.bot.store.get_list(uid(h.alice))
    assert [(i.paper_id, i.note) for i in page.items] == [(pid, "read the appendix")]

    again = await save(h, pid, note="skip section 3")
    assert f"already in “{DEFAULT_LIST}”; note updated" in again.content
    page = await h.bot.store.get_list(uid(h.alice))
    assert [(i.paper_id, i.note) for i in page.items] == [(pid, "skip section 3")]

    same = await save(h, pid)
    assert "already in" in same.content and "nothing changed" in same.content
    assert (await h.bot.store.get_list(uid(h.alice))).items[0].note == "skip section 3"


async def test_save_to_named_list_creates_it(harness):
    h = harness
    pid = corpus_ids(h)[1]
    ex = await save(h, pid, list="to read")
    assert "“to read” (a new list)" in ex.content
    lists = await h.bot.store.list_lists(uid(h.alice))
    assert [(info.name, info.count) for info in lists] == [("to read", 1)]


async def test_save_unknown_id_is_a_clear_message(harness):
    ex = await save(harness, "no-such-paper")
    assert "There is no paper with id `no-such-paper`" in ex.content
    assert "/search" in ex.content
    assert await harness.bot.store.saved_ids(uid(harness.alice)) == set()


async def test_save_bad_list_name_shows_store_message(harness):
    ex = await save(harness, corpus_ids(harness)[0], list="bad/name!")
    assert "A list name may only use letters" in ex.content
    assert await harness.bot.store.list_lists(uid(harness.alice)) == []


async def test_save_caps_show_store_messages(make_harness, tmp_path):
    one = await make_harness(max_saved_per_user=1, database_path=tmp_path / "one.db")
    await save(one, corpus_ids(one)[0])
    assert "You have saved 1 paper, the most allowed" in (await save(one, corpus_ids(one)[1])).content
    h = await make_harness(max_saved_per_user=2, max_lists_per_user=1)
    ids = corpus_ids(h)
    await save(h, ids[0])
    await save(h, ids[1])
    full = await save(h, ids[2])
    assert full.ephemeral
    assert "You have saved 2 papers, the most allowed" in full.content
    other_list = await save(h, ids[0], list="second")
    assert "You already have 1 list, the most allowed (1)" in other_list.content  # not "1 lists"
    assert await h.bot.store.saved_ids(uid(h.alice)) == {ids[0], ids[1]}


async def test_save_id_autocomplete_from_corpus(harness):
    h = harness
    target = corpus_ids(h)[5]
    ex = await h.autocomplete("save", {"id": target[:5]}, "id")
    assert ex.callback_type == 8
    values = [c["value"] for c in ex.choices]
    assert values and values[0] == target
    assert len(ex.choices) <= 25
    assert all(len(c["name"]) <= 100 for c in ex.choices)
    everything = await h.autocomplete("save", {"id": ""}, "id")
    assert 1 <= len(everything.choices) <= 25
    assert {c["value"] for c in everything.choices} <= set(corpus_ids(h))


async def test_save_list_autocomplete_offers_own_lists_and_new_name(harness):
    h = harness
    ids = corpus_ids(h)
    await save(h, ids[0], list="robotics")
    await save(h, ids[1], list="theory")
    await save(h, ids[2], list="secret plans", user=h.bob)
    ex = await h.autocomplete("save", {"id": ids[3], "list": "ro"}, "list")
    assert ex.callback_type == 8
    names = [c["name"] for c in ex.choices]
    values = [c["value"] for c in ex.choices]
    assert "robotics" in values and "theory" not in values
    assert values[0] == "ro" and "new list" in names[0]
    empty = await h.autocomplete("save", {"id": ids[3], "list": ""}, "list")
    assert {c["value"] for c in empty.choices} == {"robotics", "theory", DEFAULT_LIST}
    assert "secret plans" not in {c["value"] for c in empty.choices}


# -- /unsave ---------------------------------------------------------------------------------------


async def test_unsave_from_every_list_and_from_one(harness):
    h = harness
    a, b = corpus_ids(h)[:2]
    await save(h, a)
    await save(h, a, list="later")
    await save(h, b)
    ex = await h.run_command("unsave", {"id": a})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "Removed" in ex.content and "from 2 lists" in ex.content
    assert await h.bot.store.saved_ids(uid(h.alice)) == {b}
    one = await h.run_command("unsave", {"id": b, "list": DEFAULT_LIST})
    assert f"from “{DEFAULT_LIST}”" in one.content
    again = await h.run_command("unsave", {"id": b})
    assert again.ephemeral and "is not saved in any of your lists" in again.content


async def test_unsave_autocomplete_lists_only_own_saved_papers(harness):
    h = harness
    ids = corpus_ids(h)
    await save(h, ids[0])
    await save(h, ids[1])
    await save(h, ids[2], user=h.bob)
    ex = await h.autocomplete("unsave", {"id": ""}, "id")
    assert ex.callback_type == 8
    assert {c["value"] for c in ex.choices} == {ids[0], ids[1]}
    typed = await h.autocomplete("unsave", {"id": ids[1][:4]}, "id")
    assert typed.choices[0]["value"] == ids[1]
    title_word = h.bot.engine.get(ids[0]).title.split()[0]
    by_title = await h.autocomplete("unsave", {"id": title_word.lower()}, "id")
    assert ids[0] in {c["value"] for c in by_title.choices}
    bob = await h.autocomplete("unsave", {"id": ""}, "id", user=h.bob)
    assert {c["value"] for c in bob.choices} == {ids[2]}


# -- /saved and /lists -------------------------------------------------------------------------------


async def test_saved_pages_newest_first_with_details(make_harness):
    h = await make_harness(page_size=2)
    ids = corpus_ids(h)[:5]
    for i, pid in enumerate(ids):
        await save(h, pid, note=f"note {i}" if i == 4 else None)
    ex = await h.run_command("saved")
    assert ex.callback_type == 4 and ex.ephemeral
    embed = ex.embeds[0]
    assert f"“{DEFAULT_LIST}”" in embed["title"]
    assert "5 papers · page 1/3" in embed["footer"]["text"]
    assert field_ids(ex) == [ids[4], ids[3]]  # newest save first
    newest = embed["fields"][0]
    paper = h.bot.engine.get(ids[4])
    assert newest["name"].startswith("1. ")
    assert discord.utils.escape_markdown(paper.authors[0]) in newest["value"]
    assert paper.area in newest["value"]
    assert re.search(r"saved <t:\d+:d>", newest["value"])
    assert "> note 4" in newest["value"]
    labels = [c.get("label") for c in ex.components_flat()]
    assert "◀ Previous" in labels and "Next ▶" in labels

    page2 = await h.click(ex.message, ex.custom_id(label="Next"))
    assert page2.callback_type == 7
    assert field_ids(page2) == [ids[2], ids[1]]
    assert page2.embeds[0]["fields"][0]["name"].startswith("3. ")
    page3 = await h.click(page2.message, page2.custom_id(label="Next"))
    assert field_ids(page3) == [ids[0]]
    nxt = next(c for c in page3.components_flat() if c.get("label") == "Next ▶")
    assert nxt["disabled"] is True


async def test_saved_paginator_refuses_other_users_and_disables_on_timeout(make_harness):
    h = await make_harness(page_size=1)
    for pid in corpus_ids(h)[:2]:
        await save(h, pid)
    ex = await h.run_command("saved")
    other = await h.click(ex.message, ex.custom_id(label="Next"), user=h.bob)
    assert other.callback_type == 4 and other.ephemeral
    assert "belongs to someone else" in other.content
    assert h.fake.messages[int(ex.message["id"])]["embeds"] == ex.embeds  # unchanged
    timed_out = await h.timeout_views()
    assert timed_out
    edited = h.fake.messages[int(ex.message["id"])]
    assert all(c.get("disabled") for c in ex.components_flat(edited))


async def test_saved_empty_and_unknown_lists(harness):
    h = harness
    empty = await h.run_command("saved")
    assert empty.ephemeral
    assert "is empty" in empty.content and "/save" in empty.content and "/search" in empty.content
    await save(h, corpus_ids(h)[0], list="ideas")
    hint = await h.run_command("saved")
    assert "Your other lists: ideas (1)" in hint.content
    unknown = await h.run_command("saved", {"list": "nope"})
    assert unknown.ephemeral and "You have no list named “nope”" in unknown.content
    named = await h.run_command("saved", {"list": "IDEAS"})  # names are case-insensitive
    assert field_ids(named) == [corpus_ids(h)[0]]
    assert named.components == []  # one page: no buttons


async def test_lists_shows_counts(harness):
    h = harness
    none = await h.run_command("lists")
    assert none.ephemeral and "no lists yet" in none.content
    ids = corpus_ids(h)
    await save(h, ids[0])
    await save(h, ids[1])
    await save(h, ids[2], list="theory")
    ex = await h.run_command("lists")
    assert ex.callback_type == 4 and ex.ephemeral
    text = ex.embeds[0]["description"]
    assert f"**{DEFAULT_LIST}** — 2 papers" in text and "**theory** — 1 paper" in text
    assert "2 lists, 3 papers" in ex.embeds[0]["title"]


# -- /list … ----------------------------------------------------------------------------------------


async def test_list_create_rename_and_errors(harness):
    h = harness
    ex = await h.run_command("list", {"name": "Reading Group"}, subcommand="create")
    assert ex.callback_type == 4 and ex.ephemeral and "Created the list “Reading Group”" in ex.content
    dup = await h.run_command("list", {"name": "reading group"}, subcommand="create")
    assert "already have a list named “Reading Group”" in dup.content
    renamed = await h.run_command(
        "list", {"old": "reading group", "new": "Journal club"}, subcommand="rename"
    )
    assert "to “Journal club”" in renamed.content
    assert [i.name for i in await h.bot.store.list_lists(uid(h.alice))] == ["Journal club"]
    missing = await h.run_command("list", {"old": "nope", "new": "x"}, subcommand="rename")
    assert "You have no list named “nope”" in missing.content
    ac = await h.autocomplete("list", {"old": "jour"}, "old", subcommand="rename")
    assert [c["value"] for c in ac.choices] == ["Journal club"]


async def test_list_delete_confirm_cancel_and_other_user(harness):
    h = harness
    ids = corpus_ids(h)
    await save(h, ids[0], list="old")
    await save(h, ids[1], list="old")
    ask = await h.run_command("list", {"name": "old"}, subcommand="delete")
    assert ask.callback_type == 4 and ask.ephemeral
    assert "Delete the list “old” and the 2 papers" in ask.content
    labels = [c.get("label") for c in ask.components_flat()]
    assert labels == ["Confirm", "Cancel"]

    intruder = await h.click(ask.message, ask.custom_id(label="Confirm"), user=h.bob)
    assert intruder.callback_type == 4 and intruder.ephemeral
    assert "Only the person who ran this command" in intruder.content
    assert len(await h.bot.store.list_lists(uid(h.alice))) == 1

    cancel = await h.click(ask.message, ask.custom_id(label="Cancel"))
    assert cancel.callback_type == 7 and "nothing was deleted" in cancel.content
    assert cancel.components == []
    assert len(await h.bot.store.list_lists(uid(h.alice))) == 1

    ask2 = await h.run_command("list", {"name": "OLD"}, subcommand="delete")
    done = await h.click(ask2.message, ask2.custom_id(label="Confirm"))
    assert done.callback_type == 7
    assert "Deleted the list “old” and the 2 papers saved in it" in done.content
    assert done.components == []
    assert await h.bot.store.list_lists(uid(h.alice)) == []
    gone = await h.run_command("list", {"name": "old"}, subcommand="delete")
    assert "You have no list named “old”" in gone.content and gone.components == []


async def test_confirmation_disables_on_timeout(harness):
    h = harness
    await save(h, corpus_ids(h)[0], list="keep")
    ask = await h.run_command("list", {"name": "keep"}, subcommand="delete")
    exchanges = await h.timeout_views()
    edits = [r for ex in exchanges for r in ex.requests if r.method == "PATCH"]
    assert edits, "the timeout must edit the message"
    message = h.fake.messages[int(ask.message["id"])]
    assert "nothing was deleted" in message["content"]
    buttons = ask.components_flat(message)
    assert buttons and all(b["disabled"] for b in buttons)
    assert [i.name for i in await h.bot.store.list_lists(uid(h.alice))] == ["keep"]
    with pytest.raises(LookupError, match="disabled"):
        await h.click(message, buttons[0]["custom_id"])


async def test_list_move_finds_the_source_list(harness, monkeypatch):
    h = harness
    # The source list comes from one indexed query, not from paging through every list.
    async def no_paging(*args, **kwargs):
        raise AssertionError("list move paged through the user's lists")

    monkeypatch.setattr(h.bot.store, "get_list", no_paging)
    a, b = corpus_ids(h)[:2]
    await save(h, a, note="keep me")
    ex = await h.run_command("list", {"id": a, "to": "done"}, subcommand="move")
    assert ex.callback_type == 4 and ex.ephemeral
    assert f"from “{DEFAULT_LIST}” to “done”" in ex.content
    monkeypatch.undo()
    page = await h.bot.store.get_list(uid(h.alice), "done")
    assert [(i.paper_id, i.note) for i in page.items] == [(a, "keep me")]

    await save(h, a, list="also")
    monkeypatch.setattr(h.bot.store, "get_list", no_paging)
    ambiguous = await h.run_command("list", {"id": a, "to": "third"}, subcommand="move")
    assert "is in “done”, “also”: say which with from:" in ambiguous.content
    explicit = await h.run_command("list", {"id": a, "to": "third", "from": "also"}, subcommand="move")
    assert "from “also” to “third”" in explicit.content
    not_saved = await h.run_command("list", {"id": b, "to": "x"}, subcommand="move")
    assert "is not saved in any of your lists" in not_saved.content
    ac = await h.autocomplete("list", {"id": a, "to": "th"}, "to", subcommand="move")
    assert "third" in [c["value"] for c in ac.choices]


async def test_list_note_sets_and_clears(harness):
    h = harness
    pid = corpus_ids(h)[0]
    await save(h, pid)
    ex = await h.run_command("list", {"id": pid, "note": "great figures"}, subcommand="note")
    assert ex.callback_type == 4 and ex.ephemeral and "Note saved" in ex.content
    assert (await h.bot.store.get_list(uid(h.alice))).items[0].note == "great figures"
    cleared = await h.run_command("list", {"id": pid}, subcommand="note")
    assert "Note cleared" in cleared.content
    assert (await h.bot.store.get_list(uid(h.alice))).items[0].note == ""
    missing = await h.run_command("list", {"id": pid, "note": "x", "list": "nope"}, subcommand="note")
    assert "You have no list named “nope”" in missing.content
    ac = await h.autocomplete("list", {"id": ""}, "id", subcommand="note")
    assert [c["value"] for c in ac.choices] == [pid]


# -- isolation ------------------------------------------------------------------------------------


async def test_other_users_cannot_see_or_change_my_lists(harness):
    h = harness
    ids = corpus_ids(h)
    await save(h, ids[0], list="private", note="mine")
    bob_saved = await h.run_command("saved", {"list": "private"}, user=h.bob)
    assert "You have no list named “private”" in bob_saved.content
    bob_lists = await h.run_command("lists", user=h.bob)
    assert "no lists yet" in bob_lists.content
    bob_unsave = await h.run_command("unsave", {"id": ids[0]}, user=h.bob)
    assert "is not saved" in bob_unsave.content
    bob_delete = await h.run_command("list", {"name": "private"}, subcommand="delete", user=h.bob)
    assert "You have no list named" in bob_delete.content
    bob_note = await h.run_command("list", {"id": ids[0], "note": "hijack"}, subcommand="note", user=h.bob)
    assert "is not saved" in bob_note.content
    bob_rename = await h.run_command(
        "list", {"old": "private", "new": "pwned"}, subcommand="rename", user=h.bob
    )
    assert "You have no list named" in bob_rename.content
    bob_export = await h.run_command("export", {"format": "json"}, user=h.bob)
    assert bob_export.requests[0].files == [] and "no saved papers" in bob_export.content
    bob_forget = await h.run_command("forgetme", user=h.bob)
    assert "stores nothing about you" in bob_forget.content
    page = await h.bot.store.get_list(uid(h.alice), "private")
    assert [(i.paper_id, i.note) for i in page.items] == [(ids[0], "mine")]


# -- /export and /import -----------------------------------------------------------------------------


async def test_export_bib_has_one_entry_per_paper(harness):
    h = harness
    ids = corpus_ids(h)[:3]
    for pid in ids:
        await save(h, pid)
    await save(h, ids[0], list="twice")  # the same paper in two lists is cited once
    ex = await h.run_command("export", {"format": "bib"})
    assert ex.callback_type == 4 and ex.ephemeral
    request = ex.callback
    assert request.multipart
    [(_, filename, data)] = request.files
    assert filename == "paperbot-all.bib"
    text = data.decode("utf-8")
    assert text.count("@misc{") == 3
    for pid in ids:
        assert pid in text
    assert "4 saved items from your 2 lists, as BibTeX (.bib)." in ex.content
    assert ex.message["attachments"][0]["filename"] == "paperbot-all.bib"


async def test_export_one_list_as_markdown(harness):
    h = harness
    ids = corpus_ids(h)[:2]
    await save(h, ids[0], list="Deep Dive", note="important")
    await save(h, ids[1])
    ex = await h.run_command("export", {"format": "md", "list": "deep dive"})
    [(_, filename, data)] = ex.callback.files
    assert filename == "paperbot-deep-dive.md"
    text = data.decode("utf-8")
    assert ids[0] in text and ids[1] not in text and "important" in text
    assert "1 saved item from “Deep Dive”, as Markdown (.md)." in ex.content


async def test_export_empty_is_a_message_not_a_file(harness):
    h = harness
    ex = await h.run_command("export", {"format": "json"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert ex.callback.files == [] and not ex.callback.multipart
    assert "nothing to export" in ex.content
    await h.run_command("list", {"name": "empty"}, subcommand="create")
    named = await h.run_command("export", {"format": "bib", "list": "empty"})
    assert named.callback.files == [] and "Your list “empty” is empty" in named.content
    unknown = await h.run_command("export", {"format": "bib", "list": "nope"})
    assert "You have no list named “nope”" in unknown.content


async def test_export_json_reimports_for_another_user(harness):
    h = harness
    ids = corpus_ids(h)[:3]
    await save(h, ids[0], note="first")
    await save(h, ids[1], list="theory")
    await save(h, ids[2], list="theory", note="third")
    ex = await h.run_command("export", {"format": "json"})
    [(_, filename, data)] = ex.callback.files
    assert filename == "paperbot-all.json"
    document = json.loads(data)
    assert sum(len(lst["items"]) for lst in document["lists"]) == 3

    attachment = h.fake.add_attachment("paperbot-all.json", data)
    imported = await h.run_command("import", {"file": attachment}, user=h.bob)
    assert imported.callback_type == 5  # deferred while downloading
    assert imported.ephemeral
    assert "Imported 3 papers" in imported.content
    bob_lists = {i.name: i.count for i in await h.bot.store.list_lists(uid(h.bob))}
    assert bob_lists == {DEFAULT_LIST: 1, "theory": 2}
    theory = await h.bot.store.get_list(uid(h.bob), "theory")
    assert {(i.paper_id, i.note) for i in theory.items} == {(ids[1], ""), (ids[2], "third")}

    again = await h.run_command("import", {"file": attachment, "list": "inbox"}, user=h.bob)
    assert "Imported 3 papers" in again.content
    twice = await h.run_command("import", {"file": attachment, "list": "inbox"}, user=h.bob)
    assert "Imported 0 papers; 3 papers already in your lists were skipped." in twice.content

    ex = await h.run_command("export", {"format": "json", "list": "theory"})
    [(_, _, one_list)] = ex.callback.files
    doc = json.loads(one_list)
    doc["lists"][0]["items"] = doc["lists"][0]["items"][:1]
    one = h.fake.add_attachment("one.json", json.dumps(doc).encode())
    await h.run_command("import", {"file": one, "list": "solo"}, user=h.bob)
    again = await h.run_command("import", {"file": one, "list": "solo"}, user=h.bob)
    assert "Imported 0 papers; 1 paper already in your lists was skipped." in again.content


async def test_import_rejects_bad_files(harness):
    h = harness
    wrong_ext = h.fake.add_attachment("notes.txt", b"hello")
    ex = await h.run_command("import", {"file": wrong_ext})
    assert ex.callback_type == 4 and ex.ephemeral and ".json" in ex.content
    not_json = h.fake.add_attachment("broken.json", b"{not json")
    bad = await h.run_command("import", {"file": not_json})
    assert bad.ephemeral and "can't be imported" in bad.content
    assert await h.bot.store.list_lists(uid(h.alice)) == []


def test_export_filename_is_an_ascii_slug():
    assert export_filename(None, "bib") == "paperbot-all.bib"
    assert export_filename("Reading Group", "md") == "paperbot-reading-group.md"
    assert export_filename("阅读清单", "json") == "paperbot-yueduqingdan.json"
    assert export_filename("Lectures été", "bib") == "paperbot-lectures-ete.bib"
    assert export_filename("Статьи", "md") == "paperbot-stati.md"
    assert export_filename("📚 reading", "md") == "paperbot-books-reading.md"
    assert export_filename("???", "md") == "paperbot-list.md"
    assert export_filename("论文" * 40, "bib").isascii() and len(export_filename("论文" * 40, "bib")) <= 53


# -- /forgetme --------------------------------------------------------------------------------------


async def test_forgetme_confirm_deletes_everything_and_reports_counts(harness):
    h = harness
    ids = corpus_ids(h)
    await save(h, ids[0])
    await save(h, ids[1], list="b")
    await save(h, ids[2], list="b")
    await save(h, ids[0], user=h.bob)
    ask = await h.run_command("forgetme")
    assert ask.callback_type == 4 and ask.ephemeral
    assert "2 lists holding 3 saved papers" in ask.content
    intruder = await h.click(ask.message, ask.custom_id(label="Confirm"), user=h.bob)
    assert "Only the person who ran this command" in intruder.content
    assert len(await h.bot.store.saved_ids(uid(h.alice))) == 3

    done = await h.click(ask.message, ask.custom_id(label="Confirm"))
    assert done.callback_type == 7
    # ids[0] is still saved by bob, so only two snapshots go.
    assert "deleted 3 saved papers in 2 lists, and 2 stored paper copies" in done.content
    assert "(7 rows in all)" in done.content
    assert done.components == []
    assert await h.bot.store.list_lists(uid(h.alice)) == []
    assert await h.bot.store.saved_ids(uid(h.bob)) == {ids[0]}
    nothing = await h.run_command("forgetme")
    assert "stores nothing about you" in nothing.content


async def test_forgetme_of_one_empty_list_says_1_row(harness):
    h = harness
    await h.run_command("list", {"name": "empty"}, subcommand="create")
    ask = await h.run_command("forgetme")
    done = await h.click(ask.message, ask.custom_id(label="Confirm"))
    assert "(1 row in all)" in done.content, done.content


async def test_forgetme_cancel_and_timeout_keep_data(harness):
    h = harness
    await save(h, corpus_ids(h)[0])
    ask = await h.run_command("forgetme")
    cancel = await h.click(ask.message, ask.custom_id(label="Cancel"))
    assert cancel.callback_type == 7 and "nothing was deleted" in cancel.content
    ask2 = await h.run_command("forgetme")
    await h.timeout_views()
    message = h.fake.messages[int(ask2.message["id"])]
    assert all(b["disabled"] for b in ask2.components_flat(message))
    assert len(await h.bot.store.saved_ids(uid(h.alice))) == 1


# -- translations ----------------------------------------------------------------------------------


async def test_commands_sync_with_zh_cn_descriptions(harness):
    requests = await harness.sync()
    [put] = [r for r in requests if r.method == "PUT"]
    commands = {c["name"]: c for c in put.json}
    for name in ("save", "unsave", "saved", "lists", "export", "import", "forgetme", "list"):
        assert name in commands
        zh = (commands[name].get("description_localizations") or {}).get("zh-CN")
        assert zh == TRANSLATIONS_ZH[commands[name]["description"]]
    subcommands = {o["name"]: o for o in commands["list"]["options"]}
    assert set(subcommands) == {"create", "rename", "delete", "move", "note"}
    for option in commands["save"]["options"]:
        assert option["description_localizations"]["zh-CN"] == TRANSLATIONS_ZH[option["description"]]


async def test_saved_page_of_ten_long_items_fits_discord_limits(make_harness):
    h = await make_harness(page_size=10)
    ids = corpus_ids(h)[:12]
    for pid in ids:
        ex = await save(h, pid, note="n" * 150 + " " + "long note words " * 20)
        assert "Saved" in ex.content
    ex = await h.run_command("saved")
    embed = ex.embeds[0]
    assert len(embed["fields"]) == 10  # nothing dropped to fit; the notes were shortened instead
    total = len(embed["title"]) + len(embed["footer"]["text"]) + len(embed.get("description") or "")
    total += sum(len(f["name"]) + len(f["value"]) for f in embed["fields"])
    assert total <= 6000
    assert all("> n" in f["value"] for f in embed["fields"])
    assert "12 papers · page 1/2" in embed["footer"]["text"]


async def test_save_with_too_long_note_saves_nothing(harness):
    ex = await save(harness, corpus_ids(harness)[0], note="x" * 501)
    assert "A note can be at most 500 characters long" in ex.content
    assert await harness.bot.store.saved_ids(uid(harness.alice)) == set()
