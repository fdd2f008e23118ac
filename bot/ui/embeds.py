"""Embed builders and the truncation helpers every outgoing message goes through.

Discord rejects a message whose embeds break a limit, so nothing is sent raw: build embeds with the
helpers here and pass the final list through :func:`fit_embeds` (the builders already do), and message
content through :func:`fit_content`. Long author lists and abstracts are shortened, never rejected.

Usage (in a cog)::

    embeds = embeds.hits_embeds(page.hits, saved_ids)          # list[discord.Embed], already fitted
    await respond.send(interaction, embeds.fit_content(header), embeds=embeds)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import discord

from bot import render
from bot.limits import (
    AUTHOR_NAME_LIMIT,
    CONTENT_LIMIT,
    DESCRIPTION_LIMIT,
    EMBED_TOTAL,
    EMBEDS_PER_MESSAGE,
    FIELD_NAME_LIMIT,
    FIELD_VALUE_LIMIT,
    FIELDS_PER_EMBED,
    FOOTER_LIMIT,
    OPTION_LIMIT,
    TITLE_LIMIT,
)
from bot.render import ELLIPSIS as ELLIPSIS  # re-exported: callers use E.truncate
from bot.render import truncate
from retrieval.english import plural
from retrieval.models import Answer, Hit, Paper

BRAND = discord.Colour.from_rgb(88, 101, 242)
EMPTY = "—"


def fit_content(text: str | None) -> str | None:
    """Message content within 2000 characters (``None`` stays ``None``)."""
    return None if text is None else truncate(text, CONTENT_LIMIT)


def label(text: str, limit: int = OPTION_LIMIT) -> str:
    """A select option label/value/description or button label: one line, non-empty, within limits."""
    one_line = " ".join((text or "").split())
    return truncate(one_line, limit) or EMPTY


def shorten_authors(authors: Sequence[str], et_al: bool = False, *, keep: int = 3, limit: int = 200) -> str:
    """``"A, B, C et al."`` — at most ``keep`` names, "et al." when more exist or the source truncated."""
    names = [name for name in authors if name.strip()]
    if not names:
        return "Unknown authors" if not et_al else "et al."
    shown = names[:keep]
    text = ", ".join(shown)
    if len(names) > keep or et_al:
        text += " et al."
    return truncate(text, limit)


def byline(paper: Paper) -> str:
    """``A, B et al. · Area``: a paper's first authors and its area, on one line (not escaped)."""
    detail = shorten_authors(paper.authors, paper.et_al, keep=2)
    return f"{detail} · {paper.area}" if paper.area else detail


def clamp_embed(embed: discord.Embed) -> discord.Embed:
    """Make one embed respect every per-part limit (in place) and drop empty fields; return it."""
    if embed.title:
        embed.title = truncate(embed.title, TITLE_LIMIT)
    if embed.description:
        embed.description = truncate(embed.description, DESCRIPTION_LIMIT)
    if embed.author and embed.author.name:
        embed.set_author(
            name=truncate(embed.author.name, AUTHOR_NAME_LIMIT),
            url=embed.author.url,
            icon_url=embed.author.icon_url,
        )
    if embed.footer and embed.footer.text:
        embed.set_footer(text=truncate(embed.footer.text, FOOTER_LIMIT), icon_url=embed.footer.icon_url)
    fields = [
        (truncate(f.name or "", FIELD_NAME_LIMIT), truncate(f.value or "", FIELD_VALUE_LIMIT), bool(f.inline))
        for f in embed.fields
    ]
    embed.clear_fields()
    for name, value, inline in fields[:FIELDS_PER_EMBED]:
        if name.strip() and value.strip():  # Discord rejects empty names/values
            embed.add_field(name=name, value=value, inline=inline)
    return embed


def fit_embeds(embeds: Iterable[discord.Embed], *, total: int = EMBED_TOTAL) -> list[discord.Embed]:
    """At most 10 clamped embeds whose text adds up to at most ``total`` (6000) characters.

    When over budget, the descriptions of the later embeds are shortened first; an embed that cannot
    fit even with a short description is dropped (the earlier, more relevant ones are kept whole).
    """
    result = [clamp_embed(e) for e in list(embeds)[:EMBEDS_PER_MESSAGE]]
    while result and sum(len(e) for e in result) > total:
        excess = sum(len(e) for e in result) - total
        for embed in reversed(result):
            if embed.description and len(embed.description) > 20:
                keep = max(20, len(embed.description) - excess)
                embed.description = truncate(embed.description, keep)
                break
        else:
            result.pop()
            continue
        if sum(len(e) for e in result) > total and all(
            not e.description or len(e.description) <= 20 for e in result
        ):
            result.pop()
    return result


