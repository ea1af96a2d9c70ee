"""The lexicon's first 228 pairs (a team's working words) and the Korean given names; the domain lists beside
this file grow it."""

from __future__ import annotations

CORE: tuple[tuple[str, str], ...] = (
    # meetings and rooms
    ("회의", "meeting"), ("미팅", "meeting"), ("회의", "conference"), ("회의실", "meeting room"),
    ("회의실", "conference room"), ("화상 회의", "video call"), ("화상 회의", "video meeting"),
    ("안건", "agenda"), ("회의록", "minutes"), ("회의록", "meeting notes"), ("발표", "presentation"),
    ("리뷰", "review"), ("검토", "review"), ("워크숍", "workshop"), ("면담", "one-on-one"), ("참석", "attend"),
    ("참석자", "attendee"), ("참석자", "participant"), ("예약", "booking"), ("예약", "reservation"),
    ("예약", "book"), ("취소", "cancel"), ("변경", "change"), ("연기", "postpone"), ("전체 회의", "all-hands"),
    # meals
    ("저녁", "dinner"), ("저녁 식사", "dinner"), ("회식", "team dinner"),
    ("회식", "team outing"), ("점심", "lunch"), ("아침", "breakfast"), ("아침", "morning"), ("식사", "meal"),
    ("식당", "restaurant"), ("음식", "food"), ("한식", "korean food"), ("메뉴", "menu"), ("커피", "coffee"),
    ("간식", "snack"), ("술자리", "drinks"),
    # calendar and schedule
    ("캘린더", "calendar"), ("달력", "calendar"), ("일정", "schedule"), ("일정", "plan"), ("스케줄", "schedule"),
    ("행사", "event"), ("이벤트", "event"), ("약속", "appointment"), ("마감", "deadline"), ("마감일", "deadline"),
    ("기한", "deadline"), ("시간", "time"), ("시간", "hours"), ("근무 시간", "working hours"),
    ("업무 시간", "office hours"), ("코어 타임", "core hours"), ("오전", "morning"), ("오후", "afternoon"),
    ("주말", "weekend"), ("평일", "weekday"), ("오늘", "today"), ("내일", "tomorrow"), ("어제", "yesterday"),
    ("이번 주", "this week"), ("다음 주", "next week"), ("매주", "weekly"), ("주간", "weekly"),
    ("매달", "monthly"), ("월간", "monthly"), ("매일", "daily"), ("날짜", "date"), ("월요일", "monday"),
    ("화요일", "tuesday"), ("수요일", "wednesday"), ("목요일", "thursday"), ("금요일", "friday"),
    ("토요일", "saturday"), ("일요일", "sunday"), ("가능한 날짜", "availability"), ("반복", "recurring"),
    ("알림", "reminder"), ("알림", "notification"),
    # money
    ("비용", "expense"), ("비용", "cost"), ("경비", "expense"), ("지출", "spending"), ("영수증", "receipt"),
    ("정산", "reimbursement"), ("환급", "refund"), ("법인 카드", "corporate card"), ("회사 카드", "company card"),
    ("예산", "budget"), ("한도", "limit"), ("결제", "payment"), ("급여", "salary"), ("월급", "salary"),
    ("월급", "pay"), ("청구", "claim"), ("승인", "approval"),
    # office
    ("사무실", "office"), ("오피스", "office"), ("본사", "headquarters"), ("주소", "address"),
    ("위치", "location"), ("건물", "building"), ("로비", "lobby"), ("안내 데스크", "reception"),
    ("리셉션", "reception"), ("출입증", "badge"), ("출입증", "access card"), ("와이파이", "wifi"),
    ("인터넷", "internet"), ("주차", "parking"), ("주차장", "parking lot"), ("프린터", "printer"),
    ("탕비실", "kitchen"), ("휴게실", "lounge"), ("엘리베이터", "elevator"), ("시설", "facilities"),
    ("자리", "desk"), ("좌석", "seat"), ("서울", "seoul"), ("강남", "gangnam"), ("한강", "hangang"),
    ("남산", "namsan"), ("테헤란로", "teheran-ro"),
    # work and people
    ("근무", "work"), ("업무", "work"), ("출근", "commute"), ("재택 근무", "remote work"), ("야근", "overtime"),
    ("팀", "team"), ("팀장", "team lead"), ("팀장", "manager"), ("매니저", "manager"), ("관리자", "admin"),
    ("관리자", "administrator"), ("담당자", "owner"), ("동료", "colleague"), ("직원", "employee"),
    ("사원", "employee"), ("회사", "company"), ("인사팀", "hr"), ("디자인", "design"), ("프로젝트", "project"),
    ("보고서", "report"), ("생일", "birthday"), ("전화번호", "phone number"), ("연락처", "contact"),
    ("이메일", "email"), ("메일", "email"), ("메시지", "message"), ("채널", "channel"),
    # onboarding, equipment, accounts
    ("온보딩", "onboarding"), ("입사", "onboarding"), ("입사", "joining"), ("신입", "new hire"),
    ("신입 사원", "new employee"), ("교육", "training"), ("첫날", "first day"), ("환영", "welcome"),
    ("퇴사", "offboarding"), ("노트북", "laptop"), ("컴퓨터", "computer"), ("모니터", "monitor"),
    ("키보드", "keyboard"), ("장비", "equipment"), ("충전기", "charger"), ("반납", "return"), ("설치", "install"),
    ("설정", "setup"), ("설정", "settings"), ("계정", "account"), ("로그인", "login"), ("로그인", "sign-in"),
    ("비밀번호", "password"), ("권한", "permission"), ("권한", "access"), ("접근", "access"),
    ("관리 권한", "admin access"), ("지식 베이스", "knowledge base"), ("문서", "document"), ("문서", "docs"),
    ("핸드북", "handbook"), ("안내", "guide"), ("가이드", "guide"), ("규정", "policy"), ("정책", "policy"),
    ("공지", "announcement"), ("공지", "notice"),
    # invitations and guests
    ("초대", "invitation"), ("초대", "invite"), ("초대장", "invitation"), ("손님", "guest"), ("게스트", "guest"),
    ("방문자", "visitor"), ("응답", "reply"), ("응답", "response"), ("답장", "reply"), ("참여", "join"),
    # holidays and leave
    ("휴가", "vacation"), ("휴가", "leave"), ("휴가", "holiday"), ("연차", "annual leave"),
    ("연차", "vacation days"), ("공휴일", "public holiday"), ("휴일", "holiday"), ("명절", "holiday"),
    ("추석", "chuseok"), ("설날", "lunar new year"), ("크리스마스", "christmas"), ("병가", "sick leave"),
    ("휴무", "day off"), ("반차", "half day"),
    # travel
    ("출장", "business trip"), ("출장", "travel"), ("여행", "travel"), ("여행", "trip"), ("교통", "transport"),
    ("교통비", "transport costs"), ("기차", "train"), ("비행기", "flight"), ("항공권", "flight ticket"),
    ("호텔", "hotel"), ("숙박", "accommodation"), ("택시", "taxi"), ("공항", "airport"), ("비자", "visa"),
)  # fmt: skip

# Korean given names (the demo's and common ones), found by their Latin spellings and back; the
# spellings (Revised Romanization and the popular one: 준호 junho/joonho) come from `romanize`.
GIVEN_NAMES: tuple[str, ...] = tuple(
    """민지 준호 소라 하나 민준 서준 도윤 예준 시우 하준 주원 지호 지후 준서 준우 현우 도현 지훈 건우 우진 선우 서진
    민재 현준 연우 유준 정우 승우 승현 시윤 준혁 은우 지환 승민 지우 서윤 서연 지유 하윤 서현 민서 하은 지아 수아
    윤서 지민 채원 지윤 은서 다은 예은 수빈 소율 예린 지현 수진 지영 은지 혜진 미영 영희 철수 민수 성민 동현 준영
    상훈 재현 성훈 영호 유나 수연 지수 현정 은정 미진 진영 태현 민호 동욱 태민 유진 혜원 성호 정민 다인 세영""".split()  # noqa: SIM905
)
