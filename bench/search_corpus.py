"""The relevance set of bench/search_eval.py: a small knowledge base (Korean, English, mixed), memories
in the assistant's style, and queries, each with the chunk(s) or memory that must be found.

A document chunk is named `file#heading path`; a memory by its key. Queries are written the way a user
(or the assistant on their behalf) would type them, without looking at any analyzer's output.
"""

from __future__ import annotations

DOCS: dict[str, str] = {
    "휴가 정책.md": """# 휴가 정책

## 연차
연차는 입사일을 기준으로 매년 15일이 주어집니다. 사용하지 못한 연차는 다음 해로 최대 5일까지 이월됩니다.
이월된 연차는 3월 말까지 써야 합니다.

## 병가
아플 때는 연간 10일까지 유급 병가를 쓸 수 있습니다. 3일 이상 연속으로 쉬면 진단서를 제출해 주세요.

## 경조사 휴가
본인 결혼은 5일, 자녀 출산은 10일, 부모님 상은 5일의 경조사 휴가가 있습니다.

## 신청 방법
휴가는 최소 3일 전에 캘린더에서 일정을 등록하고 팀장에게 승인을 받으세요. 급한 경우 메신저로 먼저 알려 주세요.
""",
    "회의실 이용 안내.md": """# 회의실 이용 안내

## 예약
회의실은 공유 캘린더에서 예약합니다. 한강 회의실은 8명, 남산 회의실은 4명까지 들어갑니다.
예약은 최대 2주 전부터 가능하며, 반복 예약은 한 달까지만 잡을 수 있습니다.

## 장비
모든 회의실에 모니터와 HDMI 케이블이 있습니다. 화상 회의는 Zoom으로 하고, 스피커폰은 한강 회의실에만 있습니다.

## 이용 규칙
회의는 정시에 시작하고 10분 전에 끝내 주세요. 회의가 끝나면 화이트보드를 지우고 의자를 정리합니다.
""",
    "출장 규정.md": """# 출장 규정

## 교통
국내 출장은 KTX와 고속버스를 이용합니다. 항공편은 왕복 4시간 이상 걸리는 경우에만 일반석으로 예약합니다.

## 숙박
숙박비는 1박에 서울 15만 원, 그 외 지역 10만 원까지 지원됩니다. 호텔은 출장 3일 전까지 예약하세요.

## 경비 정산
출장 경비는 돌아온 뒤 30일 이내에 재무 포털에서 정산합니다. 영수증 사진을 꼭 첨부해야 합니다.
""",
    "Security Policy.md": """# Security Policy

## Passwords
Use a password manager. Passwords must be at least 14 characters and are never shared over chat or email.

## Laptops
Every laptop must have disk encryption turned on and the VPN client installed before it is used for work.
Lost or stolen laptops are reported to IT within one hour.

## Reporting incidents
If you suspect a phishing email or a security incident, forward it to security@truloop.app and do not click any link.
""",
    "Expense Policy.md": """# Expense Policy

## Meals
Team dinners are covered up to 40,000 KRW per person. Alcohol is not reimbursed at lunch.

## Equipment
Monitors, keyboards and headsets up to 300,000 KRW can be bought without approval once a year.

## Reimbursement
Submit receipts within 30 days through the finance portal. Reimbursements are paid with the next salary.
""",
    "FAQ.md": """# 자주 묻는 질문 (FAQ)

## 와이파이
사무실 Wi-Fi 이름은 truloop-office이고 비밀번호는 사무실 냉장고에 붙어 있습니다. 손님은 truloop-guest를 씁니다.

## 택배
개인 택배는 1층 안내 데스크에서 받습니다. 큰 택배는 미리 경영지원팀에 알려 주세요.

## 재택근무
재택근무는 주 2회까지 가능합니다. Remote work days must be marked in the team calendar by Monday.

## 주차
건물 지하 주차장은 방문객 2시간 무료입니다. 직원 정기 주차는 지원하지 않습니다.
""",
    "주간 회의록 3월.md": """# 주간 회의록 3월

## 3월 4일
참석: 민지, 준호, 소라. 신규 입사자 온보딩 문서를 민지가 다음 주까지 정리하기로 했습니다.
디자인 리뷰는 목요일 오전으로 옮겼습니다.

## 3월 11일
참석: 민지, 준호. 앱 출시 일정을 4월 둘째 주로 미루기로 결정했습니다. QA 인력이 부족해서 외주를 검토합니다.

## 3월 18일
참석: 전원. 분기 목표(OKR) 초안을 검토했고, 고객 인터뷰를 10건 진행하기로 했습니다.
""",
    "Engineering sync.md": """# Engineering sync

## Release planning
The mobile release moves to the second week of April. Weekly release meetings are on Tuesdays at 11:00.

## Incident review
The outage on March 9 was caused by an expired TLS certificate. Certificates now renew automatically.

## On-call
On-call rotates every week; the schedule is in the shared calendar and swaps need a manager's approval.
""",
    "온보딩 가이드.md": """# 온보딩 가이드

## 첫날
노트북은 준호에게 받고 Slack의 #truloop-team 채널에 참여하세요. 사원증은 1층 보안실에서 발급합니다.

## 계정
Google Workspace 계정과 GitHub 초대는 첫날 오전에 메일로 옵니다. 캘린더와 지식 베이스 권한은 민지에게 요청하세요.

## 첫 주
첫 주에는 팀별 소개 세션이 있고, 금요일에 멘토와 1:1 미팅을 합니다.
""",
}

