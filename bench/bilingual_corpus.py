"""The held-out set of bench/bilingual_eval.py: cross-language (query, passage) pairs.

Each pair is a query in one language and the one passage, in the other language, it must find. The
pairs were written as a user would type the query and as a team wiki or a memory would word the
passage, before the bilingual lexicon (`toolsets/infra/text/lexicon/`) existed and without looking
at it; every pair has its own topic, so a passage is the answer of one query only. The bench reports
which query words the lexicon does not cover.
"""

from __future__ import annotations

# Korean query -> English passage
KO_EN: list[tuple[str, str]] = [
    ("회의실 예약은 어떻게 하나요?",
     "Meeting rooms are booked in the shared calendar: pick a free slot and add the room to the event."),
    ("회식비 한도가 얼마야", "Team dinners are covered up to 40,000 KRW per person."),
    ("사무실 주소 알려줘", "Our office is at 311 Teheran-ro, Gangnam-gu, Seoul, on the 5th floor."),
    ("근무 시간이 어떻게 되나요", "Core hours are 10 am to 4 pm, Monday to Friday."),
    ("입사 첫날 해야 할 일",
     "On your first day, collect your badge, set up your accounts and meet your onboarding buddy."),
    ("비밀번호 재설정", "To reset your password, open the sign-in page and choose Forgot password."),
    ("공휴일에도 출근해야 하나요", "The office is closed on public holidays such as Chuseok and Lunar New Year."),
    ("출장비 정산", "Travel expenses are reimbursed once you submit the receipts, within 30 days of the trip."),
    ("민지 생일이 언제야", "Minji's birthday is on April 3rd."),
    ("캘린더 관리자", "Minji is the admin of the team calendar."),
    ("외부 손님 초대", "To invite an outside visitor, register their name at reception a day ahead."),
    ("주차 등록", "Register your car plate at the front desk to use the building garage."),
    ("와이파이 비밀번호", "The guest Wi-Fi password is posted next to the kitchen."),
    ("점심 어디서 먹지", "Sora recommends the noodle place across the street for lunch."),
    ("병가 신청", "For sick leave, tell your manager and upload a doctor's note within three days."),
    ("화상 회의 링크", "Every recurring meeting has a video call link in the event description."),
    ("프린터가 고장났어요", "If the printer jams or breaks, call facilities at extension 200."),
    ("하나 이메일 주소", "Hana's email address is hana@example.com."),
    ("소라가 진행하는 디자인 리뷰", "Sora runs the weekly design review on Thursday mornings."),
    ("월급날이 언제예요", "Salaries are paid on the 25th of each month."),
    ("퇴사할 때 노트북 반납", "When you leave the company, return your laptop to IT on your last day."),
    ("주간 팀 회의 시간", "The weekly team meeting is on Mondays at 11:00 in the Hangang room."),
]  # fmt: skip

# English query -> Korean passage
EN_KO: list[tuple[str, str]] = [
    ("Where are the fire exits?", "비상구는 각 층 복도 끝에 있습니다."),
    ("schedule of the quarterly review", "분기 리뷰 일정은 다음 달 첫째 주 화요일입니다."),
    ("Junho's phone number", "준호 전화번호는 010-3000-0003입니다."),
    ("office cleaning day", "사무실 청소는 매주 수요일 오후에 합니다."),
    ("setting up the company laptop", "회사 노트북을 받으면 먼저 보안 프로그램을 설치하세요."),
    ("How many vacation days do I get?", "연차는 1년에 15일입니다."),
    ("training for new employees", "신입 사원 교육은 입사 후 첫 주에 진행됩니다."),
    ("I lost my access card", "출입 카드를 잃어버리면 경비실에 바로 알려 주세요."),
    ("coffee machine", "커피 머신은 3층 휴게실에 있습니다."),
    ("welcome lunch for the new hire", "새로 온 동료를 위한 환영 점심은 금요일입니다."),
    ("reply to an event invitation", "행사 초대에는 마감일 전까지 답해 주세요."),
    ("Sora's favorite food", "소라는 매운 음식을 좋아합니다."),
    ("who approves expenses", "경비 승인은 팀장이 합니다."),
    ("train tickets for a business trip", "출장 기차표는 회사 카드로 예매합니다."),
    ("monthly all-hands meeting", "전체 회의는 매달 마지막 금요일에 열립니다."),
    ("calendar is not syncing", "캘린더가 동기화되지 않으면 앱에 다시 로그인하세요."),
    ("When is Hana available?", "하나는 다음 주 화요일과 목요일에 시간이 됩니다."),
    ("Christmas holiday", "크리스마스에는 사무실이 쉽니다."),
    ("guest account expiry", "손님 계정은 7일 후에 만료됩니다."),
    ("dinner reservation", "저녁 식당 예약은 민지가 맡습니다."),
    ("working from home", "재택 근무는 주 2회까지 가능합니다."),
    ("the air conditioner is too cold", "에어컨 온도는 관리실에 요청하세요."),
]  # fmt: skip
