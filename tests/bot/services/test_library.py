"""bot/services/library.py: saving, list pages, list management and /forgetme, with plain arguments."""

from __future__ import annotations

import pytest

from bot.services.base import Confirmation, Notice
from bot.services.library import ListsOverview, SavedListPage
from bot.store import ListNotFoundError, NotSavedError
from tests.bot.services.conftest import ALICE, BOB


async def test_save_then_save_again_and_with_a_note(services, corpus_ids):
    library, pid = services.library, corpus_ids[0]
    title = services.context.title(pid)
    assert (await library.save(ALICE, pid)).text == f"Saved {title} to “reading” (a new list)."
    again = await library.save(ALICE, pid)
    assert again.text == f"{title} is already in “reading”; nothing changed. Add note:… to change its note."
    assert (
        await library.save(ALICE, pid, note="read it")
    ).text == f"{title} is already in “reading”; note updated."
    new_list = await library.save(ALICE, pid, "theory", "appendix")
    assert new_list.text == f"Saved {title} to “theory” (a new list). Note kept."


async def test_save_of_an_unknown_id_is_a_notice_not_an_error(services):
    notice = await services.library.save(ALICE, "  nope1234 ")
    assert notice.text.startswith("There is no paper with id `nope1234` in the corpus.")
    assert await services.context.store.saved_ids(ALICE) == set()


async def test_quick_save_goes_to_the_default_list(services, corpus_ids):
    pid = corpus_ids[1]
    first = await services.library.quick_save(ALICE, pid)
    assert "to your list *reading*. See it with /saved." in first.text
    assert "is already in your list *reading*." in (await services.library.quick_save(ALICE, pid)).text


async def test_unsave_counts_lists_and_refuses_what_is_not_saved(services, corpus_ids):
    library, pid = services.library, corpus_ids[0]
    await library.save(ALICE, pid)
    await library.save(ALICE, pid, "theory")
    assert (await library.unsave(ALICE, pid)).text.endswith("from 2 lists.")
    with pytest.raises(NotSavedError):
        await library.unsave(ALICE, pid)


async def test_saved_pages_and_the_empty_list(services, corpus_ids):
    library = services.library
    empty = await library.saved(ALICE)
    assert isinstance(empty, Notice) and empty.text.startswith("Your list “reading” is empty.")
    for pid in corpus_ids[:7]:
        await library.save(ALICE, pid)
    await library.save(ALICE, corpus_ids[8], "theory")
    first = await library.saved(ALICE)
    assert isinstance(first, SavedListPage)
    assert (first.page, first.pages, first.saved.total) == (0, 2, 7)
    assert [i.paper_id for i in first.saved.items] == corpus_ids[6:1:-1]  # newest first
    assert {info.name for info in first.other_lists} == {"reading", "theory"}
    second = await library.saved_page(ALICE, first.list_name, 1)
    assert [i.paper_id for i in second.saved.items] == corpus_ids[1::-1]
    # Papers removed while paging: the page asked for no longer exists, the last one is shown.
    for pid in corpus_ids[:3]:
        await library.unsave(ALICE, pid)
    clamped = await library.saved_page(ALICE, "reading", 1)
    assert (clamped.page, clamped.pages, clamped.notice) == (0, 1, None)
    for pid in corpus_ids[3:7]:
        await library.unsave(ALICE, pid)
    gone = await library.saved_page(ALICE, "reading", 0)
    assert gone.notice.startswith("Your list “reading” is empty now.")
    other = await library.saved(ALICE)
    assert isinstance(other, Notice) and "Your other lists: theory (1)" in other.text


async def test_lists_overview_and_management(services, corpus_ids):
    library = services.library
    assert (await library.lists(ALICE)).text.startswith("You have no lists yet.")
    assert (await library.create_list(ALICE, "  journal   club ")).text.startswith(
        "Created the list “journal club”."
    )
    renamed = await library.rename_list(ALICE, "Journal Club", "JC")
    assert renamed.text == "Renamed “journal club” to “JC”."  # the list's own name, not as typed
    overview = await library.lists(ALICE)
    assert isinstance(overview, ListsOverview) and [i.name for i in overview.lists] == ["JC"]
    assert isinstance(await library.lists(BOB), Notice)  # lists are per user


async def test_delete_list_asks_first_and_deletes_only_on_confirm(services, corpus_ids):
    library = services.library
    assert (
        await library.delete_list(ALICE, "nope")
    ).text == "You have no list named “nope”. /lists shows yours."
    await library.save(ALICE, corpus_ids[0], "theory")
    asked = await library.delete_list(ALICE, "THEORY")
    assert isinstance(asked, Confirmation)
    assert asked.question.startswith("Delete the list “theory” and the 1 paper saved in it?")
    assert await services.context.store.saved_ids(ALICE) == {corpus_ids[0]}  # nothing yet
    assert await asked.confirm() == "Deleted the list “theory” and the 1 paper saved in it."
    assert await services.context.store.saved_ids(ALICE) == set()


async def test_move_needs_from_when_two_lists_hold_the_paper(services, corpus_ids):
    library, pid = services.library, corpus_ids[0]
    with pytest.raises(NotSavedError):
        await library.move(ALICE, pid, "done")
    await library.save(ALICE, pid, "a")
    moved = await library.move(ALICE, pid, "done")
    assert moved.text.endswith("from “a” to “done”.")
    await library.save(ALICE, pid, "b")
    ambiguous = await library.move(ALICE, pid, "c")
    assert (
        ambiguous.text.endswith("is in “b”, “done”: say which with from:<list>.")
        or "say which" in ambiguous.text
    )
    with pytest.raises(ListNotFoundError):
        await library.move(ALICE, pid, "c", "nope")


async def test_note_set_and_clear(services, corpus_ids):
    library, pid = services.library, corpus_ids[0]
    await library.save(ALICE, pid)
    assert (await library.set_note(ALICE, pid, "hello")).text.startswith("Note saved for ")
    assert (await library.set_note(ALICE, pid, None, "reading")).text.endswith(" in “reading”.")
    page = await library.saved(ALICE)
    assert page.saved.items[0].note == ""


async def test_forget_asks_then_deletes_every_row(services, corpus_ids):
    library = services.library
    assert (await library.forget(ALICE)).text.startswith("paperbot stores nothing about you")
    await library.save(ALICE, corpus_ids[0])
    await library.save(ALICE, corpus_ids[1], "x")
    await library.save(BOB, corpus_ids[0])
    asked = await library.forget(ALICE)
    assert asked.question.startswith("Delete all your data — 2 lists holding 2 saved papers")
    done = await asked.confirm()
    assert done.startswith(
        "Done: deleted 2 saved papers in 2 lists, and 1 stored paper copy nobody else had saved"
    )
    assert await services.context.store.saved_ids(ALICE) == set()
    assert await services.context.store.saved_ids(BOB) == {corpus_ids[0]}


async def test_suggestions(services, corpus_ids):
    library = services.library
    await library.save(ALICE, corpus_ids[0], "theory")
    [saved] = await library.saved_suggestions(ALICE, corpus_ids[0][:3])
    assert saved.value == corpus_ids[0] and saved.label.startswith(f"{corpus_ids[0]} — ")
    assert [s.label for s in await library.list_suggestions(ALICE, "th")] == ["theory (1 paper)"]
    fresh = await library.list_suggestions(ALICE, "to  read", new=True)
    assert fresh[0].label == "to read (new list)" and fresh[0].value == "to read"
    default = await library.list_suggestions(ALICE, "", new=True)
    assert default[0].value == "reading" and default[0].label == "reading (default list)"
