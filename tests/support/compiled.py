"""The compiled parts of retrieval (the C kernel, the key phrase's and the title rules' passes) are
optional for users, never for CI: a test of one skips where it is not built, and fails under
CI=true (CI must test the path users run)."""

from __future__ import annotations

import os
from typing import TypeVar

import pytest

T = TypeVar("T")


def require_compiled(value: T | None, why: str) -> T:
    """``value`` (a compiled module or function); without it, skip, or fail under CI=true."""
    if value is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)
    return value
