"""The offline console: the same command code, driven by typed lines, rendered as text."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest

from bot.console import run_console
from bot.settings import PROJECT_ROOT


def console_env(tmp_path) -> dict[str, str]:
    """The environment of a `paperbot console` subprocess: files in tmp_path, never a token."""
    env = dict(
        os.environ,
        PYTHONPATH=str(PROJECT_ROOT),
        DATABASE_PATH=str(tmp_path / "c.db"),
        INDEX_CACHE_DIR=str(tmp_path / "cache"),
    )
    env.pop("DISCORD_TOKEN", None)
    return env


def console(settings, text: str, out_dir=None) -> tuple[int, str]:
    """Run the console on ``text``; exports go to ``out_dir`` (default: the test's database folder, a
    temporary one), never to the working folder of the test run."""
    out = io.StringIO()
    folder = out_dir if out_dir is not None else settings.database_path.parent
    code = run_console(settings, stdin=io.StringIO(text), stdout=out, out_dir=folder)
    return code, out.getvalue()


def test_piped_search_prints_results_and_exits_0(settings_factory):
    settings = settings_factory()
    code, out = console(settings, "/search reward models\n")
    assert code == 0
    assert "(only you can see this)" in out
    assert "Search “reward models”" in out and "page 1/" in out
    assert "Authors:" in out and "ID:" in out
    assert settings.database_path.exists()


def test_numbers_press_the_last_message_controls(settings_factory):
    code, out = console(settings_factory(), "/search learning limit:2\n1\n")
    assert code == 0
    assert "page 2/" in out and "(updated)" in out


def test_save_from_select_then_saved_lists_it(settings_factory):
    code, out = console(settings_factory(), "/search reward models limit:1\n2\n/saved\n")
    assert code == 0
    assert "Saved " in out
    tail = out.split("Saved ", 1)[1]
    assert "reading" in tail


def test_options_free_text_and_quoted_values(settings_factory):
    code, out = console(settings_factory(), '/search learning area:"Reinforcement Learning" limit:1\n')
    assert "area: Reinforcement Learning" in out


def test_mention_ask_paper_and_admin(settings_factory):
    text = "@bot what is offline reinforcement learning?\n/ask what is a reward model?\n/admin stats\n"
    code, out = console(settings_factory(), text)
    assert code == 0
    assert "(reply)" in out and "Q: what is offline" in out
    assert "Q: what is a reward model?" in out
    assert "administrators" not in out  # the console user owns the application


def test_help_unknown_and_bad_lines_keep_the_session(settings_factory):
    code, out = console(
        settings_factory(), "help\n/nosuch\nhello\n/search limit:x words\n/paper\nquit\n/search x\n"
    )
    assert code == 0
    assert "/search <query>" in out
    assert "/export saves its file in" in out and "--out FOLDER" in out and "/import <path>" in out
    assert "no command /nosuch" in out
    assert "start with /" in out
    assert "whole number" in out
    assert "/paper needs the option id: type /paper id:<id>" in out
    assert "Search “x”" not in out  # nothing runs after quit


def test_corrupt_database_exits_2(settings_factory, tmp_path, capsys):
    db = tmp_path / "bad.db"
    db.write_bytes(b"garbage" * 200)
    code, out = console(settings_factory(database_path=db), "/search x\n")
    assert code == 2
    err = capsys.readouterr().err
    assert "cannot open the database" in err and "Traceback" not in err


@pytest.mark.skipif(
    not (PROJECT_ROOT / "retrieval" / "corpus.py").exists(), reason="needs the real retrieval.corpus"
)
def test_cli_console_subprocess(tmp_path):
    env = console_env(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "console", "--out", "exports"],
        input="/search reward models\n/save y13x62p7\n/export md\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "Search “reward models”" in result.stdout
    assert "saved as exports/paperbot-all.md" in result.stdout  # --out, shown as typed from here
    assert "y13x62p7" in (tmp_path / "exports" / "paperbot-all.md").read_text(encoding="utf-8")


def test_terminal_text_renders_discord_markdown():
    from bot.console import _terminal_text

    piped = _terminal_text(r"**Reward** models cost \~2x at <t:0:d>", ansi=False, keep_bold=True)
    assert piped == "**Reward** models cost ~2x at 1970-01-01"
    assert _terminal_text(r"**Search** \*x\*", ansi=False) == "Search *x*"
    assert _terminal_text("**a**", ansi=True) == "\x1b[1ma\x1b[0m"
    assert _terminal_text("<t:99999999999999:R>", ansi=False) == "<t:99999999999999:R>"  # out of range


def test_option_typos_and_out_of_range_values_are_named(settings_factory):
    long_query = "attention " * 500
    code, out = console(
        settings_factory(),
        "/export fromat:bib\n/search sparse lmit:3\n/search sparse limit:0\n/search query:\n"
        f"/search {long_query}\n/search time:series limit:1\n",
    )
    assert code == 0
    assert "/export has no option 'fromat': did you mean format:?" in out
    assert "format must be one of" not in out
    assert "/search has no option 'lmit': did you mean limit:?" in out
    assert "limit must be from 1 to 10, got 0" in out
    assert "query is empty" in out
    assert "query is 4,999 characters; Discord allows at most 300" in out
    assert "Search “time:series”" in out  # a colon in free text that is no option's typo


def test_ctrl_c_at_the_prompt_exits_130_without_waiting_for_a_line(tmp_path):
    env = console_env(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        cwd=tmp_path,
    )
    try:
        proc.stdin.write("/lists\n")
        proc.stdin.flush()
        assert "You have no lists yet" in proc.stdout.readline() + proc.stdout.readline()
        proc.send_signal(signal.SIGINT)  # stdin stays open: the reader thread is still blocked
        assert proc.wait(timeout=20) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_phrases_keep_their_quotes_and_text_after_an_option_belongs_to_it(settings_factory):
    code, out = console(
        settings_factory(),
        '/search "reward model" -"large language" limit:1\n'
        '/search query:"reward model" -quantum limit:1\n'
        "/ask what's a reward model?\n",
    )
    assert code == 0
    assert "Search “\"reward model\" -\"large language\"”" in out  # a phrase, not two words
    assert "Search “\"reward model\" -quantum”" in out  # not area "-quantum"
    assert "There is no area" not in out
    assert "Q: what's a reward model?" in out


def test_a_script_of_many_searches_is_not_throttled(settings_factory):
    settings = settings_factory(cooldown_rate=2, cooldown_per=60.0)
    code, out = console(settings, "/search reward models\n" * 4)
    assert code == 0
    assert out.count("Search “reward models”") == 4


def test_every_slash_command_has_a_console_handler(settings_factory):
    from bot.console import Console, leaf_commands

    console = Console(settings_factory(), io.StringIO(), io.StringIO())
    names = {command.qualified_name for command in leaf_commands()}
    assert {"search", "ask", "list move", "admin reindex", "export", "import"} <= names
    assert names == set(console.handlers)


def test_the_console_runs_without_a_fake_discord(tmp_path):
    """It calls the services: no loopback server, no test machinery."""
    code = (
        "import io, sys\n"
        "from bot.console import run_console\n"
        "from bot.settings import load_settings\n"
        "out = io.StringIO()\n"
        "code = run_console(load_settings(), stdin=io.StringIO('/search reward models\\n'), stdout=out)\n"
        "assert code == 0 and 'Search “reward models”' in out.getvalue(), out.getvalue()\n"
        "loaded = [m for m in sys.modules if m.startswith(('aiohttp.test_utils', 'tests'))]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=console_env(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_export_writes_the_file_and_import_reads_it_back_offline(settings_factory, tmp_path):
    """Issue 30 item 3: /export saves the file (in the folder the console was given) and says where;
    /import reads it back from that path: a round trip with no Discord."""
    settings = settings_factory()
    folder = tmp_path / "exports"
    code, out = console(
        settings, "/save y13x62p7 note:read the appendix\n/save tq1rsx2h list:theory\n/export json\n", folder
    )
    assert code == 0
    saved = folder / "paperbot-all.json"
    assert saved.is_file()
    assert f"📎 paperbot-all.json ({saved.stat().st_size:,} bytes) saved as {saved}" in out
    assert f"/import {saved} reads it back" in out
    exported = json.loads(saved.read_text(encoding="utf-8"))
    assert {item["id"] for lst in exported["lists"] for item in lst["items"]} >= {"y13x62p7"}

    # A second export never overwrites the first; a .bib is saved too (and is not offered to /import).
    code, out = console(settings, "/export json\n/export bib\n", folder)
    assert (folder / "paperbot-all-2.json").is_file() and (folder / "paperbot-all.bib").is_file()
    assert "saved as" in out and "/import" in out.split("paperbot-all.bib", 1)[0]
    assert "reads it back" not in out.split("paperbot-all.bib", 1)[1]

    code, out = console(settings, "/forgetme\n1\n/lists\n", folder)
    assert "You have no lists yet" in out
    code, out = console(settings, f"/import {saved}\n/saved\n/saved theory\n/list delete theory\n2\n", folder)
    assert code == 0
    assert "Imported 2 papers." in out, out
    assert "read the appendix" in out and "y13x62p7" in out and "tq1rsx2h" in out
    assert "[1] Confirm  [2] Cancel" in out and "Cancelled — nothing was deleted." in out


def test_import_reads_a_path_relative_to_the_working_or_out_folder(settings_factory, tmp_path, monkeypatch):
    settings = settings_factory()
    folder = tmp_path / "out"
    code, out = console(settings, "/save y13x62p7\n/export json\n/forgetme\n1\n", folder)
    assert (folder / "paperbot-all.json").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out = console(settings, '/import paperbot-all.json list:"from file"\n/import nosuch.json\n', folder)
    assert "Imported 1 paper." in out
    assert "cannot read nosuch.json: no such file in" in out
    code, out = console(settings, "/import file:paperbot-all.md\n", folder)
    assert "cannot read paperbot-all.md" in out
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    code, out = console(settings, "/save y13x62p7\n/export md\n/lists\n", blocked / "exports")
    assert code == 0 and "! cannot save paperbot-all.md in" in out and "reading" in out  # the session goes on


def test_console_answer_is_the_one_a_mention_gets(settings_factory):
    """The console prints /ask and a mention reply from the same embed: answer first, then the
    supporting quotes, each with its [n], then the cited papers by id and title."""
    question = "How are sparse autoencoders evaluated for interpretability?"
    code, out = console(settings_factory(), f"/ask {question}\n@bot {question}\n")
    assert code == 0
    first, second = out.split("(reply)", 1)

    def quotes(part: str) -> list[str]:
        return [line.lstrip("│ ") for line in part.splitlines() if line.lstrip("│ ").startswith("> ")]

    for part in (first, second):
        lines = [line.lstrip("│ ") for line in part.splitlines()]
        assert lines.index("**Supporting**") == lines.index(quotes(part)[0]) + 1  # the answer leads
        assert 2 <= len(quotes(part)) <= 3
        assert all(q.endswith("]") for q in quotes(part))
        assert "Sources: [1] `" in part
    assert quotes(first) == quotes(second)


def _visible(embed: dict) -> dict:
    keys = ("title", "url", "description", "fields", "footer", "author")
    return {key: embed[key] for key in keys if embed.get(key)}


@pytest.mark.parametrize(
    ("line", "command", "options"),
    [
        ("/search reward models limit:3", "search", {"query": "reward models", "limit": 3}),
        ("/search learning area:Theory", "search", {"query": "learning", "area": "Theory"}),
        ("/ask what is a reward model?", "ask", {"question": "what is a reward model?"}),
        ("/paper y13x62p7", "paper", {"id": "y13x62p7"}),
        ("/similar y13x62p7", "similar", {"id": "y13x62p7"}),
        ("/saved", "saved", {}),
        ("/lists", "lists", {}),
        ("/export format:md", "export", {"format": "md"}),
    ],
)
async def test_the_console_shows_what_the_bot_sends(harness, line, command, options, tmp_path):
    """Same services, same builders: the console's message is the one the bot sends to Discord."""
    from bot.console import Console

    owner = harness.owner
    await harness.run_command("save", {"id": "y13x62p7", "note": "read the appendix"}, user=owner)
    sent = await harness.run_command(command, options, user=owner)
    console = Console(harness.bot.settings, io.StringIO(), io.StringIO(), out_dir=tmp_path)
    console.services = harness.bot.services
    console.user_id = int(owner["id"])
    shown = []
    console.show = shown.append
    await console.handle(line)
    [message] = shown
    assert (message.content or "") == sent.content
    assert [_visible(e.to_dict()) for e in message.embeds] == [_visible(e) for e in sent.embeds]
    assert message.ephemeral == sent.ephemeral
    if message.file is not None:
        [attachment] = sent.message["attachments"]
        assert attachment["filename"] == message.file[0] and attachment["size"] == len(message.file[1])


