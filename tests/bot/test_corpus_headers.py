"""The ``[corpus] headers`` setting: a configured first line is a file's header, not a paper's area,
everywhere a corpus is opened (the bot's engine and its reindex worker, the console, the command
line), and it is part of the index cache key."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.engine import Engine
from bot.settings import DEFAULT_CONFIG, PROJECT_ROOT, Settings, SettingsError, load_settings
from retrieval.index import open_index

HEADER = "My Reading List"
TEXT = (
    f"{HEADER}\n\n"
    "Theory\n\nAda Lovelace, Alan Turing\n\nWe propose a sparse solver for graphs that is fast on trees.\n\n"
    "Optimization\n\nGrace Hopper\n\nWe study momentum methods for convex problems with noisy gradients.\n"
)


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "papers.txt").write_text(TEXT, encoding="utf-8")
    return folder


def test_the_setting_reads_a_list_from_the_config_file_and_bars_from_the_environment(tmp_path):
    config = tmp_path / "paperbot.toml"
    config.write_text('[corpus]\nheaders = ["My Reading List", " Papers  to   read "]\n', encoding="utf-8")
    assert load_settings(env={}, config_path=config).corpus_headers == ("My Reading List", "Papers to read")
    env = {"CORPUS_HEADERS": "My Reading List | Papers||"}
    assert load_settings(env=env, config_path=config).corpus_headers == ("My Reading List", "Papers")
    assert Settings().corpus_headers == ()


def test_a_malformed_setting_names_itself(tmp_path):
    config = tmp_path / "paperbot.toml"
    config.write_text("[corpus]\nheaders = [1, 2]\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"\[corpus\] headers"):
        load_settings(env={}, config_path=config)
    with pytest.raises(SettingsError, match="CORPUS_HEADERS"):
        load_settings(env={"CORPUS_HEADERS": "x" * 201}, config_path=DEFAULT_CONFIG)


def test_a_configured_header_is_a_header_and_part_of_the_cache_key(corpus, tmp_path):
    cache = tmp_path / "cache"
    plain, report = open_index(corpus, cache_dir=cache)
    # without the setting the line is not a header: above the first area line, it is the first
    # paper's title (the text format's way to give one)
    assert report.skipped == ()
    assert [p.area for p in plain.papers] == ["Theory", "Optimization"]
    assert [(p.title, p.title_derived) for p in plain.papers][0] == (HEADER, False)

    index, report = open_index(corpus, cache_dir=cache, headers=(HEADER,))
    assert not report.from_cache  # another setting, another key: rebuilt, not the header-less cache
    assert report.skipped == ()
    assert [p.area for p in index.papers] == ["Theory", "Optimization"]
    assert [p.authors for p in index.papers][0] == ("Ada Lovelace", "Alan Turing")
    assert all(p.title_derived for p in index.papers)  # a header, not a title

    again, report = open_index(corpus, cache_dir=cache, headers=(HEADER,))
    assert report.from_cache and report.skipped == () and len(again) == 2
    assert not open_index(corpus, cache_dir=cache)[1].from_cache  # and back
    assert open_index(corpus, cache_dir=cache, headers=())[1].from_cache  # () is the default


async def test_the_engine_and_its_reindex_worker_use_the_setting(corpus, tmp_path):
    settings = dataclasses.replace(
        Settings(), corpus_path=corpus, index_cache_dir=tmp_path / "cache", corpus_headers=(HEADER,)
    )
    engine = await Engine.load(settings)
    assert engine.report.skipped == () and len(engine) == 2
    engine.subprocess_min_bytes = 0  # the reindex runs in the worker process
    report = await engine.reindex()
    assert report.extra.get("worker") == "subprocess"
    assert report.skipped == () and report.papers == 2


def _cli(corpus: Path, tmp_path: Path, **env_extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"DISCORD_TOKEN", "CORPUS_HEADERS"}}
    env.update(PYTHONPATH=str(PROJECT_ROOT), INDEX_CACHE_DIR=str(tmp_path / "cli-cache"), **env_extra)
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "index", "--corpus", str(corpus), "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_the_command_line_uses_the_setting(corpus, tmp_path):
    # with the setting the line is a header; without it, the first paper's title (a field is indexed)
    with_header, without = _cli(corpus, tmp_path, CORPUS_HEADERS=HEADER), _cli(corpus, tmp_path)
    assert with_header["skipped"] == [] and without["skipped"] == []
    assert with_header["extra"]["terms"] < without["extra"]["terms"]
