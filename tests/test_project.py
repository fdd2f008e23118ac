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
        "import sys, retrieval.index, retrieval.corpus, retrieval.titles, retrieval.tokenize\n"
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
    cogs = ROOT / "bot" / "cogs"
    others = {m for m in _modules(path) if m.startswith("bot.cogs.")}
    # ``from bot.cogs import Cog`` takes the package's shared base; a cog module is a file beside it.
    assert not {m for m in others if (cogs / f"{m.split('.')[2]}.py").exists()}


def test_config_file_documents_the_code_defaults() -> None:
    """config/paperbot.toml holds exactly the built-in defaults, so reading it changes nothing."""
    from_file = load_settings(env={}, config_path=ROOT / "config" / "paperbot.toml")
    assert from_file == Settings()


def test_every_setting_is_configurable_and_documented() -> None:
    text = (ROOT / "config" / "paperbot.toml").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # The two secrets (a token, a URL with a password) come from the environment only.
    configured = {name for *_, name, _ in _KEYS} | {"discord_token", "database_url"}
    assert configured == {item.name for item in fields(Settings)}
    for section, key, var, _name, _parse in _KEYS:
        assert re.search(rf"^#?\s*{key}\s*=", text, re.M), f"[{section}] {key} missing from config"
        assert var in text, f"{var} not documented in config/paperbot.toml"
        assert var in readme, f"{var} not documented in README.md"
    for var in ("DISCORD_TOKEN", "DATABASE_URL"):
        assert var in text and var in readme, f"{var} not documented"
    assert tomllib.loads(text)  # valid TOML


def test_env_example_names_the_secrets_and_is_empty() -> None:
    text = (ROOT / "config" / ".env.example").read_text(encoding="utf-8")
    names = (
        "DISCORD_TOKEN", "DEV_GUILD_ID", "ADMIN_USER_IDS", "CORPUS_PATH", "DATABASE_PATH", "DATABASE_URL",
        "LOG_LEVEL",
    )
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


def _module_graph(package: str) -> dict[str, set[str]]:
    """``module -> modules of package it imports`` (function-level imports included; the implicit
    import of a parent package is not an edge)."""
    paths = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        paths[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package_parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package_parts[: len(package_parts) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {m for m in found if m in paths and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# No cycle may appear (the store no longer formats exports: bot/export.py uses the store, not back).
KNOWN_BOT_CYCLES: list[set[str]] = []


def test_bot_has_no_import_cycles() -> None:
    """Dependencies in bot/ point one way (function-level imports count): cogs and the console over
    services over the engine, store and retrieval."""
    cycles = [c for c in _cycles(_module_graph("bot")) if c not in KNOWN_BOT_CYCLES]
    assert not cycles, f"import cycles in bot/: {cycles}"


def test_retrieval_has_no_import_cycles() -> None:
    """Dependencies in retrieval/ point one way, type-only (TYPE_CHECKING) and function-level imports
    included: the answerer reads the index through a protocol, so the index may import it."""
    cycles = _cycles(_module_graph("retrieval"))
    assert not cycles, f"import cycles in retrieval/: {cycles}"


def test_the_cycle_check_sees_type_only_and_function_level_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_module_graph`` walks the whole tree, so an import under ``if TYPE_CHECKING:`` or inside a
    function is an edge like any other."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("if TYPE_CHECKING:\n    from pkg.b import B\n")
    (package / "b.py").write_text("def f():\n    import pkg.a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = _module_graph("pkg")
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert _cycles(graph) == [{"pkg.a", "pkg.b"}]


def test_the_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


_PRIVATE_DISCORD = re.compile(
    r"\b(Route\.BASE|DEFAULT_GATEWAY|_connection|_view_store|parsers\[|aiohttp\.test_utils|TestServer)\b"
)


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "bot").rglob("*.py")) + sorted((ROOT / "retrieval").rglob("*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_the_product_uses_no_discord_private_names_or_test_machinery(path: Path) -> None:
    """The fake Discord (and the private discord.py names it needs) lives under tests/ only."""
    text = path.read_text(encoding="utf-8")
    assert not _PRIVATE_DISCORD.findall(text)
    assert not {m for m in _modules(path) if m == "tests" or m.startswith("tests.")}


@pytest.mark.parametrize("package", ["services", "cogs"])
def test_every_service_and_cog_has_its_mirrored_test_module(package: str) -> None:
    """tests/ mirrors the tree: bot/services/watch.py is tested in tests/bot/services/test_watch.py."""
    modules = {p.stem for p in (ROOT / "bot" / package).glob("*.py")} - {"__init__", "base", "registry"}
    tested = {p.stem.removeprefix("test_") for p in (ROOT / "tests" / "bot" / package).glob("test_*.py")}
    assert modules and not modules - tested, f"no tests/bot/{package}/test_<module>.py for {modules - tested}"


def _discord_private_names() -> set[str]:
    """Private attribute names discord.py defines (``self._x`` and cached-slot names in its source)."""
    import discord

    names: set[str] = set()
    for source in Path(discord.__file__).parent.rglob("*.py"):
        text = source.read_text(encoding="utf-8", errors="replace")
        names.update(re.findall(r"\bself\.(_[a-z]\w*)", text))
        names.update(re.findall(r"cached_slot_property\('(_\w+)'\)", text))
    return names


DISCORD_BASES = ("discord.", "app_commands.", "commands.")


def test_the_product_reaches_into_no_other_private_discord_name() -> None:
    """No ``obj._x`` (nor ``self._x`` in a subclass of a discord.py class) that discord.py defines."""
    private = _discord_private_names()
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "bot").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in private:
                if not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}):
                    found.add((where, node.attr))
            bases = [ast.unparse(base) for base in getattr(node, "bases", [])]
            if isinstance(node, ast.ClassDef) and any(b.startswith(DISCORD_BASES) for b in bases):
                walked = list(ast.walk(node))
                own = {n.attr for n in walked if type(n) is ast.Attribute and type(n.ctx) is ast.Store}
                own |= {n.value for n in walked if isinstance(n, ast.Constant) and isinstance(n.value, str)}
                for n in ast.walk(node):
                    if (
                        isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name)
                        and n.value.id == "self"
                        and n.attr in private - own
                    ):
                        found.add((where, n.attr))
    assert not found, f"private discord.py names used in bot/: {found}"


REPLY_HELPER = "bot/ui/respond.py"


def test_every_answer_to_an_interaction_goes_through_the_reply_helper() -> None:
    """Only bot/ui/respond.py touches ``interaction.response`` / ``interaction.followup``.

    Its per-interaction lock is what keeps the 3-second watchdog and a handler from both answering
    (Discord's 40060); an answer sent around it could race the watchdog.
    """
    found: set[tuple[str, int, str]] = set()
    for path in sorted((ROOT / "bot").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where == REPLY_HELPER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if name in {"response", "followup", "InteractionResponse"}:  # nor a subclass swapped in
                found.add((where, node.lineno, ast.unparse(node)))
    assert (ROOT / REPLY_HELPER).is_file()
    assert not found, f"answer through bot.ui.respond instead: {sorted(found)}"

