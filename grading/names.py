"""Names and text as the grader shows them: whatever bytes a folder name holds, and whatever a
submission printed, come out printable, on one line, and never as markup or a spreadsheet formula;
and two different names never look alike.

- escape_bytes(raw): an injective, printable form of a file name's bytes (two names never give
  the same text): UTF-8 text stays, a backslash is doubled, control and invisible format
  characters, characters that render as nothing (a no-break or other space than U+0020, U+3164
  HANGUL FILLER, a variation selector, ...) and bytes that are not UTF-8 become \\xNN or \\uXXXX.
- display_name(raw): escape_bytes, with a space at either end or after another space shown as
  \\x20, bounded in length; a long name is cut and keeps a short hash of its raw bytes, so that
  two names still never give the same text.
- class_labels(shown): the names of one class as every output shows them: no two look alike.
  Names that look alike (look_key: Unicode's NFKC, then TR39's skeleton of the confusables,
  invisible characters left out, spaces folded) are each followed by the code points that tell them
  apart: "José" typed in two ways is shown as "José [U+00E9]" and "José [U+0065 U+0301]"; a name
  that looks like no other stays as it is.
- feedback_file_names(students): each student's feedback file, no two alike even to a file system
  that ignores case or normalises Unicode, and none that is another student's literal name (a
  shown name with an escape in it is hashed).
- visible(text): for text that is not a name (findings, quotes of a log): control, invisible and
  blank characters escaped, the rest as it is.
- csv_field, md_field: one field of a CSV file (RFC 4180 quoting, OWASP's rule against formulas)
  and of a Markdown table.
- quote_output(text): a line a submission (or its compiler) printed, quoted as its own words.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import unicodedata
from typing import Iterable

MAX_NAME_BYTES = 120  # a shown name, in UTF-8 bytes, before the hash that keeps long names apart
_HASHED = re.compile(r"\.\.\.~[0-9a-f]{12}$")
# Characters that render as nothing, besides the invisible categories _escape_char escapes (Cf, Cn,
# ...) and the spaces (Zs): the Default_Ignorable_Code_Point ranges of other categories (a unit test
# checks them against unicode_lookalikes.txt), and U+2800 BRAILLE PATTERN BLANK.
_BLANK = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180D), (0x180F, 0x180F), (0x2800, 0x2800),
          (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF))
_SPACES = re.compile(r"^ +| +$|(?<= ) +")  # the spaces a reader cannot see or count


def renders_blank(ch: str) -> bool:
    """Whether CH shows as nothing, or as a space other than U+0020 (a no-break space, U+3164)."""
    o = ord(ch)
    return (unicodedata.category(ch) == "Zs" and ch != " ") or any(a <= o <= b for a, b in _BLANK)


def _escape_char(ch: str, backslash: bool) -> str:
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
        return "\\x%02x" % (o - 0xDC00)
    if ch == "\\":
        return "\\\\" if backslash else ch
    if o < 0x20 or o == 0x7F:
        return "\\x%02x" % o
    if o < 0x80:
        return ch
    if 0x80 <= o < 0xA0 or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs") or renders_blank(ch):
        # C1 controls, bidi overrides, zero-width and other invisible characters, blank ones
        return "\\u%04x" % o if o <= 0xFFFF else "\\U%08x" % o
    return ch


def show_spaces(text: str) -> str:
    """The spaces of TEXT that a reader cannot see or count (at either end, or after another space)
    as \\x20: "Bob " is shown "Bob\\x20"."""
    return _SPACES.sub(lambda m: "\\x20" * len(m.group()), text)


def escape_bytes(raw: bytes | str) -> str:
    """Injective and printable: bytes -> str."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "surrogateescape")
    return "".join(_escape_char(c, True) for c in text)


def short_hash(raw: bytes | str) -> str:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).hexdigest()[:12]


def display_name(raw: bytes | str) -> str:
    """escape_bytes and show_spaces, at most about MAX_NAME_BYTES long; a longer name (or one that
    looks like a cut one) is cut and ends in ...~HASH of its raw bytes."""
    s = show_spaces(escape_bytes(raw))
    if len(s.encode("utf-8")) <= MAX_NAME_BYTES and not _HASHED.search(s):
        return s
    cut = s
    while len(cut.encode("utf-8")) > MAX_NAME_BYTES - 20:
        cut = cut[:-1]
    cut = re.sub(r"\\[xuU][0-9a-f]*$|\\$", "", cut)  # never half an escape
    return cut + "...~" + short_hash(raw)


