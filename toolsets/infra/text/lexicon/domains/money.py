"""Money at work: expenses, purchases, invoices, budgets, payments."""

WORDS = """
경비 보고서 = expense report; 비용 처리 = expense / expensing; 지출 결의서 = expense claim / expense form
청구서 = invoice / bill; 인보이스 = invoice; 세금계산서 = tax invoice; 견적 = quote / estimate
견적서 = quotation / quote
구매 = purchase / purchasing / buy; 구매 요청 = purchase request; 발주 = purchase order / order
주문 = order / ordering
송금 = transfer / wire / remittance; 계좌 = bank account / account; 은행 = bank; 현금 = cash; 카드 = card
법인카드 = corporate card / company card; 정지 = block / suspend / freeze; 차단 = block; 원 = won / krw
금액 = amount; 가격 = price / cost; 매출 = revenue / sales; 이익 = profit; 손실 = loss
실적 = results / earnings / performance
수익 = revenue / income; 지원금 = subsidy / allowance; 보조금 = subsidy; 환불 = refund; 선불 = prepaid / prepay
후불 = postpaid; 영수증 처리 = receipt; 비용 청구 = expense claim; 한도 초과 = over limit
"""
