"""Discord's limits, defined once: every embed builder, view, autocomplete and check reads them here.

From Discord's documentation of messages (embed limits), message components and application commands.
"""

from __future__ import annotations

CONTENT_LIMIT = 2000  # a message's content
EMBEDS_PER_MESSAGE = 10
EMBED_TOTAL = 6000  # the text of every embed of a message together
TITLE_LIMIT = 256  # an embed's title
DESCRIPTION_LIMIT = 4096  # an embed's description
FIELDS_PER_EMBED = 25
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FOOTER_LIMIT = 2048
AUTHOR_NAME_LIMIT = 256
OPTION_LIMIT = 100  # a select option's label, value and description; a choice's name and value
OPTIONS_PER_SELECT = 25
MAX_CHOICES = 25  # choices in one autocomplete answer
