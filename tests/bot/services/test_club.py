"""ClubService with plain arguments: the editor rule, add/remove/show, export."""

from __future__ import annotations

import pytest

from bot.services.base import Notice
from bot.services.club import ClubPage, NotAnEditorError
from tests.bot.services.conftest import ALICE, BOB

GUILD = 1300000000000000001


async def test_the_editor_rule(services, settings_factory):
    assert services.club.may_edit(manage_guild=True, role_ids=())
    assert not services.club.may_edit(manage_guild=False, role_ids=(5,))
    with pytest.raises(NotAnEditorError):
        await services.club.add(GUILD, ALICE, "x", manage_guild=False)


async def test_add_show_remove_export(services, corpus_ids):
    club = services.club
    assert isinstance(await club.show(GUILD), Notice)
    added = await club.add(GUILD, ALICE, corpus_ids[0], "first", manage_guild=True)
    assert added.public and "Added" in added.text
    await club.add(GUILD, BOB, corpus_ids[1], manage_guild=True)
    page = await club.show(GUILD)
    assert isinstance(page, ClubPage) and [e.paper_id for e in page.entries] == corpus_ids[:2]
    assert page.in_corpus == frozenset(corpus_ids[:2])
    exported = await club.export(GUILD, "json")
    assert exported.filename == "paperbot-club.json" and corpus_ids[0].encode() in exported.data
    assert "Removed" in (await club.remove(GUILD, corpus_ids[0], manage_guild=True)).text
    assert await club.suggestions(GUILD, "") and await club.suggestions(GUILD, "zzz") == []
