"""TEMPORARY: minimal retrieval.corpus / retrieval.text for the bot tests until the real modules land.

Installed by tests/bot/conftest.py only when ``import retrieval.corpus`` / ``retrieval.text`` fails;
delete this file once both exist.
"""

import hashlib
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from retrieval.models import Paper


def install():
    try:
        import retrieval.corpus  # noqa
    except ImportError:
        m = types.ModuleType("retrieval.corpus")

        def area_key(s):
            return re.sub(r"[^a-z0-9]+", " ", s.casefold()).strip()

        def corpus_files(path):
            p = Path(path)
            if p.is_file():
                return [p]
            files = sorted(p.glob("*.txt"))
            if not files:
                from retrieval.errors import CorpusError

                raise CorpusError(f"no corpus at {p}")
            return files

        @dataclass
        class C:
            papers: tuple
            files: tuple
            duplicates: int = 0
            duplicate_details: tuple = ()
            skipped: tuple = ()

        def load_corpus(path):
            papers = []
            files = corpus_files(path)
            for f in files:
                blocks = [b.strip() for b in f.read_text().split("\n\n") if b.strip()]
                blocks = blocks[1:]
                for i in range(0, len(blocks) - 2, 3):
                    area, authors, abstract = blocks[i : i + 3]
                    pid = hashlib.sha1(abstract.encode()).hexdigest()[:8]
                    title = abstract.split(". ")[0][:120]
                    papers.append(
                        Paper(
                            id=pid,
                            title=title,
                            authors=tuple(a.strip() for a in authors.split(",")),
                            et_al=False,
                            area=area,
                            abstract=abstract,
                        )
                    )
            return C(tuple(papers), tuple(str(f) for f in files))

        m.area_key, m.corpus_files, m.load_corpus = area_key, corpus_files, load_corpus
        sys.modules["retrieval.corpus"] = m
    try:
        import retrieval.text  # noqa
    except ImportError:
        t = types.ModuleType("retrieval.text")
        t.latex_to_display = lambda s: re.sub(r"\\text(it|bf)\{([^}]*)\}", r"\2", s)
        t.split_sentences = lambda s: [x for x in re.split(r"(?<=[.!?])\s+", s) if x]
        t.truncate = lambda s, n: s if len(s) <= n else s[: n - 1] + "…"
        sys.modules["retrieval.text"] = t
