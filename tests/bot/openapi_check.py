"""Validate recorded Discord requests against Discord's OpenAPI spec plus the limits it does not encode.

The spec (shared/discord-api/openapi.json, 1.2 MB) is loaded once per process and registered as one
``referencing`` resource; validators are compiled lazily, one per (path template, method).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.support.fake_discord import RecordedRequest, iter_components

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# Discord's spec is read where the workplace keeps it (beside the project, never copied into it). On a
# machine without it (a newcomer's fresh clone) schema validation is skipped, the run's summary says so
# (tests/support/shared.py), and the limit checks below still run; under CI its absence is an error,
# so a green CI always validated.
SPEC_PATH = Path(
    os.environ.get("PAPERBOT_DISCORD_OPENAPI")
    or PROJECT_ROOT.parent / "shared" / "discord-api" / "openapi.json"
)
SPEC_URI = "urn:discord:openapi"
NAME_RE = re.compile(r"^[-_\w]{1,32}$")  # \w in Python covers \p{L}\p{N} and _; lowercase checked apart

# Callback types Discord accepts per interaction type (2 command, 3 component, 4 autocomplete, 5 modal).
ALLOWED_CALLBACKS = {2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}


def _relax(node: Any) -> Any:
    """Rewrite ``#/...`` refs to the resource URI; let integer fields also be int-like strings."""
    if isinstance(node, list):
        return [_relax(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _relax(v) for k, v in node.items()}
    if "oneOf" in out:
        # With the int-like-string relaxation, a string can match two branches (e.g. nonce); anyOf is
        # enough to check the shape.
        out["anyOf"] = out.pop("oneOf")
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        out["$ref"] = SPEC_URI + ref
    kind = out.get("type")
    if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
        # discord.py sends some integer fields (permissions, flags) as strings.
        return {"anyOf": [out, {"type": "string", "pattern": r"^-?[0-9]+$"}]}
    return out


@functools.cache
def spec() -> dict[str, Any]:
    """The relaxed spec (loaded once per session)."""
    raw = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    schemas = raw["components"]["schemas"]
    # Snowflakes may be ints (discord.py sends attachments[].id as 0).
    schemas["SnowflakeType"] = {
        "anyOf": [copy.deepcopy(schemas["SnowflakeType"]), {"type": "integer", "minimum": 0}]
    }
    return _relax(raw)


@functools.cache
def _registry() -> Registry:
    return Registry().with_resource(
        SPEC_URI, Resource.from_contents(spec(), default_specification=DRAFT202012)
    )


@functools.cache
def _templates() -> list[tuple[re.Pattern[str], str]]:
    compiled = []
    for template in spec()["paths"]:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        compiled.append((re.compile(pattern), template))
    # Literal segments (``@original``, ``@me``) beat parameters: fewer parameters first.
    compiled.sort(key=lambda pair: pair[1].count("{"))
    return compiled


def path_template(path: str) -> str | None:
    """The spec's path template matching a concrete path, or None."""
    for pattern, template in _templates():
        if pattern.match(path):
            return template
    return None


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


@functools.cache
def validator(template: str, method: str) -> Draft202012Validator | None:
    """The compiled validator of a request body, or None when the operation has no JSON body."""
    operation = spec()["paths"][template].get(method.lower()) or {}
    if "application/json" not in ((operation.get("requestBody") or {}).get("content") or {}):
        return None
    pointer = _pointer(
        "paths", template, method.lower(), "requestBody", "content", "application/json", "schema"
    )
    ref = f"{SPEC_URI}#/" + pointer.replace("{", "%7B").replace("}", "%7D")
    return Draft202012Validator({"$ref": ref}, registry=_registry())


#: Requests of this run not validated against the spec because it is missing: the run's summary says
#: so (tests/conftest.py, tests/support/shared.py).
UNCHECKED = {"requests": 0}


@functools.cache
def spec_available() -> bool:
    """Whether the spec file is there; under CI a missing spec fails the run instead."""
    if SPEC_PATH.is_file():
        return True
    if os.environ.get("CI"):
        raise FileNotFoundError(f"Discord's OpenAPI spec is missing at {SPEC_PATH} (required under CI)")
    return False


def schema_errors(request: RecordedRequest) -> list[str]:
    """Problems of the request body against the spec (unknown routes are problems too)."""
    if not spec_available():
        UNCHECKED["requests"] += 1
        return []
    template = path_template(request.path)
    if template is None:
        return [f"{request.method} {request.path}: not a route of Discord's API"]
    if request.method.lower() not in spec()["paths"][template]:
        return [f"{request.method} {template}: method not in Discord's API"]
    if request.json is None or request.method in ("GET", "DELETE"):
        return []
    check = validator(template, request.method)
    if check is None:
        return []
    return [
        f"{request.method} {template}: {'/'.join(map(str, e.absolute_path)) or '<body>'}: {e.message[:300]}"
        for e in check.iter_errors(request.json)
    ]


# -- the limits the spec does not encode ----------------------------------------------------------


def embed_problems(embeds: list[dict[str, Any]]) -> list[str]:
    """Per-message embed limits: ≤ 10 embeds, 6000 characters in all, non-empty fields, per-part sizes."""
    problems = []
    if len(embeds) > 10:
        problems.append(f"{len(embeds)} embeds (max 10)")
    total = 0
    for i, embed in enumerate(embeds):
        title = embed.get("title") or ""
        description = embed.get("description") or ""
        footer = (embed.get("footer") or {}).get("text") or ""
        author = (embed.get("author") or {}).get("name") or ""
        fields = embed.get("fields") or []
        total += len(title) + len(description) + len(footer) + len(author)
        for limit, value, what in (
            (256, title, "title"),
            (4096, description, "description"),
            (2048, footer, "footer"),
            (256, author, "author name"),
        ):
            if len(value) > limit:
                problems.append(f"embed {i} {what} has {len(value)} characters (max {limit})")
        if len(fields) > 25:
            problems.append(f"embed {i} has {len(fields)} fields (max 25)")
        for j, f in enumerate(fields):
            name, value = f.get("name") or "", f.get("value") or ""
            total += len(name) + len(value)
            if not name.strip() or not value.strip():
                problems.append(f"embed {i} field {j} has an empty name or value")
            if len(name) > 256 or len(value) > 1024:
                problems.append(f"embed {i} field {j} too long ({len(name)}/{len(value)})")
    if total > 6000:
        problems.append(f"embeds total {total} characters (max 6000)")
    return problems


def component_problems(components: list[dict[str, Any]]) -> list[str]:
    """≤ 5 rows, ≤ 5 buttons per row, a select alone in its row, unique custom_ids ≤ 100, option limits."""
    problems = []
    rows = [c for c in components if c.get("type") == 1]
    if len(rows) > 5:
        problems.append(f"{len(rows)} action rows (max 5)")
    for r, row in enumerate(rows):
        children = row.get("components") or []
        buttons = [c for c in children if c.get("type") == 2]
        selects = [c for c in children if c.get("type") in (3, 5, 6, 7, 8)]
        if len(buttons) > 5:
            problems.append(f"row {r} has {len(buttons)} buttons (max 5)")
        if selects and len(children) > 1:
            problems.append(f"row {r}: a select must be alone in its row")
        if not children:
            problems.append(f"row {r} is empty")
    seen: set[str] = set()
    for c in iter_components(components):
        cid = c.get("custom_id")
        if cid is not None:
            if len(cid) > 100 or not cid:
                problems.append(f"custom_id {cid[:30]!r}… has {len(cid)} characters (1..100)")
            if cid in seen:
                problems.append(f"duplicate custom_id {cid!r}")
            seen.add(cid)
        if c.get("type") == 2 and len(c.get("label") or "") > 80:
            problems.append(f"button label over 80 characters: {c.get('label')[:40]!r}")
        if c.get("type") == 3:
            options = c.get("options") or []
            if not 1 <= len(options) <= 25:
                problems.append(f"select {cid!r} has {len(options)} options (1..25)")
            values = [o.get("value") for o in options]
            if len(set(values)) != len(values):
                problems.append(f"select {cid!r} has duplicate option values")
            for o in options:
                for key in ("label", "value", "description"):
                    if o.get(key) is not None and not 1 <= len(o[key]) <= 100:
                        problems.append(f"select {cid!r} option {key} length {len(o[key])} (1..100)")
            if len(c.get("placeholder") or "") > 150:
                problems.append(f"select {cid!r} placeholder over 150 characters")
    return problems


def message_problems(body: dict[str, Any]) -> list[str]:
    """Limits of one message body (content, embeds, components)."""
    problems = []
    content = body.get("content")
    if isinstance(content, str) and len(content) > 2000:
        problems.append(f"content has {len(content)} characters (max 2000)")
    problems += embed_problems(body.get("embeds") or [])
    problems += component_problems(body.get("components") or [])
    return problems


def command_problems(commands: list[dict[str, Any]]) -> list[str]:
    """Slash-command payload rules (names, descriptions 1..100, ≤ 25 options, required first)."""
    problems: list[str] = []

    def check(node: dict[str, Any], where: str, is_option: bool) -> None:
        name = node.get("name") or ""
        if not NAME_RE.match(name) or name != name.lower():
            problems.append(f"{where}: bad name {name!r}")
        description = node.get("description")
        if node.get("type", 1) in (1, None) or is_option:
            if not isinstance(description, str) or not 1 <= len(description) <= 100:
                problems.append(f"{where}: description must be 1..100 characters, got {description!r}")
        for locale, text in (node.get("description_localizations") or {}).items():
            if not 1 <= len(text) <= 100:
                problems.append(f"{where}: {locale} description has {len(text)} characters")
        options = node.get("options") or []
        if len(options) > 25:
            problems.append(f"{where}: {len(options)} options (max 25)")
        seen_optional = False
        for option in options:
            if option.get("type") in (1, 2):
                check(option, f"{where} {option.get('name')}", True)
                continue
            if option.get("required"):
                if seen_optional:
                    problems.append(f"{where}: required option {option.get('name')!r} after an optional one")
            else:
                seen_optional = True
            check(option, f"{where} {option.get('name')}", True)
            for choice in option.get("choices") or []:
                if not 1 <= len(choice.get("name") or "") <= 100:
                    problems.append(f"{where}: choice name length")

    for command in commands:
        check(command, f"/{command.get('name')}", False)
    return problems


def request_problems(request: RecordedRequest, interaction_types: dict[int, int]) -> list[str]:
    """Every problem with one recorded request: spec, message limits, callback/autocomplete rules."""
    problems = schema_errors(request)
    body = request.json if isinstance(request.json, dict) else {}
    if request.is_callback:
        kind = body.get("type")
        itype = interaction_types.get(request.interaction_id or 0)
        if itype is not None and kind not in ALLOWED_CALLBACKS.get(itype, set()):
            problems.append(f"callback type {kind} not allowed for interaction type {itype}")
        data = body.get("data") or {}
        if kind == 8:
            choices = data.get("choices") or []
            if len(choices) > 25:
                problems.append(f"{len(choices)} autocomplete choices (max 25)")
            for choice in choices:
                if not 1 <= len(choice.get("name") or "") <= 100:
                    problems.append(f"autocomplete choice name length {len(choice.get('name') or '')}")
                if isinstance(choice.get("value"), str) and len(choice["value"]) > 100:
                    problems.append("autocomplete choice value over 100 characters")
        elif kind in (4, 7):
            problems += message_problems(data)
    elif request.method in ("POST", "PATCH") and (
        request.path.startswith("/webhooks/") or "/messages" in request.path
    ):
        problems += message_problems(body)
    elif request.method == "PUT" and request.path.endswith("/commands"):
        problems += command_problems(request.json or [])
    if request.status >= 400 and not request.expected_error:
        problems.append(f"the fake answered {request.status}: {request.response}")
    return [f"{request.method} {request.path}: {p}" for p in problems]


def all_problems(requests: Iterable[RecordedRequest], interaction_types: dict[int, int]) -> list[str]:
    """Problems across many requests."""
    out: list[str] = []
    for request in requests:
        out += request_problems(request, interaction_types)
    return out