def test_watch_alerts_are_printed_under_a_dm_line(settings_factory, tmp_path):
    import shutil

    from tests.bot.conftest import CORPUS

    one = tmp_path / "one"
    one.mkdir()
    first = sorted(CORPUS.glob("*.txt"))[0]
    shutil.copy(first, one / first.name)
    script = f"/admin reindex path:{one}\n/watch add learning\n/watch list\n/admin reindex\n/recommend\n"
    code, out = console(settings_factory(), script)
    assert code == 0
    assert "Watching “learning”" in out and "**1.**" not in out  # markdown rendered for the terminal
    dm_lines = [line for line in out.splitlines() if line.startswith("DM")]
    assert dm_lines == ["DM to you:"]
    dm = out.split("DM to you:", 1)[1]
    assert "The corpus was reindexed" in dm and "“learning” — " in dm


def test_the_console_user_owns_one_server_for_club(settings_factory):
    from bot.settings import PROJECT_ROOT
    from retrieval.corpus import load_corpus

    pid = load_corpus(PROJECT_ROOT / "data" / "corpus").papers[0].id
    script = f"/club add {pid} note:week 1\n/club show\n/export md scope:club\n"
    code, out = console(settings_factory(), script)
    assert code == 0
    assert "Added" in out and "Reading list — your server (1)" in out and "week 1" in out
    assert "paperbot-club.md" in out


