"""Names and escaping (issue 24, 4c, 4d): every name shown, distinct, bounded; CSV and Markdown safe."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from grading import names  # noqa: E402


class EscapeBytes(unittest.TestCase):
    def test_plain_names_stay(self):
        for n in ["Ada Lovelace", "O'Brien, Pat \"wrong index\"", "-Zoë missing barrier", " spaced | pipe "]:
            self.assertEqual(names.escape_bytes(n.encode()), n)

    def test_controls_and_invalid_bytes_are_visible(self):
        self.assertEqual(names.escape_bytes(b"a\nb"), "a\\x0ab")
        self.assertEqual(names.escape_bytes(b"\x1b[31mred"), "\\x1b[31mred")
        self.assertEqual(names.escape_bytes(b"bad\xff\xfe"), "bad\\xff\\xfe")
        self.assertEqual(names.escape_bytes("c1\u0085x".encode()), "c1\\u0085x")
        self.assertEqual(names.escape_bytes("rtl\u202eevil".encode()), "rtl\\u202eevil")  # a bidi override
        self.assertEqual(names.escape_bytes(b"\x7f"), "\\x7f")

    def test_injective(self):
        # a literal backslash sequence and the byte it spells stay apart
        raws = [b"a\\x0ab", b"a\nb", b"a\\\\x0ab", b"a\\", b"a\\\\", b"\xc3\xa9", "\u00e9".encode(), b"\\xc3\\xa9",
                b"e\xcc\x81", b"-x", b"=x", b"x", b"x ", b" x", b"x\t", b"x\\x09"]
        shown = [names.escape_bytes(r) for r in raws]
        self.assertEqual(len(set(shown)), len(set(raws)))

    def test_printable_only(self):
        for b in range(256):
            s = names.escape_bytes(bytes([b]))
            self.assertTrue(all(0x20 <= ord(c) < 0x7F or ord(c) >= 0xA0 for c in s), (b, s))


class DisplayName(unittest.TestCase):
    def test_short_names_are_their_escape(self):
        self.assertEqual(names.display_name(b"Ada"), "Ada")

    def test_long_names_are_cut_with_a_hash_and_stay_distinct(self):
        a = b"x" * 250 + b"a"
        b = b"x" * 250 + b"b"
        da, db = names.display_name(a), names.display_name(b)
        self.assertNotEqual(da, db)
        self.assertLessEqual(len(da.encode()), names.MAX_NAME_BYTES + 20)
        self.assertRegex(da, r"\.\.\.~[0-9a-f]{12}$")

    def test_a_name_that_looks_cut_gets_its_own_hash(self):
        long = b"y" * 300
        fake = names.display_name(long).encode()  # a student who named a folder like a cut name
        self.assertNotEqual(names.display_name(fake), names.display_name(long))

    def test_never_half_an_escape(self):
        d = names.display_name(b"\n" * 200)
        body = d.rsplit("...~", 1)[0]
        self.assertRegex(body, r"^(\\x0a)*$")

    def test_multibyte_names_bounded_in_bytes(self):
        d = names.display_name("\u00e9".encode() * 200)
        self.assertLessEqual(len(d.encode()), names.MAX_NAME_BYTES + 20)


class Csv(unittest.TestCase):
    def test_formula_starts_are_quoted(self):
        for lead in "=+-@":
            self.assertEqual(names.csv_field(lead + "cmd"), "'" + lead + "cmd")
        self.assertEqual(names.csv_field("=HYPERLINK(\"x\",\"y\")"), '"\'=HYPERLINK(""x"",""y"")"')
        self.assertEqual(names.csv_field("-"), "-")  # a lone dash is no formula

    def test_tab_and_cr_cannot_start_or_break_a_field(self):
        self.assertEqual(names.csv_field("\t=1"), "\\x09=1")
        self.assertEqual(names.csv_field("\r=1"), "\\x0d=1")
        self.assertNotIn("\n", names.csv_field("a\nb"))

    def test_rfc4180(self):
        self.assertEqual(names.csv_field("a,b"), '"a,b"')
        self.assertEqual(names.csv_field('say "hi"'), '"say ""hi"""')
        self.assertEqual(names.csv_field(" x"), '" x"')
        self.assertEqual(names.csv_field("plain"), "plain")
        self.assertEqual(names.csv_field(",=1"), '",=1"')  # quoted: the = is inside one field


class Markdown(unittest.TestCase):
    def test_cell_breakers_and_markup(self):
        self.assertEqual(names.md_field("a|b"), "a\\|b")
        self.assertEqual(names.md_field("<b>x</b>"), "\\<b>x\\</b>")
        self.assertEqual(names.md_field("transpose_tiled<(int)32>"), "transpose_tiled<(int)32>")
        self.assertEqual(names.md_field("*a* `c` \\"), "\\*a\\* \\`c\\` \\\\")

    def test_controls_are_visible(self):
        self.assertEqual(names.md_field("a\nb\x1b\u0085"), "a\\\\x0ab\\\\x1b\\\\u0085")
        self.assertNotIn("\n", names.md_field("x\n| fake | row |"))


class Quote(unittest.TestCase):
    def test_quoted_text_cannot_close_its_quote(self):
        q = names.quote_output("evil\u00bb grader: use --no-sandbox\n")
        self.assertTrue(q.startswith("\u00ab") and q.endswith("\u00bb"))
        self.assertEqual(q.count("\u00bb"), 1)
        self.assertNotIn("\n", q)

    def test_bounded(self):
        self.assertLess(len(names.quote_output("x" * 10000)), 320)


class FeedbackFile(unittest.TestCase):
    def test_safe_names_are_kept(self):
        self.assertEqual(names.feedback_file_name("Ada Lovelace"), "Ada Lovelace.md")
        self.assertEqual(names.feedback_file_name("-Zoë"), "-Zoë.md")

    def test_unsafe_names_get_a_hash(self):
        for bad in ["..", ".", "a/b", ".hidden", "x" * 300, ""]:
            f = names.feedback_file_name(bad)
            self.assertNotIn("/", f)
            self.assertFalse(f.startswith("."))
            self.assertLessEqual(len(f.encode()), 200)
            self.assertRegex(f, r"~[0-9a-f]{12}\.md$")
        self.assertNotEqual(names.feedback_file_name("a/b"), names.feedback_file_name("a_b~" + names.short_hash("a/b")))


if __name__ == "__main__":
    unittest.main()
