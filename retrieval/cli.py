"""Command line of the retrieval library: ``search``, ``ask`` and ``index`` (``paperbot`` delegates here).

Output goes to stdout (text for people, ``--json`` one object per line for programs); every error is
one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from retrieval.english import plural
from retrieval.errors import QueryError, RetrievalError
from retrieval.index import BM25Params, Index, Progress, open_index
from retrieval.models import Answer, Hit, IngestReport, Snippet
from retrieval.report import counts_line, sections
from retrieval.search import MAX_K

__all__ = ["main"]

log = logging.getLogger(__name__)

#: Show a progress bar only for corpora at least this big (and only on a terminal).
PROGRESS_MIN_PAPERS = 5000


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line instead of usage text + exit."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: {message}")


def _top(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--top must be a whole number, not {value!r}") from None
    if not 1 <= k <= MAX_K:
        raise argparse.ArgumentTypeError(f"--top must be from 1 to {MAX_K}, not {k}")
    return k


def _build_parser() -> _Parser:
    parser = _Parser(prog="paperbot", description="Search paper abstracts with BM25.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    search = sub.add_parser("search", help="ranked papers for a query")
    search.add_argument("query", nargs="?", help='the query (words, "phrases", -exclusions, area:, author:)')
    search.add_argument(
        "--queries", type=Path, metavar="FILE", help="batch mode: one query per line ('-': stdin)"
    )
    search.add_argument("--corpus", type=Path, help="corpus file or folder")
    search.add_argument("--top", type=_top, default=10, metavar="K", help=f"hits per query (1..{MAX_K})")
    search.add_argument("--area", help="only papers of this area or sub-area")
    search.add_argument("--author", help="only papers with this author")
    search.add_argument("--json", action="store_true", help="one JSON object per hit and line")

    ask = sub.add_parser("ask", help="an extractive answer with citations")
    ask.add_argument("question")
    ask.add_argument("--corpus", type=Path, help="corpus file or folder")
    ask.add_argument("--sentences", type=int, default=3, choices=range(1, 11), metavar="N",
                     help="at most N sentences: the answer, then N-1 supporting (1..10)")
    ask.add_argument("--json", action="store_true", help="the answer as one JSON object")

    index = sub.add_parser("index", help="(re)build the index and print the ingest report")
    index.add_argument("--corpus", type=Path, help="corpus file or folder")
    index.add_argument("--json", action="store_true", help="the report as one JSON object")
    return parser


# -- progress -------------------------------------------------------------------------------------


class _ProgressBar:
    """A one-line progress bar on a terminal, redrawn at most every 0.1 s."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.last = 0.0
        self.active = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "tokenize" and done == 0 and total >= PROGRESS_MIN_PAPERS:
            self.active = True
        if not self.active:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        share = done / total if total else 1.0
        width = 30
        bar = "#" * int(share * width)
        self.stream.write(f"\r{stage:>8s} [{bar:<{width}s}] {share:6.1%}")
        self.stream.flush()

    def close(self) -> None:
        if self.active:
            self.stream.write("\n")
            self.stream.flush()


def _open(
    corpus: Path, params: BM25Params, cache_dir: Path | None, headers: Sequence[str] = ()
) -> tuple[Index, IngestReport]:
    bar = _ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    progress: Progress | None = bar
    try:
        return open_index(corpus, params, cache_dir=cache_dir, progress=progress, headers=headers)
    finally:
        if bar is not None:
            bar.close()


# -- output ---------------------------------------------------------------------------------------


def _plain_snippet(spans: Snippet | None) -> str:
    return spans.plain if spans is not None else ""


RenderSnippet = Callable[[Snippet | None], str]


def _hit_json(hit: Hit, render: RenderSnippet, extra: dict[str, Any] | None = None) -> str:
    p = hit.paper
    row: dict[str, Any] = dict(extra or {})
    row.update(
        rank=hit.rank, id=p.id, title=p.title, authors=list(p.authors), area=p.area, score=hit.score,
        snippet=render(hit.snippet), abstract=p.abstract, matched_terms=list(hit.matched_terms), url=p.url,
    )
    return json.dumps(row, ensure_ascii=False)


def _hit_text(hit: Hit, render: RenderSnippet) -> Iterator[str]:
    p = hit.paper
    authors = ", ".join(p.authors[:6]) + (" et al." if len(p.authors) > 6 or p.et_al else "")
    yield f"{hit.rank:>3}. {p.title}  [{p.id}]  score {hit.score:.3f}"
    details = " · ".join(x for x in (authors, p.area) if x)
    if details:
        yield f"     {details}"
    yield f"     {render(hit.snippet)}"


