"""The bot says once at start, with the reason, when it ranks with the numpy kernel (the C extension
was not built), and says nothing when the C kernel is there."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from bot import engine as engine_module
from bot.engine import Engine
from bot.settings import Settings
from retrieval.postings import NUMPY_FALLBACK


@pytest.mark.parametrize("missing", [True, False])
async def test_a_missing_c_kernel_is_one_warning_at_start(tmp_path, monkeypatch, caplog, missing):
    why = "the C ranking kernel (retrieval/_kernel.c) is not built (test)" if missing else None
    monkeypatch.setattr(engine_module, "KERNEL_UNAVAILABLE", why)
    settings = dataclasses.replace(Settings(), index_cache_dir=tmp_path / "cache")
    with caplog.at_level(logging.WARNING, logger="bot.engine"):
        await Engine.load(settings)
    said = [r for r in caplog.records if NUMPY_FALLBACK in r.getMessage()]
    if missing:
        assert len(said) == 1 and said[0].levelno == logging.WARNING and why in said[0].getMessage()
    else:
        assert said == []
