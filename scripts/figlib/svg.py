"""A small SVG writer for the idea figures: boxes, lines, arrows and text, written deterministically
(fixed number formatting, no timestamps), so `draw_figures.py --check` can compare bytes."""
from __future__ import annotations

from xml.sax.saxutils import escape

# One palette for every figure (colour-blind safe: Okabe-Ito).
COLORS = {
    "ink": "#222222", "grid": "#bbbbbb", "paper": "#ffffff", "muted": "#f2f2f2",
    "blue": "#0072b2", "orange": "#e69f00", "green": "#009e73", "red": "#d55e00",
    "sky": "#56b4e9", "yellow": "#f0e442", "purple": "#cc79a7",
    "light_blue": "#cfe5f3", "light_orange": "#fbe7c2", "light_green": "#c7eadf",
    "light_red": "#f6d3bf", "light_purple": "#f1dbe8",
}
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"


def num(v: float) -> str:
    """A coordinate as text: at most two decimals, no trailing zeros ("12", "12.5")."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def color(name: str) -> str:
    return COLORS.get(name, name)


class Svg:
    """One drawing. Coordinates in px, origin top left. `title` is the accessible name (the README's
    alt text says the same in words)."""

    def __init__(self, width: float, height: float, title: str) -> None:
        self.width, self.height, self.title = width, height, title
        self.items: list[str] = []
        self._arrow = False

    def rect(self, x: float, y: float, w: float, h: float, fill: str = "paper", stroke: str = "ink",
             width: float = 1, rx: float = 0, dash: str | None = None) -> None:
        extra = f' rx="{num(rx)}"' if rx else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" '
                          f'fill="{color(fill)}" stroke="{color(stroke)}" stroke-width="{num(width)}"{extra}/>')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "ink", width: float = 1,
             arrow: bool = False, dash: str | None = None) -> None:
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self._arrow |= arrow
        self.items.append(f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
                          f'stroke="{color(stroke)}" stroke-width="{num(width)}"{extra}/>')

    def path(self, d: str, stroke: str = "ink", width: float = 1, fill: str = "none", arrow: bool = False) -> None:
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        self._arrow |= arrow
        self.items.append(f'<path d="{d}" fill="{color(fill)}" stroke="{color(stroke)}" stroke-width="{num(width)}"{extra}/>')

    def circle(self, cx: float, cy: float, r: float, fill: str = "paper", stroke: str = "ink", width: float = 1) -> None:
        self.items.append(f'<circle cx="{num(cx)}" cy="{num(cy)}" r="{num(r)}" fill="{color(fill)}" '
                          f'stroke="{color(stroke)}" stroke-width="{num(width)}"/>')

    def text(self, x: float, y: float, s: str, size: float = 12, anchor: str = "start", fill: str = "ink",
             bold: bool = False, mono: bool = False, italic: bool = False) -> None:
        style = ' font-weight="bold"' if bold else ""
        style += ' font-style="italic"' if italic else ""
        family = MONO if mono else FONT
        self.items.append(f'<text x="{num(x)}" y="{num(y)}" font-family="{family}" font-size="{num(size)}" '
                          f'text-anchor="{anchor}" fill="{color(fill)}"{style}>{escape(s)}</text>')

    def to_string(self) -> str:
        head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(self.width)}" height="{num(self.height)}" '
                f'viewBox="0 0 {num(self.width)} {num(self.height)}" role="img">',
                f"<title>{escape(self.title)}</title>"]
        if self._arrow:
            head.append('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
                        f'fill="{COLORS["ink"]}"/></marker></defs>')
        head.append(f'<rect width="100%" height="100%" fill="{COLORS["paper"]}"/>')
        return "\n".join(head + self.items + ["</svg>"]) + "\n"
