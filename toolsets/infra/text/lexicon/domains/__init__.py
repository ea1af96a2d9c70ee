"""The lexicon's domain lists: one module per domain of office life, each a text of `korean = english / english`
entries separated by `;` or new lines (a Korean side with several translations lists them with `/`)."""

from __future__ import annotations

from toolsets.infra.text.lexicon.domains import calendar, food, it, money, office, people, talk, travel

Pairs = tuple[tuple[str, str], ...]


def parse(text: str) -> Pairs:
    """`회의록 = minutes / notes; 안건 = agenda` -> (회의록, minutes), (회의록, notes), (안건, agenda)."""
    pairs: list[tuple[str, str]] = []
    for entry in text.replace("\n", ";").split(";"):
        korean, _, english = entry.partition("=")
        korean = " ".join(korean.split())
        for word in english.split("/"):
            if korean and word.strip():
                pairs.append((korean, " ".join(word.split())))
    return tuple(pairs)


DOMAINS: dict[str, Pairs] = {
    module.__name__.rsplit(".", 1)[-1]: parse(module.WORDS)
    for module in (office, calendar, people, it, travel, food, money, talk)
}
