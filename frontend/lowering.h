// frontend/lowering.h — the AST → IR lowering class, shared by frontend/lower.cpp (the program,
// constants, scopes, statements and kernels) and frontend/lower_expressions.cpp (expressions and
// the builtin functions). Internal to the frontend: the entry point is lower_program
// (frontend/lower.h), whose comment describes the phases.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/constant_value.h"
#include "frontend/lower.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace tilec::frontend::detail {

using Const = ConstantValue;

// The result of lowering an expression: a folded constant or an IR value; neither after an
// error (already reported).
struct Operand {
  Value* value = nullptr;
  std::optional<Const> constant;
  bool ok() const { return value || constant; }
};

struct Frame {
  enum Kind { kernel, loop, branch } kind;
  std::unordered_map<std::string, Operand> vars;
  std::vector<std::string> updated;  // branch frames: outer names assigned here, in order
};

struct Builtin;  // a row of the builtin function table (frontend/lower_builtins.cpp)

// `type` as the result of arithmetic on it: a tile lives in registers; a scalar is as it is.
inline Type in_registers(const Type& type) { return type.is_tile() ? type.with_space(MemorySpace::reg) : type; }


// Calls `visit` for every subexpression of `e`, `e` included.
template <typename Visit>
void visit_expressions(const Expr& e, const Visit& visit) {
  visit(e);
  for (const ExprPtr& a : e.args) visit_expressions(*a, visit);
  for (const auto& [key, a] : e.keywords) visit_expressions(*a, visit);
  for (const ExprPtr& a : e.shape) visit_expressions(*a, visit);
}

