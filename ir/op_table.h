// ir/op_table.h — the one table of operations (STYLE.md rule 8).
//
// Every op kind has one row: its text name, operand and result arity, region count, traits,
// the hardware pipe it issues on, and a one-line description. Printer, parser, verifier,
// passes and backends all read this table; adding an op starts here (docs/adding_an_op.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tilec {

// X-macro: kind, text name, min operands, max operands (-1 = any), results (-1 = any),
// regions, traits, pipe, tensor operand (the global tensor a kReadsMemory or kWritesMemory op
// accesses; -1 = none), description.
#define TILEC_OPS(X)                                                                             \
  X(kernel, "kernel", 0, 0, 0, 1, kIsolated, none, -1, "a kernel: params are its region's arguments") \
  X(return_, "return", 0, 0, 0, 0, kTerminator, none, -1, "ends a kernel body")                       \
  X(yield, "yield", 0, -1, 0, 0, kTerminator, none, -1, "ends a for/if region, passing its values")   \
  X(for_, "for", 3, -1, -1, 1, 0, none, -1,                                                          \
    "loop lb..ub by step; operands after the bounds seed the carried values")                     \
  X(if_, "if", 1, 1, -1, 2, 0, none, -1, "runs the then or else region; results are yielded")         \
  X(grid_ids, "grid_ids", 1, -1, -1, 0, kPure, SIMT, -1,                                             \
    "this CTA's tile coordinates within a grid of the given extents")                             \
  X(sm_count, "sm_count", 0, 0, 1, 0, kPure, SIMT, -1,                                             \
    "the launching device's SM count, or the `workers` attribute when given (persistent-tiles)")  \
  X(assert_, "assert", 1, 1, 0, 0, 0, SIMT, -1,                                                    \
    "a launch precondition: the launch fails unless this i1 scalar holds (`text`: it as written)") \
  X(constant, "constant", 0, 0, 1, 0, kPure, SIMT, -1, "a scalar constant (attribute value)")        \
  X(dim, "dim", 1, 1, 1, 0, kPure, SIMT, -1, "extent of a tensor along `axis`")                      \
  X(add, "add", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise a + b (broadcasting)")      \
  X(sub, "sub", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise a - b (broadcasting)")      \
  X(mul, "mul", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise a * b (broadcasting)")      \
  X(div, "div", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise a / b (broadcasting)")      \
  X(rem, "rem", 2, 2, 1, 0, kPure | kElementwise | kIntegersOnly, SIMT, -1, "integer remainder a % b")               \
  X(cdiv, "cdiv", 2, 2, 1, 0, kPure | kElementwise | kIntegersOnly, SIMT, -1, "integer ceiling division")            \
  X(max, "max", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise maximum")                   \
  X(min, "min", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise minimum")                   \
  X(cmp, "cmp", 2, 2, 1, 0, kPure | kElementwise, SIMT, -1, "comparison `predicate` giving i1")      \
  X(select, "select", 3, 3, 1, 0, kPure | kElementwise, SIMT, -1, "c ? a : b elementwise")           \
  X(neg, "neg", 1, 1, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise negation")                  \
  X(exp, "exp", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise e^x")                        \
  X(fma, "fma", 3, 3, 1, 0, kPure | kElementwise | kFloatsOnly, SIMT, -1, "a·b + c rounded once, elementwise") \
  X(exp2, "exp2", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise 2^x")                      \
  X(sqrt, "sqrt", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise square root")              \
  X(rsqrt, "rsqrt", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise 1/sqrt(x)")              \
  X(relu, "relu", 1, 1, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise max(x, 0)")               \
  X(tanh, "tanh", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise hyperbolic tangent")        \
  X(erf, "erf", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise error function")             \
  X(log, "log", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise natural logarithm")          \
  X(log2, "log2", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise base-2 logarithm")         \
  X(log1p, "log1p", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise log(1 + x), exact near 0") \
  X(expm1, "expm1", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise e^x - 1, exact near 0")   \
  X(tan, "tan", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise tangent (radians)")           \
  X(atan, "atan", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise arc tangent (radians)")     \
  X(asin, "asin", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise arc sine (radians)")       \
  X(acos, "acos", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise arc cosine (radians)")     \
  X(sinh, "sinh", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise hyperbolic sine")          \
  X(cosh, "cosh", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise hyperbolic cosine")        \
  X(atan2, "atan2", 2, 2, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise angle of (x, y)") \
  X(sin, "sin", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise sine (radians)")             \
  X(cos, "cos", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise cosine (radians)")           \
  X(sigmoid, "sigmoid", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise 1 / (1 + e^-x)")     \
  X(pow, "pow", 2, 2, 1, 0, kPure | kElementwise | kFloatsOnly, SFU, -1, "elementwise a^b (broadcasting)")         \
  X(abs, "abs", 1, 1, 1, 0, kPure | kElementwise, SIMT, -1, "elementwise absolute value")            \
  X(floor, "floor", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SIMT, -1, "elementwise round down")  \
  X(ceil, "ceil", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SIMT, -1, "elementwise round up")     \
  X(round, "round", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SIMT, -1,                        \
    "elementwise round to the nearest integer, halves to even")                                   \
  X(trunc, "trunc", 1, 1, 1, 0, kPure | kElementwise | kFloatsOnly, SIMT, -1, "elementwise round toward zero") \
  X(and_, "and", 2, 2, 1, 0, kPure | kElementwise | kBitwise, SIMT, -1,                             \
    "elementwise a & b: bitwise on integers, logical and of i1 masks")                            \
  X(or_, "or", 2, 2, 1, 0, kPure | kElementwise | kBitwise, SIMT, -1,                               \
    "elementwise a | b: bitwise on integers, logical or of i1 masks")                             \
  X(xor_, "xor", 2, 2, 1, 0, kPure | kElementwise | kBitwise, SIMT, -1,                             \
    "elementwise a ^ b: bitwise on integers, a != b on i1 masks")                                 \
  X(not_, "not", 1, 1, 1, 0, kPure | kElementwise | kBitwise, SIMT, -1,                             \
    "elementwise ~x: bitwise on integers, logical not of an i1 mask")                             \
  X(shl, "shl", 2, 2, 1, 0, kPure | kElementwise | kIntegersOnly, SIMT, -1,                         \
    "elementwise a << b: 0 when b is negative or at least 64 (then wrapped to the type)")         \
  X(shr, "shr", 2, 2, 1, 0, kPure | kElementwise | kIntegersOnly, SIMT, -1,                         \
    "elementwise a >> b, arithmetic (the sign fills; unsigned values have none): b negative or at least 64 gives 0 or -1") \
  X(randint, "randint", 2, 2, 1, 0, kPure | kElementwise | kIntegersOnly, SIMT, -1,                 \
    "elementwise u32 of Philox4x32-10: key the seed a, counter the offset b (64 bits each)")     \
  X(cast, "cast", 1, 1, 1, 0, kPure | kElementwise, SIMT, -1,                                        \
    "element type conversion (round to nearest even)")                                           \
  X(bitcast, "bitcast", 1, 1, 1, 0, kPure | kElementwise, SIMT, -1,                                  \
    "each element's bits read as another element type of the same width (no conversion)")          \
  X(zeros, "zeros", 0, 0, 1, 0, kPure, SIMT, -1, "a tile of zeros")                                  \
  X(full, "full", 1, 1, 1, 0, kPure, SIMT, -1, "a tile filled with a scalar")                        \
  X(iota, "iota", 0, 0, 1, 0, kPure, SIMT, -1, "a tile of each element's index along `axis`")        \
  X(transpose, "transpose", 1, 1, 1, 0, kPure, SIMT, -1, "a tile with its dimensions reordered by `dims` (default: a 2-D swap)") \
  X(item, "item", 1, 1, 1, 0, kPure, SIMT, -1,                                                      \
    "the one element of a tile of one element, as a scalar (PyTorch's x.item())")                \
  X(reshape, "reshape", 1, 1, 1, 0, kPure, SIMT, -1,                                                \
    "the tile's elements in row-major order under another shape of as many (the front end inserts it to broadcast tiles of different rank)") \
  X(slice, "slice", 1, 1, 1, 0, kPure, SIMT, -1,                                                    \
    "the elements at `starts` + i·`steps` along each dimension, as many as the result has (x[a:b:s])") \
  X(concat, "concat", 2, -1, 1, 0, kPure, SIMT, -1,                                                \
    "the tiles one after another along `axis`, equal in every other dimension (torch.cat)")       \
  X(interleave, "interleave", 2, -1, 1, 0, kPure, SIMT, -1,                                        \
    "the tiles' elements in turn along `axis` (element i from tile i % n at i / n), of one shape (tl.interleave)") \
  X(scan_sum, "scan_sum", 1, 1, 1, 0, kPure, SIMT, -1, "inclusive prefix sum along `axis` (cumsum)")   \
  X(scan_prod, "scan_prod", 1, 1, 1, 0, kPure, SIMT, -1, "inclusive prefix product along `axis` (cumprod)") \
  X(scan_max, "scan_max", 1, 1, 1, 0, kPure, SIMT, -1, "running maximum along `axis` (cummax)")       \
  X(scan_min, "scan_min", 1, 1, 1, 0, kPure, SIMT, -1, "running minimum along `axis` (cummin)")       \
  X(sort, "sort", 1, 1, 1, 0, kPure, SIMT, -1,                                                      \
    "every line along `axis` in ascending order (descending with `descending` = 1): NaNs after every number, -0.0 before +0.0") \
  X(reduce_sum, "reduce_sum", 1, 1, 1, 0, kPure | kReduction, SIMT, -1,                              \
    "sum along `axis`, keeping it with extent 1")                                                \
  X(reduce_max, "reduce_max", 1, 1, 1, 0, kPure | kReduction, SIMT, -1,                              \
    "maximum along `axis`, keeping it with extent 1")                                            \
  X(reduce_min, "reduce_min", 1, 1, 1, 0, kPure | kReduction, SIMT, -1,                              \
    "minimum along `axis`, keeping it with extent 1")                                            \
  X(load, "load", 1, -1, 1, 0, kReadsMemory, LSU, 0,                                                \
    "load the tile at tile coordinates of a tensor into registers (zero outside)")               \
  X(tma_load, "tma_load", 1, -1, 1, 0, kReadsMemory | kAsync, TMA, 0,                               \
    "bulk tensor copy of a tile into shared memory (zero outside)")                              \
  X(store, "store", 2, -1, 0, 0, kWritesMemory, LSU, 0,                                             \
    "store a tile at tile coordinates of a tensor (elements outside are dropped)")               \
  X(mma, "mma", 3, 3, 1, 0, kPure, MMA, -1, "acc + a·b on the tensor cores")                          \
  /* materialize-schedule: Pipe_ and Mutex_ values (docs/ir.md, "Pipes and mutexes") */         \
  X(pipe_create, "pipe_create", 0, 0, 1, 0, kSync, none, -1,                                             \
    "a Pipe_: a ring of `depth` slots between a producer and its consumers")                     \
  X(pipe_producer_acquire, "pipe_producer_acquire", 1, 1, 0, 0, kSync, none, -1,                         \
    "the producer waits until the pipe's next slot is free")                                     \
  X(pipe_producer_commit, "pipe_producer_commit", 2, 2, 0, 0, kSync, none, -1,                           \
    "the producer puts its value in the acquired slot and publishes it")                         \
  X(pipe_consumer_wait, "pipe_consumer_wait", 1, 1, 1, 0, kSync, none, -1,                               \
    "the consumer waits for the oldest published slot and gives its value")                      \
  X(pipe_consumer_release, "pipe_consumer_release", 1, 1, 0, 0, kSync, none, -1,                         \
    "the consumer frees the oldest slot it waited for")                                          \
  X(mutex_create, "mutex_create", 0, 0, 1, 0, kSync, none, -1, "a Mutex_: exclusive access, no slack")   \
  X(mutex_lock, "mutex_lock", 1, 1, 0, 0, kSync, none, -1, "enters the mutex's protected work")          \
  X(mutex_unlock, "mutex_unlock", 1, 1, 0, 0, kSync, none, -1, "leaves the mutex's protected work")      \
  /* insert-sync: mbarriers, stage buffers, events, named barriers (docs/ir.md, "Synchronization") */ \
  X(mbarrier_create, "mbarrier_create", 0, 0, 1, 0, kSync, none, -1,                                     \
    "`count` mbarriers in shared memory, each expecting `arrivals` arrivals per phase")          \
  X(mbarrier_arrive, "mbarrier_arrive", 2, 2, 0, 0, kSync, none, -1,                                     \
    "one arrival on barrier [slot]; with `expect_tx` it also expects that many bytes")           \
  X(mbarrier_wait, "mbarrier_wait", 3, 3, 0, 0, kSync, none, -1,                                         \
    "waits until the phase of barrier [slot] with the given parity has completed")               \
  X(stage_buffer, "stage_buffer", 2, 2, 1, 0, kSync, none, -1,                                           \
    "a pipe's storage: `depth` slots in shared memory guarded by its full and empty barriers")   \
  X(stage_write, "stage_write", 3, 3, 0, 0, kSync, none, -1, "writes a value into slot [slot] of a stage buffer") \
  X(stage_read, "stage_read", 2, 2, 1, 0, kSync, none, -1, "reads slot [slot] of a stage buffer")        \
  X(tma_load_async, "tma_load_async", 3, -1, 0, 0, kReadsMemory | kAsync | kSync, TMA, 2,                   \
    "bulk tensor copy into slot [slot] of a stage buffer, completing bytes on its full barrier")  \
  X(stage_advance, "stage_advance", 2, 2, 2, 0, kPure | kSync, SIMT, -1,                                     \
    "the next (index, phase) of a pipeline state: index + 1 wrapping at `count`, phase flipped on wrap") \
  X(event_set, "event_set", 0, 0, 0, 0, kSync, none, -1, "signals cross-pipe event `event` of pipe pair `from`->`to`") \
  X(event_wait, "event_wait", 0, 0, 0, 0, kSync, none, -1, "waits for cross-pipe event `event` of pipe pair `from`->`to`") \
  X(named_barrier_sync, "named_barrier_sync", 0, 0, 0, 0, kSync, none, -1,                               \
    "bar.sync `id`, `threads`: arrive and wait until `threads` threads have arrived")            \
  X(named_barrier_arrive, "named_barrier_arrive", 0, 0, 0, 0, kSync, none, -1,                           \
    "bar.arrive `id`, `threads`: arrive without waiting")                                        \
  /* defer-mma-releases: asynchronous MMAs (an `mma` with `async`) */                          \
  X(mma_wait, "mma_wait", 0, 0, 0, 0, kSync, none, -1,                                                   \
    "waits until at most `pending` of this agent's async mmas are in flight")                    \
  /* warp-specialize: agents of one CTA running concurrently */                                  \
  X(warp_specialize, "warp_specialize", 0, 0, 0, 1, 0, none, -1,                                     \
    "runs the `agent` ops of its region concurrently and continues when all have finished")     \
  X(agent, "agent", 0, 0, 0, 1, 0, none, -1, "one agent (warps of one role) of a warp_specialize")

