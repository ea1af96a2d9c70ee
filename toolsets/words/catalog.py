"""The message catalog: English message ids in the code, their Korean in `locales/ko/LC_MESSAGES/truloop.po`.

`tr(locale, "Delete the event '{title}' ({when})?", title=..., when=...)` is the one way to word a text a person
reads. The `.po` file is read once, on first use (Babel parses it into a gettext catalog: nothing is compiled at
build time, and a server that never words anything never reads it). A tag whose language has no catalog (`fr-FR`)
reads English, the language of the message ids.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import gettext

    from toolsets.core.context import Caller

LOCALES_DIR = Path(__file__).resolve().parent / "locales"
DOMAIN = "truloop"
SUPPORTED = ("en", "ko")  # the languages a person may read; English is the message ids themselves
# The Babel locale each language's dates and numbers are formatted in.
BABEL_LOCALES = {"en": "en_US", "ko": "ko_KR"}


def language(locale: str | None) -> str:
    """The catalog's language for a BCP 47 tag (`ko-KR` -> `ko`); English for anything without a catalog."""
    primary = (locale or "").replace("_", "-").split("-", 1)[0].strip().lower()
    return primary if primary in SUPPORTED else "en"


def babel_locale(locale: str | None) -> str:
    """The Babel locale to format dates in for a tag: the catalog's language's (other tags read English)."""
    return BABEL_LOCALES[language(locale)]


@lru_cache(maxsize=len(SUPPORTED))
def translations(lang: str) -> gettext.NullTranslations:
    """The catalog of one language, read from its .po file on first use (the message ids for English)."""
    import gettext

    source = LOCALES_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    if lang == "en" or not source.is_file():
        return gettext.NullTranslations()
    from io import BytesIO

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with source.open("rb") as po:
        catalog = read_po(po, locale=lang, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def tr(locale: str | None, message: str, /, **values: object) -> str:
    """`message` (an English message id with `{name}` fields) in the language of `locale`, its fields filled."""
    text = translations(language(locale)).gettext(message)
    return text.format(**values) if values else text


def caller_locale(caller: Caller) -> str:
    """The language `caller` reads: `Caller.locale`, resolved once per request by the front (the token's `locale`
    claim, the directory's, `--locale`, the machine's: server/auth/identity.py)."""
    return caller.locale


def trn(locale: str | None, singular: str, plural: str, count: int, /, **values: object) -> str:
    """As `tr`, for a text that depends on a count (`{count} item` / `{count} items`), by the language's plural rule."""
    return translations(language(locale)).ngettext(singular, plural, count).format(**values)