MEMORIES: dict[str, str] = {
    "kiwi": "사용자가 제일 좋아하는 과일은 키위다.",
    "minji-lunch": "매주 목요일에는 민지와 점심을 먹는다.",
    "busan-ktx": "부산 출장은 항상 KTX로 가고 창가 좌석을 선호한다.",
    "mom-birthday": "어머니 생신은 5월 3일이다.",
    "zoom-camera": "Zoom으로 하는 회의에서는 카메라를 끄는 것을 선호한다.",
    "decaf": "커피는 디카페인 라떼만 마신다.",
    "dog-bori": "강아지 이름은 보리이고 매일 저녁에 산책을 시킨다.",
    "peanut": "User is allergic to peanuts; avoid Thai restaurants that use peanut sauce.",
    "aisle": "Prefers aisle seats on long flights.",
    "dentist": "Dentist appointments are on Saturday mornings at Smile Dental in Gangnam.",
    "gym": "Goes to the gym on Mondays and Wednesdays after work.",
    "sister-wedding": "Sister's wedding is on October 12 in Busan.",
    "junho-laptop": "준호가 새 노트북 세팅을 도와주기로 했다.",
    "no-early-meetings": "오전 10시 이전에는 회의를 잡지 않는다.",
    "vegetarian": "팀 회식 장소는 채식 메뉴가 있는 곳으로 고른다.",
    "english-class": "화요일 저녁에 영어 회화 수업을 듣는다.",
    "car": "Parks the car on level B2 at the office.",
    "spotify": "Listens to jazz playlists on Spotify while working.",
    "notion-notes": "회의록은 Notion에 정리하고 링크를 Slack으로 공유한다.",
    "hiking": "주말에는 북한산 등산을 자주 간다.",
    "sora-design": "소라는 디자인 리뷰를 금요일 오후에 하는 걸 좋아한다.",
    "tax": "연말정산 서류는 1월 말까지 회사에 내야 한다.",
}

