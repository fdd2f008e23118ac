"""Project-wide promises: layering, documented defaults that match the code, no secrets in git."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from bot.settings import _KEYS, PROJECT_ROOT, Settings, load_settings

ROOT = PROJECT_ROOT


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "retrieval").glob("*.py")), ids=lambda p: p.name)
def test_retrieval_is_pure(path: Path) -> None:
    """retrieval/ never imports the Discord application, discord.py or aiosqlite."""
    assert not _imports(path) & {"discord", "aiosqlite", "bot", "dotenv"}


def test_retrieval_imports_without_discord() -> None:
    code = (
        "import sys, retrieval.index, retrieval.corpus, retrieval.text, retrieval.tokenize\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in {'discord', 'aiosqlite', 'bot'}]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def _modules(path: Path) -> set[str]:
    """Every module ``path`` imports, by full dotted name (relative imports left out)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "bot" / "cogs").glob("*.py")) + sorted((ROOT / "bot" / "ui").glob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_cogs_do_not_depend_on_each_other(path: Path) -> None:
    """A cog can be loaded, removed or rewritten alone: shared UI lives in bot/ui, never in a cog."""
    assert not {m for m in _modules(path) if m.startswith("bot.cogs.")}


def test_config_file_documents_the_code_defaults() -> None:
    """config/paperbot.toml holds exactly the built-in defaults, so reading it changes nothing."""
    from_file = load_settings(env={}, config_path=ROOT / "config" / "paperbot.toml")
    assert from_file == Settings()


def test_every_setting_is_configurable_and_documented() -> None:
    text = (ROOT / "config" / "paperbot.toml").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    configured = {name for *_, name, _ in _KEYS} | {"discord_token"}
    assert configured == {item.name for item in fields(Settings)}
    for section, key, var, _name, _parse in _KEYS:
        assert re.search(rf"^#?\s*{key}\s*=", text, re.M), f"[{section}] {key} missing from config"
        assert var in text, f"{var} not documented in config/paperbot.toml"
        assert var in readme, f"{var} not documented in README.md"
    assert tomllib.loads(text)  # valid TOML


def test_env_example_names_the_secrets_and_is_empty() -> None:
    text = (ROOT / "config" / ".env.example").read_text(encoding="utf-8")
    names = ("DISCORD_TOKEN", "DEV_GUILD_ID", "ADMIN_USER_IDS", "CORPUS_PATH", "DATABASE_PATH", "LOG_LEVEL")
    for var in names:
        assert var in text
    assert re.search(r"^DISCORD_TOKEN=\s*$", text, re.M), ".env.example must not carry a token"


def test_gitignore_keeps_secrets_and_databases_out() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", ".env", "data/paperbot.db", "data/cache/x.npy"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    ).stdout.split()
    assert ignored == [".env", "data/paperbot.db", "data/cache/x.npy"]


def test_readme_quick_start_is_two_marked_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for marker in ("<!-- ci:console-command -->", "<!-- ci:test-command -->"):
        assert readme.count(marker) == 1
    assert "paperbot console" in readme
    assert "bash -c \"$test_command\"" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