class Lowering {
 public:
  Lowering(const LowerOptions& options, DiagnosticEngine& diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  std::unique_ptr<Module> lower(const Program& program);

 private:
  void error(Location location, std::string message) { diagnostics_.error(location, std::move(message)); }

  // ---- constants --------------------------------------------------------------------------
  void lower_constants(const Program& program);
  // " (-D NAME=VALUE set it)" for a constant the command line overrides, else "": for the
  // messages about a constant's value.
  std::string set_by_define(const std::string& name) const;
  // " (with -D A=1, -D B=2)" for the names in `expressions` that -D sets, or "".
  std::string defines_in(std::initializer_list<const Expr*> expressions) const;
  std::optional<Const> parse_define(const std::string& name, const std::string& text);

  // ---- scopes -----------------------------------------------------------------------------
  Operand* lookup(const std::string& name);
  // Binds `name` to `operand`, following the carry rules of loops and branches.
  void assign(const std::string& name, Operand operand, Location location);
  // Why `name` is unknown after the block that defined it (reported with "unknown name").
  void note_out_of_scope(const std::string& name, std::string why) {
    out_of_scope_[name] = std::move(why);
  }

  // ---- types and values -------------------------------------------------------------------
  // `other`: the operand a number meets (`q` in `q * 200`), named in the message when the
  // number does not fit its type.
  Value* materialize(const Operand& operand, ScalarKind element, Location location, const std::string& other = "");
  // A value with no typing context: integers become index, floats f32.
  Value* materialize(const Operand& operand, Location location);
  Value* index_value(const Expr& expr, const char* what);
  std::optional<int64_t> const_int(const Expr& expr, const char* what, int64_t minimum);
  // The axis `axis = k` names in `type` (negative: counted from the end); nullopt after an error.
  std::optional<int64_t> axis_of(const Expr& axis, const Type& type);
  std::optional<ScalarKind> element_type(const std::string& name, Location location);
  Value* create(OpKind kind, std::vector<Value*> operands, Type result, Location location,
                std::vector<std::pair<std::string, Attribute>> attributes = {});
  std::optional<std::vector<int64_t>> tile_shape(const std::vector<ExprPtr>& dims);

  // ---- expressions ------------------------------------------------------------------------
  Operand lower_expr(const Expr& e);
  std::optional<Const> fold(const std::string& op, Const a, Const b, Location location);
  // How a message names an operand: its variable, or a description of its position.
  static std::string operand_text(const Expr* e, const char* position);
  // A tile of lower rank as one of `rank` dimensions: NumPy's leading 1s, through a reshape.
  Value* with_rank(Value* value, size_t rank, Location location);
  // Whether a tile has more than `rank` dims, those in front of the last `rank` all of extent 1;
  // and the tile without them (a reshape), as a store into a rank-`rank` tensor takes it.
  static bool leading_ones(const Type& type, size_t rank);
  Value* without_leading_ones(Value* value, size_t rank, Location location);
  // Gives both operands values of one element type, and tiles of one rank (with_rank); the
  // result type of the elementwise op. `ea` and `eb` (may be null) are the operands'
  // expressions, for messages, which call them by `positions` where they have no name (the
  // "left" and "right" operand of a + b; where()'s "second" and "third").
  std::optional<Type> unify(Operand& a, Operand& b, Value*& va, Value*& vb, Location location,
                            const Expr* ea = nullptr, const Expr* eb = nullptr,
                            std::pair<const char*, const char*> positions = {"left", "right"});
  Operand lower_binary(const Expr& e) { return lower_binary(e.op, *e.args[0], *e.args[1], e.location); }
  // `left op right` for a binary operator (or pow(left, right) as "**").
  Operand lower_binary(const std::string& op, const Expr& left, const Expr& right, Location location);
  // The op of `a op b` once both operands are lowered (not inlined: see lower_expressions.cpp).
  [[gnu::noinline]] Operand combine(const std::string& op, Operand a, Operand b, const Expr& left, const Expr& right,
                                    Location location);
  [[gnu::noinline]] Operand lower_unary(const Expr& e);  // -x, !mask, ~x
  // "WHAT is not computed at compile time: ...", for a `const` that needs a kernel's ops.
  Operand not_a_constant(const Expr& e, const std::string& what);
  Operand lower_call(const Expr& e);  // a builtin function (frontend/lower_builtins.cpp)
  Operand lower_tile_new(const Expr& e);
  Operand lower_reshape(const Expr& e);
  Value* tensor_named(const std::string& name, Location location);
  // `elements`: `T at [...]`, element coordinates (else tile coordinates), for the messages.
  bool coordinates(const std::vector<ExprPtr>& indices, const Type& tensor, Location location, bool elements,
                   std::vector<Value*>& out);
  Operand lower_load(const Expr& e);
  // A tile of more than one element along a tensor dimension whose coordinate is a grid
  // coordinate running over every element of that dimension (`grid ... (H) as (h)`, `L[b, h, i]`
  // with a <BQ, 1> tile): the tile covers elements h·BQ.. of H, nearly always meant along another
  // dimension. A warning that says what the store or load touches and what to write.
  void warn_coordinate_per_element(const std::vector<ExprPtr>& indices, const std::string& tensor_name,
                                   const Type& tensor, const std::vector<int64_t>& tile, Location location,
                                   const char* verb);

  // ---- builtin functions (frontend/lower_builtins.cpp): the handlers of its table's rows -----
  static std::span<const Builtin> builtin_table();
  // Whether `function` is a builtin that gives a number on numbers (a `const` may call it).
  static bool folds_on_numbers(const std::string& function);
  // Whether the call has `n` arguments (else an error).
  bool arity(const Expr& e, size_t n);
  // sum / mean / max / min of one tile: along `axis = k` (kept with extent 1), or with no axis
  // over the whole tile (each axis in turn, from the last; the result has extent 1 in every
  // axis). mean is the sum divided by the count of elements reduced.
  Operand lower_reduction(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_arg_extremum(const Expr& e, Value* x, int64_t axis);
  Operand lower_extremum(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_binary_function(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_pow(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_unary_function(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_fma(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_sign(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_atan2(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_random(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_float_class(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_clamp(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand extremum(OpKind kind, Operand a, Operand b, const Expr* ea, const Expr* eb, Location location);
  Operand lower_transpose(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_item(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_permute(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_concat(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_interleave(const Expr& e, const Builtin& builtin, const Expr* axis);
  std::vector<Value*> joined_tiles(const Expr& e, std::string_view name);
  Operand lower_line_op(const Expr& e, const Builtin& builtin, const Expr* axis, std::string_view does,
                        std::string_view per_row, std::vector<std::pair<std::string, Attribute>> attributes);
  Operand lower_scan(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_sort(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_where(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_cast(const Expr& e, const Builtin& builtin, const Expr* axis);
  Operand lower_index_cast(const Expr& e);
  Operand lower_bitcast(const Expr& e, const Builtin& builtin, const Expr* axis);
  static std::string convert_hint(const std::string& f, const std::string& operand);
  Operand lower_mma(const Expr& e, const Builtin& builtin, const Expr* axis);

  // ---- statements -------------------------------------------------------------------------
  void lower_block(const Block& block);
  void lower_stmt(const Stmt& s);
  void apply_annotations(const Stmt& s, Operation* op);
  Operation* lower_store(const Stmt& s);
  Operand lower_subscript(const Expr& e);
  Value* lower_store_mask(const Expr& e, const Type& tile);
  Operation* lower_for(const Stmt& s);
  void warn_if_no_iteration(const Stmt& s, const Value* lower, const Value* upper);
  Operation* lower_if(const Stmt& s);

  // ---- asserts (frontend/lower_asserts.cpp) -------------------------------------------------------
  // `assert COND;` at the top level of the file (`kernel` null) or of a kernel's body, lowered
  // before the grid: a condition on constants is checked now (an error when it fails), one on
  // dims and scalar parameters becomes an `assert` op the launcher checks.
  // `position`: the assert's index among the kernel body's statements.
  void lower_assertion(const Expr& condition, const std::string& text, Location location, const Kernel* kernel,
                       size_t position = 0);
  // The condition's value when it reads only constants (comparisons, &&, ||, ! of them).
  std::optional<bool> constant_condition(const Expr& e);

  // ---- kernels ----------------------------------------------------------------------------
  std::unique_ptr<Operation> lower_kernel(const Kernel& k);

  const LowerOptions& options_;
  DiagnosticEngine& diagnostics_;
  std::unordered_map<std::string, Operand> constants_;
  // Every `const` of the program and where (the assert messages; a parameter of the same name).
  std::map<std::string, Location> declared_constants_;
  void refuse_hiding_a_constant(const std::string& name, Location location, const char* what);
  // The kernel's parameters, dims and grid coordinates, each with what it is ("a grid
  // coordinate"): a dim or coordinate cannot be assigned, nor be a loop variable.
  std::map<std::string, std::string> kernel_names_;
  // The variables of the loops being lowered (outermost first), each with its loop's location:
  // the loop counts them, so they can be neither assigned nor carried nor named again inside.
  std::map<std::string, Location> loop_variables_;
  // Grid coordinates whose extent is a bare name or number (`grid tiles(..., H) as (..., h)`): h →
  // "H", or the number (a constant's value) the extent is.
  struct CoordinateExtent {
    std::string symbol;
    std::optional<int64_t> value;
  };
  std::map<std::string, CoordinateExtent> coordinate_extents_;
  std::unordered_map<std::string, std::string> out_of_scope_;  // name → why it is unknown here
  // Names whose last assignment failed (and was reported): a use of one is an error already
  // said, so it fails without a message of its own ("unknown name" would only repeat it).
  std::unordered_set<std::string> failed_;
  // Constants whose value was refused (reported there, a -D named): their uses say nothing more,
  // where "unknown name" would blame the use.
  std::unordered_set<std::string> refused_constants_;
  std::vector<Frame> frames_;
  Builder* builder_ = nullptr;
};

}  // namespace tilec::frontend::detail