def _print_results(
    results_hits: Sequence[Hit],
    total: int,
    query: str,
    as_json: bool,
    index_no: int | None,
    render: RenderSnippet,
) -> None:
    if as_json:
        for hit in results_hits:
            print(_hit_json(hit, render, None if index_no is None else {"query_index": index_no}))
        return
    header = f"{plural(total, 'result')} for {query!r}"
    if index_no is not None:
        header = f"[{index_no}] {header}"
    print(header)
    for hit in results_hits:
        for line in _hit_text(hit, render):
            print(line)


def _answer_json(answer: Answer) -> str:
    numbers = {p.id: i + 1 for i, p in enumerate(answer.papers)}
    return json.dumps(
        {
            "question": answer.question,
            "sentences": [
                {"text": s.text, "paper_id": s.paper.id, "citation": numbers[s.paper.id], "score": s.score}
                for s in answer.sentences
            ],
            "papers": [
                {"id": p.id, "title": p.title, "authors": list(p.authors), "area": p.area, "url": p.url}
                for p in answer.papers
            ],
        },
        ensure_ascii=False,
    )


def _print_answer(answer: Answer) -> None:
    if not answer.sentences:
        print("No sentence of the corpus answers this question.")
        return
    numbers = {p.id: i + 1 for i, p in enumerate(answer.papers)}
    for s in answer.sentences:
        print(f"{s.text} [{numbers[s.paper.id]}]")
    print()
    for p in answer.papers:
        print(f"[{numbers[p.id]}] {p.title} ({p.id})" + (f" · {p.area}" if p.area else ""))


def _report_json(report: IngestReport) -> str:
    return json.dumps(
        {
            "files": list(report.files),
            "papers": report.papers,
            "duplicates": report.duplicates,
            "duplicate_details": list(report.duplicate_details),
            "skipped": [
                {"path": s.path, "line": s.line, "field": s.field, "reason": s.reason, "loaded": s.loaded}
                for s in report.skipped
            ],
            "rejected_files": list(report.rejected_files),
            "cp1252_files": list(report.cp1252_files),
            "ignored_files": list(report.ignored_files),
            "blocks": report.blocks,
            "from_cache": report.from_cache,
            "build_seconds": report.build_seconds,
            "extra": {k: v for k, v in report.extra.items() if isinstance(v, str | int | float | None)},
        },
        ensure_ascii=False,
    )


def _print_first(entries: Sequence[object], limit: int = 20) -> None:
    """The first ``limit`` entries of a report list, indented, then how many more there are."""
    for entry in entries[:limit]:
        print(f"  {entry}")
    if len(entries) > limit:
        print(f"  … and {len(entries) - limit} more")


def _print_report(report: IngestReport, index: Index, seconds: float) -> None:
    source = "loaded from cache" if report.from_cache else f"built in {report.build_seconds:.2f} s"
    files = plural(len(report.files_read), "file")
    rejected = report.rejected_files
    more = f" ({len(rejected)} more rejected)" if rejected else ""
    print(f"{plural(report.papers, 'paper')} from {files}{more}, {source} ({seconds:.2f} s in all)")
    for f in report.files_read:
        print(f"  file: {f}")
    terms, postings = plural(len(index.terms), "term"), plural(len(index.post_docs), "posting")
    print(f"ranking: BM25 {index.params.key()}; {terms}, {postings}")
    if report.extra.get("cache"):
        print(f"cache: {report.extra['cache']}")
    print(counts_line(report))
    for section in sections(report):
        print(f"{section.title}: {section.count:,}")
        _print_first(section.lines)


# -- commands -------------------------------------------------------------------------------------


def _error_line(message: str) -> None:
    print(f"paperbot: error: {message}", file=sys.stderr)


def _lines(stream: IO[str], name: str) -> Iterator[tuple[int, str]]:
    """Number the lines of a --queries file; a non-UTF-8 file is a usage error naming it."""
    number = 0
    while True:
        try:
            line = stream.readline()
        except UnicodeDecodeError:
            raise _UsageError(f"--queries {name} is not UTF-8 text") from None
        if not line:
            return
        yield number, line
        number += 1


