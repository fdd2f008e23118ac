"""The ``paperbot`` command line for the bot: exit codes, one-line errors, no token in output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bot import cli
from bot.settings import PROJECT_ROOT

TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gabcde.cli-secret-0123456789"


def run(args, env_extra=None, input_text=None, cwd=None):
    env = {
        k: v for k, v in os.environ.items() if k not in {"DISCORD_TOKEN", "DEV_GUILD_ID", "ADMIN_USER_IDS"}
    }
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        input=input_text,
        cwd=cwd,
    )


def test_run_without_token_exits_2_with_one_line(tmp_path):
    result = run(["run"], cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "DISCORD_TOKEN" in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("var", "value"),
    [("DEV_GUILD_ID", "not-an-id"), ("ADMIN_USER_IDS", "1,2"), ("PAGE_SIZE", "99"), ("DISCORD_TOKEN", "x")],
)
def test_malformed_setting_exits_2_with_one_line(tmp_path, var, value):
    result = run(
        ["run"],
        {var: value, "DISCORD_TOKEN": TOKEN} if var != "DISCORD_TOKEN" else {var: value},
        cwd=tmp_path,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and var in lines[0] and "Traceback" not in result.stderr
    assert TOKEN not in result.stderr + result.stdout


def test_token_is_never_printed_even_at_debug(tmp_path):
    # A malformed guild id after a valid token: the error must not echo the environment.
    result = run(["run", "--log-level", "DEBUG"], {"DISCORD_TOKEN": TOKEN, "DEV_GUILD_ID": "x"}, cwd=tmp_path)
    assert result.returncode == 2
    assert TOKEN not in result.stderr + result.stdout


def test_unknown_command_and_help():
    assert cli.main(["frobnicate"]) == 2
    assert cli.main(["--help"]) == 0
    assert cli.main([]) == 2


@pytest.fixture(autouse=True)
def _keep_logging(monkeypatch):
    # cli.main configures the root logger for the process; keep pytest's logging intact in-process.
    monkeypatch.setattr(cli, "setup_logging", lambda level="INFO", file=None: None)


def test_console_dispatch_calls_run_console(monkeypatch, tmp_path):
    seen = {}

    def fake_console(settings, out_dir=None):
        seen["settings"], seen["out_dir"] = settings, out_dir
        return 0

    import bot.console

    monkeypatch.setattr(bot.console, "run_console", fake_console)
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert cli.main(["console", "--database", str(tmp_path / "x.db")]) == 0
    assert seen["settings"].database_path == tmp_path / "x.db" and seen["out_dir"] is None
    assert cli.main(["console", "--out", str(tmp_path / "exports")]) == 0
    assert seen["out_dir"] == str(tmp_path / "exports")


def test_run_dispatch_calls_run_bot(monkeypatch, tmp_path):
    seen = {}
    import bot.app

    monkeypatch.setattr(
        bot.app, "run_bot", lambda settings: seen.setdefault("token", settings.discord_token) and 0
    )
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    assert cli.main(["run", "--database", str(tmp_path / "x.db")]) == 0
    assert seen["token"] == TOKEN


def test_run_with_processes_starts_the_supervisor_and_without_runs_one_bot(monkeypatch, tmp_path):
    import bot.app
    import bot.supervisor

    seen = []
    monkeypatch.setattr(bot.app, "run_bot", lambda settings: seen.append(("bot", settings.processes)) or 0)
    monkeypatch.setattr(
        bot.supervisor.Supervisor, "run", lambda self: seen.append(("supervisor", len(self.slots))) or 0
    )
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    for var in ("PROCESSES", "SHARD_COUNT", "SHARD_IDS"):
        monkeypatch.delenv(var, raising=False)
    database = str(tmp_path / "x.db")
    assert cli.main(["run", "--database", database]) == 0
    assert cli.main(["run", "--database", database, "--processes", "3"]) == 0
    monkeypatch.setenv("PROCESSES", "2")
    assert cli.main(["run", "--database", database]) == 0
    assert cli.main(["run", "--database", database, "--processes", "1"]) == 0  # the flag wins
    assert seen == [("bot", 1), ("supervisor", 3), ("supervisor", 2), ("bot", 1)]


def test_run_with_more_processes_than_shards_exits_2_with_one_line(tmp_path):
    env = {"DISCORD_TOKEN": TOKEN, "SHARD_COUNT": "2"}
    result = run(["run", "--processes", "3"], env_extra=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "paperbot: PROCESSES=3 needs at least as many shards, this host has 2 (SHARD_COUNT / SHARD_IDS): "
        "each process runs shards of its own"
    )
    result = run(["run", "--processes", "0"], env_extra={"DISCORD_TOKEN": TOKEN}, cwd=tmp_path)
    assert result.returncode == 2 and "--processes must be between 1 and 64, got 0" in result.stderr


def test_search_query_after_double_dash_with_corpus(tmp_path):
    # --corpus is the paperbot command's own flag: the query after "--" must still reach the search.
    corpus = PROJECT_ROOT / "data" / "corpus"
    env = {"INDEX_CACHE_DIR": str(tmp_path / "cache")}
    result = run(["search", "--corpus", str(corpus), "--", "-quantum sparse"], env_extra=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("4 results for '-quantum sparse'")
    result = run(["search", "-sparse autoencoders", "--top", "1"], env_extra=env, cwd=tmp_path)
    assert result.returncode == 0 and "unrecognized" not in result.stderr, result.stderr


def test_index_names_a_windows_1252_file_once(tmp_path):
    """Issue 30 item 7: the report names the file; no log line repeats it on the same screen."""
    from tests.support.corpora import corpus_with_a_cp1252_file

    corpus = corpus_with_a_cp1252_file(tmp_path / "corpus")
    cache = {"INDEX_CACHE_DIR": str(tmp_path / "cache")}
    result = run(["index", "--corpus", str(corpus)], cache, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "latin.txt" in result.stdout
    assert (result.stdout + result.stderr).count("Windows-1252") == 1, result.stdout + result.stderr
