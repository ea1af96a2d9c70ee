"""IT and devices: computers, phones, accounts, software, support."""

WORDS = """
헬프데스크 = helpdesk / help desk / IT support; 전산 = IT; 전산팀 = IT / IT team; IT팀 = IT team
기술 지원 = tech support / technical support; 지원 = support; 티켓 = ticket; 맥북 = macbook / mac
데스크톱 = desktop; 태블릿 = tablet / ipad; 휴대폰 = phone / mobile / mobile phone / cell phone
핸드폰 = phone / mobile / mobile phone / cell phone; 스마트폰 = smartphone / phone; 전화 = phone / call
내선 = extension; 내선 번호 = extension number / extension; 번호 = number; 앱 = app / application
소프트웨어 = software; 프로그램 = program / software; 업데이트 = update / upgrade; 보안 프로그램 = security software
백신 = antivirus; 바이러스 = virus / malware; 피싱 = phishing; 스팸 = spam; 메일 주소 = email address
동기화 = sync / syncing / synchronization / synchronize; 연동 = integration / sync / connect
백업 = backup / back up; 클라우드 = cloud; 서버 = server; 네트워크 = network; 재설정 = reset
초기화 = reset; 잠금 = lock / locked; 만료 = expire / expiry / expiration / expired; 갱신 = renew / renewal
인증 = authentication / verification / verify; 2단계 인증 = two-factor authentication / 2fa
로그아웃 = logout / log out / sign out; 접속 = connect / access / login; 연결 = connection / connect / connected
오류 = error; 에러 = error; 버그 = bug; 장애 = outage / incident / failure; 느려 = slow; 화면 = screen / display
마우스 = mouse; 헤드셋 = headset; 이어폰 = earphones / earbuds; 웹캠 = webcam; 카메라 = camera
어댑터 = adapter; 지급 = issue / provide / provided / give; 보조 모니터 = second monitor / extra monitor
듀얼 모니터 = dual monitor; 공유 드라이브 = shared drive; 드라이브 = drive; 폴더 = folder; 파일 = file / files
업로드 = upload; 다운로드 = download; 링크 = link / url; 첨부 = attachment / attach; 공유 = share / shared / sharing
데이터 = data; 저장 = save / store; 삭제 = delete / remove; 복구 = recover / restore / recovery
포털 = portal; 사이트 = site / website; 홈페이지 = website / homepage; 시스템 = system; 인사 시스템 = HR system
메신저 = messenger / chat; 슬랙 = slack; 채팅 = chat; 단체방 = group chat; 팀 채팅 = team chat
"""
