"""A real PostgreSQL server for the tests, and the CI rule that its tests may not be skipped.

``postgres_server`` (session): ``PAPERBOT_TEST_POSTGRES_URL`` when set (a server you run; it must allow
``CREATE DATABASE``); otherwise a throwaway cluster started here from the Debian binaries
(``/usr/lib/postgresql/*/bin``: ``initdb`` and ``pg_ctl`` run as the ``postgres`` user when the tests
run as root), on 127.0.0.1 at a free port, in a temporary folder, with password authentication. A
small reaper process stops that cluster and removes its folder if the test process dies without its
teardown (``timeout``'s SIGTERM, SIGKILL), so a killed run never leaves a server behind.
Without either, PostgreSQL tests skip with the reason; under ``CI=true`` such a skip fails the run.

``postgres_url`` (function): a fresh, empty database on that server for one test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

SKIP_REASON = (
    "PostgreSQL is not available: set PAPERBOT_TEST_POSTGRES_URL, or install Debian's postgresql "
    "package (initdb and pg_ctl under /usr/lib/postgresql/*/bin)"
)


def find_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl (or PATH's), else None."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name), reverse=True
    )
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("pg_ctl")
    return Path(found).parent if found and (Path(found).parent / "initdb").exists() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_REAPER = """\
import shutil, subprocess, sys
sys.stdin.buffer.read()  # returns at EOF: the process that started the cluster has ended
folder, *stop = sys.argv[1:]
try:
    subprocess.run(stop, capture_output=True, timeout=120)
finally:
    shutil.rmtree(folder, ignore_errors=True)
"""


@dataclass
class Cluster:
    """A throwaway PostgreSQL cluster this process started (stop/start it to test outages)."""

    bindir: Path
    folder: Path
    port: int
    password: str
    as_postgres: bool

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres:{self.password}@127.0.0.1:{self.port}/postgres"

    def command(self, *argv: str) -> list[str]:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        return ["runuser", "-u", "postgres", "--", *command] if self.as_postgres else command

    def _run(self, *argv: str, timeout: float = 120) -> None:
        subprocess.run(self.command(*argv), check=True, capture_output=True, timeout=timeout, cwd=self.folder)

    def reaper(self) -> subprocess.Popen[bytes]:
        """A process that waits for this one to end (EOF on its stdin, whose write end only this
        process holds), then stops the cluster and removes its folder. A normal teardown has done
        both already, so the reaper finds nothing left to do."""
        stop = self.command("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        return subprocess.Popen(
            [sys.executable, "-c", _REAPER, str(self.folder), *stop],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C or a group kill of the test run does not reach it
        )

    def init(self) -> None:
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n")
        if self.as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--pwfile",
            str(pwfile),
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )

    def start(self) -> None:
        # fsync and full-page writes only guard against an OS crash, which a throwaway cluster need not
        # survive; without them each test's CREATE DATABASE and migrations do not wait on the disk. A
        # crashed or killed server process still loses no committed row (its WAL is in the OS's cache).
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c max_connections=200 "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-o", options, "-w", "start"
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")


@dataclass
class PostgresServer:
    """Where the tests' databases live; ``cluster`` is None for an external server."""

    url: str
    cluster: Cluster | None

    def database_url(self, name: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{name}"))


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer | None]:
    """The server for this test session, or None (tests then skip, or fail under CI=true)."""
    external = os.environ.get("PAPERBOT_TEST_POSTGRES_URL", "").strip()
    if external:
        yield PostgresServer(external, None)
        return
    bindir = find_bindir()
    if bindir is None:
        yield None
        return
    as_postgres = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="paperbot-pg-"))
    cluster = Cluster(bindir, folder, _free_port(), secrets.token_hex(8), as_postgres)
    reaper = cluster.reaper()
    try:
        cluster.init()
        for attempt in range(3):  # another test process (an xdist worker) may have taken the free port
            try:
                cluster.start()
                break
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise
                cluster.port = _free_port()
        yield PostgresServer(cluster.url, cluster)
    finally:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
        assert reaper.stdin is not None
        reaper.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            reaper.wait(timeout=60)


async def create_database(server: PostgresServer, name: str) -> str:
    import asyncpg

    conn = await asyncpg.connect(server.url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return server.database_url(name)


async def drop_database(server: PostgresServer, name: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(server.url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def fresh_database(server: PostgresServer) -> Iterator[str]:
    """A new empty database for one test (dropped after it)."""
    name = f"t_{secrets.token_hex(6)}"
    url = asyncio.run(create_database(server, name))
    try:
        yield url
    finally:
        if server.cluster is None or _is_up(server):
            with contextlib.suppress(Exception):
                asyncio.run(drop_database(server, name))


def _is_up(server: PostgresServer) -> bool:
    parts = urlsplit(server.url)
    with (
        contextlib.suppress(OSError),
        socket.create_connection((parts.hostname, parts.port or 5432), timeout=1),
    ):
        return True
    return False


def fail_skips_under_ci(item: pytest.Item, report: pytest.TestReport) -> None:
    """Under CI=true a PostgreSQL test that skipped fails instead: CI must run them all."""
    if report.skipped and os.environ.get("CI", "").lower() == "true" and "postgres" in item.keywords:
        report.outcome = "failed"
        report.longrepr = f"CI=true but a PostgreSQL test was skipped: {report.longrepr}"
