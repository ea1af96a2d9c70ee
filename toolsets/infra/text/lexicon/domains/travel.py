"""Travel and getting around: transport, tickets, lodging, places and directions."""

WORDS = """
지하철 = subway / metro; 지하철역 = subway station / metro station; 역 = station; 버스 = bus
셔틀 = shuttle; 셔틀버스 = shuttle bus / shuttle; 통근 버스 = commuter bus / shuttle bus; 통근 = commute / commuter
정류장 = bus stop / stop; 주차 요금 = parking fee / parking rate; 요금 = fee / fare / charge / rate / cost
무료 = free; 유료 = paid; 할인 = discount; 렌터카 = rental car / car rental; 자동차 = car
차량 = vehicle / car; 번호판 = license plate / car plate / plate; 운전 = driving / drive; 도보 = walk / walking
걸어서 = walk / walking; 거리 = distance; 가까운 = nearest / near / close; 근처 = nearby / near / around
맞은편 = opposite / across; 건너편 = across; 옆 = beside; 항공 = airline / flight
항공사 = airline; 비행기표 = plane ticket / flight ticket / flight; 표 = ticket; 티켓 = tickets
기차표 = train ticket; 승차권 = ticket; 예매 = booking / book / reservation; 탑승 = boarding / board
여권 = passport; 환전 = currency exchange / exchange money; 환율 = exchange rate
출장비 = travel expenses / travel costs
일비 = per diem / daily allowance; 숙소 = accommodation / lodging / hotel; 이코노미 = economy / economy class
비즈니스석 = business class; 여행사 = travel agency / travel agent; 김포 = gimpo; 김포공항 = gimpo airport
인천 = incheon; 인천공항 = incheon airport; 제주 = jeju; 제주도 = jeju; 부산 = busan; 대전 = daejeon; 대구 = daegu
광주 = gwangju; 강릉 = gangneung; 판교 = pangyo; 역삼 = yeoksam; 역삼역 = yeoksam station; 강남역 = gangnam station
여의도 = yeouido; 광화문 = gwanghwamun; 시청 = city hall; 도쿄 = tokyo; 오사카 = osaka; 뉴욕 = new york
싱가포르 = singapore; 런던 = london; 베이징 = beijing; 상하이 = shanghai; 미국 = us / america / united states / usa
일본 = japan; 중국 = china; 한국 = korea; 시차 = time difference / jet lag; 시간대 = time zone / timezone
한국 시간 = korea time / kst; 현지 시간 = local time; 국내 출장 = domestic trip; 해외 출장 = overseas trip
길 = way / road / directions; 길찾기 = directions; 지도 = map; 출발 = departure / depart / leave
도착 = arrival / arrive; 왕복 = round trip; 편도 = one way; 짐 = luggage / baggage
"""
