"""Shared fixtures of the retrieval tests: the bundled corpus and its index, and a 5,000-abstract
synthetic corpus (bench._synth) for the rank-bm25 equivalence tests.

Session-scoped fixtures are built once per test process (once per xdist worker) and shared: treat what
they return as read-only (a test that must change one builds its own, or undoes it with monkeypatch).
Reuse them rather than tokenizing, indexing or fitting rank-bm25 on the synthetic corpus again."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from pathlib import Path

import pytest

from bench._synth import Generator
from retrieval import titlefile
from retrieval.corpus import load_corpus
from retrieval.index import BM25Params, Index, build_index, paper_tokens
from retrieval.models import Paper

ROOT = Path(__file__).resolve().parents[2]
SEED_CORPUS = ROOT / "data" / "corpus"

SYNTH_SIZE = 5000


@pytest.fixture(scope="session")
def seed_papers() -> tuple[Paper, ...]:
    return load_corpus(SEED_CORPUS).papers


@pytest.fixture(scope="session")
def seed_index(seed_papers) -> Index:
    return build_index(seed_papers, BM25Params())


@pytest.fixture(scope="session")
def synth_generator() -> Generator:
    return Generator(SYNTH_SIZE, seed=7)


@pytest.fixture(scope="session")
def synth_papers(synth_generator) -> tuple[Paper, ...]:
    return tuple(synth_generator.papers())


@pytest.fixture(scope="session")
def synth_index(synth_papers) -> Index:
    """The synthetic corpus indexed with the default parameters."""
    return build_index(synth_papers, BM25Params())


@pytest.fixture(scope="session")
def synth_tokens(synth_papers) -> tuple[list[str], ...]:
    """Each synthetic paper's tokens as rank-bm25 is given them (``paper_tokens``)."""
    return tuple(paper_tokens(p) for p in synth_papers)


@pytest.fixture(scope="session")
def synth_rank_bm25(synth_tokens):
    """``synth_rank_bm25(params)``: rank-bm25's model of the whole synthetic corpus for ``params``,
    fitted once per variant (the reference the equivalence tests compare against)."""
    models = {}

    def model(params: BM25Params):
        if params.key() not in models:
            models[params.key()] = params.rank_bm25_model(list(synth_tokens))
        return models[params.key()]

    return model


@pytest.fixture()
def corpus_copy(tmp_path) -> Path:
    """A writable copy of the bundled corpus (cache tests write beside it)."""
    dest = tmp_path / "corpus"
    shutil.copytree(SEED_CORPUS, dest)
    return dest


@pytest.fixture(scope="session", autouse=True)
def no_title_writer_left():
    """A test that opens a big corpus starts a background title writer (retrieval/titlefile.py); one
    still running when the tests end is stopped with its workers (its own process group)."""
    yield
    for process in list(titlefile._WRITERS.values()):
        if process.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGTERM)