def test_the_readme_example_is_what_the_console_prints(settings_factory):
    """README.md's opening example is the console's output today, byte for byte: a change of titles or
    scores that forgets the README fails here, not in a reader's terminal."""
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```text\n", 1)[1].split("\n```", 1)[0]
    first, shown = block.split("\n", 1)
    assert first.startswith("paperbot> /search "), first
    code, out = console(settings_factory(), first.removeprefix("paperbot> ") + "\n")
    assert code == 0
    assert out.rstrip("\n") == shown.rstrip("\n")


# -- issue 30: arguments, booleans, suggestions ----------------------------------------------------


def parsed(settings_factory, line: str) -> tuple[str, dict]:
    from bot.console import Console

    return Console(settings_factory(), io.StringIO(), io.StringIO()).parse(line.removeprefix("/"))


@pytest.mark.parametrize(
    ("line", "command", "options"),
    [
        # words that are not name:value fill the required options in order (item 4)
        ("/search author:王小明 translation", "search", {"query": "translation", "author": "王小明"}),
        ("/list move y13x62p7 done", "list move", {"id": "y13x62p7", "to": "done"}),
        ('/list move y13x62p7 "to read"', "list move", {"id": "y13x62p7", "to": "to read"}),
        ("/list move y13x62p7 from:a done", "list move", {"id": "y13x62p7", "to": "done", "from": "a"}),
        ("/list move id:y13x62p7 done", "list move", {"id": "y13x62p7", "to": "done"}),
        ("/list rename old new", "list rename", {"old": "old", "new": "new"}),
        # one required option takes every word, and a text option what follows it, as before
        ("/search reward models limit:3", "search", {"query": "reward models", "limit": 3}),
        ('/search query:"reward model" -quantum', "search", {"query": '"reward model" -quantum'}),
        ("/search learning author:Ada Lovelace", "search", {"query": "learning", "author": "Ada Lovelace"}),
        ("/save y13x62p7 note:read the appendix", "save", {"id": "y13x62p7", "note": "read the appendix"}),
        ("/saved to read", "saved", {"list": "to read"}),
    ],
)
def test_words_fill_the_required_options_in_order(settings_factory, line, command, options):
    assert parsed(settings_factory, line) == (command, options)


