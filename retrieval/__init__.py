"""Pure, synchronous retrieval over paper abstracts: parse -> normalise -> tokenise -> index -> search.

Nothing here imports discord or aiosqlite; it is usable from a notebook or a script.
"""
