// passes/compute_reorder_segment.h — the reorder engine's view of one IR region.
//
// Every op of the region except its terminator becomes one reorder::Statement: its pipe from
// the op table (structure issues on SIMT), reads = its operands, writes = its results; a
// load/tma_load also reads its tensor's memory and a store writes it; `for`/`if` are control
// statements summarised by the outside values and tensors their regions use; `grid_ids` and
// ops with unknown side effects are barriers. Shared by the reorder-events pass and the
// --report event charts, so both count the same events.
#pragma once

#include "passes/reorder/segment.h"

namespace tilec {

class Region;

// Statement i is the region's op i; names are "OPNAME#i".
reorder::Segment compute_reorder_segment(const Region& region);

}  // namespace tilec
