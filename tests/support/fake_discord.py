"""Discord without Discord, for the tests: a fake REST server on loopback and an injector of real
gateway payloads. Test machinery only — nothing in bot/ or retrieval/ imports it.

The bot under test is the real :class:`~bot.app.PaperBot`: it logs in with ``bot.login("test-token")``
against :class:`FakeDiscord`, its ``setup_hook`` runs, and interactions are fed through discord.py's
own gateway parser, so the real ``CommandTree``, views, ``InteractionResponse`` and webhook code
produce real HTTP bodies, which the fake records. See shared/docs/discord-testing.md.

Typical use (tests get this from the ``harness`` fixture in tests/bot/conftest.py)::

    async with Harness.started(settings) as h:
        ex = await h.run_command("search", {"query": "reward models", "limit": 3})
        assert ex.callback_type == 4 and ex.ephemeral
        ex2 = await h.click(ex.message, ex.custom_id(label="Next ▶"))
        other = await h.run_command("search", {"query": "x"}, user=h.bob)
        ex3 = await h.select(ex.message, ex.custom_id(placeholder="Save"), ["abc123"])
        reply = await h.mention("what is RLHF?")   # MESSAGE_CREATE mentioning the bot
        more = await h.reply(reply.message, "who wrote it?")  # a Discord reply to the bot's answer

Each injector awaits every task the event spawned (``CommandTree-invoker``, ``discord-ui-view-dispatch-*``,
``discord-ui-modal-dispatch-*``, ``discord-ui-dynamic-item-*``, ``discord.py: *``), re-raises their
exceptions, and returns an :class:`Exchange` holding the requests that event produced.

Private discord.py names used (one canary test each in tests/bot/test_discord_canaries.py, run on the
lowest and the newest discord.py the project allows): ``Route.BASE``,
``DiscordWebSocket.DEFAULT_GATEWAY`` (only for ``bot.start`` against the fake gateway),
``ConnectionState.parsers`` and ``ConnectionState._view_store._views`` (via ``bot._connection``; the
latter only to find live views for :meth:`Harness.timeout_views`) and the task names above.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
import discord
import yarl
from aiohttp import web
from aiohttp.test_utils import TestServer

if TYPE_CHECKING:
    from bot.app import PaperBot
    from bot.settings import Settings

log = logging.getLogger(__name__)

API_PREFIX = "/api/v10"
APPLICATION_ID = 1100000000000000001
BOT_USER_ID = 1100000000000000001  # Discord bots' user id equals their application id
OWNER_ID = 1200000000000000001
GUILD_ID = 1300000000000000001
CHANNEL_ID = 1400000000000000001
DM_CHANNEL_ID = 1400000000000000999
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024
TOKEN_LIFETIME = 15 * 60  # seconds Discord accepts an interaction's token (webhook routes) after it
# Tasks discord.py spawns for one event; the injectors wait for all of them.
TASK_PATTERNS = (
    re.compile(r"^CommandTree-invoker$"),
    re.compile(r"^discord-ui-view-dispatch-"),
    re.compile(r"^discord-ui-modal-dispatch-"),
    re.compile(r"^discord-ui-dynamic-item-"),
    re.compile(r"^discord\.py: "),
)
DEFAULT_PERMISSIONS = discord.Permissions.general() | discord.Permissions.text()
DEFAULT_PERMISSIONS.administrator = False
DEFAULT_PERMISSIONS.manage_guild = False
DEFAULT_PERMISSIONS.manage_channels = False
DEFAULT_PERMISSIONS.manage_roles = False
DEFAULT_PERMISSIONS.manage_messages = False


class NetworkBlocked(RuntimeError):
    """Something tried to reach a host that is not loopback."""


def loopback_only_trace() -> aiohttp.TraceConfig:
    """An aiohttp TraceConfig that raises :class:`NetworkBlocked` on any request to a non-loopback host."""
    trace = aiohttp.TraceConfig()

    async def on_request_start(
        session: aiohttp.ClientSession, context: Any, params: aiohttp.TraceRequestStartParams
    ) -> None:
        if params.url.host not in LOOPBACK_HOSTS:
            raise NetworkBlocked(
                f"offline: refused a request to {params.url.host} ({params.method} {params.url})"
            )

    trace.on_request_start.append(on_request_start)
    return trace


_ids = itertools.count(1)


def snowflake(ago: float = 0.0) -> int:
    """A fresh, increasing, Discord-shaped id (of ``ago`` seconds in the past)."""
    when = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=ago)
    return discord.utils.time_snowflake(when) + next(_ids) % 4096


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def user_payload(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    """A Discord user object."""
    payload: dict[str, Any] = {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": name.title(),
        "avatar": None,
        "public_flags": 0,
    }
    if bot:
        payload["bot"] = True
    return payload


@dataclass
class RecordedRequest:
    """One HTTP request the bot made to the fake, and what the fake answered.

    ``path`` is relative to ``/api/v10``; ``json`` is the JSON body (for multipart, the parsed
    ``payload_json``); ``files`` holds ``(field, filename, bytes)`` of multipart uploads; ``message`` is
    the message object the request created or edited (if any).
    """

    method: str
    path: str
    query: dict[str, str]
    json: Any
    files: list[tuple[str, str, bytes]] = field(default_factory=list)
    multipart: bool = False
    status: int = 200
    response: Any = None
    message: dict[str, Any] | None = None
    interaction_id: int | None = None
    expected_error: bool = False  # the fake was told to fail this request (tests of error paths)
    at: float = 0.0  # time.perf_counter() when the fake had read the request (for latency benchmarks)

    @property
    def is_callback(self) -> bool:
        """True for ``POST /interactions/{id}/{token}/callback``."""
        return (
            self.method == "POST"
            and self.path.startswith("/interactions/")
            and self.path.endswith("/callback")
        )

    @property
    def callback_type(self) -> int | None:
        """The interaction callback type (4, 5, 6, 7, 8, 9) of a callback request."""
        return self.json.get("type") if self.is_callback and isinstance(self.json, dict) else None

    @property
    def body(self) -> dict[str, Any]:
        """What the bot sent as message data: a callback's ``data`` or the request's JSON."""
        if self.is_callback:
            return (self.json or {}).get("data") or {}
        return self.json if isinstance(self.json, dict) else {}

    @property
    def ephemeral(self) -> bool:
        """True when the body asks for an ephemeral message (flags & 64)."""
        return bool(int(self.body.get("flags") or 0) & 64) or bool(
            self.message and int(self.message.get("flags") or 0) & 64
        )

    def __repr__(self) -> str:
        return f"<{self.method} {self.path} -> {self.status}>"


@dataclass
class _InteractionRecord:
    id: int
    token: str
    type: int
    channel_id: int
    guild_id: int | None
    user: dict[str, Any]
    message_id: int | None = None  # the message a component lives on
    original_id: int | None = None  # the interaction's original response message
    callbacks: int = 0
    ephemeral: bool = False


_DISCORD_IDENTIFY_HOOK = discord.Client.before_identify_hook


async def _identify_at_once(self: discord.Client, shard_id: int | None, *, initial: bool = False) -> None:
    """No pause before an IDENTIFY (see :func:`identify_without_pause`)."""


def identify_without_pause() -> None:
    """discord.py's default ``before_identify_hook`` sleeps 5 s before every IDENTIFY but a process's
    first, to keep under Discord's identify rate limit; the fake gateway has none, so a bot with several
    shards identifies them at once here (the shards, their order and the IDENTIFY payloads are
    unchanged). :meth:`FakeDiscord.install` does this; a child process pointed at a fake calls it."""
    discord.Client.before_identify_hook = _identify_at_once  # type: ignore[method-assign]


class FakeDiscord:
    """A loopback HTTP server answering the Discord REST routes the bot uses, recording every request.

    Start with ``await fake.start()`` (or ``async with``); point discord.py at it with :meth:`install`.
    ``owner_id`` is the application's owner (admin commands are allowed for it).
    """

    def __init__(self, *, owner_id: int = OWNER_ID, application_id: int = APPLICATION_ID) -> None:
        self.owner_id = owner_id
        self.application_id = application_id
        self.bot_user = user_payload(application_id, "paperbot", bot=True)
        self.owner = user_payload(owner_id, "owner")
        self.requests: list[RecordedRequest] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.interactions: dict[int, _InteractionRecord] = {}
        self._by_token: dict[str, _InteractionRecord] = {}
        self.modals: dict[int, dict[str, Any]] = {}  # interaction id -> modal data it opened
        self.commands: dict[int | None, list[dict[str, Any]]] = {}  # guild id (None = global) -> synced
        self.attachments: dict[str, tuple[str, bytes]] = {}
        self.server: TestServer | None = None
        self._saved_base: str | None = None
        self._saved_gateway: yarl.URL | None = None
        self._component_ids = itertools.count(1)
        self.gateway_sessions = 0
        self.reject_token = False  # answer 401 to GET /users/@me, as Discord does for a bad token
        # Interaction tokens to treat as expired (tokens also expire TOKEN_LIFETIME after their
        # interaction's id, so a back-dated interaction's token expires as on Discord).
        self.expired_tokens: set[str] = set()
        # Seconds after its creation within which an interaction's first callback must come, as on
        # Discord (3.0); later ones get 404 Unknown interaction (10062). None: not enforced.
        self.callback_deadline: float | None = None
        # Seconds an interaction callback's answer takes to come back. Discord has acknowledged the
        # callback by then (a second one already gets 40060), but discord.py does not know it yet.
        self.callback_latency = 0.0
        self.deleted: set[int] = set()  # messages deleted (by a test): fetching one is an expected 404
        self.dm_channels: dict[int, int] = {}  # user id -> the DM channel the bot opened with them
        self.closed_dms: set[int] = set()  # users whose DMs refuse the bot (403, code 50007)
        self.identified = threading.Event()  # set once a bot identified on the fake gateway
        self.identified_shards: list[tuple[int, int]] = []  # (shard id, shard count) per IDENTIFY

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> FakeDiscord:
        """Listen on 127.0.0.1 on a free port."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.server = TestServer(app, host="127.0.0.1", port=0)
        await self.server.start_server()
        return self

    @property
    def base_url(self) -> str:
        """The API base URL (``http://127.0.0.1:<port>/api/v10``)."""
        assert self.server is not None, "start() first"  # noqa: S101 - programming error, not input
        return str(self.server.make_url(API_PREFIX))

    @property
    def gateway_url(self) -> yarl.URL:
        """The fake gateway's websocket URL."""
        assert self.server is not None, "start() first"  # noqa: S101 - programming error, not input
        return self.server.make_url("/gateway").with_scheme("ws")

    def install(self) -> None:
        """Point discord.py's REST and webhook routes at this server (undo with :meth:`uninstall`)."""
        if self._saved_base is None:
            self._saved_base = discord.http.Route.BASE
            self._saved_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        discord.http.Route.BASE = self.base_url
        # bot.start() connects to this URL directly (no GET /gateway/bot on the first connect).
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self.gateway_url
        identify_without_pause()

    def uninstall(self) -> None:
        """Restore discord.py's real API base URL."""
        if self._saved_base is not None:
            discord.http.Route.BASE = self._saved_base
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._saved_gateway
            discord.Client.before_identify_hook = _DISCORD_IDENTIFY_HOOK
            self._saved_base = None

    async def close(self) -> None:
        """Stop the server and restore the base URL."""
        self.uninstall()
        if self.server is not None:
            await self.server.close()
            self.server = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- registration by the injector -----------------------------------------------------------

    def register_interaction(self, payload: dict[str, Any]) -> None:
        """Remember an injected interaction so its callback/followups can be answered and checked."""
        user = payload.get("member", {}).get("user") or payload.get("user") or {}
        message = payload.get("message")
        record = _InteractionRecord(
            id=int(payload["id"]),
            token=payload["token"],
            type=int(payload["type"]),
            channel_id=int(payload.get("channel_id") or CHANNEL_ID),
            guild_id=int(payload["guild_id"]) if payload.get("guild_id") else None,
            user=user,
            message_id=int(message["id"]) if message else None,
        )
        self.interactions[record.id] = record
        self._by_token[record.token] = record

    def add_attachment(self, filename: str, data: bytes) -> dict[str, Any]:
        """Host ``data`` and return an attachment object whose ``url`` serves it (for attachment options)."""
        attachment_id = snowflake()
        key = f"{attachment_id}/{filename}"
        self.attachments[key] = (filename, data)
        url = str(self.server.make_url(f"/attachments/{key}")) if self.server else f"http://127.0.0.1/{key}"
        return {
            "id": str(attachment_id),
            "filename": filename,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": "application/json" if filename.endswith(".json") else "text/plain",
        }

    # -- HTTP -----------------------------------------------------------------------------------

    @staticmethod
    def _json(data: Any, status: int = 200) -> web.Response:
        # discord.py compares the header to "application/json" exactly; json_response adds a charset.
        body = b"" if data is None else json.dumps(data).encode()
        response = web.Response(status=status, body=body)
        response.headers["Content-Type"] = "application/json"
        return response

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/attachments/"):
            key = request.path[len("/attachments/") :]
            if key not in self.attachments:
                return web.Response(status=404)
            return web.Response(body=self.attachments[key][1], content_type="application/octet-stream")
        path = request.path[len(API_PREFIX) :] if request.path.startswith(API_PREFIX) else request.path
        body: Any = None
        files: list[tuple[str, str, bytes]] = []
        multipart = request.content_type.startswith("multipart/")
        if multipart:
            form = await request.post()
            for name, value in form.items():
                if name == "payload_json":
                    body = json.loads(value if isinstance(value, str) else value.file.read())
                elif isinstance(value, web.FileField):
                    files.append((name, value.filename, value.file.read()))
        elif request.can_read_body:
            raw = await request.read()
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
        record = RecordedRequest(
            method=request.method,
            path=path,
            query=dict(request.query),
            json=body,
            files=files,
            multipart=multipart,
            at=time.perf_counter(),
        )
        self.requests.append(record)
        try:
            status, data = self._route(record)
        except Exception as exc:  # a bug in the fake must show up in the test, not hang the bot
            log.exception("fake Discord failed on %s %s", request.method, path)
            status, data = 500, {"message": f"fake error: {exc}", "code": 0}
        record.status, record.response = status, data
        if record.is_callback and self.callback_latency:
            await asyncio.sleep(self.callback_latency)
        if status == 204:
            return web.Response(status=204)
        return self._json(data, status)

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        """A minimal gateway for ``bot.start``: HELLO, READY on IDENTIFY, heartbeat ACKs. No events."""
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.gateway_sessions += 1
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None}))
        sequence = 0
        async for frame in ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            op = message.get("op")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11, "d": None, "s": None, "t": None}))
            elif op in (2, 6):
                sequence += 1
                ready = {
                    "v": 10,
                    "user": self.bot_user,
                    "guilds": [],
                    "session_id": "fake-session",
                    "resume_gateway_url": str(request.url.with_query(None)).replace("http://", "ws://"),
                    "application": {"id": str(self.application_id), "flags": 0},
                }
                shard = (message.get("d") or {}).get("shard")
                if shard is not None:  # as Discord does: READY names the shard the IDENTIFY asked for
                    ready["shard"] = shard
                    self.identified_shards.append(tuple(shard))
                event = ("READY", ready) if op == 2 else ("RESUMED", {})
                await ws.send_str(json.dumps({"op": 0, "t": event[0], "s": sequence, "d": event[1]}))
                self.identified.set()
        return ws

    def _route(self, r: RecordedRequest) -> tuple[int, Any]:
        m, p = r.method, r.path
        parts = p.strip("/").split("/")
        if m == "GET" and p == "/gateway/bot":
            return 200, {
                "url": str(self.gateway_url),
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }
        if m == "GET" and p == "/users/@me":
            if self.reject_token:
                r.expected_error = True
                return 401, {"message": "401: Unauthorized", "code": 0}
            return 200, self.bot_user
        if m == "GET" and p == "/oauth2/applications/@me":
            return 200, self.application_payload()
        if m == "GET" and p == "/applications/@me":
            return 200, self.application_payload()
        if parts[0] == "applications" and "commands" in parts:
            return self._commands(r, parts)
        if parts[0] == "interactions" and parts[-1] == "callback" and m == "POST":
            return self._callback(r, int(parts[1]), parts[2])
        if parts[0] == "webhooks" and len(parts) >= 3:
            return self._webhook(r, parts)
        if parts[0] == "channels" and len(parts) >= 3 and parts[2] == "messages":
            return self._channel_messages(r, parts)
        if parts[0] == "channels" and len(parts) == 2 and m == "GET":
            return 200, {
                "id": parts[1],
                "type": 0,
                "guild_id": str(GUILD_ID),
                "name": "papers",
                "position": 0,
            }
        if parts[0] == "users" and parts[1:] == ["@me", "channels"] and m == "POST":
            recipient = int((r.json or {}).get("recipient_id") or 0)
            channel = self.dm_channels.setdefault(recipient, DM_CHANNEL_ID + len(self.dm_channels))
            return 200, {
                "id": str(channel),
                "type": 1,
                "recipients": [user_payload(recipient, f"user{recipient % 1000}")],
            }
        return 404, {"message": f"fake Discord: no route for {m} {p}", "code": 0}

    def application_payload(self) -> dict[str, Any]:
        """GET /oauth2/applications/@me: the owner is configurable; no interactions endpoint URL."""
        return {
            "id": str(self.application_id),
            "name": "paperbot",
            "description": "Answers research questions from paper abstracts.",
            "icon": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.owner,
            "team": None,
            "verify_key": "0" * 64,
            "flags": 0,
            "interactions_endpoint_url": None,
            "bot": self.bot_user,
        }

    def _commands(self, r: RecordedRequest, parts: list[str]) -> tuple[int, Any]:
        guild_id = int(parts[3]) if len(parts) > 3 and parts[2] == "guilds" else None
        if r.method == "PUT":
            echoed = [self._echo_command(c, guild_id) for c in (r.json or [])]
            self.commands[guild_id] = echoed
            return 200, echoed
        if r.method == "GET" and parts[-1] == "commands":
            return 200, self.commands.get(guild_id, [])
        if r.method in ("POST", "PATCH"):
            return 200, self._echo_command(r.json or {}, guild_id)
        if r.method == "DELETE":
            return 204, None
        return 404, {"message": "fake Discord: unknown commands route", "code": 0}

    def _echo_command(self, command: dict[str, Any], guild_id: int | None) -> dict[str, Any]:
        echoed = dict(command)
        echoed.update(
            id=str(snowflake()),
            application_id=str(self.application_id),
            version=str(snowflake()),
            default_member_permissions=(
                None
                if command.get("default_member_permissions") is None
                else str(command["default_member_permissions"])
            ),
            integration_types=command.get("integration_types") or [0],
            contexts=command.get("contexts"),
        )
        if guild_id is not None:
            echoed["guild_id"] = str(guild_id)
        return echoed

    # -- messages -------------------------------------------------------------------------------

    def _number_components(self, components: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        result = []
        for component in components or []:
            copy = dict(component)
            copy.setdefault("id", next(self._component_ids))
            if "components" in copy:
                copy["components"] = self._number_components(copy["components"])
            if isinstance(copy.get("component"), dict):
                copy["component"] = self._number_components([copy["component"]])[0]
            if isinstance(copy.get("accessory"), dict):
                copy["accessory"] = self._number_components([copy["accessory"]])[0]
            result.append(copy)
        return result

    def _attachments(self, body: dict[str, Any], files: list[tuple[str, str, bytes]]) -> list[dict[str, Any]]:
        attachments = []
        for index, (_field, filename, data) in enumerate(files):
            attachment_id = snowflake()
            key = f"{attachment_id}/{filename}"
            self.attachments[key] = (filename, data)
            url = str(self.server.make_url(f"/attachments/{key}")) if self.server else key
            described = body.get("attachments") or [{}] * len(files)
            description = described[index].get("description") if index < len(described) else None
            attachments.append(
                {
                    "id": str(attachment_id),
                    "filename": filename,
                    "size": len(data),
                    "url": url,
                    "proxy_url": url,
                    "description": description,
                }
            )
        return attachments

    def make_message(
        self,
        body: dict[str, Any],
        *,
        channel_id: int,
        guild_id: int | None = None,
        files: list[tuple[str, str, bytes]] = (),  # type: ignore[assignment]
        interaction: _InteractionRecord | None = None,
        extra_flags: int = 0,
        reference: dict[str, Any] | None = None,
        author: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A full message object as Discord returns it, stored for later edits and clicks."""
        message_id = snowflake()
        message: dict[str, Any] = {
            "id": str(message_id),
            "channel_id": str(channel_id),
            "author": author or self.bot_user,
            "content": body.get("content") or "",
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": bool(body.get("tts", False)),
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": self._attachments(body, files),
            "embeds": [dict(e, type=e.get("type", "rich")) for e in body.get("embeds") or []],
            "components": self._number_components(body.get("components")),
            "pinned": False,
            "type": 0,
            "flags": int(body.get("flags") or 0) | extra_flags,
        }
        if guild_id is not None:
            message["guild_id"] = str(guild_id)
        if interaction is not None:
            message["application_id"] = str(self.application_id)
            message["webhook_id"] = str(self.application_id)
            message["type"] = 20 if interaction.type == 2 else 0
            message["interaction_metadata"] = {
                "id": str(interaction.id),
                "type": interaction.type,
                "user": interaction.user,
                "authorizing_integration_owners": {"0": str(interaction.guild_id or 0)},
            }
        if reference is not None:
            message["type"] = 19
            message["message_reference"] = dict(reference, type=0)
        self.messages[message_id] = message
        return message

    def edit_message(
        self,
        message_id: int,
        body: dict[str, Any],
        files: list[tuple[str, str, bytes]] = (),  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Apply an edit body to a stored message and return the updated message."""
        message = self.messages.get(message_id)
        if message is None:
            raise KeyError(f"fake Discord: unknown message {message_id}")
        message = dict(message)
        if "content" in body:
            message["content"] = body["content"] or ""
        if "embeds" in body:
            message["embeds"] = [dict(e, type=e.get("type", "rich")) for e in body["embeds"] or []]
        if "components" in body:
            message["components"] = self._number_components(body["components"])
        if "flags" in body and body["flags"] is not None:
            message["flags"] = (int(message["flags"]) & 64) | int(body["flags"])
        if files or "attachments" in body:
            kept = [
                a
                for a in message["attachments"]
                if any(str(b.get("id")) == a["id"] for b in body.get("attachments") or [])
            ]
            message["attachments"] = kept + self._attachments(body, files)
        message["flags"] = int(message["flags"]) & ~128  # no longer "thinking"
        message["edited_timestamp"] = _now()
        self.messages[message_id] = message
        return message

    def _callback(self, r: RecordedRequest, interaction_id: int, token: str) -> tuple[int, Any]:
        record = self.interactions.get(interaction_id)
        if record is None:
            return 404, {"message": "Unknown interaction", "code": 10062}
        r.interaction_id = interaction_id
        record.callbacks += 1
        if record.callbacks > 1:
            return 400, {"message": "Interaction has already been acknowledged.", "code": 40060}
        if self.callback_deadline is not None:
            age = (dt.datetime.now(dt.UTC) - discord.utils.snowflake_time(interaction_id)).total_seconds()
            if age > self.callback_deadline:
                r.expected_error = True  # the test made it late
                return 404, {"message": "Unknown interaction", "code": 10062}
        body = r.json or {}
        kind = int(body.get("type", 0))
        data = body.get("data") or {}
        record.ephemeral = bool(int(data.get("flags") or 0) & 64)
        resource: dict[str, Any] | None = None
        if kind == 4:
            message = self.make_message(
                data,
                channel_id=record.channel_id,
                guild_id=record.guild_id,
                files=r.files,
                interaction=record,
            )
            record.original_id = int(message["id"])
            resource = {"type": 4, "message": message}
            r.message = message
        elif kind == 5:
            placeholder = self.make_message(
                {"flags": data.get("flags")},
                channel_id=record.channel_id,
                guild_id=record.guild_id,
                interaction=record,
                extra_flags=128,
            )
            record.original_id = int(placeholder["id"])
        elif kind in (6, 7):
            record.original_id = record.message_id
            if kind == 7 and record.message_id is not None:
                message = self.edit_message(record.message_id, data, r.files)
                resource = {"type": 7, "message": message}
                r.message = message
        elif kind == 9:
            self.modals[interaction_id] = data
        payload: dict[str, Any] = {
            "interaction": {
                "id": str(interaction_id),
                "type": record.type,
                "response_message_id": str(record.original_id) if record.original_id else None,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": record.ephemeral,
            }
        }
        if resource is not None:
            payload["resource"] = resource
        return 200, payload

    def _webhook(self, r: RecordedRequest, parts: list[str]) -> tuple[int, Any]:
        token = parts[2]
        record = self._by_token.get(token)
        if record is None:
            return 404, {"message": "Unknown Webhook", "code": 10015}
        r.interaction_id = record.id
        age = (dt.datetime.now(dt.UTC) - discord.utils.snowflake_time(record.id)).total_seconds()
        if token in self.expired_tokens or age > TOKEN_LIFETIME:
            r.expected_error = True  # the test expired it
            return 401, {"message": "Invalid Webhook Token", "code": 50027}
        body = r.json if isinstance(r.json, dict) else {}
        if len(parts) == 3 and r.method == "POST":  # followup
            message = self.make_message(
                body,
                channel_id=record.channel_id,
                guild_id=record.guild_id,
                files=r.files,
                interaction=record,
            )
            if record.original_id is not None and int(self.messages[record.original_id]["flags"]) & 128:
                # Discord turns the first followup after a "thinking" defer into the original response.
                self.messages.pop(int(message["id"]))
                message = self.edit_message(record.original_id, body, r.files)
                message["flags"] = int(message["flags"]) | int(body.get("flags") or 0)
            r.message = message
            return 200, message
        if len(parts) == 5 and parts[3] == "messages":
            target = parts[4]
            message_id = record.original_id if target == "@original" else int(target)
            if message_id is None or message_id not in self.messages:
                return 404, {"message": "Unknown Message", "code": 10008}
            if r.method == "GET":
                return 200, self.messages[message_id]
            if r.method == "PATCH":
                r.message = self.edit_message(message_id, body, r.files)
                return 200, r.message
            if r.method == "DELETE":
                self.messages.pop(message_id, None)
                return 204, None
        return 404, {"message": "fake Discord: unknown webhook route", "code": 0}

    def delete_message(self, message_id: int | str) -> None:
        """The message is deleted on Discord: fetching it answers 404 Unknown Message."""
        self.messages.pop(int(message_id), None)
        self.deleted.add(int(message_id))

    def dms_to(self, user_id: int) -> list[RecordedRequest]:
        """The messages the bot posted into its DM channel with ``user_id``."""
        channel = self.dm_channels.get(int(user_id))
        return [
            r
            for r in self.requests
            if channel is not None and r.method == "POST" and r.path == f"/channels/{channel}/messages"
        ]

    def _channel_messages(self, r: RecordedRequest, parts: list[str]) -> tuple[int, Any]:
        channel_id = int(parts[1])
        body = r.json if isinstance(r.json, dict) else {}
        recipient = next((u for u, c in self.dm_channels.items() if c == channel_id), None)
        if recipient is not None and recipient in self.closed_dms and r.method == "POST":
            r.expected_error = True  # the test closed this user's DMs
            return 403, {"message": "Cannot send messages to this user", "code": 50007}
        if len(parts) == 3 and r.method == "POST":
            reference = body.get("message_reference")
            guild_id = None
            if reference and reference.get("message_id"):
                original = self.messages.get(int(reference["message_id"]))
                guild_id = int(original["guild_id"]) if original and original.get("guild_id") else None
            r.message = self.make_message(
                body, channel_id=channel_id, guild_id=guild_id, files=r.files, reference=reference
            )
            return 200, r.message
        if len(parts) == 4:
            message_id = int(parts[3])
            if message_id not in self.messages:
                r.expected_error = message_id in self.deleted  # the test deleted it
                return 404, {"message": "Unknown Message", "code": 10008}
            if r.method == "PATCH":
                r.message = self.edit_message(message_id, body, r.files)
                return 200, r.message
            if r.method == "GET":
                return 200, self.messages[message_id]
            if r.method == "DELETE":
                self.messages.pop(message_id, None)
                return 204, None
        return 404, {"message": "fake Discord: unknown channel messages route", "code": 0}


# ---------------------------------------------------------------------------------------------------
# Injection
# ---------------------------------------------------------------------------------------------------


@dataclass
class Exchange:
    """What one injected event produced: the requests, in order, plus shortcuts to the reply."""

    requests: list[RecordedRequest]
    interaction_id: int | None = None
    payload: dict[str, Any] | None = None

    @property
    def callback(self) -> RecordedRequest | None:
        """The interaction callback request (None for mentions or if the bot never answered)."""
        return next((r for r in self.requests if r.is_callback), None)

    @property
    def callback_type(self) -> int | None:
        """4 message, 5 deferred, 6 deferred update, 7 update, 8 autocomplete, 9 modal."""
        return self.callback.callback_type if self.callback else None

    @property
    def replies(self) -> list[RecordedRequest]:
        """Requests that carried message data (callbacks with data, followups, edits, channel posts)."""
        return [r for r in self.requests if r.body and r.method in ("POST", "PATCH") and r.callback_type != 8]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Messages created or edited, in order (as the fake stored them)."""
        return [r.message for r in self.requests if r.message is not None]

    @property
    def message(self) -> dict[str, Any]:
        """The last message created or edited (the one to click on next)."""
        messages = self.messages
        if not messages:
            raise AssertionError(f"the event produced no message; requests: {self.requests}")
        return messages[-1]

    @property
    def body(self) -> dict[str, Any]:
        """The message data of the last reply the bot sent."""
        replies = self.replies
        if not replies:
            raise AssertionError(f"the event produced no reply; requests: {self.requests}")
        return replies[-1].body

    @property
    def content(self) -> str:
        """Content of the last message."""
        return self.message.get("content") or ""

    @property
    def embeds(self) -> list[dict[str, Any]]:
        """Embeds of the last message."""
        return self.message.get("embeds") or []

    @property
    def components(self) -> list[dict[str, Any]]:
        """Top-level components (action rows) of the last message."""
        return self.message.get("components") or []

    @property
    def ephemeral(self) -> bool:
        """True when the reply is ephemeral (flags & 64)."""
        return bool(int(self.message.get("flags") or 0) & 64)

    @property
    def choices(self) -> list[dict[str, Any]]:
        """Autocomplete choices (callback type 8)."""
        callback = self.callback
        return ((callback.json or {}).get("data") or {}).get("choices") or [] if callback else []

    @property
    def text(self) -> str:
        """Content plus every embed's text of the last message, for loose assertions."""
        parts = [self.content]
        for embed in self.embeds:
            parts += [embed.get("title") or "", embed.get("description") or ""]
            parts += [f"{f.get('name')}: {f.get('value')}" for f in embed.get("fields") or []]
            parts.append((embed.get("footer") or {}).get("text") or "")
        return "\n".join(p for p in parts if p)

    def components_flat(self, message: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every interactive component of a message (buttons, selects), rows flattened."""
        return list(iter_components((message or self.message).get("components") or []))

    def custom_id(
        self, *, label: str | None = None, placeholder: str | None = None, type: int | None = None
    ) -> str:
        """The custom_id of the first component whose label/placeholder contains the text."""
        for component in self.components_flat():
            if type is not None and component.get("type") != type:
                continue
            if label is not None and label not in (component.get("label") or ""):
                continue
            if placeholder is not None and placeholder not in (component.get("placeholder") or ""):
                continue
            if "custom_id" in component:
                return component["custom_id"]
        raise AssertionError(f"no component matching label={label!r} placeholder={placeholder!r}")


def iter_components(components: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    """Depth-first walk over components, yielding leaf/interactive ones (not rows/containers)."""
    for component in components:
        if component.get("type") in (1, 17, 9, 18):  # row, container, section, label
            yield from iter_components(component.get("components") or [])
            for key in ("accessory", "component"):
                if isinstance(component.get(key), dict):
                    yield from iter_components([component[key]])
        else:
            yield component


class Harness:
    """A logged-in :class:`PaperBot` on a :class:`FakeDiscord`, with injectors for every event kind.

    ``alice`` (default user), ``bob`` (another user) and ``owner`` (the application owner) are user
    payloads; pass ``user=h.bob`` to act as someone else, or build one with :meth:`make_user`.
    """

    def __init__(self, bot: PaperBot, fake: FakeDiscord) -> None:
        self.bot = bot
        self.fake = fake
        self.alice = user_payload(1500000000000000001, "alice")
        self.bob = user_payload(1500000000000000002, "bob")
        self.owner = fake.owner
        self.guild_id = GUILD_ID
        self.channel_id = CHANNEL_ID
        self._tokens = itertools.count(1)
        self.task_timeout = 30.0  # seconds an injected event's tasks may take before TimeoutError
        self.interaction_age = 0.0  # seconds by which new interactions (and their tokens) are back-dated

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    async def start(
        cls,
        settings: Settings,
        *,
        owner_id: int = OWNER_ID,
        token: str = "test-token",  # noqa: S107 - the fake accepts any token
        fake: FakeDiscord | None = None,
        **bot_options: Any,
    ) -> Harness:
        """Start the fake, point discord.py at it and log the real bot in (runs ``setup_hook``)."""
        from bot.app import PaperBot

        fake = fake or FakeDiscord(owner_id=owner_id)
        if fake.server is None:
            await fake.start()
        fake.install()
        bot_options.setdefault("http_trace", loopback_only_trace())
        bot = PaperBot(settings, **bot_options)
        try:
            await bot.login(token)
        except BaseException:
            await bot.close()
            await fake.close()
            raise
        return cls(bot, fake)

    @classmethod
    @contextlib.asynccontextmanager
    async def started(cls, settings: Settings, **options: Any) -> AsyncIterator[Harness]:
        """``async with Harness.started(settings) as h:`` — start, yield, close."""
        harness = await cls.start(settings, **options)
        try:
            yield harness
        finally:
            await harness.close()

    async def close(self) -> None:
        """Stop every view, close the bot (and its database) and the fake; restore Route.BASE."""
        for view in _live_views(self.bot):
            view.stop()  # cancels the views' timeout timers so none fires after the loop closes
        await self.bot.close()
        await self.fake.close()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request recorded so far."""
        return self.fake.requests

    # -- payload builders -----------------------------------------------------------------------

    def make_user(self, user_id: int, name: str) -> dict[str, Any]:
        """A user payload to act as."""
        return user_payload(user_id, name)

    def _base(
        self,
        kind: int,
        *,
        user: dict[str, Any] | None,
        guild: bool,
        data: dict[str, Any],
        permissions: int | None,
        locale: str,
        channel_id: int | None = None,
    ) -> dict[str, Any]:
        user = user or self.alice
        interaction_id = snowflake(self.interaction_age)
        channel = channel_id or (self.channel_id if guild else DM_CHANNEL_ID)
        perms = str(DEFAULT_PERMISSIONS.value if permissions is None else permissions)
        payload: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(self.fake.application_id),
            "type": kind,
            "data": data,
            "token": f"tok-{interaction_id}-{next(self._tokens)}",
            "version": 1,
            "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
            "locale": locale,
            "app_permissions": str(DEFAULT_PERMISSIONS.value),
            "entitlements": [],
            "channel_id": str(channel),
        }
        if guild:
            payload.update(
                guild_id=str(self.guild_id),
                guild_locale="en-US",
                member={
                    "user": user,
                    "roles": [],
                    "flags": 0,
                    "permissions": perms,
                    "joined_at": _now(),
                    "deaf": False,
                    "mute": False,
                    "nick": None,
                    "pending": False,
                },
                channel={
                    "id": str(channel),
                    "type": 0,
                    "guild_id": str(self.guild_id),
                    "name": "papers",
                    "position": 0,
                    "permissions": perms,
                    "nsfw": False,
                    "parent_id": None,
                },
                authorizing_integration_owners={"0": str(self.guild_id)},
                context=0,
            )
        else:
            payload.update(
                user=user,
                channel={"id": str(channel), "type": 1, "recipients": [user]},
                authorizing_integration_owners={"1": user["id"]},
                context=1,
            )
        return payload

    def _command_options(
        self, name: str, options: dict[str, Any] | None, subcommand: str | None, focused: str | None
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        words = name.split()
        if subcommand:
            words += subcommand.split()
        command = self.bot.tree.get_command(words[0])
        if command is None:
            raise LookupError(f"no command /{words[0]} is registered")
        resolved: dict[str, Any] = {}
        leaf: Any = command
        path = [words[0]]
        for word in words[1:]:
            leaf = leaf.get_command(word) if isinstance(leaf, discord.app_commands.Group) else None
            if leaf is None:
                raise LookupError(f"no subcommand {word!r} under /{' '.join(path)}")
            path.append(word)
        if isinstance(leaf, discord.app_commands.Group):
            raise LookupError(f"/{' '.join(path)} is a group: name a subcommand")
        params = {p.display_name: p for p in leaf.parameters}
        values = []
        for key, value in (options or {}).items():
            param = params.get(key) or next((p for p in leaf.parameters if p.name == key), None)
            if param is None:
                raise LookupError(f"/{' '.join(path)} has no option {key!r}")
            kind = param.type.value
            if kind == discord.AppCommandOptionType.attachment.value and isinstance(value, dict):
                resolved.setdefault("attachments", {})[value["id"]] = value
                value = value["id"]
            option: dict[str, Any] = {"name": param.display_name, "type": kind, "value": value}
            if focused == key:
                option["focused"] = True
            values.append(option)
        if focused is not None and not any(o.get("focused") for o in values):
            raise LookupError(f"the focused option {focused!r} must be in options")
        # Wrap the leaf options in subcommand / group layers, innermost first.
        nested: list[dict[str, Any]] = values
        for depth in range(len(path) - 1, 0, -1):
            node: Any = command
            for word in path[1 : depth + 1]:
                node = node.get_command(word)
            kind = 1 if not isinstance(node, discord.app_commands.Group) else 2
            nested = [{"name": path[depth], "type": kind, "options": nested}]
        data = {"id": str(snowflake()), "name": path[0], "type": 1, "options": nested}
        if resolved:
            data["resolved"] = resolved
        return data, values

    # -- injectors ------------------------------------------------------------------------------

    async def inject(self, payload: dict[str, Any]) -> Exchange:
        """Feed a raw INTERACTION_CREATE ``d`` through discord.py and wait for all resulting work."""
        self.fake.register_interaction(payload)
        start = len(self.fake.requests)
        await self._dispatch("INTERACTION_CREATE", payload)
        return Exchange(self.fake.requests[start:], interaction_id=int(payload["id"]), payload=payload)

    async def _dispatch(self, event: str, payload: dict[str, Any]) -> None:
        before = asyncio.all_tasks()
        self.bot._connection.parsers[event](payload)
        await self.wait_for_tasks(before)

    async def wait_for_tasks(self, before: set[asyncio.Task[Any]], timeout: float | None = None) -> None:
        """Await every new discord.py event/command/view task until none is pending; re-raise failures."""
        seen: set[asyncio.Task[Any]] = set()
        errors: list[BaseException] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.task_timeout if timeout is None else timeout)
        while True:
            await asyncio.sleep(0)
            pending = [
                t
                for t in asyncio.all_tasks() - before - seen
                if any(p.search(t.get_name()) for p in TASK_PATTERNS)
            ]
            if not pending:
                break
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"tasks still running: {[t.get_name() for t in pending]}")
            done, _ = await asyncio.wait(pending, timeout=remaining)
            for task in done:
                seen.add(task)
                if not task.cancelled() and task.exception() is not None:
                    errors.append(task.exception())  # type: ignore[arg-type]
        if errors:
            raise errors[0]

    async def run_command(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user: dict[str, Any] | None = None,
        guild: bool = True,
        subcommand: str | None = None,
        permissions: int | None = None,
        locale: str = "en-US",
    ) -> Exchange:
        """Invoke ``/name [subcommand] option:value…`` as ``user`` (in the guild, or a DM)."""
        data, _ = self._command_options(name, options, subcommand, None)
        payload = self._base(2, user=user, guild=guild, data=data, permissions=permissions, locale=locale)
        return await self.inject(payload)

    async def autocomplete(
        self,
        name: str,
        options: dict[str, Any],
        focused: str,
        *,
        user: dict[str, Any] | None = None,
        guild: bool = True,
        subcommand: str | None = None,
        locale: str = "en-US",
    ) -> Exchange:
        """Ask for choices for option ``focused`` (its partial value is ``options[focused]``)."""
        data, _ = self._command_options(name, options, subcommand, focused)
        payload = self._base(4, user=user, guild=guild, data=data, permissions=None, locale=locale)
        return await self.inject(payload)

    def _component_payload(
        self,
        message: dict[str, Any],
        custom_id: str,
        component_type: int,
        values: list[str] | None,
        user: dict[str, Any] | None,
    ) -> dict[str, Any]:
        current = self.fake.messages.get(int(message["id"]), message)
        known = {c.get("custom_id"): c for c in iter_components(current.get("components") or [])}
        if custom_id not in known:
            raise LookupError(f"message {message['id']} has no component {custom_id!r}")
        if known[custom_id].get("disabled"):
            raise LookupError(f"component {custom_id!r} is disabled; Discord would not send the click")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        if values is not None:
            data["values"] = values
        guild = current.get("guild_id") is not None
        payload = self._base(
            3,
            user=user,
            guild=guild,
            data=data,
            permissions=None,
            locale="en-US",
            channel_id=int(current["channel_id"]),
        )
        payload["message"] = current  # discord.py dispatches by the message id the view was sent on
        return payload

    async def click(
        self, message: dict[str, Any], custom_id: str, *, user: dict[str, Any] | None = None
    ) -> Exchange:
        """Press button ``custom_id`` on ``message`` (a message dict the fake returned)."""
        return await self.inject(self._component_payload(message, custom_id, 2, None, user))

    async def select(
        self,
        message: dict[str, Any],
        custom_id: str,
        values: list[str],
        *,
        user: dict[str, Any] | None = None,
    ) -> Exchange:
        """Pick ``values`` in the string select ``custom_id`` on ``message``."""
        return await self.inject(self._component_payload(message, custom_id, 3, list(values), user))

    async def submit_modal(
        self,
        opened_by: Exchange,
        values: dict[str, str | list[str]],
        *,
        user: dict[str, Any] | None = None,
        guild: bool = True,
    ) -> Exchange:
        """Submit the modal ``opened_by`` opened (callback type 9); text-input values keyed by custom_id."""
        modal = self.fake.modals.get(opened_by.interaction_id or 0)
        if modal is None:
            raise LookupError("that exchange did not open a modal")

        def fill(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
            out = []
            for c in components:
                kind = c.get("type")
                if kind in (1,):
                    out.append(
                        {"type": 1, "id": c.get("id", 0), "components": fill(c.get("components") or [])}
                    )
                elif kind == 18:
                    out.append({"type": 18, "id": c.get("id", 0), "component": fill([c["component"]])[0]})
                elif kind == 4:
                    value = values.get(c["custom_id"], c.get("value") or "")
                    out.append({"type": 4, "id": c.get("id", 0), "custom_id": c["custom_id"], "value": value})
                elif kind in (3, 5, 6, 7, 8):
                    chosen = values.get(c["custom_id"], [])
                    out.append(
                        {
                            "type": kind,
                            "id": c.get("id", 0),
                            "custom_id": c["custom_id"],
                            "values": chosen if isinstance(chosen, list) else [chosen],
                        }
                    )
            return out

        data = {"custom_id": modal["custom_id"], "components": fill(modal.get("components") or [])}
        payload = self._base(5, user=user, guild=guild, data=data, permissions=None, locale="en-US")
        return await self.inject(payload)

    async def mention(
        self,
        text: str,
        *,
        user: dict[str, Any] | None = None,
        guild: bool = True,
        author_is_bot: bool = False,
        raw: bool = False,
        role_ids: Iterable[int] = (),
    ) -> Exchange:
        """MESSAGE_CREATE with content ``"<@bot> " + text`` (``raw=True`` sends ``text`` as is).

        ``role_ids`` are the roles the message mentions (``mention_roles``); put ``<@&id>`` in the text.
        """
        bot_id = self.fake.application_id
        content = text if raw else f"<@{bot_id}> {text}"
        payload = self.message_payload(content, user=user, guild=guild, author_is_bot=author_is_bot)
        payload["mention_roles"] = [str(r) for r in role_ids]
        return await self.post_message(payload)

    async def reply(
        self,
        to: dict[str, Any],
        text: str,
        *,
        user: dict[str, Any] | None = None,
        ping: bool = True,
        mention: bool = False,
        referenced: str = "resolved",
    ) -> Exchange:
        """MESSAGE_CREATE of a Discord reply to message ``to`` (a message dict the fake holds).

        ``ping``: the reply's @mention of the replied-to author is on (Discord's default); ``mention``:
        ``<@bot>`` is also in the text. ``referenced``: ``"resolved"`` (the event carries
        ``referenced_message``), ``"absent"`` (it does not: the bot must GET it) or ``"deleted"`` (it is
        ``null``: the message was deleted, and the fake forgets it).

        The content follows Discord's rules for an application without the Message Content intent
        (unless the bot asked for it): the text arrives in DMs, when the text mentions the bot, and for a
        reply that pings the bot on one of its regular messages (not on an interaction response);
        otherwise ``content`` (and embeds, attachments) are empty. The referenced message is shown the
        same way: the bot's own messages whole, others' only when they mention it.
        """
        bot_id = self.fake.application_id
        current = self.fake.messages.get(int(to["id"]), to)
        guild = current.get("guild_id") is not None
        content = f"<@{bot_id}> {text}" if mention else text
        payload = self.message_payload(content, user=user, guild=guild)
        payload["channel_id"] = str(current["channel_id"])
        target_author = current.get("author") or {}
        pinged = ping and int(target_author.get("id", 0)) != int(payload["author"]["id"])
        if pinged:
            payload["mentions"] = [target_author, *(m for m in payload["mentions"] if m != target_author)]
        mentioned_in_text = f"<@{bot_id}>" in content
        to_bot = int(target_author.get("id", 0)) == bot_id
        interaction_response = "interaction_metadata" in current
        visible = (
            not guild
            or self.bot.intents.message_content
            or mentioned_in_text
            or (pinged and to_bot and not interaction_response)
        )
        if not visible:
            payload["content"] = ""
        payload["type"] = 19
        payload["message_reference"] = {
            "type": 0,
            "message_id": str(current["id"]),
            "channel_id": str(current["channel_id"]),
            **({"guild_id": str(current["guild_id"])} if guild else {}),
        }
        if referenced == "resolved":
            shown = dict(current)
            readable = to_bot or not guild or self.bot.intents.message_content or (
                f"<@{bot_id}>" in (current.get("content") or "")
            )
            if not readable:
                shown.update(content="", embeds=[], attachments=[], components=[])
            payload["referenced_message"] = shown
        elif referenced == "deleted":
            payload["referenced_message"] = None
            self.fake.delete_message(current["id"])
        elif referenced != "absent":
            raise ValueError(f"referenced must be resolved, absent or deleted, not {referenced!r}")
        return await self.post_message(payload)

    def message_payload(
        self,
        content: str,
        *,
        user: dict[str, Any] | None = None,
        guild: bool = True,
        author_is_bot: bool = False,
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE ``d`` by ``user`` (alice) in the test channel (or a DM) saying ``content``."""
        user = dict(user or self.alice)
        if author_is_bot:
            user["bot"] = True
        bot_id = self.fake.application_id
        payload: dict[str, Any] = {
            "id": str(snowflake()),
            "channel_id": str(self.channel_id if guild else DM_CHANNEL_ID),
            "author": user,
            "content": content,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [self.fake.bot_user]
            if f"<@{bot_id}>" in content or f"<@!{bot_id}>" in content
            else [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "components": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
        }
        if guild:
            payload["guild_id"] = str(self.guild_id)
            payload["member"] = {"roles": [], "joined_at": _now(), "deaf": False, "mute": False, "flags": 0}
        return payload

    async def post_message(self, payload: dict[str, Any]) -> Exchange:
        """Store ``payload`` (so replies can find its guild, as Discord would) and dispatch it."""
        self.fake.messages[int(payload["id"])] = payload
        start = len(self.fake.requests)
        await self._dispatch("MESSAGE_CREATE", payload)
        return Exchange(self.fake.requests[start:], payload=payload)

    async def sync(self, guild: bool = True) -> list[RecordedRequest]:
        """Run ``tree.sync`` (to the test guild, or globally) and return the PUT request(s)."""
        start = len(self.fake.requests)
        target = discord.Object(id=self.guild_id) if guild else None
        if guild:
            self.bot.tree.copy_global_to(guild=target)  # type: ignore[arg-type]
        await self.bot.tree.sync(guild=target)
        return self.fake.requests[start:]

    async def timeout_views(self) -> list[Exchange]:
        """Time out every live view now (as if ``timeout`` elapsed) and return what each edit sent."""
        exchanges = []
        views = list(self.bot.persistent_views) + list(_live_views(self.bot))
        for view in dict.fromkeys(views):
            if view.timeout is None or view.is_finished():
                continue
            start = len(self.fake.requests)
            view.stop()
            await view.on_timeout()
            exchanges.append(Exchange(self.fake.requests[start:]))
        return exchanges


def _live_views(bot: discord.Client) -> list[discord.ui.View]:
    store = bot._connection._view_store
    views: list[discord.ui.View] = []
    for mapping in getattr(store, "_views", {}).values():
        for item in mapping.values():
            view = getattr(item, "view", None)
            if view is not None and view not in views:
                views.append(view)
    return views