def hit_embed(hit: Hit, *, saved: bool = False, reason: str | None = None) -> discord.Embed:
    """One search result: linked title, snippet, authors, area, id and score (and, for a
    recommendation, the saved paper it is like: ``reason``, markdown)."""
    paper = hit.paper
    prefix = f"{hit.rank}. "
    embed = discord.Embed(
        title=prefix + render.title(paper.title or paper.id, TITLE_LIMIT - len(prefix)),
        url=paper.url or None,
        description=render.snippet(hit.snippet) or render.abstract(paper.abstract, 600),
        colour=BRAND,
    )
    embed.add_field(
        name="Authors", value=discord.utils.escape_markdown(shorten_authors(paper.authors, paper.et_al))
    )
    embed.add_field(name="Area", value=paper.area or EMPTY, inline=True)
    embed.add_field(name="ID", value=render.code(paper.id), inline=True)
    embed.add_field(name="Score", value=f"{hit.score:.2f}", inline=True)
    if reason:
        embed.add_field(name="Because you saved", value=truncate(reason, FIELD_VALUE_LIMIT), inline=False)
    footer = _footer(paper, saved)
    if footer:
        embed.set_footer(text=footer)
    return embed


#: What a derived title's embed says under it: the title is paperbot's, not the paper's.
DERIVED_TITLE_NOTE = "title derived from the abstract (the source gives none)"


def _footer(paper: Paper, saved: bool, *more: str) -> str:
    """A paper embed's footer: saved, a derived title said so (subtly, under the embed), and more."""
    parts = ["★ in your saved papers"] if saved else []
    if paper.title_derived:
        parts.append(DERIVED_TITLE_NOTE)
    return " · ".join([*parts, *more])


def page_header(title: str, query: str, total: int, page: int, pages: int, *, quoted: bool = True) -> str:
    """The one-line header of a result page: what was asked (in quotes unless ``quoted=False``), how
    many matched, which page."""
    shown = discord.utils.escape_markdown(truncate(" ".join(query.split()), 300))
    where = f"page {page + 1}/{max(pages, 1)}"
    subject = f"“{shown}”" if quoted else shown
    text = f"**{title}** {subject} — {plural(total, 'paper')} · {where}"
    return fit_content(text) or ""


def hits_embeds(
    hits: Sequence[Hit],
    saved_ids: frozenset[str] | set[str] = frozenset(),
    reasons: dict[str, str] | None = None,
) -> list[discord.Embed]:
    """Embeds for a page of hits, fitted to the per-message limits."""
    reasons = reasons or {}
    return fit_embeds(
        hit_embed(hit, saved=hit.paper.id in saved_ids, reason=reasons.get(hit.paper.id)) for hit in hits
    )


def all_authors(paper: Paper, limit: int = FIELD_VALUE_LIMIT) -> str:
    """As many author names as fit in ``limit`` (escaped), then "et al." for the rest."""
    names = [discord.utils.escape_markdown(name) for name in paper.authors if name.strip()]
    if not names:
        return "et al." if paper.et_al else "Unknown authors"
    shown: list[str] = []
    for name in names:
        if len(", ".join([*shown, name])) > limit - len(" et al."):
            break
        shown.append(name)
    text = ", ".join(shown) or truncate(names[0], limit - len(" et al."))
    return text + (" et al." if paper.et_al or len(shown) < len(names) else "")


#: The most messages /paper answers with; an abstract longer than they hold comes as a file.
PAPER_MESSAGES_MAX = 4
#: Characters of the abstract in each embed of /paper (two fit in one message's 6,000).
PAPER_PART_CHARS = 2800


@dataclass(frozen=True)
class PaperReply:
    """/paper's answer: its messages (the first with the metadata; each a list of embeds within one
    message's limits) and, for an abstract too long for them, the whole of it as a file."""

    messages: list[list[discord.Embed]]
    file: tuple[str, bytes] | None = None


def paper_reply(paper: Paper, *, saved: bool = False) -> PaperReply:
    """The full paper, the whole abstract however long: metadata and abstract (LaTeX converted) in
    embeds of at most :data:`PAPER_PART_CHARS`, two a message; over :data:`PAPER_MESSAGES_MAX`
    messages, the first part and the whole abstract attached as a Markdown file. The footer says
    which (and marks a derived title)."""
    title = render.title(paper.title or paper.id, TITLE_LIMIT)
    meta = discord.Embed(title=title, url=paper.url or None, colour=BRAND)
    meta.add_field(name="Authors", value=all_authors(paper), inline=False)
    meta.add_field(name="Area", value=paper.area or EMPTY, inline=True)
    meta.add_field(name="ID", value=render.code(paper.id), inline=True)
    if paper.url:
        meta.add_field(name="Link", value=truncate(paper.url, FIELD_VALUE_LIMIT), inline=True)
    parts = [part for part in render.pages(paper.abstract, PAPER_PART_CHARS) if part] or [EMPTY]
    # the first message: the metadata and one part; then two parts a message
    groups = [parts[:1]] + [parts[k : k + 2] for k in range(1, len(parts), 2)]
    file = None
    if len(groups) > PAPER_MESSAGES_MAX:
        name = f"abstract-{_file_slug(paper.id)}.md"
        file = (name, _abstract_file(paper).encode("utf-8"))
        more = f"the abstract is {len(paper.abstract):,} characters: all of it is in {name}, attached"
        groups = groups[:1]
    elif len(groups) > 1:
        more = f"the abstract goes on in the next {plural(len(groups) - 1, 'message')}"
    else:
        more = ""
    footer = _footer(paper, saved, *([more] if more else []))
    if footer:
        meta.set_footer(text=footer)
    meta.description = groups[0][0]
    messages = [fit_embeds([meta])]
    for n, group in enumerate(groups[1:], 2):
        embeds = [discord.Embed(description=part, colour=BRAND) for part in group]
        embeds[-1].set_footer(text=f"{paper.id} · abstract, part {n} of {len(groups)}")
        messages.append(fit_embeds(embeds))
    return PaperReply(messages, file)


