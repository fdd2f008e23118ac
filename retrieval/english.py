"""English wording shared by every layer (reports, replies): counts with their nouns."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count with its noun: ``"1 paper"``, ``"3 papers"``, ``"1,204 papers"``.

    Args:
        count: How many.
        noun: The singular noun (phrase): ``"paper"``, ``"saved item"``.
        many: The plural when it is not ``noun + "s"`` (``"stored paper copies"``).

    Returns:
        The count with thousands separators and the noun in the right number.
    """
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {many or noun + 's'}"
