"""Settings resolution: defaults -> config file -> environment -> overrides; malformed values."""

from __future__ import annotations

import pytest

from bot.settings import Settings, SettingsError, load_settings

TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gabcde.settings-secret-0123456789"


def write_config(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_config_or_env(tmp_path):
    settings = load_settings(env={}, config_path=write_config(tmp_path / "c.toml", ""), dotenv=False)
    assert settings == Settings()


def test_order_config_then_env_then_overrides(tmp_path):
    config = write_config(
        tmp_path / "c.toml", "[discord]\npage_size = 3\ncooldown_rate = 7\n[bm25]\nk1 = 1.2\n"
    )
    env = {"PAGE_SIZE": "4", "BM25_B": "0.5"}
    settings = load_settings(env=env, config_path=config, overrides={"page_size": 6, "log_level": None})
    assert settings.page_size == 6  # override beats env beats config
    assert settings.cooldown_rate == 7  # config only
    assert settings.bm25_k1 == 1.2 and settings.bm25_b == 0.5
    assert settings.log_level == "INFO"  # a None override is ignored


def test_env_beats_config(tmp_path):
    config = write_config(tmp_path / "c.toml", "[discord]\npage_size = 3\n")
    assert load_settings(env={"PAGE_SIZE": "8"}, config_path=config).page_size == 8


def test_relative_paths_in_a_config_are_relative_to_it(tmp_path):
    config = write_config(tmp_path / "c.toml", '[paths]\ndatabase = "db/x.db"\n')
    assert load_settings(env={}, config_path=config).database_path == tmp_path / "db" / "x.db"


def test_the_default_config_named_explicitly_keeps_project_root_paths(monkeypatch):
    # `paperbot search --config config/paperbot.toml` from the project root must read the same
    # corpus as no flag at all, not config/data/corpus.
    from bot.settings import PROJECT_ROOT

    monkeypatch.chdir(PROJECT_ROOT)
    for named in ("config/paperbot.toml", "./config/../config/paperbot.toml"):
        settings = load_settings(env={}, config_path=named, dotenv=False)
        assert settings.corpus_path == PROJECT_ROOT / "data" / "corpus"
        assert settings.database_path == PROJECT_ROOT / "data" / "paperbot.db"


def test_paperbot_config_env_names_the_file(tmp_path):
    config = write_config(tmp_path / "other.toml", "[discord]\nview_timeout = 30\n")
    assert load_settings(env={"PAPERBOT_CONFIG": str(config)}).view_timeout == 30.0


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"DEV_GUILD_ID": "12345"}, "DEV_GUILD_ID"),
        ({"DEV_GUILD_ID": "abc"}, "DEV_GUILD_ID"),
        ({"ADMIN_USER_IDS": "123456789012345678,notanid"}, "ADMIN_USER_IDS"),
        ({"PAGE_SIZE": "0"}, "PAGE_SIZE"),
        ({"PAGE_SIZE": "many"}, "PAGE_SIZE"),
        ({"BM25_VARIANT": "bm42"}, "BM25_VARIANT"),
        ({"DISCORD_TOKEN": "short"}, "DISCORD_TOKEN"),
        ({"DISCORD_TOKEN": "has spaces in it but is long enough"}, "DISCORD_TOKEN"),
    ],
)
def test_malformed_values_name_the_variable_in_one_line(tmp_path, env, names):
    with pytest.raises(SettingsError) as info:
        load_settings(env=env, config_path=write_config(tmp_path / "c.toml", ""))
    message = str(info.value)
    assert names in message and "\n" not in message


def test_ids_parse(tmp_path):
    env = {"DEV_GUILD_ID": "123456789012345678", "ADMIN_USER_IDS": "123456789012345678, 223456789012345678"}
    settings = load_settings(env=env, config_path=write_config(tmp_path / "c.toml", ""))
    assert settings.dev_guild_id == 123456789012345678
    assert settings.admin_user_ids == frozenset({123456789012345678, 223456789012345678})


def test_unknown_config_key_is_an_error(tmp_path):
    with pytest.raises(SettingsError, match="unknown setting"):
        load_settings(env={}, config_path=write_config(tmp_path / "c.toml", "[discord]\npage_sise = 3\n"))


def test_token_never_in_repr(tmp_path):
    settings = load_settings(env={"DISCORD_TOKEN": TOKEN}, config_path=write_config(tmp_path / "c.toml", ""))
    assert settings.require_token() == TOKEN
    assert TOKEN not in repr(settings)


def test_require_token_names_the_variable():
    with pytest.raises(SettingsError, match="DISCORD_TOKEN"):
        Settings().require_token()


def test_shard_settings_parse_ranges_and_refuse_nonsense() -> None:
    from bot.settings import SettingsError, load_settings

    settings = load_settings(env={"SHARD_COUNT": "8", "SHARD_IDS": "0-2, 5"}, config_path=None, dotenv=False)
    assert (settings.shard_count, settings.shard_ids) == (8, (0, 1, 2, 5))
    assert load_settings(env={}, dotenv=False).shard_count is None
    for env, words in [
        ({"SHARD_IDS": "0-1"}, "needs SHARD_COUNT"),
        ({"SHARD_COUNT": "2", "SHARD_IDS": "0-2"}, "shard 2 does not exist"),
        ({"SHARD_COUNT": "2", "SHARD_IDS": "a-b"}, "not a shard id"),
        ({"SHARD_COUNT": "-3"}, "SHARD_COUNT"),
    ]:
        with pytest.raises(SettingsError, match=words):
            load_settings(env=env, dotenv=False)