def _file_slug(paper_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in paper_id)[:60] or "paper"


def _abstract_file(paper: Paper) -> str:
    """The whole paper as a Markdown file (its title marked when derived)."""
    title = f"{paper.title} (title derived from the abstract)" if paper.title_derived else paper.title
    lines = [f"# {title}", "", ", ".join(paper.authors) + (" et al." if paper.et_al else ""), ""]
    if paper.area:
        lines += [paper.area, ""]
    lines += [f"paperbot id: {paper.id}" + (f" · {paper.url}" if paper.url else ""), "", paper.abstract, ""]
    return "\n".join(lines)


#: What an answer embed's author line says before the conversation's first question (a follow-up's answer).
FOLLOWING_UP = "Re: "
#: An answer's title, before the question it answers.
QUESTION_MARK = "Q: "
#: The field names the cited papers are listed under (the second when they need more than one field).
SOURCES, SOURCES_MORE = "Sources", "Sources (cont.)"
ANSWER_FOOTER = (
    "Quoted from the abstracts; numbers cite the papers listed. Use /paper <id> to read one, "
    "or reply to ask a follow-up."
)


def conversation_embed(
    question: str,
    description: str,
    papers: Sequence[Paper],
    *,
    subject: str = "",
    footer: str = ANSWER_FOOTER,
) -> discord.Embed:
    """The shape every reply in a conversation has: ``Q: question`` as title, ``Re: subject`` above it
    for a follow-up, ``description``, the papers cited as ``[n] `id` — title`` under "Sources", and a
    footer. The title, the author line and the Sources are what :func:`bot.ui.answers.thread_of` reads
    back from the message: the conversation travels with it."""
    embed = discord.Embed(
        title=truncate(QUESTION_MARK + " ".join(question.split()), TITLE_LIMIT),
        description=description,
        colour=BRAND,
    )
    if subject:
        embed.set_author(name=truncate(FOLLOWING_UP + " ".join(subject.split()), AUTHOR_NAME_LIMIT))
    sources = [
        f"[{n}] {render.code(paper.id)} — {render.title(paper.title or paper.id, 150)}"
        for n, paper in enumerate(papers, 1)
    ]
    # One field holds 1024 characters; spread the sources over as many fields as needed.
    chunks: list[list[str]] = [[]]
    for line in sources:
        if sum(len(x) + 1 for x in chunks[-1]) + len(line) > FIELD_VALUE_LIMIT and chunks[-1]:
            chunks.append([])
        chunks[-1].append(line)
    for i, chunk in enumerate(c for c in chunks if c):
        embed.add_field(name=SOURCES_MORE if i else SOURCES, value="\n".join(chunk), inline=False)
    embed.set_footer(text=footer)
    return fit_embeds([embed])[0]


def answer_embed(answer: Answer, *, subject: str = "") -> discord.Embed:
    """An extractive answer: the sentence that answers first, then (under "Supporting") the ones that
    support it, each quoted with its [n] citation; then the cited papers (id + title). ``subject``: the
    conversation's first question, when this answers a follow-up."""
    numbers: dict[str, int] = {}
    cited: dict[str, Paper] = {}
    for paper in answer.papers:
        numbers.setdefault(paper.id, len(numbers) + 1)
        cited.setdefault(paper.id, paper)
    lines = []
    for i, sentence in enumerate(answer.sentences):
        n = numbers.setdefault(sentence.paper.id, len(numbers) + 1)
        cited.setdefault(sentence.paper.id, sentence.paper)
        if i == 1:
            lines.append("**Supporting**")
        lines.append(f"> {render.abstract(sentence.text, 700)} [{n}]")
    papers = [cited[pid] for pid, _ in sorted(numbers.items(), key=lambda kv: kv[1])]
    return conversation_embed(answer.question, truncate("\n".join(lines), 3000), papers, subject=subject)


def notice(text: str, *, title: str | None = None) -> discord.Embed:
    """A small informational embed (no results, help, confirmations)."""
    return clamp_embed(
        discord.Embed(title=title, description=truncate(text, DESCRIPTION_LIMIT), colour=BRAND)
    )
