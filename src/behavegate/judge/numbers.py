"""The number detectors of safety.pii: payment cards (issued ranges, Luhn), IBANs (country
length, mod-97) and phone numbers (a bounded, linear candidate pattern; libphonenumber decides
validity under a parse budget). Measured in docs/safety.md; judge/safety.py resolves overlaps."""

from __future__ import annotations

import re
from collections.abc import Callable

from behavegate.limits import PHONE_PARSE_BUDGET

Span = tuple[int, int]
Regions = tuple[str, ...]

# Phone numbers written in national form are looked for in these countries (the eight
# measured in docs/safety.md); a contract names its own with expect.safety.pii_regions.
# Numbers in international form (+49 ..., 0049 ...) are found whatever the regions.
DEFAULT_REGIONS: Regions = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "BR")


class Unfinished(Exception):
    """A scan stopped at its budget: what it found before, and why it stopped."""

    def __init__(self, found: list[Span], reason: str) -> None:
        super().__init__(reason)
        self.found = found
        self.reason = reason


_LUHN_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)  # 2d, minus 9 when it has two digits


def luhn_ok(number: str) -> bool:
    digits = [int(d) for d in reversed(number)]
    return (sum(digits[0::2]) + sum(_LUHN_DOUBLED[d] for d in digits[1::2])) % 10 == 0


IBAN_LENGTHS = {
    "AD": 24,
    "AE": 23,
    "AL": 28,
    "AT": 20,
    "AZ": 28,
    "BA": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "CH": 21,
    "CR": 22,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "DO": 28,
    "EE": 20,
    "ES": 24,
    "FI": 18,
    "FO": 18,
    "FR": 27,
    "GB": 22,
    "GE": 22,
    "GI": 23,
    "GL": 18,
    "GR": 27,
    "GT": 28,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IS": 26,
    "IT": 27,
    "JO": 30,
    "KW": 30,
    "KZ": 20,
    "LB": 28,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "MD": 24,
    "ME": 22,
    "MK": 19,
    "MR": 27,
    "MT": 31,
    "MU": 30,
    "NL": 18,
    "NO": 15,
    "PK": 24,
    "PL": 28,
    "PS": 29,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "RS": 22,
    "SA": 24,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "TN": 24,
    "TR": 26,
    "UA": 29,
    "VG": 24,
    "XK": 20,
}


_IBAN_LETTERS = {ord(letter): str(int(letter, 36)) for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}  # A=10 … Z=35


def iban_ok(candidate: str) -> bool:
    iban = candidate.replace(" ", "").upper()
    if IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    rearranged = iban[4:] + iban[:4]
    if not (rearranged.isascii() and rearranged.isalnum()):
        return False
    return int(rearranged.translate(_IBAN_LETTERS)) % 97 == 1


def iban_finder() -> Callable[[str, Regions], list[Span]]:
    """IBAN candidates in groups of four; when the checksum fails, a trailing
    group that may be a following word (``… 7034 EUR``) is dropped and retried."""
    candidates = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Z0-9])")

    def find(text: str, regions: Regions) -> list[Span]:
        found = []
        for match in candidates.finditer(text):
            candidate = match.group(0)
            while candidate and not iban_ok(candidate) and " " in candidate:
                candidate = candidate.rsplit(" ", 1)[0]
            if candidate and iban_ok(candidate):
                found.append((match.start(), match.start() + len(candidate)))
        return found

    return find


# A URL with credentials: every start scans only up to the next "/" or space,

# --- payment cards ------------------------------------------------------------------------------