# (query, language, relevant ids): a doc chunk is "file#heading path", a memory "memory:<key>".
QUERIES: list[tuple[str, str, list[str]]] = [
    # -- the table ------------------------------------------------------------------
    ("회의", "ko", ["회의실 이용 안내.md#회의실 이용 안내 > 이용 규칙", "회의실 이용 안내.md#회의실 이용 안내 > 예약"]),
    ("팀장", "ko", ["휴가 정책.md#휴가 정책 > 신청 방법"]),
    ("캘린더", "ko", ["휴가 정책.md#휴가 정책 > 신청 방법", "회의실 이용 안내.md#회의실 이용 안내 > 예약",
                     "온보딩 가이드.md#온보딩 가이드 > 계정"]),
    ("연차 이월", "ko", ["휴가 정책.md#휴가 정책 > 연차"]),
    ("키위", "ko", ["memory:kiwi"]),
    ("민지", "ko", ["memory:minji-lunch"]),
    # -- Korean ---------------------------------------------------------------------------
    ("연차 며칠", "ko", ["휴가 정책.md#휴가 정책 > 연차"]),
    ("병가 진단서", "ko", ["휴가 정책.md#휴가 정책 > 병가"]),
    ("결혼 휴가", "ko", ["휴가 정책.md#휴가 정책 > 경조사 휴가"]),
    ("휴가 신청은 어떻게 하나요", "ko", ["휴가 정책.md#휴가 정책 > 신청 방법"]),
    ("회의실 예약", "ko", ["회의실 이용 안내.md#회의실 이용 안내 > 예약"]),
    ("스피커폰 있는 회의실", "ko", ["회의실 이용 안내.md#회의실 이용 안내 > 장비"]),
    ("화이트보드", "ko", ["회의실 이용 안내.md#회의실 이용 안내 > 이용 규칙"]),
    ("숙박비 한도", "ko", ["출장 규정.md#출장 규정 > 숙박"]),
    ("출장 경비 정산", "ko", ["출장 규정.md#출장 규정 > 경비 정산"]),
    ("영수증 첨부", "ko", ["출장 규정.md#출장 규정 > 경비 정산"]),
    ("항공편 예약", "ko", ["출장 규정.md#출장 규정 > 교통"]),
    ("와이파이 비밀번호", "ko", ["FAQ.md#자주 묻는 질문 (FAQ) > 와이파이"]),
    ("택배는 어디서 받아요", "ko", ["FAQ.md#자주 묻는 질문 (FAQ) > 택배"]),
    ("재택근무 며칠", "ko", ["FAQ.md#자주 묻는 질문 (FAQ) > 재택근무"]),
    ("주차 요금", "ko", ["FAQ.md#자주 묻는 질문 (FAQ) > 주차"]),
    ("앱 출시 일정", "ko", ["주간 회의록 3월.md#주간 회의록 3월 > 3월 11일"]),
    ("온보딩 문서 담당", "ko", ["주간 회의록 3월.md#주간 회의록 3월 > 3월 4일"]),
    ("고객 인터뷰", "ko", ["주간 회의록 3월.md#주간 회의록 3월 > 3월 18일"]),
    ("노트북 받는 곳", "ko", ["온보딩 가이드.md#온보딩 가이드 > 첫날"]),
    ("사원증 발급", "ko", ["온보딩 가이드.md#온보딩 가이드 > 첫날"]),
    ("멘토 미팅", "ko", ["온보딩 가이드.md#온보딩 가이드 > 첫 주"]),
    ("어머니 생신", "ko", ["memory:mom-birthday"]),
    ("커피 취향", "ko", ["memory:decaf"]),
    ("강아지 산책", "ko", ["memory:dog-bori"]),
    ("오전 회의", "ko", ["memory:no-early-meetings"]),
    ("회식 장소", "ko", ["memory:vegetarian"]),
    ("영어 수업", "ko", ["memory:english-class"]),
    ("등산", "ko", ["memory:hiking"]),
    ("연말정산 서류", "ko", ["memory:tax"]),
    ("준호 노트북", "ko", ["memory:junho-laptop"]),
    ("디자인 리뷰 요일", "ko", ["memory:sora-design"]),
    # -- English --------------------------------------------------------------------------
    ("password length", "en", ["Security Policy.md#Security Policy > Passwords"]),
    ("lost laptop", "en", ["Security Policy.md#Security Policy > Laptops"]),
    ("disk encryption vpn", "en", ["Security Policy.md#Security Policy > Laptops"]),
    ("phishing email", "en", ["Security Policy.md#Security Policy > Reporting incidents"]),
    ("team dinner budget", "en", ["Expense Policy.md#Expense Policy > Meals"]),
    ("buying a monitor", "en", ["Expense Policy.md#Expense Policy > Equipment"]),
    ("when are reimbursements paid", "en", ["Expense Policy.md#Expense Policy > Reimbursement"]),
    ("release meetings", "en", ["Engineering sync.md#Engineering sync > Release planning"]),
    ("meeting schedule", "en", ["Engineering sync.md#Engineering sync > Release planning"]),
    ("expired certificate outage", "en", ["Engineering sync.md#Engineering sync > Incident review"]),
    ("on-call swap", "en", ["Engineering sync.md#Engineering sync > On-call"]),
    ("peanut allergy", "en", ["memory:peanut"]),
    ("seat preference flights", "en", ["memory:aisle"]),
    ("dentist", "en", ["memory:dentist"]),
    ("gym days", "en", ["memory:gym"]),
    ("sister wedding", "en", ["memory:sister-wedding"]),
    ("where did I park", "en", ["memory:car"]),
    ("music while working", "en", ["memory:spotify"]),
    # -- mixed ----------------------------------------------------------------------------
    ("KTX", "mixed", ["출장 규정.md#출장 규정 > 교통", "memory:busan-ktx"]),
    ("Zoom 회의", "mixed", ["회의실 이용 안내.md#회의실 이용 안내 > 장비", "memory:zoom-camera"]),
    ("Wi-Fi", "mixed", ["FAQ.md#자주 묻는 질문 (FAQ) > 와이파이"]),
    ("Slack 채널", "mixed", ["온보딩 가이드.md#온보딩 가이드 > 첫날"]),
    ("GitHub 초대", "mixed", ["온보딩 가이드.md#온보딩 가이드 > 계정"]),
    ("remote work 재택", "mixed", ["FAQ.md#자주 묻는 질문 (FAQ) > 재택근무"]),
    ("OKR 초안", "mixed", ["주간 회의록 3월.md#주간 회의록 3월 > 3월 18일"]),
    ("QA 외주", "mixed", ["주간 회의록 3월.md#주간 회의록 3월 > 3월 11일"]),
    ("Notion 회의록", "mixed", ["memory:notion-notes"]),
    ("HDMI 케이블", "mixed", ["회의실 이용 안내.md#회의실 이용 안내 > 장비"]),
    ("KTX로 부산", "mixed", ["memory:busan-ktx"]),
    ("Spotify 재즈", "mixed", ["memory:spotify"]),
]  # fmt: skip