enum class OpKind : uint16_t {
#define TILEC_OP_ENUM(kind, ...) kind,
  TILEC_OPS(TILEC_OP_ENUM)
#undef TILEC_OP_ENUM
};

// How a store combines each element with what the tensor holds: `none` overwrites it; `add`
// (attribute `accumulate`, `store T[i] += tile`), `max` and `min` (`accumulate = "max"`,
// `store T[i] max= tile`) and the bitwise `and_`, `or_` and `xor_` of integers (`accumulate =
// "and"`, `store T[i] |= tile`) combine atomically, so tiles (CTAs) may combine into the same
// elements in any order.
enum class StoreCombine : uint8_t { none, add, max, min, and_, or_, xor_ };
// "+=", "max=", "min=", "&=", "|=", "^=" (and "=" for none): how the source spells it, for messages.
const char* store_combine_spelling(StoreCombine combine);
// The string of a store's `accumulate` attribute: "max", "min", "and", "or", "xor"; nullptr for
// `add` (a unit attribute) and `none` (no attribute).
const char* store_combine_attribute(StoreCombine combine);
// The combine whose attribute string is `name`, or std::nullopt.
std::optional<StoreCombine> parse_store_combine_attribute(std::string_view name);
// What it does to each element, for messages: "adds", "takes the maximum", "ors the bits", ...
const char* store_combine_verb(StoreCombine combine);
// `and_`, `or_`, `xor_`: combines integers' bits.
bool is_bitwise(StoreCombine combine);