def visible(text: str | bytes) -> str:
    """Control, invisible and blank characters escaped (\\xNN, \\uXXXX); backslashes stay as they are."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    return "".join(_escape_char(c, False) for c in text)


def shorten(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def quote_output(text: str, limit: int = 300) -> str:
    """A line printed by the submission or by its compiler, quoted as theirs: escaped, cut, between
    guillemets that the text itself cannot close."""
    t = visible(text).replace("\u00ab", "\\u00ab").replace("\u00bb", "\\u00bb")
    return "\u00ab" + shorten(t, limit) + "\u00bb"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_field(value: object) -> str:
    """One CSV field: control characters escaped; a field that a spreadsheet would read as a
    formula (starting with = + - @ TAB CR; OWASP's CSV-injection guidance) gets a leading single
    quote (a lone "-", which no spreadsheet reads as a formula, stays); RFC 4180 quotes around a
    field holding a comma, a quote, or a leading or trailing space, with its quotes doubled."""
    s = visible(str(value))
    if s.startswith(_FORMULA_START) and s != "-":
        s = "'" + s
    if any(c in s for c in ',"\n\r') or s.startswith(" ") or s.endswith(" "):
        s = '"' + s.replace('"', '""') + '"'
    return s


def md_field(value: object) -> str:
    """One Markdown table cell: control characters escaped, then what would end the cell or start
    markup (a backslash, a pipe, an HTML tag, emphasis, code) escaped;
    "transpose_tiled<(int)32>" stays as it is."""
    s = visible(str(value))
    s = s.replace("\\", "\\\\").replace("|", "\\|")
    s = re.sub(r"<([A-Za-z/!?])", r"\\<\1", s)
    return s.replace("*", "\\*").replace("`", "\\`")


_UNSAFE_FILE = re.compile(r"[/\x00]")


def feedback_file_name(student: str) -> str:
    """The feedback file of a student shown as STUDENT (display_name's text): the name itself when it
    is a safe file name, else a cleaned, cut name with the hash of the name. A shown name with an
    escape in it (a backslash: display_name wrote "\\x07" for a control character, "\\\\" for a
    backslash) is hashed too: the file of a student whose name held a control character is never
    the literal name of another who typed a backslash ("Bob\\x07.md")."""
    s = student
    if (s and s not in (".", "..") and not _UNSAFE_FILE.search(s) and visible(s) == s and "\\" not in s
            and len(s.encode("utf-8", "surrogateescape")) <= 200 and not s.startswith(".")
            and not re.search(r"~[0-9a-f]{12}$", s)):  # (a name that looks like a hashed one is hashed too)
        return s + ".md"
    return _hashed_file_name(s)


def _hashed_file_name(student: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9 ._,+=@'-]", "_", student)[:80].lstrip(".") or "student"
    return clean + "~" + short_hash(student) + ".md"


def _file_key(name: str) -> str:
    """NAME as a file system that ignores case or normalises Unicode (macOS, Windows) sees it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def feedback_file_names(students: Iterable[str]) -> dict[str, str]:
    """{student (as shown): feedback file name}: feedback_file_name, no two the same, nor the same
    but for case or Unicode normalisation ("Ada.md" and "ada.md" are one file on macOS): the
    second of such names gets the hashed form."""
    files: dict[str, str] = {}
    used: set[str] = set()
    for student in students:
        fb = feedback_file_name(student)
        if _file_key(fb) in used:
            fb = _hashed_file_name(student)
        while _file_key(fb) in used:  # (two hashed names cut alike)
            fb = fb[:-3] + "+.md"
        used.add(_file_key(fb))
        files[student] = fb
    return files


# Names that look alike. ----------------------------------------------------------------------

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unicode_lookalikes.txt")
MARKED_CLUSTERS = 8  # a mark lists at most this many characters (each with its combining marks)


class DataError(Exception):
    """unicode_lookalikes.txt is missing or cannot be read."""


@functools.lru_cache(maxsize=None)
def tables() -> tuple[dict[str, str], frozenset[int]]:
    """({character: its prototype (TR39 confusables)}, Default_Ignorable_Code_Point) from DATA
    (scripts/make_unicode_lookalikes.py writes it from Unicode's data files)."""
    confusable: dict[str, str] = {}
    ignorable: set[int] = set()
    try:
        with open(DATA, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for line in lines:
            head, sep, tail = line.partition(":")
            if not line.strip() or line.startswith("#"):
                continue
            if not sep:
                raise ValueError("no ':' in %r" % line[:80])
            if head == "ignorable":
                for r in tail.split():
                    a, _, b = r.partition("-")
                    ignorable.update(range(int(a, 16), int(b or a, 16) + 1))
                continue
            prototype = "".join(chr(int(c, 16)) for c in head.split())
            confusable.update((chr(int(c, 16)), prototype) for c in tail.split())
    except (OSError, ValueError) as e:
        raise DataError("the grader's Unicode data %s cannot be read (%s): restore it from the course's repository" % (DATA, e))
    if len(confusable) < 1000 or not ignorable:
        raise DataError("the grader's Unicode data %s is cut short: restore it from the course's repository" % DATA)
    return confusable, frozenset(ignorable)


def skeleton(text: str) -> str:
    """Unicode TR39's skeleton: NFD, each character replaced by its prototype, NFD again."""
    confusable = tables()[0]
    nfd = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(confusable.get(c, c) for c in nfd))


def look_key(text: str) -> str:
    """What TEXT looks like: two texts a reader could take for each other have the same key. NFKC
    (full-width and other compatibility forms), the characters that render as nothing left out,
    every kind of space one space, none at either end, then TR39's skeleton (Cyrillic "А" and Latin
    "A"; "rn" and "m"; "0" and "O")."""
    ignorable = tables()[1]
    s = unicodedata.normalize("NFKC", text)
    s = "".join(" " if renders_blank(c) else c for c in s if ord(c) not in ignorable)
    return skeleton(" ".join(s.split()))


def _clusters(text: str) -> list[str]:
    """TEXT cut into characters, each with the combining marks that follow it."""
    out: list[str] = []
    for c in text:
        if out and unicodedata.category(c).startswith("M"):
            out[-1] += c
        else:
            out.append(c)
    return out


def _marked(name: str) -> str:
    """NAME followed by the code points of its characters that are not ASCII ("José [U+00E9]"), or
    in an ASCII name those that TR39 takes for others ("m [U+006D]", like "rn"); NAME alone when it
    has none."""
    confusable = tables()[0]
    clusters = _clusters(name)
    listed = [cl for cl in clusters if any(not " " <= c <= "~" for c in cl)]
    listed = listed or [cl for cl in clusters if cl in confusable]
    if not listed:
        return name
    points = " ".join("U+%04X" % ord(c) for cl in listed[:MARKED_CLUSTERS] for c in cl)
    return "%s [%s%s]" % (name, points, " ..." if len(listed) > MARKED_CLUSTERS else "")


def class_labels(shown: Iterable[str], fixed: Iterable[str] = ()) -> dict[str, str]:
    """{name: its label}: the names of one class (display_name's text, or a record's) as every output
    shows them, no two with the same look_key. Each is first made visible (visible, show_spaces);
    names that still look alike are each marked with the code points that tell them apart
    (_marked); names that still look alike after that (or like a marked one) end in [~HASH] of the
    name. FIXED names (the course's lesson names) are never changed; the others keep clear of them."""
    keep = set(fixed)
    names = list(dict.fromkeys(list(shown) + sorted(keep)))
    base = {n: n if n in keep else show_spaces(visible(n)) for n in names}
    level = dict.fromkeys(names, 0)
    keys: dict[str, str] = {}
    while True:
        label = {n: base[n] if level[n] == 0 else _marked(base[n]) if level[n] == 1 else "%s [~%s]" % (base[n], short_hash(n))
                 for n in names}
        alike: dict[str, list[str]] = {}
        for n in names:
            key = keys.get(label[n])
            if key is None:
                key = keys[label[n]] = look_key(label[n])
            alike.setdefault(key, []).append(n)
        bump = [n for group in alike.values() if len(group) > 1 for n in group if n not in keep and level[n] < 2]
        if not bump:
            return label
        for n in bump:
            level[n] += 1
