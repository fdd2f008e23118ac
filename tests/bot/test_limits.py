"""retrieval/ knows no Discord limit; the bot holds what retrieval lets through to the ones it must
keep (a paper id travels in a button's custom id and a select option's value; a link in an embed)."""

from __future__ import annotations

from bot import limits
from bot.store.records import PAPER_ID_MAX
from retrieval.corpus import MAX_ID_LENGTH
from retrieval.corpus_fields import MAX_URL_LENGTH


def test_a_paper_id_fits_a_select_option_and_the_store():
    assert MAX_ID_LENGTH <= limits.OPTION_LIMIT
    assert MAX_ID_LENGTH <= PAPER_ID_MAX


def test_a_paper_link_fits_an_embed_url():
    assert MAX_URL_LENGTH <= limits.URL_LIMIT
