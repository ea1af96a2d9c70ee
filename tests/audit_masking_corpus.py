"""What the audit masking replaces and what it must leave readable, in Korean and English: one row per case,
(text, what the audit line carries). A row whose two texts are equal is a negative: nothing there is masked."""

from __future__ import annotations

from typing import NamedTuple


class MaskingCase(NamedTuple):
    kind: str  # the class of value (`rrn`, `card`, `secret`, `phone`, `bearer`, ...) or `keep` for a negative
    text: str
    masked: str


CORPUS: tuple[MaskingCase, ...] = (
    # Korean resident registration numbers, with or without the hyphen
    MaskingCase("rrn", "900101-1234567", "[rrn]"),
    MaskingCase("rrn", "9001011234567", "[rrn]"),
    MaskingCase("rrn", "주민번호 900101-2234567 확인 부탁", "주민번호 [rrn] 확인 부탁"),
    MaskingCase("rrn", "주민등록번호는 0503154123456입니다", "주민등록번호는 [rrn]입니다"),
    MaskingCase("rrn", "resident number 851231-5123456 (foreigner)", "resident number [rrn] (foreigner)"),
    # card numbers: spaces, hyphens or none, Luhn-checked (Visa, Mastercard, Amex, 19 digits)
    MaskingCase("card", "4111 1111 1111 1111", "[card]"),
    MaskingCase("card", "4111-1111-1111-1111", "[card]"),
    MaskingCase("card", "4111111111111111", "[card]"),
    MaskingCase("card", "카드번호 5555-5555-5555-4444로 결제해줘", "카드번호 [card]로 결제해줘"),
    MaskingCase("card", "Amex 3782 822463 10005 expires 12/27", "Amex [card] expires 12/27"),
    MaskingCase("card", "card 4111 1111 1111 1111 123 on file", "card [card] 123 on file"),
    MaskingCase("card", "pay with 6011000990139424 today", "pay with [card] today"),
    # passwords and other secrets named in free text: the word stays, the value goes
    MaskingCase("secret", "password: hunter2", "password: [masked]"),
    MaskingCase("secret", "pw=Tr0ub4dor&3", "pw=[masked]"),
    MaskingCase("secret", "비밀번호는 qwerty123", "비밀번호는 [masked]"),
    MaskingCase("secret", "와이파이 비번: guest2026!", "와이파이 비번: [masked]"),
    MaskingCase("secret", "현관 암호 1234* 입니다", "현관 암호 [masked] 입니다"),
    MaskingCase("secret", "passwd=s3cr3t; user=admin", "passwd=[masked]; user=admin"),
    MaskingCase("secret", "client secret=AbCdEf and more", "client secret=[masked] and more"),
    MaskingCase("secret", "token: 8f7e6d5c4b3a", "token: [masked]"),
    MaskingCase("secret", "api_key=abcd1234efgh", "api_key=[masked]"),
    MaskingCase("secret", "DB_PASSWORD=hunter2", "DB_PASSWORD=[masked]"),
    MaskingCase("secret", "my password is hunter2.", "my password is [masked]."),
    MaskingCase("secret", "Password hunter2 for the wifi", "Password [masked] for the wifi"),
    MaskingCase("secret", '{"password": "correct horse battery"}', '{"password": [masked]}'),
    MaskingCase("secret", "Authorization: Basic dXNlcjpwYXNz", "Authorization: [masked]"),
    MaskingCase("secret", "인증번호 482913 입력", "인증번호 [masked] 입력"),
    # phone numbers: Korean and international, as the README promises
    MaskingCase("phone", "+1 (415) 555-2671", "[phone]"),
    MaskingCase("phone", "0044 20 7946 0958", "[phone]"),
    MaskingCase("phone", "+82 10-1234-5678", "[phone]"),
    MaskingCase("phone", "010-1234-5678", "[phone]"),
    MaskingCase("phone", "call +44 (0)20 7946 0958 after lunch", "call [phone] after lunch"),
    MaskingCase("phone", "민지 번호 +821012345678 저장", "민지 번호 [phone] 저장"),
    # international numbers written with spaces, dots and dashes
    MaskingCase("phone", "Berlin office +49 30 1234567", "Berlin office [phone]"),
    MaskingCase("phone", "+44 7911 123456", "[phone]"),
    MaskingCase("phone", "0033 1 23 45 67 89", "[phone]"),
    MaskingCase("phone", "도쿄 +81 3-1234-5678 으로", "도쿄 [phone] 으로"),
    MaskingCase("phone", "+49.30.1234567", "[phone]"),
    MaskingCase("phone", "Moscow +7 495 123-45-67", "Moscow [phone]"),
    # North American numbers written without `+` (libphonenumber's US metadata checks them)
    MaskingCase("phone", "1 (212) 555-0123", "[phone]"),
    MaskingCase("phone", "call John at 1 (212) 555-0123 tonight", "call John at [phone] tonight"),
    MaskingCase("phone", "뉴욕 사무실 (212) 555-0123", "뉴욕 사무실 [phone]"),
    MaskingCase("phone", "1-212-555-0123", "[phone]"),
    MaskingCase("phone", "tel. 02)123-4567", "tel. [phone]"),
    MaskingCase("keep", "score +3 5 7", "score +3 5 7"),
    MaskingCase("keep", "ISBN 978-3-16-148410-0", "ISBN 978-3-16-148410-0"),
    # IBANs: grouped or not, checked by their mod-97 digits and their country's length
    MaskingCase("iban", "DE89 3704 0044 0532 0130 00", "[iban]"),
    MaskingCase("iban", "GB82WEST12345698765432", "[iban]"),
    MaskingCase("iban", "IBAN GB82 WEST 1234 5698 7654 32 로 송금", "IBAN [iban] 로 송금"),
    MaskingCase("iban", "pay DE89370400440532013000.", "pay [iban]."),
    MaskingCase("iban", "DE89 3704 0044 0532 0130 00 OK", "[iban] OK"),
    MaskingCase("keep", "GB82WEST12345698765433", "GB82WEST12345698765433"),  # wrong check digits
    MaskingCase("keep", "AB12 CDEF GHIJ KLMN", "AB12 CDEF GHIJ KLMN"),
    # Korean business registration numbers: their parts and check digit
    MaskingCase("brn", "사업자등록번호 220-81-62517 입니다", "사업자등록번호 [brn] 입니다"),
    MaskingCase("brn", "거래처 124-81-00998", "거래처 [brn]"),
    MaskingCase("keep", "220-81-62518", "220-81-62518"),  # wrong check digit
    MaskingCase("keep", "123-45-67890", "123-45-67890"),
    # a resident registration number's birth date must exist
    MaskingCase("keep", "990231-1234567", "990231-1234567"),
    # bearer tokens and JWTs
    MaskingCase("bearer", "Bearer abc.def.ghi", "[bearer]"),
    MaskingCase("bearer", "Authorization: Bearer abc.def.ghi", "Authorization: [bearer]"),
    MaskingCase("bearer", "헤더에 bearer 9f8e7d6c5b4a 넣기", "헤더에 [bearer] 넣기"),
    MaskingCase("jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.sig_nature-1", "token [jwt]"),
    # email, in Korean text
    MaskingCase("email", "민지 메일은 minji.kim@example.co.kr 입니다", "민지 메일은 [email] 입니다"),
    # what must stay readable
    MaskingCase("keep", "2026-03-10", "2026-03-10"),
    MaskingCase("keep", "2026-03-10T10:00:00+09:00", "2026-03-10T10:00:00+09:00"),
    MaskingCase("keep", "2026-03-10T01:00:00.412Z", "2026-03-10T01:00:00.412Z"),
    MaskingCase("keep", "from 10:00-11:30 on 20260310", "from 10:00-11:30 on 20260310"),
    MaskingCase("keep", "evt_3f9a1c2b7d4e4f5a8b6c", "evt_3f9a1c2b7d4e4f5a8b6c"),
    MaskingCase("keep", "evt_4111111111111111", "evt_4111111111111111"),
    MaskingCase("keep", "tc_96a52d921c7740ea", "tc_96a52d921c7740ea"),
    MaskingCase("keep", "6f1c2c0e-9b8a-4d7e-a1b2-c3d4e5f60718", "6f1c2c0e-9b8a-4d7e-a1b2-c3d4e5f60718"),
    MaskingCase("keep", "12345678-1234-1234-1234-123456789012", "12345678-1234-1234-1234-123456789012"),
    MaskingCase(
        "keep",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    MaskingCase(
        "keep",
        "version 4111111111111111e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "version 4111111111111111e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    MaskingCase("keep", "4111111111111112", "4111111111111112"),
    MaskingCase("keep", "order 1234 5678 9012 3456", "order 1234 5678 9012 3456"),
    MaskingCase("keep", "예산 1,200,000원, 참석자 12명", "예산 1,200,000원, 참석자 12명"),
    MaskingCase("keep", "12,450 users and 3.2% churn in 2025", "12,450 users and 3.2% churn in 2025"),
    MaskingCase("keep", "version 1.4.2 released", "version 1.4.2 released"),
    MaskingCase("keep", "주문번호 20260310123456 배송 중", "주문번호 20260310123456 배송 중"),
    MaskingCase("keep", "비밀번호를 바꿨다", "비밀번호를 바꿨다"),
    MaskingCase("keep", "암호화폐 시세 확인", "암호화폐 시세 확인"),
    MaskingCase("keep", "다음 주 화요일 오후 3시에 디자인 리뷰", "다음 주 화요일 오후 3시에 디자인 리뷰"),
    MaskingCase("keep", "the bearer of good news", "the bearer of good news"),
    MaskingCase("keep", "use a password manager", "use a password manager"),
    MaskingCase("keep", "reset the password by 2026-03-10", "reset the password by 2026-03-10"),
    MaskingCase("keep", "max tokens: 500", "max tokens: 500"),
    MaskingCase("keep", "token_count: 42", "token_count: 42"),
    MaskingCase("keep", "UTC+9 10:00", "UTC+9 10:00"),
)
