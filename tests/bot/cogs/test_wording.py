"""Wording defects seen through the real discord.py path (issue 8 item 13): no-ops are not reported
as actions, ids are inline code whatever they hold, counts use the right plural."""

from __future__ import annotations

from bot.store import DEFAULT_LIST


def uid(user: dict) -> int:
    return int(user["id"])


async def test_renaming_a_list_to_its_own_name_is_not_reported_as_a_rename(harness):
    h = harness
    await h.run_command("list", {"name": "Theory"}, subcommand="create")
    same = await h.run_command("list", {"old": "Theory", "new": "Theory"}, subcommand="rename")
    assert "already called “Theory”; nothing changed" in same.content and "Renamed" not in same.content
    case = await h.run_command("list", {"old": "theory", "new": "THEORY"}, subcommand="rename")
    assert "Renamed “Theory” to “THEORY”" in case.content  # a case change is a real rename
    assert [i.name for i in await h.bot.store.list_lists(uid(h.alice))] == ["THEORY"]


async def test_moving_a_paper_to_the_list_it_is_in_moves_nothing(harness):
    h = harness
    pid = h.bot.engine.index.papers[0].id
    await h.run_command("save", {"id": pid, "list": "Theory"})
    ex = await h.run_command("list", {"id": pid, "to": "theory", "from": "Theory"}, subcommand="move")
    assert "is already in “Theory”; nothing moved" in ex.content and "Moved" not in ex.content
    implicit = await h.run_command("list", {"id": pid, "to": "Theory"}, subcommand="move")
    assert "nothing moved" in implicit.content
    other = h.bot.engine.index.papers[1].id
    missing = await h.run_command("list", {"id": other, "to": "x", "from": "x"}, subcommand="move")
    assert f"Paper `{other}` is not saved in your list “x”" in missing.content


async def test_an_id_that_is_not_saved_is_inline_code(harness):
    ex = await harness.run_command("unsave", {"id": "nope1234"})
    assert "Paper `nope1234` is not saved in any of your lists" in ex.content


async def test_an_id_with_a_backtick_stays_inline_code(harness):
    ex = await harness.run_command("paper", {"id": "x`y"})
    assert "There is no paper with id `` x`y `` — try /search." in ex.content
    unsaved = await harness.run_command("unsave", {"id": "a`b"})
    assert "Paper `` a`b `` is not saved" in unsaved.content


async def test_saved_paper_titles_show_the_id_as_code(harness):
    pid = harness.bot.engine.index.papers[0].id
    ex = await harness.run_command("save", {"id": pid})
    assert f"(`{pid}`)" in ex.content and f"“{DEFAULT_LIST}”" in ex.content


async def test_choice_names_have_zh_cn(harness):
    (put,) = [r for r in await harness.sync() if r.method == "PUT"]
    commands = {c["name"]: c for c in put.json}

    def choices(options, name):
        for option in options or []:
            if option["name"] == name and option.get("choices"):
                return option["choices"]
            found = choices(option.get("options"), name)
            if found:
                return found
        return None

    export = choices(commands["export"]["options"], "format")
    groups = [export, choices(commands["admin"]["options"], "scope")]
    for group in groups:
        assert group
        for choice in group:
            zh = (choice.get("name_localizations") or {}).get("zh-CN")
            assert zh and zh != choice["name"], choice


async def test_an_interaction_discord_already_expired_is_one_warning(harness, caplog):
    # The bot answered after Discord's 3 s (an event loop stall): Discord says 10062, Unknown interaction.
    harness.fake.callback_deadline = 3.0
    harness.interaction_age = 5.0
    with caplog.at_level("DEBUG"):
        ex = await harness.run_command("lists")
    assert ex.callback.status == 404
    records = [r for r in caplog.records if r.name.startswith("bot")]
    assert [r.levelname for r in records if r.levelno >= 30] == ["WARNING"]
    (warning,) = [r for r in records if r.levelno >= 30]
    assert "expired before paperbot answered" in warning.getMessage() and warning.exc_info is None
    assert [r for r in ex.requests if r.method == "POST"] == [ex.callback]  # no second try
