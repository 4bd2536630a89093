"""Names and text as the grader shows them: whatever bytes a folder name holds, and whatever a
submission printed, come out printable, on one line, and never as markup or a spreadsheet formula.

- escape_bytes(raw): an injective, printable form of a file name's bytes (two names never give
  the same text): UTF-8 text stays, a backslash is doubled, control and invisible format
  characters and bytes that are not UTF-8 become \\xNN or \\uXXXX.
- display_name(raw): escape_bytes bounded in length; a long name is cut and keeps a short hash of
  its raw bytes, so that two names still never give the same text.
- visible(text): for text that is not a name (findings, quotes of a log): control characters
  escaped, the rest as it is.
- csv_field, md_field: one field of a CSV file (RFC 4180 quoting, OWASP's rule against formulas)
  and of a Markdown table.
- quote_output(text): a line a submission (or its compiler) printed, quoted as its own words.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_NAME_BYTES = 120  # a shown name, in UTF-8 bytes, before the hash that keeps long names apart
_HASHED = re.compile(r"\.\.\.~[0-9a-f]{12}$")


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
    if 0x80 <= o < 0xA0 or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"):
        # C1 controls, bidi overrides, zero-width and other invisible characters
        return "\\u%04x" % o if o <= 0xFFFF else "\\U%08x" % o
    return ch


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
    """escape_bytes, at most about MAX_NAME_BYTES long; a longer name (or one that looks like a cut
    one) is cut and ends in ...~HASH of its raw bytes."""
    s = escape_bytes(raw)
    if len(s.encode("utf-8")) <= MAX_NAME_BYTES and not _HASHED.search(s):
        return s
    cut = s
    while len(cut.encode("utf-8")) > MAX_NAME_BYTES - 20:
        cut = cut[:-1]
    cut = re.sub(r"\\[xuU][0-9a-f]*$|\\$", "", cut)  # never half an escape
    return cut + "...~" + short_hash(raw)


def visible(text: str | bytes) -> str:
    """Control and invisible characters escaped (\\xNN, \\uXXXX); backslashes stay as they are."""
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
    is a safe file name, else a cleaned, cut name with the hash of the name."""
    s = student
    if (s and s not in (".", "..") and not _UNSAFE_FILE.search(s) and visible(s) == s
            and len(s.encode("utf-8", "surrogateescape")) <= 200 and not s.startswith(".")
            and not re.search(r"~[0-9a-f]{12}$", s)):  # (a name that looks like a hashed one is hashed too)
        return s + ".md"
    clean = re.sub(r"[^A-Za-z0-9 ._,+=@'-]", "_", s)[:80].lstrip(".") or "student"
    return clean + "~" + short_hash(s) + ".md"
