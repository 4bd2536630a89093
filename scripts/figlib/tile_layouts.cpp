// For the figures only: the explorers' C ABI (site/wasm/models.cpp, included whole, so every
// function the figures already call stays as it is) plus functions the explorers do not need:
// two on lesson 06's own tile layouts (its UnpaddedTile, PaddedTile and SwizzledTile, 32 x 32),
// the word that holds element (r, c) and the bank model on a warp reading one column; and lesson
// 01's sector model on any 32 lane addresses.
#include "models.cpp"

namespace {
int tile_word(int layout, int r, int c) {
    switch (layout) {
        case 0: return l06::UnpaddedTile<32>::at(r, c);
        case 1: return l06::PaddedTile<32>::at(r, c);
        case 2: return l06::SwizzledTile<32>::at(r, c);
        default: return -1;
    }
}
}  // namespace

/// The 4-byte word of element (r, c) of a 32 x 32 tile: layout 0 unpadded, 1 padded, 2 swizzled.
EXPORT int fig_tile_word(int layout, int r, int c) { return tile_word(layout, r, c); }

/// The model on a warp in which lane r reads element (r, c): returns the wavefronts.
EXPORT int fig_bank_set_tile_column(int layout, int c) {
    bank.width = 4;
    bank.addr.clear();
    for (int r = 0; r < kLanes; ++r) bank.addr.push_back(static_cast<std::int64_t>(tile_word(layout, r, c)) * 4);
    return bank_compute();
}

/// Lesson 01's sector model on any 32 lane addresses (bytes): for warps that are not one stride,
/// such as lesson 02's transpose_tiled_source_mapping (16 lanes on one column, 16 on the next).
/// Returns the sectors touched.
EXPORT int fig_sector_set_lanes(int elem_bytes, const unsigned long long* addresses) {
    sector.error.clear();
    sector.elem_bytes = elem_bytes;
    sector.addr.assign(addresses, addresses + kLanes);
    return sector_compute();
}