// Hardware pipes an op issues on (DESIGN.md §4.2); `none` for structure.
enum class Pipe : uint8_t { none, TMA, MMA, SIMT, LSU, SFU };
std::string_view to_string(Pipe pipe);
std::optional<Pipe> parse_pipe(std::string_view text);

enum OpTrait : uint32_t {
  kPure = 1u << 0,          // no side effects; may be removed when unused, moved freely
  kAsync = 1u << 1,         // completes asynchronously (TMA, async copies)
  kTerminator = 1u << 2,    // ends a region
  kElementwise = 1u << 3,   // applies per element with broadcasting
  kReduction = 1u << 4,     // reduces along an axis
  kReadsMemory = 1u << 5,   // reads global memory
  kWritesMemory = 1u << 6,  // writes global memory
  kIsolated = 1u << 7,      // its region sees no value from outside
  kFloatsOnly = 1u << 8,    // elementwise on floats only (the verifier, interpreter and backends refuse integers)
  kIntegersOnly = 1u << 9,  // elementwise on integers only
  kBitwise = 1u << 10,      // elementwise on integers (bitwise) and on i1 masks (logical), not floats
  kSync = 1u << 11,         // synchronization: pipes, mutexes, mbarriers, stage buffers (and the
                            // TMA copies into them), events, named barriers; the interpreter's
                            // sync executor runs them and insert-sync orders around them
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int8_t min_operands;
  int8_t max_operands;  // -1: any number
  int8_t results;       // -1: any number
  uint8_t regions;
  uint32_t traits;
  Pipe pipe;
  int8_t tensor_operand;  // the operand a memory op reads or writes; -1: none (tensor_access)
  std::string_view description;

