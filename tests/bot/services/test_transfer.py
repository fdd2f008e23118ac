"""bot/services/transfer.py: export files and JSON imports, with plain arguments."""

from __future__ import annotations

import json

from bot.services.base import Notice
from bot.services.transfer import IMPORT_MAX_BYTES, ExportFile, export_filename
from tests.bot.services.conftest import ALICE, BOB


async def test_export_refuses_nothing_to_export(services):
    transfer = services.transfer
    assert (await transfer.export(ALICE, "bib")).text.startswith(
        "You have no saved papers yet, so there is nothing"
    )
    assert (
        await transfer.export(ALICE, "bib", "nope")
    ).text == "You have no list named “nope”. /lists shows yours."
    await services.library.create_list(ALICE, "empty")
    assert (await transfer.export(ALICE, "md", "EMPTY")).text.startswith(
        "Your list “empty” is empty, so there"
    )


async def test_export_files_name_their_list_and_count(services, corpus_ids):
    for pid in corpus_ids[:2]:
        await services.library.save(ALICE, pid)
    await services.library.save(ALICE, corpus_ids[2], "Théorie à lire")
    every = await services.transfer.export(ALICE, "bib")
    assert isinstance(every, ExportFile) and every.filename == "paperbot-all.bib"
    assert every.text == "3 saved items from your 2 lists, as BibTeX (.bib)."
    assert every.data.decode().count("@misc{") == 3
    one = await services.transfer.export(ALICE, "md", "reading")
    assert (
        one.filename == "paperbot-reading.md"
        and one.text == "2 saved items from “reading”, as Markdown (.md)."
    )
    assert export_filename("Théorie à lire", "json").startswith("paperbot-th")


async def test_export_over_the_upload_limit_is_refused(services, corpus_ids):
    await services.library.save(ALICE, corpus_ids[0])
    refused = await services.transfer.export(ALICE, "json", size_limit=100)
    assert isinstance(refused, Notice) and "over Discord's 0 MB upload limit" in refused.text


def test_check_import_judges_name_and_size_before_download(services):
    transfer = services.transfer
    assert transfer.check_import("saved.JSON", 10) is None
    assert transfer.check_import("saved.bib", 10).text.startswith("Import takes the .json file")
    assert "imports are limited to 8 MB" in transfer.check_import("big.json", IMPORT_MAX_BYTES + 1).text


async def test_export_json_imports_for_another_user_and_skips_duplicates(services, corpus_ids):
    for pid in corpus_ids[:3]:
        await services.library.save(ALICE, pid, note=f"note {pid}")
    exported = await services.transfer.export(ALICE, "json")
    assert (await services.transfer.import_json(BOB, exported.data)).text == "Imported 3 papers."
    again = await services.transfer.import_json(BOB, exported.data)
    assert again.text == "Imported 0 papers; 3 papers already in your lists were skipped."
    assert await services.context.store.saved_ids(BOB) == set(corpus_ids[:3])


async def test_import_reports_bad_files_and_lists_at_most_five_bad_records(services, corpus_ids):
    transfer = services.transfer
    assert (await transfer.import_json(ALICE, b"not json")).text.startswith("That file can't be imported: ")
    await services.library.save(BOB, corpus_ids[0])
    document = json.loads((await transfer.export(BOB, "json")).data)
    document["lists"][0]["items"] += [{"id": f"bad {n}", "title": "x"} for n in range(7)]
    reply = await transfer.import_json(ALICE, json.dumps(document).encode())
    lines = reply.text.split("\n")
    assert lines[0] == "Imported 1 paper." and lines[1] == "7 records could not be imported:"
    assert len([line for line in lines if line.startswith("• ")]) == 5 and lines[-1] == "… +2 more"
