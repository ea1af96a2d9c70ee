"""Working together: communication, documents, requests, processes and common office verbs."""

WORDS = """
연락 = contact / reach; 연락망 = contact list / phone tree; 비상 = emergency
비상 연락망 = emergency contact list / emergency contacts
긴급 = urgent / emergency; 게시판 = bulletin board / notice board; 게시 = post / posted; 고정 = pinned / pin
명함 = business card / business cards; 주소록 = address book / directory; 자리 배치 = seating chart / seating
사용 = use / usage; 사용법 = instructions / usage / manual; 방법 = method / way; 절차 = process / procedure / steps
규칙 = rule / rules; 확인 = check / confirm / verify; 문의 = inquiry / question / ask; 질문 = question
답변 = answer; 참고 = reference; 목록 = list; 리스트 = list; 명단 = list / roster; 제도 = program / system / scheme
보고 = report / reporting; 주간 보고 = weekly report; 주간 보고서 = weekly report; 월간 보고서 = monthly report
제안서 = proposal; 제안 = proposal / suggestion / propose; 계획서 = plan; 기획서 = proposal / plan; 계약서 = contract
문서 양식 = document template; 서명 = signature / sign; 도장 = stamp / seal; 검토 요청 = review request
피드백 = feedback; 의견 = opinion / feedback / comments; 건의 = suggestion; 설문 = survey; 설문조사 = survey
공유 폴더 = shared folder; 업무 = task / tasks / duties; 할 일 = to-do / todo / tasks; 작업 = task / work
진행 = progress / run; 진행 상황 = status / progress; 완료 = done / complete / completed; 시작일 = start date
마감일 = due date; 마감 기한 = due date; 우선순위 = priority; 담당 업무 = responsibilities / duties
인수인계 = handover / handoff; 교대 = shift; 근무표 = shift schedule / roster; 당직 = duty / night duty
재택 = remote / wfh; 재택근무 = remote work / wfh
유연 근무 = flexible work / flexible hours; 시차 출근 = staggered hours; 외근 = field work
외부 = outside / external; 내부 = internal / inside; 사내 = in-house / internal / company; 외부인 = outsider / visitor
도움 = help; 도와 = help; 부탁 = favor / request; 추천 = recommend / recommendation / recommends
알림 설정 = notification settings; 변경 사항 = changes
"""