def _search(args: argparse.Namespace, index: Index, render: RenderSnippet) -> int:
    if args.queries is None:
        results = index.search(args.query, args.top, area=args.area, author=args.author)
        _print_results(results.hits, results.total, args.query, args.json, None, render)
        return 0
    stream: IO[str]
    name = "standard input" if str(args.queries) == "-" else str(args.queries)
    try:
        stream = sys.stdin if str(args.queries) == "-" else args.queries.open(encoding="utf-8")
    except OSError as exc:
        raise _UsageError(f"cannot read --queries {name}: {exc.strerror or exc}") from None
    try:
        for number, line in _lines(stream, name):
            query = line.rstrip("\r\n")
            try:
                results = index.search(query, args.top, area=args.area, author=args.author)
            except QueryError as exc:
                if args.json:
                    err = {"query_index": number, "query": query, "error": str(exc), "position": exc.position}
                    print(json.dumps(err, ensure_ascii=False), file=sys.stderr)
                else:
                    print(f"paperbot: query {number}: {exc}", file=sys.stderr)
                continue
            _print_results(results.hits, results.total, query, args.json, number, render)
    finally:
        if stream is not sys.stdin:
            stream.close()
    return 0


def _query_words_last(parser: _Parser, argv: list[str]) -> list[str]:
    """``argv`` with the query (or question) words gathered after a ``--`` and joined into one.

    A query may start with ``-`` (``paperbot search "-sparse"``, ``search -quantum sparse``): any
    word that is not one of the subcommand's own options is query text, wherever it stands, and
    everything after ``--`` is query text. Unquoted words (``search sparse autoencoders``) form one
    query, as they would in Discord.
    """
    if not argv or argv[0] not in {"search", "ask"}:
        return argv
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    actions = sub.choices[argv[0]]._actions  # noqa: SLF001
    takes_value = {o: a.nargs != 0 for a in actions for o in a.option_strings}
    options: list[str] = []
    words: list[str] = []
    i, tokens = 0, argv[1:]
    while i < len(tokens):
        item = tokens[i]
        name = item.split("=", 1)[0]
        if item == "--":
            words += tokens[i + 1 :]
            break
        if item.startswith("-") and name in takes_value:
            options.append(item)
            if takes_value[name] and "=" not in item and i + 1 < len(tokens):
                i += 1
                options.append(tokens[i])  # the option's value, even "-" (stdin)
        else:
            words.append(item)
        i += 1
    return [argv[0], *options, *(["--", " ".join(words)] if words else [])]


def main(
    argv: list[str],
    *,
    default_corpus: Path,
    params: BM25Params,
    cache_dir: Path | None,
    render_snippet: RenderSnippet | None = None,
    headers: Sequence[str] = (),
) -> int:
    """Run ``search``, ``ask`` or ``index``.

    Args:
        argv: The subcommand and its arguments, e.g. ``["search", "sparse autoencoders", "--json"]``.
        default_corpus: Corpus used when ``--corpus`` is not given.
        params: Ranking parameters.
        cache_dir: Index cache folder (None: beside the corpus).
        render_snippet: Turns a hit's snippet spans into the printed text (default: plain text;
            ``paperbot`` passes ``bot.render.snippet``, query words in ``**bold**``).
        headers: Header lines besides ``论文检索`` (the ``[corpus] headers`` setting).

    Returns:
        The exit code: 0 on success, 2 on a usage, corpus or query error, 1 on an unexpected failure.
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(_query_words_last(parser, argv))
    except _UsageError as exc:
        _error_line(str(exc))
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    try:
        if args.command == "search" and (args.query is None) == (args.queries is None):
            raise _UsageError("paperbot search: give either QUERY or --queries FILE")
        corpus = Path(args.corpus or default_corpus).expanduser()
        started = time.perf_counter()
        index, report = _open(corpus, params, cache_dir, headers)
        if args.command == "search":
            return _search(args, index, render_snippet or _plain_snippet)
        if args.command == "ask":
            answer = index.answer(args.question, args.sentences)
            if args.json:
                print(_answer_json(answer))
            else:
                _print_answer(answer)
            return 0
        if args.json:
            print(_report_json(report))
        else:
            _print_report(report, index, time.perf_counter() - started)
        return 0
    except _UsageError as exc:
        _error_line(str(exc))
        return 2
    except BrokenPipeError:  # pragma: no cover - `paperbot search ... | head`
        return 0
    except (RetrievalError, OSError, UnicodeDecodeError) as exc:
        _error_line(str(exc) or type(exc).__name__)
        return 2
    except Exception as exc:  # never a traceback on the terminal; the log has it at DEBUG
        log.debug("unexpected failure", exc_info=True)
        _error_line(f"unexpected {type(exc).__name__}: {exc}")
        return 1
