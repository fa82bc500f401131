// frontend/ast.h — the syntax tree of a .tile program, as the parser builds it.
//
// The tree is untyped: names, numbers and shapes are resolved and checked by lowering
// (frontend/lower.cpp). `print_ast` gives the indented form `tilec compile --emit ast` shows.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/op_table.h"

namespace tilec::frontend {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  integer,     // 42
  floating,    // 1.5
  name,        // x
  unary,       // -x, !m        (op = "-", "!")
  binary,      // a + b         (op = "+", "-", "*", "/", "%", "**", "<", "<=", ..., "&&", "||")
  call,        // f(args, key = value)     (name = callee)
  tile_new,    // zeros<shape, elem>() / full<shape, elem>(value) / iota<...>(axis) / reshape<shape>(x)
  load,        // load T[i, j] : <shape>   (name = tensor; op = "at": element coordinates)
  subscript,   // x[a:b, ::s]  (args[0] = the tile; `ranges` one per dimension written)
};

// One dimension of a subscript, `start:stop:step` with any part left out (null), or a lone index
// (`range` false: the parser keeps it for a message that says how to write it).
struct Range {
  ExprPtr start, stop, step;
  bool range = true;
  Location location;
};

struct Expr {
  ExprKind kind;
  Location location;
  std::string name;  // identifier, callee, tensor, or tile constructor
  Location name_location;  // load: the tensor's name (errors about the tensor point there)
  std::string op;    // operator text for unary/binary
  int64_t integer = 0;
  double floating = 0;
  std::vector<ExprPtr> args;                              // operands, call args, load indices
  std::vector<std::pair<std::string, ExprPtr>> keywords;  // call keyword arguments
  std::vector<ExprPtr> shape;                             // load / tile_new shape
  std::vector<Range> ranges;                              // subscript: one per dimension written
  std::string element;                                    // tile_new element type
  int height = 0;  // operators on the longest path down to a leaf (the parser bounds it)
};

// `@name(args, key = value)` before a statement.
struct Annotation {
  std::string name;
  Location location;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

enum class StmtKind { assign, store, for_loop, if_else, assert_ };

struct Stmt {
  StmtKind kind;
  Location location;
  std::vector<Annotation> annotations;
  std::string name;                  // assign target, store tensor, loop variable
  Location name_location;            // store: the tensor's name (errors about the tensor point there)
  std::string text;                  // assert: the condition as written, for messages
  std::vector<ExprPtr> indices;      // store coordinates
  bool elements = false;             // store: `store T at [r, c]`, element coordinates
  StoreCombine combine = StoreCombine::none;  // store: `+=`, `max=`, `min=` (combined atomically
                                             // with the tensor's elements), none for '='
  ExprPtr value;                     // assign/store value, if/assert condition
  ExprPtr mask;                      // store: `store T[i] = x if m`, the elements written (null: all)
  ExprPtr lower, upper;              // for bounds
  ExprPtr pipeline;                  // for: pipeline(stages), may be null
  std::vector<std::pair<std::string, Location>> carried;  // for: carry(names)
  Block body, else_body;
};

struct Param {
  std::string name;
  Location location;
  bool is_tensor = false;
  std::vector<std::pair<std::string, Location>> dims;  // tensor dims: a symbol or a number
  std::string element;
  Location element_location;
};

struct Grid {
  std::string kind;  // "tiles" | "persistent"
  Location location;
  std::vector<ExprPtr> extents;
  struct Option {
    std::string key;
    Location location;  // the key's
    ExprPtr value;
  };
  std::vector<Option> options;  // swizzle = 8, cluster = 1, order = 0
  std::vector<std::pair<std::string, Location>> coordinates;
};

struct Kernel {
  std::string name;
  Location location;
  std::vector<Param> params;
  Grid grid;
  Block body;
};

struct ConstDecl {
  std::string name;
  Location location;
  ExprPtr value;
};

// `assert COND;` at the top level: checked when the constants before it are known.
struct Assertion {
  Location location;
  std::string text;       // the condition as written, for the message
  ExprPtr condition;
  size_t after_constants;  // how many constants were declared before it
};

struct Program {
  std::vector<ConstDecl> constants;
  std::vector<Assertion> assertions;
  std::vector<Kernel> kernels;
};

std::string print_ast(const Program& program);

// NumPy's and PyTorch's tile constructor `name` (ones, empty, arange) as this language writes it,
// or "": the answer to `ones<8, f32>()` and `ones(...)` alike.
std::string_view constructor_elsewhere(std::string_view name);

}  // namespace tilec::frontend
