"""Hostile inputs for the audit masker, 64 KiB each: long runs of each pattern's own characters and nested
separators, the shapes that make a backtracking regex quadratic. Shared by tests/toolsets/test_masking_hostile.py and
bench/masking_bench.py."""

from __future__ import annotations

SIZE = 64 * 1024


def _fill(unit: str, head: str = "", tail: str = "") -> str:
    """`head`, then `unit` repeated to about SIZE characters, then `tail`."""
    return head + unit * max(1, (SIZE - len(head) - len(tail)) // len(unit)) + tail


# (name, text): the name says which pattern the input aims at
HOSTILE: tuple[tuple[str, str], ...] = (
    # e-mail
    ("email: a*N@", "a" * (SIZE - 1) + "@"),
    ("email: a@a(.a)*N", "a@a" + ".a" * (SIZE // 2)),
    ("email: @*N", "@" * SIZE),
    ("email: (a@)*N", _fill("a@")),
    ("email: (a.@)*N", _fill("a.@")),
    ("email: (a@a.)*N", _fill("a@a.")),
    ("email: (-@-.)*N", _fill("-@-.")),
    ("email: a@(a-)*N", _fill("a-", head="a@")),
    ("email: (a.)*N@a.1", _fill("a.", tail="@a.1")),
    ("email: (x@y.com)*N", _fill("x@y.com")),
    ("email: (%+.)*N", _fill("%+.")),
    # JWT
    ("jwt: eyJ a*N", _fill("a", head="eyJ")),
    ("jwt: (eyJab-)*N", _fill("eyJab-")),
    ("jwt: (eyJ.)*N", _fill("eyJ.")),
    ("jwt: (eyJaaaaa.)*N", _fill("eyJaaaaa.")),
    ("jwt: eyJaaaaa.(a-)*N", _fill("a-", head="eyJaaaaa.")),
    # bearer
    ("bearer: (bearer )*N", _fill("bearer ")),
    ("bearer: bearer space*N", _fill(" ", head="bearer")),
    ("bearer: Bearer a*N", _fill("a", head="Bearer ")),
    ("bearer: (bearer a.)*N", _fill("bearer a.")),
    ("bearer: (-bearer\\t)*N", _fill("-bearer\t")),
    # API keys
    ("api_key: (sk-)*N", _fill("sk-")),
    ("api_key: (AIza)*N", _fill("AIza")),
    ("api_key: (ghp_)*N", _fill("ghp_")),
    ("api_key: (xoxb-)*N", _fill("xoxb-")),
    ("api_key: (AKIA)*N", _fill("AKIA")),
    ("api_key: (sk_live_)*N", _fill("sk_live_")),
    ("api_key: (secret_ )*N", _fill("secret_ ")),
    # numbers: RRN, cards, Korean phones, international phones
    ("number: 9*N", "9" * SIZE),
    ("number: (1-)*N", _fill("1-")),
    ("number: (1 )*N", _fill("1 ")),
    ("number: (900101-)*N", _fill("900101-")),
    ("number: (4111 )*N", _fill("4111 ")),
    ("number: (4111-1111-)*N", _fill("4111-1111-")),
    ("number: (010-)*N", _fill("010-")),
    ("number: (+82)*N", _fill("+82")),
    ("number: ((0)*N", _fill("(0")),
    ("number: (02-123-)*N", _fill("02-123-")),
    ("number: (+1 )*N", _fill("+1 ")),
    ("number: (0044 )*N", _fill("0044 ")),
    ("number: +*N", "+" * SIZE),
    ("number: (00)*N", _fill("00")),
    ("number: (+1(1) )*N", _fill("+1(1) ")),
    ("number: +1 (12.)*N", _fill("12.", head="+1 ")),
    ("number: (1 (212) 555-0123 )*N", _fill("1 (212) 555-0123 ")),
    ("number: (+1 415 555 2671 )*N", _fill("+1 415 555 2671 ")),
    ("number: (1 (2) )*N", _fill("1 (2) ")),
    ("number: (1-)*N (US shape)", _fill("1-", head="1 ")),
    ("number: (220-81-62517 )*N", _fill("220-81-62517 ")),
    ("number: (123-45-)*N", _fill("123-45-")),
    # IBANs
    ("iban: (DE89 3704 0044 0532 0130 00 )*N", _fill("DE89 3704 0044 0532 0130 00 ")),
    ("iban: (DE89 )*N", _fill("DE89 ")),
    ("iban: DE89 (A)*N", _fill("A", head="DE89 ")),
    ("iban: DE89 (A )*N", _fill("A ", head="DE89")),
    ("iban: (GB82WEST1234 )*N", _fill("GB82WEST1234 ")),
    # the value after a word naming a secret
    ("secret: password=x*N", "password=" + "x" * SIZE),
    ("secret: (pw:)*N", _fill("pw:")),
    ("secret: (password )*N", _fill("password ")),
    ("secret: password .*N", _fill(".", head="password ")),
    ("secret: pin space*N", _fill(" ", head="pin")),
    ("secret: (pin space*64)*N", _fill("pin" + " " * 64)),
    ("secret: (token is )*N", _fill("token is ")),
    ("secret: (pass)*N", _fill("pass")),
    ('secret: password="a*N', _fill("a", head='password="')),
    ("secret: (pw=')*N", _fill("pw='")),
    ("secret: (password: .)*N", _fill("password: .")),
    ("secret: 비밀번호*N", "비밀번호" * (SIZE // 4)),
    ("secret: (비밀번호는 )*N", _fill("비밀번호는 ")),
    ("secret: 비밀번호 space*N", _fill(" ", head="비밀번호")),
    ("secret: (암호: ')*N", _fill("암호: '")),
    # mixed
    ("mixed: Korean contacts", _fill("연락처 010-1234-567 메일 a@b 비번 ")),
    ("mixed: everything", _fill("a@b.c eyJa.b Bearer x pw: 1-2 +1 (2) sk- ")),
)
