"""Food and meals: lunch, dinners, drinks, snacks, where to eat."""

WORDS = """
식대 = meal allowance / meal expenses / meal cost; 식비 = meal expenses / food costs
식권 = meal ticket / meal voucher
구내식당 = cafeteria / canteen; 사내 식당 = cafeteria / canteen; 도시락 = lunch box / packed lunch / bento
배달 = delivery / takeout; 배달 음식 = delivery food / takeout; 고깃집 = barbecue / korean bbq / bbq restaurant
고기 = meat; 삼겹살 = pork belly; 치킨 = chicken / fried chicken; 피자 = pizza; 국수 = noodles / noodle
면 = noodles; 라면 = ramen / ramyeon; 밥 = rice / meal; 김치 = kimchi; 비빔밥 = bibimbap; 분식 = snack food
샐러드 = salad; 샌드위치 = sandwich; 빵 = bread; 디저트 = dessert; 케이크 = cake; 과일 = fruit / fruits
음료 = drinks / beverages / drink; 음료수 = drink / soft drink; 물 = water; 차 = tea; 녹차 = green tea
맥주 = beer; 소주 = soju; 와인 = wine; 술 = alcohol / drinks / drinking; 매운 = spicy / hot; 매운 음식 = spicy food
채식 = vegetarian / vegan; 비건 = vegan; 알레르기 = allergy / allergies; 맛집 = good restaurant / restaurant
카페 = cafe / coffee shop; 아이스 아메리카노 = iced americano; 라떼 = latte; 베이커리 = bakery
좋아하 = like / favorite / favourite; 싫어 = dislike / hate; 입맛 = taste
점심 메뉴 = lunch menu; 이번 주 메뉴 = weekly menu / this week's menu; 저녁 메뉴 = dinner menu
회식 장소 = team dinner venue; 뷔페 = buffet; 중식 = chinese food; 일식 = japanese food; 양식 = western food
분식집 = snack bar; 국밥 = rice soup; 찌개 = stew; 야식 = late-night snack; 커피 쿠폰 = coffee coupon
"""
