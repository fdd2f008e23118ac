"""Views disable themselves through a token that can still edit their message (issue 8 item 1).

Discord expires an interaction token 15 minutes after the interaction (the fake answers 401, code
50027, after that or for tokens put in ``fake.expired_tokens``); discord.py restarts a view's timeout on
every press. These tests press, expire and back-date through the real discord.py path.
"""

from __future__ import annotations

import asyncio
import logging

from bot.ui.views import VIEW_LIFE_MAX


def controls_disabled(h, message) -> bool:
    current = h.fake.messages[int(message["id"])]
    controls = [c for row in current["components"] for c in row.get("components", [])]
    return bool(controls) and all(c.get("disabled") for c in controls)


async def test_timeout_edits_through_the_latest_press_when_the_command_token_expired(harness):
    ex = await harness.run_command("search", {"query": "learning", "limit": 3})
    press = await harness.click(ex.message, ex.custom_id(label="Next"))
    assert press.callback_type == 7
    harness.fake.expired_tokens.add(ex.payload["token"])  # the command is more than 15 minutes old

    (edit,) = await harness.timeout_views()
    patch = edit.requests[-1]
    assert patch.method == "PATCH" and patch.status == 200
    assert press.payload["token"] in patch.path and patch.path.endswith("/messages/@original")
    assert controls_disabled(harness, ex.message)


async def test_a_press_that_answers_elsewhere_does_not_outlive_the_token(harness):
    # The command's token has about 4 s of the view's safe life left; pressing Save answers with a new
    # message, so only that old token can edit the results: the view must time out before it expires,
    # although discord.py restarted the 600 s timeout on the press.
    harness.interaction_age = VIEW_LIFE_MAX - 4
    ex = await harness.run_command("search", {"query": "learning", "limit": 3})
    harness.interaction_age = 0.0
    paper_id = ex.components_flat()[-1]["options"][0]["value"]
    saved = await harness.select(ex.message, ex.custom_id(placeholder="Save"), [paper_id])
    assert saved.callback_type == 4
    for _ in range(100):
        if controls_disabled(harness, ex.message):
            break
        await asyncio.sleep(0.1)
    assert controls_disabled(harness, ex.message)
    patches = [r for r in harness.requests if r.method == "PATCH" and ex.payload["token"] in r.path]
    assert patches and patches[-1].status == 200


async def test_an_edit_no_token_can_make_is_logged_as_a_warning(harness, caplog):
    ex = await harness.run_command("search", {"query": "learning", "limit": 3})
    harness.fake.expired_tokens.add(ex.payload["token"])
    with caplog.at_level(logging.DEBUG, logger="bot.ui.views"):
        (edit,) = await harness.timeout_views()
    assert edit.requests[-1].status == 401
    warnings = [r for r in caplog.records if r.name == "bot.ui.views" and r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and ex.message["id"] in warnings[0].getMessage()
    assert "50027" in warnings[0].getMessage() or "Invalid Webhook Token" in warnings[0].getMessage()


async def test_confirmation_expires_through_the_original_token(harness):
    await harness.run_command("list", {"name": "Theory"}, subcommand="create")
    await harness.run_command("list", {"name": "Theory"}, subcommand="delete")
    (edit,) = await harness.timeout_views()
    assert edit.requests[-1].status == 200 and "nothing was deleted" in edit.requests[-1].json["content"]