  bool has(OpTrait trait) const { return (traits & trait) != 0; }

  // The operand-kind traits (kFloatsOnly, kIntegersOnly, kBitwise), read once for the verifier,
  // the interpreter and the CUDA backend: whether the op takes operands of a floating-point
  // element type (floating) or of an integer or i1 one, and the kinds it takes in words
  // ("floating-point", "integer", "integer or i1"; "" for an op that takes any).
  bool takes_operands(bool floating) const;
  std::string_view operand_kinds() const;
};

const OpInfo& op_info(OpKind kind);
std::optional<OpKind> parse_op_kind(std::string_view name);

// scan_sum, scan_prod, scan_max, scan_min: the running combination along an axis.
inline bool is_scan(OpKind kind) {
  return kind == OpKind::scan_sum || kind == OpKind::scan_prod || kind == OpKind::scan_max || kind == OpKind::scan_min;
}
std::span<const OpInfo> all_ops();

// The elementwise op a reduction or a scan combines its running value and the next element
// with: add for reduce_sum and scan_sum, mul for scan_prod, max and min for the others. The one
// mapping the interpreter (evaluate_reduce, evaluate_scan) and the CUDA backend
// (combining_expression) read. Throws std::logic_error for any other op.
OpKind combining_op(OpKind kind);

}  // namespace tilec
