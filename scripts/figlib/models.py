"""The lessons' own models, for the figures.

Lessons 01 and 06 mark their sector and bank models with `// SITE MODEL BEGIN/END`; the site
compiles those lines (site/extract_model.py, site/wasm/models.cpp) to WebAssembly for its
explorers. Here the same two files are compiled natively into a shared library and called through
the same C functions the explorers call, so a figure draws what the lesson's model says.
`constant()` reads a `constexpr` of a lesson's main.cu, so tile shapes come from the code too.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
L01 = os.path.join(ROOT, "lessons", "01_naive_transpose", "main.cu")
L06 = os.path.join(ROOT, "lessons", "06_bank_conflicts", "main.cu")


class ModelError(Exception):
    pass


def source_text(rel: str) -> str:
    """The text of a file of the repository (path relative to it): the code a figure draws."""
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def constant(lesson_source: str, name: str) -> int:
    """The value of `constexpr int NAME = <integer>;` in a lesson's source (path relative to the
    repository): figures take tile sizes from the code they draw."""
    text = source_text(lesson_source)
    # One name or several in a declaration: `constexpr int kBM = 128, kBN = 128, kBK = 8;`.
    m = None
    for decl in re.finditer(r"constexpr\s+(?:int|unsigned|std::size_t|size_t|long|std::int64_t)\s+([^;]*);", text):
        m = re.search(r"(?:^|,)\s*" + re.escape(name) + r"\s*=\s*(\d+)\s*(?:,|$)", decl.group(1)) or m
        if m:
            break
    if not m:
        raise ModelError(f"{lesson_source}: no 'constexpr int {name} = <integer>;'")
    return int(m.group(1))


@functools.lru_cache(maxsize=None)
def _library() -> ctypes.CDLL:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not cxx:
        raise ModelError("no C++ compiler (g++) to build the lessons' models")
    work = tempfile.mkdtemp(prefix="course-figures-")
    extract = os.path.join(ROOT, "site", "extract_model.py")
    for inc, src in (("l01_model.inc", L01), ("l06_model.inc", L06)):
        subprocess.run([sys.executable, extract, src, os.path.join(work, inc)], check=True)
    lib = os.path.join(work, "models.so")
    # tile_layouts.cpp includes site/wasm/models.cpp and adds lesson 06's tile layouts, cell by cell.
    subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-I" + work,
                    "-I" + os.path.join(ROOT, "site", "wasm"),
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "tile_layouts.cpp"), "-o", lib],
                   check=True)
    dll = ctypes.CDLL(lib)
    shutil.rmtree(work)  # the library stays loaded; nothing of the build is left in /tmp
    for name in ("sector_lane_address", "sector_lane_first", "sector_lane_last", "sector_list_at",
                 "sector_distinct_bytes", "sector_efficiency", "bank_lane_address"):
        getattr(dll, name).restype = ctypes.c_double
    for name in ("sector_error", "bank_error", "bank_pattern_name", "bank_map_row", "sector_pattern_name"):
        getattr(dll, name).restype = ctypes.c_char_p
    return dll


@dataclass
class SectorAnswer:
    """Lesson 01's model for one warp access: each lane's byte address and the 32-byte sectors."""
    elem_bytes: int
    address: list[int]       # per lane
    first_sector: list[int]  # per lane: the sector of its first byte
    sectors: list[int]       # the distinct sectors, ascending
    efficiency: float        # bytes used / bytes moved


def _sector_answer(lib: ctypes.CDLL, elem_bytes: int) -> SectorAnswer:
    return SectorAnswer(elem_bytes, [int(lib.sector_lane_address(i)) for i in range(32)],
                        [int(lib.sector_lane_first(i)) for i in range(32)],
                        [int(lib.sector_list_at(i)) for i in range(lib.sector_list_size())],
                        lib.sector_efficiency())


def sectors_strided(elem_bytes: int, stride_elems: int, offset_bytes: int = 0) -> SectorAnswer:
    """Lane l reads elem_bytes at offset + l * stride * elem_bytes (lesson 01's sectors_touched())."""
    lib = _library()
    if lib.sector_set_strided(elem_bytes, stride_elems, offset_bytes) < 0:
        raise ModelError(lib.sector_error().decode())
    return _sector_answer(lib, elem_bytes)


def sectors_of_lanes(elem_bytes: int, addresses: list[int]) -> SectorAnswer:
    """Lesson 01's sectors_touched() on 32 lane byte addresses, whatever their pattern."""
    if len(addresses) != 32:
        raise ModelError(f"a warp has 32 lanes, not {len(addresses)} addresses")
    lib = _library()
    touched = lib.fig_sector_set_lanes(elem_bytes, (ctypes.c_ulonglong * 32)(*addresses))
    if touched != lib.sector_list_size():
        raise ModelError(f"sectors_touched() says {touched}, the sector list has {lib.sector_list_size()}")
    return _sector_answer(lib, elem_bytes)


@dataclass
class BankAnswer:
    """Lesson 06's model for one shared-memory access of a warp."""
    width: int
    address: list[int]  # per lane, bytes
    bank: list[int]     # per lane: the first bank it touches (-1: inactive)
    wavefront: list[int]  # per lane: in which wavefront it is served
    parts: int          # groups of lanes served one after the other (16-byte loads: 4 quarter-warps)
    wavefronts: int
    ideal: int


def _bank_answer(lib: ctypes.CDLL) -> BankAnswer:
    return BankAnswer(lib.bank_width(), [int(lib.bank_lane_address(i)) for i in range(32)],
                      [lib.bank_lane_bank(i) for i in range(32)], [lib.bank_lane_pass(i) for i in range(32)],
                      lib.bank_units(), lib.bank_wavefronts(), lib.bank_ideal())


def banks_strided(width: int, stride: int, offset_bytes: int = 0) -> BankAnswer:
    """Lane l at byte offset + l * stride * width: s[lane * stride] of width-byte elements."""
    lib = _library()
    if lib.bank_set_strided(width, stride, offset_bytes) < 0:
        raise ModelError(lib.bank_error().decode())
    return _bank_answer(lib)


TILE_LAYOUTS = {"unpadded": 0, "padded": 1, "swizzled": 2}  # lesson 06's 32 x 32 tiles


def tile_word(layout: str, r: int, c: int) -> int:
    """The 4-byte word that holds element (r, c) of lesson 06's 32 x 32 tile layout (its at())."""
    return _library().fig_tile_word(TILE_LAYOUTS[layout], r, c)


def bank_tile_column(layout: str, c: int) -> BankAnswer:
    """Lesson 06's model on a warp in which lane r reads element (r, c) of a 32 x 32 tile layout."""
    lib = _library()
    if lib.fig_bank_set_tile_column(TILE_LAYOUTS[layout], c) < 0:
        raise ModelError(lib.bank_error().decode())
    return _bank_answer(lib)


def bank_patterns() -> list[str]:
    """The names of lesson 06's probe patterns (its probe_table())."""
    lib = _library()
    return [lib.bank_pattern_name(i).decode() for i in range(lib.bank_pattern_count())]


def bank_pattern(name: str) -> BankAnswer:
    """Lesson 06's model on one of its own probe patterns, by name."""
    lib = _library()
    names = bank_patterns()
    if name not in names:
        raise ModelError(f"lesson 06 has no probe pattern '{name}' (it has: {', '.join(names)})")
    if lib.bank_set_pattern(names.index(name)) < 0:
        raise ModelError(lib.bank_error().decode())
    return _bank_answer(lib)
