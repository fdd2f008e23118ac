"""Shared fixtures of the retrieval tests: the bundled corpus, its index, a 5,000-abstract synthetic
corpus (bench._synth) and a small helper to compare against rank-bm25."""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED_CORPUS = ROOT / "data" / "corpus"


def _install_temporary_stubs() -> None:  # pragma: no cover - removed once corpus.py/text.py land
    """TEMPORARY: minimal retrieval.corpus / retrieval.text until the real modules exist."""
    import hashlib
    import re
    import unicodedata
    from dataclasses import dataclass

    from retrieval.errors import CorpusError
    from retrieval.models import Paper, SkippedBlock

    try:
        import retrieval.corpus  # noqa: F401
    except ImportError:
        corpus = types.ModuleType("retrieval.corpus")

        @dataclass(frozen=True)
        class Corpus:
            papers: tuple[Paper, ...]
            files: tuple[str, ...]
            duplicates: int = 0
            duplicate_details: tuple[str, ...] = ()
            skipped: tuple[SkippedBlock, ...] = ()

        def corpus_files(path: Path) -> list[Path]:
            path = Path(path)
            if path.is_file():
                return [path]
            if not path.is_dir():
                raise CorpusError(f"no corpus at {path}")
            files = sorted(p for p in path.rglob("*.txt") if ".paperbot-index" not in p.parts)
            if not files:
                raise CorpusError(f"no corpus file in {path}")
            return files

        def load_corpus(path: Path) -> Corpus:
            papers: list[Paper] = []
            seen: set[str] = set()
            files = corpus_files(path)
            for f in files:
                lines = [ln.strip() for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
                if lines and lines[0] == "论文检索":
                    lines = lines[1:]
                for i in range(0, len(lines) - 2, 3):
                    area, authors, abstract = lines[i : i + 3]
                    pid = hashlib.sha1(abstract.encode()).hexdigest()[:8]
                    if pid in seen:
                        continue
                    seen.add(pid)
                    title = re.split(r"(?<=[.!?])\s", abstract, maxsplit=1)[0][:100]
                    papers.append(
                        Paper(pid, title, tuple(a.strip() for a in authors.split(",")), False, area, abstract,
                              None, f"{f}:{i}")
                    )
            if not papers:
                raise CorpusError(f"no paper in {path}")
            return Corpus(tuple(papers), tuple(str(f) for f in files))

        def normalize_name(s: str) -> str:
            d = unicodedata.normalize("NFKD", s.casefold())
            return "".join(c for c in d if not unicodedata.combining(c))

        def area_key(area: str) -> str:
            return " ".join(re.sub(r"[^\w]+", " ", normalize_name(area)).split())

        corpus.Corpus = Corpus
        corpus.corpus_files = corpus_files
        corpus.load_corpus = load_corpus
        corpus.normalize_name = normalize_name
        corpus.area_key = area_key
        sys.modules["retrieval.corpus"] = corpus
    try:
        import retrieval.text  # noqa: F401
    except ImportError:
        text = types.ModuleType("retrieval.text")

        def latex_to_display(s: str) -> str:
            s = re.sub(r"\\(?:textit|textbf|emph|mathrm)\{([^}]*)\}", r"\1", s)
            return s.replace("$", "")

        def strip_markup(s: str) -> str:
            return latex_to_display(s).replace("*", "")

        def split_sentences(t: str) -> list[str]:
            return [x for x in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", t.strip()) if x]

        def truncate(t: str, limit: int) -> str:
            return t if len(t) <= limit else t[: limit - 1] + "…"

        text.latex_to_display = latex_to_display
        text.strip_markup = strip_markup
        text.split_sentences = split_sentences
        text.truncate = truncate
        sys.modules["retrieval.text"] = text


_install_temporary_stubs()

from bench._synth import Generator  # noqa: E402
from retrieval.corpus import load_corpus  # noqa: E402
from retrieval.index import BM25Params, Index, build_index  # noqa: E402
from retrieval.models import Paper  # noqa: E402

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


@pytest.fixture()
def corpus_copy(tmp_path) -> Path:
    """A writable copy of the bundled corpus (cache tests write beside it)."""
    dest = tmp_path / "corpus"
    shutil.copytree(SEED_CORPUS, dest)
    return dest
