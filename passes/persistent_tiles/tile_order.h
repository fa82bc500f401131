// passes/persistent_tiles/tile_order.h — the persistent tile order: linear tile index → (m, n).
//
// One function, generic over its arithmetic, so the pass (which emits IR ops through an
// arithmetic that builds them) and the tests (which compute with plain integers) share it.
//
// The order (docs/passes/persistent_tiles.md):
//   - column-major (the default) sweeps m fastest, row-major sweeps n fastest; the other axis
//     is the slow axis;
//   - with a swizzle of S > 1, the slow axis is cut into panels of S tiles (the last panel is
//     narrower when S does not divide it); the tiles of a panel are numbered slow-position
//     fastest, one row of the panel (S tiles) per fast position, and panel p+1 starts after
//     every tile of panel p;
//   - S = 1 is the plain order (one slow position per panel).
// Clustering (reshaping M to cdiv(e0, C) cluster rows first) is applied by the caller.
#pragma once

#include <cstdint>
#include <utility>

namespace tilec::persistent {

struct TileOrder {
  int64_t swizzle = 1;        // panel width along the slow axis, ≥ 1
  bool column_major = true;   // true: m fastest
};

// Arithmetic needs: Value add/sub/mul/div/rem/min(Value, Value) and constant(int64_t).
// `tile` must lie in [0, rows * columns): for it the divisions below never divide by zero.
// Returns (m, n) with m < rows, n < columns.
template <typename Arithmetic, typename Value>
std::pair<Value, Value> decode_tile(Arithmetic& a, Value tile, Value rows, Value columns, const TileOrder& order) {
  Value fast_extent = order.column_major ? rows : columns;
  Value slow_extent = order.column_major ? columns : rows;
  Value fast, slow;
  if (order.swizzle == 1) {
    fast = a.rem(tile, fast_extent);
    slow = a.div(tile, fast_extent);
  } else {
    Value swizzle = a.constant(order.swizzle);
    Value panel_tiles = a.mul(swizzle, fast_extent);
    Value panel = a.div(tile, panel_tiles);
    Value offset = a.rem(tile, panel_tiles);
    Value panel_start = a.mul(panel, swizzle);
    Value width = a.min(swizzle, a.sub(slow_extent, panel_start));
    fast = a.div(offset, width);
    slow = a.add(panel_start, a.rem(offset, width));
  }
  return order.column_major ? std::pair<Value, Value>{fast, slow} : std::pair<Value, Value>{slow, fast};
}

// Plain integer arithmetic for decode_tile (tests, docs).
struct IntegerArithmetic {
  int64_t add(int64_t x, int64_t y) const { return x + y; }
  int64_t sub(int64_t x, int64_t y) const { return x - y; }
  int64_t mul(int64_t x, int64_t y) const { return x * y; }
  int64_t div(int64_t x, int64_t y) const { return x / y; }
  int64_t rem(int64_t x, int64_t y) const { return x % y; }
  int64_t min(int64_t x, int64_t y) const { return x < y ? x : y; }
  int64_t constant(int64_t value) const { return value; }
};

inline std::pair<int64_t, int64_t> decode_tile(int64_t tile, int64_t rows, int64_t columns, const TileOrder& order) {
  IntegerArithmetic arithmetic;
  return decode_tile(arithmetic, tile, rows, columns, order);
}

}  // namespace tilec::persistent
