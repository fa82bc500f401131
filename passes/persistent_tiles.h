// passes/persistent_tiles.h — turns a persistent grid into one CTA per worker walking the tiles.
#pragma once

namespace tilec {
class Module;
struct PassContext;

bool persistent_tiles(Module& module, PassContext& ctx);
}  // namespace tilec
