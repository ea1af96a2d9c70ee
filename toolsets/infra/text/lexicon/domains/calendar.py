"""Calendars and time: periods, dates, events, meetings and how they are arranged."""

WORDS = """
분기 = quarter / quarterly; 분기별 = quarterly; 상반기 = first half; 하반기 = second half; 반기 = half year
연말 = year-end / year end; 연초 = early year / new year; 올해 = this year
내년 = next year; 작년 = last year; 이번 달 = this month; 다음 달 = next month; 지난달 = last month
월말 = month end / month-end; 월초 = early month; 매월 = monthly / every month; 매년 = annual / yearly / every year
연간 = annual / yearly; 연례 = annual; 격주 = every other week / biweekly; 첫째 = first; 둘째 = second
셋째 = third; 넷째 = fourth; 마지막 = last / final; 일주일 = week; 한 달 = month; 하루 = day / one day
정오 = noon / midday; 자정 = midnight; 저녁 = evening; 밤 = night; 새벽 = early morning / dawn
시작 = start / begin / beginning; 종료 = end / finish; 끝 = end; 마감 = due / due date / closing
제출 = submit / submission; 기간 = period / duration / window; 시각 = time
시간표 = timetable; 연기 = delay; 재조정 = reschedule; 일정 변경 = reschedule / schedule change
당일 = same day; 전날 = day before / previous day; 다음 날 = next day / following day; 정시 = punctual / sharp
지각 = late / tardy / running late; 늦 = late; 조퇴 = leave early; 퇴근 = leave work / go home / clock out
출퇴근 = commute / commuting; 점심시간 = lunch break / lunch hour / lunchtime; 휴식 = break / rest
쉬는 시간 = break; 기념일 = anniversary; 창립 = founding; 창립기념일 = founding anniversary / foundation day
파티 = party; 송년회 = year-end party / holiday party / end-of-year party; 신년회 = new year party
종무식 = year-end ceremony; 시무식 = new year ceremony; 축하 = celebration / congratulations / celebrate
결혼식 = wedding; 장례식 = funeral; 경조사 = family events; 행사장 = venue / event hall
장소 = place / venue / location
회의록 = notes; 양식 = template / form; 템플릿 = template; 서식 = form / template; 발표자 = presenter / speaker
자료 = materials / slides / data; 슬라이드 = slides / slide deck; 스탠드업 = standup / stand-up; 데일리 = daily
정기 = regular / recurring; 정기 회의 = regular meeting; 주간 회의 = weekly meeting; 월례 회의 = monthly meeting
임원 회의 = executive meeting; 이사회 = board / board meeting; 총회 = general meeting / assembly
컨퍼런스 = conference; 학회 = conference / academic conference; 세미나 = seminar; 설명회 = briefing / info session
브리핑 = briefing; 킥오프 = kickoff / kick-off; 회고 = retrospective / retro; 브레인스토밍 = brainstorming
토론 = discussion / debate; 논의 = discussion / discuss; 결정 = decision / decide; 투표 = vote / voting
불참 = absent / absence / decline; 오프사이트 = offsite; 팀 빌딩 = team building / team-building
야유회 = company picnic / outing; 단합 = team bonding; 워크샵 = workshop; 수용 = capacity / fit
인원 = people / headcount; 정원 = capacity; 최대 = maximum / max; 최소 = minimum / min
화상 = video; 영상 = video; 비디오 = video; 줌 회의 = zoom meeting; 초대장 = invite; 참석 여부 = rsvp
일정표 = schedule / itinerary; 캘린더 공유 = calendar sharing / shared calendar; 공유 캘린더 = shared calendar
시간 변경 = time change; 회의 시간 = meeting time; 빈 시간 = free time / free slot / availability
가능한 시간 = availability / available time; 바쁨 = busy; 예정 = scheduled / planned / upcoming
"""