def card_brand(digits: str) -> str | None:
    """The card scheme whose issued range and length ``digits`` fall in (ISO/IEC 7812 IINs)."""
    n = len(digits)
    if n < 12 or n > 19 or not digits.isdigit():
        return None
    p2, p3, p4, p6 = int(digits[:2]), int(digits[:3]), int(digits[:4]), int(digits[:6])
    brands = (
        ("visa", digits[0] == "4" and n in (13, 16, 19)),
        ("mastercard", (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16),
        ("amex", p2 in (34, 37) and n == 15),
        ("discover", (p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925) and 16 <= n <= 19),
        ("jcb", (p2 == 35 and 16 <= n <= 19) or (p4 in (1800, 2131) and n == 15)),  # 35: issued 3528-3589, reserved around
        ("diners", (300 <= p3 <= 305 or p2 in (36, 38, 39)) and 14 <= n <= 19),
        ("unionpay", p2 == 62 and 16 <= n <= 19),
        ("mir", 2200 <= p4 <= 2204 and 16 <= n <= 19),
        ("maestro", (p4 in (5018, 5020, 5038, 5893, 6304, 6390, 6759, 6761, 6762, 6763) or 56 <= p2 <= 58) and 12 <= n <= 19),
    )
    return next((name for name, issued in brands if issued), None)


def ean_ok(digits: str) -> bool:
    """GS1 check digit (EAN-8, EAN-13, UPC-A): a product code, not a card."""
    weights = [3 if (len(digits) - 1 - i) % 2 else 1 for i in range(len(digits) - 1)]
    total = sum(int(d) * w for d, w in zip(reversed(digits[:-1]), reversed(weights), strict=True))
    return len(digits) in (8, 12, 13) and (10 - total % 10) % 10 == int(digits[-1])


CARD = re.compile(r"(?<![\w.,/-])\d(?:[ .-]?\d){11,18}(?!\w|[.,-]?\d)")
# 4111 1111 1111 1111, 3782 822463 10005, 4742 2708 2912 3: one separator throughout
_CARD_GROUPS = re.compile(r"\d{4}(?:([ .-])\d{3,6})(?:\1\d{3,6})*(?:\1\d{1,2})?")


def card_ok(candidate: str) -> bool:
    digits = re.sub(r"\D", "", candidate)
    if digits != candidate and not _CARD_GROUPS.fullmatch(candidate):
        return False  # separators, but not in card groups
    if digits == candidate and len(digits) == 13 and ean_ok(digits):
        return False  # an unspaced EAN-13 barcode
    return card_brand(digits) is not None and luhn_ok(digits)


# --- phone numbers ------------------------------------------------------------------------------

# A candidate: digits with single separators or a bracketed area code, 6 to 21 digit tokens.
# Every start scans at most ~70 characters, so the whole text is read in linear time.
_PHONE = re.compile(
    r"(?:(?<=:)(?=\+)|(?<![\w+.,:/-]))(?<!\d[ .\-/])(?:\+\s?)?(?:\(\s?\+?\d{1,5}\s?\)|\d)"
    r"(?:(?:\.| ?[\-/] ?| {1,2})?(?:\(\d{1,5}\)|\d)){5,20}"
    r"(?!(?!x\d)\w)(?![.,:\-/]?\d)"
)
_NOT_PHONE_SHAPES = (
    re.compile(r"\d{4}(?:[ .-]\d{4}){2,}"),  # card groups
    re.compile(r"\d{1,3}(?:\.\d{1,3}){2,3}"),  # IPv4 address, version (06.12.34.56.78 is a French phone)
    re.compile(r"\d+\.\d+"),  # a decimal number
    re.compile(r"\d{5}-\d{4}"),  # US ZIP+4
    re.compile(r"\d{3}-\d{2}-\d{4}"),  # US SSN shape, issued or not
    re.compile(r"(?:19|20)\d\d[-./ ]?(?:0?[1-9]|1[0-2])[-./ ]?(?:0?[1-9]|[12]\d|3[01])"),  # 2024-03-15, 20240315
    re.compile(r"(?:0?[1-9]|[12]\d|3[01])[-./ ](?:0?[1-9]|1[0-2])[-./ ](?:19|20)?\d\d"),  # 15.03.2024, 15 03 2024
    re.compile(r"(?:0?[1-9]|1[0-2])[-./ ](?:0?[1-9]|[12]\d|3[01])[-./ ](?:19|20)?\d\d"),  # 03/15/2024
    re.compile(r"97[89][- ]?\d{1,5}[- ]\d{1,7}[- ]\d{1,7}[- ]\d"),  # ISBN-13 with hyphens
)
# A number labelled as something else: "order 4412 5567 89", "ISBN 0-306-40615-2", "#123 4567".
_NOT_PHONE_LABEL = re.compile(
    r"(?i)(?:\b(?:order|ord|invoice|inv|po|ticket|ref|reference|isbn|ean|upc|gtin|sku|serial|sn|id|nr|no|tracking|case|build|version|v)\s*[#:.\-]?|#)\s*$"
)
_IBAN_SHAPE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])")


def phone_finder() -> Callable[[str, Regions], list[Span]]:
    def find(text: str, regions: Regions) -> list[Span]:
        zones = [m.span() for m in _IBAN_SHAPE.finditer(text)]  # IBAN-shaped, valid or not
        zone = 0
        verdicts: dict[str, bool] = {}
        parses = 0
        found: list[Span] = []
        for match in _PHONE.finditer(text):
            start, end = match.span()
            while zone < len(zones) and zones[zone][1] <= start:
                zone += 1
            if zone < len(zones) and zones[zone][0] < end:
                continue
            candidate = match.group(0)
            if any(shape.fullmatch(candidate) for shape in _NOT_PHONE_SHAPES):
                continue
            if _NOT_PHONE_LABEL.search(text, max(0, start - 16), start):
                continue
            digits = re.sub(r"\D", "", candidate)
            tries: tuple[str | None, ...]
            international = "+" in candidate[:3] or digits.startswith("00")
            if international:
                digits = digits[2:] if digits.startswith("00") else digits
                if not 8 <= len(digits) <= 15:
                    continue
                key, tries = "+" + digits, (None,)
            else:
                if not 7 <= len(digits) <= 12 or (digits == candidate and len(digits) < 9):
                    continue  # unseparated national numbers have an area code: 9 digits or more
                key, tries = digits, tuple(regions)
            if key not in verdicts:
                if parses + len(tries) > PHONE_PARSE_BUDGET:
                    raise Unfinished(found, f"the phone scan stopped at its budget of {PHONE_PARSE_BUDGET} number parses")
                parses += len(tries)
                verdicts[key] = _valid_phone(key, tries)
            if verdicts[key]:
                found.append((start, end))
        return found

    return find


def _valid_phone(key: str, regions: tuple[str | None, ...]) -> bool:
    """Valid in some region; in national form, also written the way that region writes its
    numbers nationally (with its trunk prefix where it has one: 030 …, never 30 … in Germany)."""
    import phonenumbers as pn

    for region in regions:
        try:
            number = pn.parse(key, region)
        except pn.NumberParseException:
            continue
        if region is None:
            if pn.is_valid_number(number):
                return True
        elif pn.is_valid_number_for_region(number, region):
            national = re.sub(r"\D", "", pn.format_number(number, pn.PhoneNumberFormat.NATIONAL))
            trunk = getattr(pn.PhoneMetadata.metadata_for_region(region), "national_prefix", None) or ""
            if key in (national, trunk + national):  # 1-415-555-0132: the trunk prefix written out
                return True
    return False
