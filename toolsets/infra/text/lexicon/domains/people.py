"""People and HR: roles, teams, hiring, pay, reviews, leave and benefits."""

WORDS = """
인사 = HR / human resources / personnel; 인사 평가 = performance review / performance evaluation / appraisal
평가 = evaluation / review / assessment / appraisal; 성과 = performance; 자기 평가 = self-assessment / self-review
목표 = goal / goals / objective / target; 연봉 = annual salary / salary / compensation; 급여일 = payday / pay day
월급날 = payday / pay day; 명세서 = statement / slip; 급여 명세서 = pay slip / payslip / pay stub
수당 = allowance / pay; 초과 근무 = overtime; 초과 근무 수당 = overtime pay; 야간 = night
상여금 = bonus; 보너스 = bonus; 성과급 = bonus / performance bonus / incentive; 인센티브 = incentive
퇴직금 = severance pay / severance; 보험 = insurance; 건강 보험 = health insurance; 세금 = tax / taxes
연말정산 = year-end tax settlement / tax settlement / tax return; 채용 = hiring / recruiting / recruitment
면접 = interview / interviews; 지원자 = applicant / candidate; 후보 = candidate; 이력서 = resume / cv
포지션 = position / role; 직무 = role / job; 직책 = title / position; 직급 = rank / level / grade
승진 = promotion; 발령 = assignment / transfer; 전근 = transfer; 부서 = department / team; 조직 = organization
조직도 = org chart / organization chart; 멘토 = mentor; 멘토링 = mentoring; 멘티 = mentee; 버디 = buddy
수습 = probation; 수습 기간 = probation period; 계약 = contract; 계약직 = contractor / contract worker
정규직 = full-time / permanent; 인턴 = intern / internship; 복지 = benefits / welfare / perks
복지 포인트 = benefit points / welfare points
건강검진 = health checkup / medical checkup / health screening / checkup
검진 = checkup; 병원 = hospital / clinic; 의사 = doctor; 진단서 = doctor's note / medical certificate
휴직 = leave; 육아 휴직 = parental leave; 출산 휴가 = maternity leave; 육아 = parental / childcare
출산 = maternity / childbirth; 경조 휴가 = bereavement leave / family leave; 복귀 = return / back / come back
결근 = absence / absent; 부재 = away / absent; 부재중 = away; 근태 = attendance
재직 증명서 = employment certificate; 증명서 = certificate; 서류 = documents / paperwork
결재 = approval / sign-off / approve; 요청 = request; 신청 = application / request / apply
신청서 = application form / request form; 등록 = registration / register / sign up; 사직 = resignation / resign
오리엔테이션 = orientation; 신규 = new; 신규 입사자 = new hire / new joiner / new employee; 입사자 = new hire
팀원 = team member / teammate; 구성원 = member / members; 상사 = boss / manager / supervisor
대표 = CEO / president / representative; 대표님 = CEO; 사장 = president / CEO; 사장님 = president / CEO
임원 = executive / executives; 이사 = director; 부장 = director / department head; 과장 = manager
차장 = deputy manager / senior manager; 대리 = assistant manager; 팀장 = team leader / lead; 실장 = director / head
본부장 = division head; 리더 = leader / lead; 담당 = handle / responsible
채용 담당자 = recruiter; 재무 = finance; 재무팀 = finance / finance team; 회계 = accounting; 회계팀 = accounting
총무 = general affairs / office manager / admin; 총무팀 = general affairs / office management / admin team
마케팅 = marketing; 마케팅팀 = marketing team / marketing; 영업 = sales; 영업팀 = sales team / sales
개발 = development / engineering; 개발자 = developer / engineer; 엔지니어 = engineer; 디자이너 = designer
기획 = planning; 기획자 = planner / product manager; 법무 = legal; 법무팀 = legal team / legal
고객 = customer / client; 고객사 = client / client company / customer; 거래처 = client / vendor / supplier
협력사 = partner / vendor; 파트너 = partner; 지사 = branch / branch office / office; 지점 = branch
해외 = overseas / abroad / international; 국내 = domestic / local; 사람 = people / person
직원 = staff; 동료 = coworker / co-worker; 신입 = newcomer / junior; 경력 = experience / career
자기소개 = introduction / self-introduction; 소개 = introduction / introduce; 이름 = name
생일 파티 = birthday party; 깜짝 = surprise; 선물 = gift / present; 축하 파티 = celebration
"""