@pytest.mark.parametrize(
    ("line", "form"),
    [
        # two list names of several words: which words are which cannot be known, so say how to type it
        ("/list rename to read done", '/list rename old:to new:"read done"'),
        ("/list move y13x62p7", "/list move id:y13x62p7 to:<to>"),
        ("/list rename", "/list rename old:<old> new:<new>"),
    ],
)
def test_an_ambiguous_or_short_line_is_told_the_exact_form(settings_factory, line, form):
    with pytest.raises(ValueError) as info:
        parsed(settings_factory, line)
    assert f"type {form}" in str(info.value)


def test_item_4_lines_run_in_the_console(settings_factory):
    code, out = console(
        settings_factory(),
        "/save y13x62p7\n/list move y13x62p7 done\n/search author:Koirala policy\n",
    )
    assert code == 0
    assert "needs" not in out
    assert "Moved " in out and "to “done”" in out
    assert "Search “policy”" in out and "author: Koirala" in out


@pytest.mark.parametrize("value", ["maybe", "2", "ja", "truee"])
def test_an_unknown_boolean_is_an_error_naming_the_allowed_values(settings_factory, value):
    with pytest.raises(ValueError) as info:
        parsed(settings_factory, f"/search reward public:{value}")
    message = str(info.value)
    assert "public must be true or false" in message and repr(value) in message


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("False", False), ("yes", True), ("no", False), ("1", True), ("0", False), ("on", True)],
)
def test_booleans_discord_would_send(settings_factory, value, expected):
    assert parsed(settings_factory, f"/search reward public:{value}")[1]["public"] is expected


