"""The rules of each feature: plain arguments in (user id, query, paper id…), plain dataclasses out.

Two thin adapters sit on top: the cogs (:mod:`bot.cogs`, Discord) and the offline console
(:mod:`bot.console`, a terminal). Neither decides anything a user could notice — caps, validation,
the wording of a reply — they parse their input, call one service method and render what it returns
(``bot/ui`` turns results into embeds and views; the console prints the same embeds as text).
Services never import discord.py's client machinery, the cogs or the console.

One module per feature, each with one service class built from a :class:`~bot.services.base.Context`
(settings, engine, store); ``bot/services/registry.py`` builds them all (:func:`open_services`):

=================  ==========================================================================
``search``         /search result pages, the no-hit explanation, area and id autocomplete
``papers``         /paper pages and /similar result pages
``answers``        /ask and mention chat answers
``conversation``   follow-ups (replies to an answer) and questions about one paper
``library``        saving, unsaving, saved-list pages, list management, /forgetme
``transfer``       /export files and /import merges
``admin``          /admin reindex and /admin stats
=================  ==========================================================================

Adding a feature (say ``watch``):

1. ``bot/services/watch.py``: ``class WatchService`` taking a ``Context``, async methods whose
   arguments are plain values and whose results are frozen dataclasses (or
   :class:`~bot.services.base.Notice` for a sentence to show). Known failures raise
   :class:`~bot.errors.UserFacingError` (or a store/retrieval error), which both adapters turn into
   the same sentence.
2. A field for it on :class:`~bot.services.registry.Services` (bot/services/registry.py).
3. A cog in ``bot/cogs/`` that parses the interaction, calls it and renders (``bot/ui``), and a
   handler in :mod:`bot.console` (``tests/bot/test_console.py`` fails while a command has none).
4. ``tests/bot/services/test_watch.py`` with plain arguments, and a cog test through the fake Discord.
"""
