"""Offices and facilities: rooms, equipment, supplies, building services, safety."""

WORDS = """
사무용품 = office supplies; 비품 = supplies / equipment; 비품실 = supply room / supply closet / storeroom
문구 = stationery; 복사기 = copier / photocopier; 복사 = copy / copies; 용지 = paper; 종이 = paper; 토너 = toner
잉크 = ink; 스캐너 = scanner; 스캔 = scan; 팩스 = fax; 프로젝터 = projector; 빔프로젝터 = projector; 스크린 = screen
화이트보드 = whiteboard; 마이크 = microphone / mic; 스피커 = speaker; 케이블 = cable; 리모컨 = remote / remote control
냉장고 = fridge / refrigerator; 전자레인지 = microwave; 정수기 = water dispenser / water purifier / water cooler
커피 머신 = coffee machine / coffee maker; 에어컨 = air conditioner / air conditioning / AC
냉방 = air conditioning / cooling
난방 = heating / heat; 히터 = heater; 온도 = temperature / thermostat; 조명 = lighting / lights; 전등 = lights
화장실 = restroom / bathroom / toilet / washroom; 계단 = stairs / stairway / staircase
비상구 = emergency exit / fire exit
소화기 = fire extinguisher; 화재 = fire; 소방 = fire; 소방 훈련 = fire drill; 대피 = evacuation / evacuate
대피 훈련 = evacuation drill; 훈련 = drill / training; 경비실 = security office / security desk
경비원 = security guard
보안 = security; 관리실 = management office / building management
관리사무소 = building management / management office
청소 = cleaning / clean; 미화 = cleaning; 쓰레기 = trash / garbage / rubbish; 쓰레기통 = trash can / bin / wastebasket
분리수거 = recycling; 분리수거함 = recycling bin; 재활용 = recycling / recycle; 택배 = package / parcel / delivery
우편 = mail / post; 우편물 = mail; 우편실 = mailroom / mail room; 배송 = delivery / shipping; 열쇠 = key / keys
사물함 = locker; 창문 = window; 창가 = window / window side; 복도 = hallway / corridor; 입구 = entrance
출구 = exit; 정문 = main entrance / front gate; 후문 = back entrance / back door; 뒤편 = back / rear
옥상 = rooftop / roof; 지하 = basement / underground; 흡연 = smoking; 흡연실 = smoking room / smoking area
수유실 = nursing room; 샤워실 = shower room / showers; 헬스장 = gym / fitness center; 체육관 = gym
자전거 = bicycle / bike; 보관소 = storage / parking; 보관 = storage / keep; 창고 = storage room / warehouse
캐비닛 = cabinet; 서랍 = drawer; 책상 = desk; 의자 = chair; 가구 = furniture; 소파 = sofa / couch
라운지 = lounge; 편의점 = convenience store; 매점 = shop / kiosk; 자판기 = vending machine
고장 = broken / broke / break; 수리 = repair / fix; 점검 = maintenance / inspection
공사 = construction / renovation; 정전 = power outage / blackout; 전기 = electricity / power
콘센트 = outlet / power outlet / socket; 누수 = leak; 소음 = noise; 분실물 = lost item / lost property
분실 = lost / loss; 잃어버 = lose / lost; 추워 = cold; 춥 = cold; 더워 = hot; 덥 = hot; 시끄러 = noisy / loud
대회의실 = large meeting room / big meeting room / main conference room; 소회의실 = small meeting room
회의 장비 = meeting equipment; 공용 = shared / common; 문 = door; 엘리베이터 점검 = elevator maintenance
층 안내 = floor guide; 건물 관리 = building management; 출입 = entry / access; 출입 카드 = access card / key card
사원증 = employee ID / ID card / badge; 신분증 = ID / identification; 방문증 = visitor pass / visitor badge
방문객 = visitor / visitors; 방문 = visit; 안내 데스크 = front desk / reception desk
"""