def test_a_lone_quote_gets_no_suggestion_that_fails_again(settings_factory):
    code, out = console(settings_factory(), '/search "\n/search """\n/search models "\n')
    assert code == 0
    assert "is never closed" in out
    assert 'Try: ""' not in out and "Try: \"\"\"\"" not in out
    assert out.count("Try:") == 1 and "Try: `models`" in out


def test_the_console_screen_gets_no_log_lines_and_one_windows_1252_note(tmp_path):
    """Issue 30 item 7: a failed reindex printed a ``WARNING bot.engine`` log line over the reply, and a
    Windows-1252 file was named twice (the log line and the report). The log goes to the console's log
    file (beside the database), the screen shows the replies."""
    from tests.support.corpora import corpus_with_a_cp1252_file

    corpus = corpus_with_a_cp1252_file(tmp_path / "corpus")
    script = f"/admin reindex path:{corpus}\n/admin reindex path:{tmp_path / 'nowhere'}\n"
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "console"],
        input=script,
        env=console_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    screen = result.stdout + result.stderr
    assert "✅ Reindex complete." in screen and "❌ Reindex failed" in screen
    assert "WARNING" not in screen and result.stderr == ""
    assert screen.count("Windows-1252") == 1
    log = (tmp_path / "console.log").read_text(encoding="utf-8")
    assert "WARNING bot.engine: reindex of" in log and "nowhere" in log


# -- follow-ups: a line starting with ">" replies to the last answer (issue 34 item 6) ---------------

SAE = "how are sparse autoencoders evaluated for interpretability?"


async def test_a_follow_up_line_prints_the_reply_the_bot_sends(harness):
    """@bot, then "> ...": the console's reply is the bot's reply to a Discord reply, embed for embed."""
    from bot.console import Console

    first = [r for r in (await harness.mention(SAE)).requests if r.method == "POST"][0]
    for text in ("how much better is it?", "who wrote it?", "any similar papers?"):
        sent = [r for r in (await harness.reply(first.message, text)).requests if r.method == "POST"][0]
        console = Console(harness.bot.settings, io.StringIO(), io.StringIO())
        console.services = harness.bot.services
        console.user_id = int(harness.alice["id"])
        shown = []
        original_show = console.show

        def record(message, original_show=original_show, shown=shown):
            shown.append(message)
            original_show(message)

        console.show = record
        await console.handle(f"@bot {SAE}")
        await console.handle(f"> {text}")
        reply = shown[-1]
        assert reply.reply and not reply.ephemeral
        assert [_visible(e.to_dict()) for e in reply.embeds] == [_visible(e) for e in sent.json["embeds"]]


def test_follow_ups_in_a_piped_session(settings_factory):
    script = f"@bot {SAE}\n> how much better is it?\n> save it\n> who wrote the second one?\n"
    code, out = console(settings_factory(), script)
    assert code == 0
    assert f"Re: {SAE}" in out and "Q: how much better is it?" in out
    assert "Saved " in out and "/saved" in out
    assert "That answer cites 1 paper: [1]." in out or "**Authors:**" in out


def test_a_follow_up_needs_an_answer_first(settings_factory):
    code, out = console(settings_factory(), "> who wrote it?\n")
    assert code == 0
    assert "! no answer to follow up on yet" in out


def test_help_shows_the_follow_up_line(settings_factory):
    code, out = console(settings_factory(), "help\n")
    assert "> <follow-up>" in out and "reply to the last answer" in out


def test_the_paper_page_asks_about_its_paper(settings_factory):
    from retrieval.corpus import load_corpus

    pid = load_corpus(PROJECT_ROOT / "data" / "corpus").papers[0].id
    code, out = console(settings_factory(), f"/paper {pid}\n3\nwhat data did they use?\n")
    assert code == 0
    assert "[3] ❓ Ask about this paper" in out
    assert "type your question" in out
    assert "Q: what data did they use?" in out and f"[1] `{pid}`" in out


def test_the_follow_up_button_opens_a_form_line(settings_factory):
    code, out = console(settings_factory(), f"/ask {SAE}\n1\nwho wrote it?\n")
    assert code == 0
    assert "[1] 💬 Ask a follow-up" in out and "type your question" in out
    answered = out.split("type your question", 1)[1]
    assert f"Re: {SAE}" in answered and "**Authors:**" in answered
    assert answered.split("\n", 2)[1] == "(only you can see this)"  # as private as the /ask it follows
