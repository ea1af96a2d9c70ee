"""`--demo`: a small, coherent data set in Korean and English, so every tool can be tried at once on an empty store."""

from __future__ import annotations

import datetime as dt
import logging
from zoneinfo import ZoneInfo

from toolsets.infra.private_files import private_dir, write_private
from toolsets.infra.store.events import NewEvent
from toolsets.infra.store.users import UserRecord
from toolsets.services import Services

logger = logging.getLogger("truloop.demo")

HOME_ZONE = "Asia/Seoul"  # the demo team's: its handbook keeps KST hours and its dinner is in Gangnam

DOCS = {
    "Team Handbook 5b1f0c2e9a7d4e3f8c6b2a1d0e9f8a7b.md": """# Team Handbook

## Working hours
Core hours are 10:00 to 16:00 KST. Meetings are not scheduled on Friday afternoons.

## Expenses
Team dinners are covered up to 40,000 KRW per person. Submit receipts within 30 days.
""",
    "Office Guide 9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f.md": """# Office Guide

## Address
The office is at 311 Teheran-ro, Gangnam-gu, Seoul, 5th floor.

## Meeting rooms
Hangang (8 people) and Namsan (4 people) can be booked in the shared calendar.
""",
    "onboarding.md": """# Onboarding

## First day
Pick up your laptop from Junho and join the #truloop-team channel.

## Accounts
Ask Minji for access to the calendar and the knowledge base.
""",
    "팀 핸드북.md": """# 팀 핸드북

## 근무 시간
코어 근무 시간은 오전 10시부터 오후 4시까지입니다. 금요일 오후에는 회의를 잡지 않습니다.

## 회식과 경비
팀 저녁 회식은 1인당 4만 원까지 회사 카드로 냅니다. 영수증은 30일 안에 제출해 주세요.

## 휴가
연차는 캘린더에 일정을 등록하고 팀장에게 알려 주세요. 공휴일에는 사무실이 쉽니다.
""",
    "회의실 안내.md": """# 회의실 안내

## 회의실 예약
한강 회의실(8명)과 남산 회의실(4명)은 공유 캘린더에서 예약합니다. 캘린더 관리자는 민지입니다.

## 정기 회의
주간 팀 회의는 매주 월요일 오전 11시에 한강 회의실에서 합니다. 화상 회의 링크는 일정 설명에 있습니다.
""",
}


def demo_users(you: str, timezone: str = HOME_ZONE) -> list[UserRecord]:
    """The demo's people, living in `timezone` but for Sora (San Francisco); each has a zone and a language."""
    return [
        UserRecord(id=you, username=you, display_name="Alex Demo", phone="010-1000-0001",
                   email=f"{you}@demo.truloop.app", groups=["truloop-team"], timezone=timezone),
        UserRecord(id="minji", username="minji", display_name="김민지", phone="010-2000-0002",
                   email="minji@demo.truloop.app", groups=["truloop-team"], timezone=timezone, locale="ko-KR"),
        UserRecord(id="junho", username="junho", display_name="이준호", phone="010-3000-0003",
                   email="junho@demo.truloop.app", groups=["truloop-team"], timezone=timezone, locale="ko-KR"),
        UserRecord(id="sora", username="sora", display_name="박소라", phone="+1 415 555 0104",
                   email="sora@demo.truloop.app", groups=["design"], timezone="America/Los_Angeles", locale="en-US"),
        UserRecord(id="guest-hana", username="hana", display_name="최하나", role="guest",
                   email="hana@example.com", timezone=timezone, locale="ko-KR"),
    ]  # fmt: skip


async def seed_demo(services: Services, you: str, timezone: str = HOME_ZONE) -> bool:
    """Seed users, events, docs and memories into an empty store, or one that holds only what a first call of `you`
    made (`demo_store.only_first_call`); True when it seeded. The demo is set in `timezone`: its people live there
    (the directory says so, so they see its times whatever the machine's zone), its dinner is at 19:00 there and its
    meeting at 10:00."""
    from toolsets.assistant.demo_store import only_first_call

    users = services.users
    if not await only_first_call(services, you):
        here = services.data_dir
        logger.warning(
            "--demo: the store in %s already has data, so no demo data was added; "
            "use a separate folder: truloop-mcp --demo --data-dir %s-demo",
            here,
            here,
        )
        return False
    await users.import_users(demo_users(you, timezone))
    zone = ZoneInfo(timezone)
    week = dt.datetime.now(zone).replace(hour=19, minute=0, second=0, microsecond=0) + dt.timedelta(days=14)
    await services.events.create(
        you,
        NewEvent(
            title="Team dinner",
            start=week,
            end=week + dt.timedelta(days=4, hours=2),
            timezone=timezone,
            location="Gangnam, Seoul",
            description="Pick the evenings you can make; we book the most popular one. "
            "가능한 저녁을 골라 주세요. 가장 많이 고른 날로 예약합니다.",
            availability_deadline=week - dt.timedelta(days=3),
        ),
        ["minji", "junho", "guest-hana"],
    )
    review = (dt.datetime.now(zone) + dt.timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
    await services.events.create(
        "minji",
        NewEvent(title="Design review", start=review, end=review + dt.timedelta(hours=1), timezone=timezone,
                 location="Namsan room (남산 회의실)", description="새 캘린더 화면을 같이 봅니다."),
        [you, "sora"],
    )  # fmt: skip
    docs = services.docs_dir
    private_dir(docs)
    for name, text in DOCS.items():
        path = docs / name
        if not path.exists():
            write_private(path, text)
    memories = services.memories
    await memories.save(you, "I prefer Korean food for team dinners, and no meetings before 10 am.", ["preferences"])
    await memories.save(you, "Minji is the calendar admin.", ["people"])
    await memories.save(you, "준호가 새 노트북과 계정을 챙겨 줘요.", ["사람"])
    await memories.save(you, "팀 회식은 보통 강남에서 저녁 7시에 해요.", ["회식"])
    names = ", ".join(user.display_name or user.id for user in demo_users(you))
    logger.info("demo data seeded: %d users (%s; you are %s), 2 events, %d docs in %s",
                   len(demo_users(you)), names, you, len(DOCS), docs)  # fmt: skip
    return True
