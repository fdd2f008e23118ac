"""Tests of retrieval.english: counts with their nouns."""

from __future__ import annotations

import pytest

from retrieval.english import plural


@pytest.mark.parametrize(
    ("count", "noun", "many", "expected"),
    [
        (0, "paper", None, "0 papers"),
        (1, "saved item", None, "1 saved item"),
        (2, "user", None, "2 users"),
        (1204, "paper", None, "1,204 papers"),
        (1, "stored paper copy", "stored paper copies", "1 stored paper copy"),
        (3, "stored paper copy", "stored paper copies", "3 stored paper copies"),
    ],
)
def test_plural(count, noun, many, expected):
    assert plural(count, noun, many) == expected

