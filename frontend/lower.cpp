// frontend/lower.cpp — AST → tile IR (see lower.h).
//
// Phases per kernel:
//   1. parameters become the kernel region's arguments; each distinct symbolic tensor dim gets
//      one `dim` op (a dim named like an integer `const` is static instead);
//   2. the grid's extents are lowered, then `grid_ids` binds the tile coordinates;
//   3. statements are lowered in order through a stack of scopes (kernel, for, if frames):
//      a `for` carries exactly the names in its carry list, an `if` yields every outer name
//      assigned in either branch.
// (Loads feeding mma become TMA loads in the first pass, promote-mma-operands.)
// Compile-time constants stay folded (`Const`, frontend/constant_value.h) until an op needs
// them as values, and then take the element type of the other operand. Cost: linear in the size of the program.
#include "frontend/lower.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <set>

#include "frontend/lowering.h"
#include "ir/fold.h"
#include "ir/verifier.h"  // kMaxPipelineStages

namespace tilec::frontend {

namespace detail {

std::unique_ptr<Module> Lowering::lower(const Program& program) {
  auto module = std::make_unique<Module>();
  module->attributes()["source"] = Attribute(options_.source_name);
  module->attributes()["passes"] = Attribute(Attribute::Array{Attribute("parse")});
  lower_constants(program);
  std::set<std::string> names;
  for (const Kernel& kernel : program.kernels) {
    if (!names.insert(kernel.name).second) {
      error(kernel.location, fmt::format("kernel '{}' is defined twice", kernel.name));
      continue;
    }
    module->kernels().push_back(lower_kernel(kernel));
  }
  if (program.kernels.empty() && !diagnostics_.has_errors())
    error({1, 1}, "the program defines no kernel");
  if (diagnostics_.has_errors()) return nullptr;
  return module;
}

// A parameter or grid coordinate named like a constant would be read in the kernel where the
// constant is meant (a hunt's `const s = 2.0;` beside a parameter s: f32 used the parameter,
// silently; `as (SCALE)` the tile index), as a loop variable named like one would.
void Lowering::refuse_hiding_a_constant(const std::string& name, Location location, const char* what) {
  if (auto constant = declared_constants_.find(name); constant != declared_constants_.end())
    error(location, fmt::format("{} '{}' has the name of the constant at {}:{}; rename one (in the kernel the {} "
                                "would hide the constant)",
                                what, name, constant->second.line, constant->second.column, what));
}

void Lowering::lower_constants(const Program& program) {
  for (const ConstDecl& decl : program.constants) declared_constants_.emplace(decl.name, decl.location);
  std::set<std::string> declared;
  size_t next_assertion = 0;
  auto check_assertions = [&](size_t constants) {
    for (; next_assertion < program.assertions.size() &&
           program.assertions[next_assertion].after_constants <= constants; ++next_assertion) {
      const Assertion& a = program.assertions[next_assertion];
      lower_assertion(*a.condition, a.text, a.location, nullptr);
    }
  };
  for (size_t i = 0; i < program.constants.size(); ++i) {
    check_assertions(i);
    const ConstDecl& decl = program.constants[i];
    if (!declared.insert(decl.name).second) {
      error(decl.location, fmt::format("constant '{}' is defined twice", decl.name));
      continue;
    }
    std::optional<Const> value;
    auto define = options_.defines.find(decl.name);
    if (define != options_.defines.end()) value = parse_define(define->first, define->second);
    // A -D value that is wrong was reported; the declared value keeps its uses from follow-on errors.
    // An integer -D value of a float constant is that float (-D SCALE=1 of `const SCALE = 0.5`:
    // an integer would make SCALE / 2 an integer division).
    if (!value || !value->is_float) {
      frames_.push_back({Frame::kernel, constants_, {}});
      Operand operand = lower_expr(*decl.value);
      frames_.clear();
      if (!value && operand.value)
        error(decl.location, fmt::format("constant '{}' must be computable at compile time", decl.name));
      if (!value) value = operand.constant;
      else if (operand.constant && operand.constant->is_float)  // the text read as a float: -D SCALE=-0 is -0.0
        value = Const{true, 0, std::strtod(define->second.c_str(), nullptr)};
    }
    if (value) constants_[decl.name] = Operand{nullptr, value};
    else refused_constants_.insert(decl.name);
  }
  check_assertions(program.constants.size());
  for (const auto& [name, value] : options_.defines) {
    if (declared.count(name)) continue;
    // A dimension's extent is given where the kernel runs, not when it compiles.
    bool dimension = false, parameter = false;
    for (const auto& kernel : program.kernels)
      for (const Param& param : kernel.params) {
        parameter = parameter || (!param.is_tensor && param.name == name);
        for (const auto& [dim, location] : param.dims) dimension = dimension || dim == name;
      }
    error({}, fmt::format("-D {}: the program declares no constant named '{}'{}", name, name,
                          dimension   ? fmt::format("; {} is a dimension, bound at launch: give it to tilec run or "
                                                    "emulate as --dims {}={} (the launcher takes it as an argument)",
                                                    name, name, value)
                          : parameter ? fmt::format("; {} is a scalar parameter: give it to tilec run or emulate as "
                                                    "--scalar {}={}", name, name, value)
                                      : ""));
  }
}

std::string Lowering::set_by_define(const std::string& name) const {
  auto define = options_.defines.find(name);
  return define == options_.defines.end() ? "" : fmt::format(" (-D {}={} set it)", name, define->second);
}

std::optional<Const> Lowering::parse_define(const std::string& name, const std::string& text) {
  std::string why;
  auto value = parse_constant_value(text, why);
  if (!value) error({}, fmt::format("-D {}={}: {}", name, text, why));
  return value;
}

Operand* Lowering::lookup(const std::string& name) {
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
    auto it = frame->vars.find(name);
    if (it != frame->vars.end()) return &it->second;
  }
  return nullptr;
}

void Lowering::assign(const std::string& name, Operand operand, Location location) {
  if (constants_.count(name)) {
    error(location, fmt::format("'{}' is a constant and cannot be assigned", name));
    return;
  }
  if (auto fixed = kernel_names_.find(name);
      fixed != kernel_names_.end() && fixed->second != "a parameter") {  // scalar parameters may be rebound
    error(location, fmt::format("'{}' is {} of the kernel and cannot be assigned; give the value another name",
                                name, fixed->second));
    return;
  }
  if (auto loop = loop_variables_.find(name); loop != loop_variables_.end()) {
    error(location, fmt::format("'{}' is the variable of the loop at {}:{}, which counts it, and cannot be assigned; "
                                "give the value another name",
                                name, loop->second.line, loop->second.column));
    return;
  }
  size_t found = frames_.size();
  for (size_t i = frames_.size(); i-- > 0;)
    if (frames_[i].vars.count(name)) {
      found = i;
      break;
    }
  if (found == frames_.size() || found == frames_.size() - 1) {
    frames_.back().vars[name] = operand;
    return;
  }
  for (size_t i = frames_.size() - 1; i > found; --i) {
    if (frames_[i].kind == Frame::loop) {
      error(location, fmt::format("'{}' is defined outside the loop; to update it in the loop, "
                                  "list it in the loop's carry(...)", name));
      return;
    }
    if (frames_[i].kind == Frame::branch) {
      Frame& branch = frames_[i];
      if (std::find(branch.updated.begin(), branch.updated.end(), name) == branch.updated.end())
        branch.updated.push_back(name);
      branch.vars[name] = operand;
      return;
    }
  }
  frames_[found].vars[name] = operand;
}

Value* Lowering::materialize(const Operand& operand, ScalarKind element, Location location, const std::string& other) {
  if (operand.value) return operand.value;
  const Const& c = *operand.constant;
  builder_->set_location(location);
  if (is_float(element)) {
    // Rounded to the type once, here (f16, bf16, f8: the constant then holds an exact value of the
    // type, which every later conversion keeps; f32 as written, which one conversion rounds).
    // Past the type's largest finite value, a number becomes inf (f8: the largest; float_formats.h).
    bool overflows = false;
    const double rounded = round_to_element(element, c.as_double(), overflows);
    if (overflows && std::isfinite(c.as_double()))
      diagnostics_.warning(location,
                           fmt::format("the number {} is past the largest finite {} ({}): it becomes {}{}",
                                       c.as_double(), to_string(element), largest_finite_number(element),
                                       c.as_double() < 0 ? "-" : "",
                                       element == ScalarKind::f8e4m3 || element == ScalarKind::f8e5m2
                                           ? fmt::format("{}", largest_finite_number(element))
                                           : "inf"));
    const bool narrow = element != ScalarKind::f32;
    return builder_->constant(Attribute(narrow && std::isfinite(rounded) ? rounded : c.as_double()),
                              Type::scalar(element));
  }
  if (c.is_float) {
    // As written: 2.0, not fmt's shortest "2", which reads as an integer.
    std::string number = fmt::format("{}", c.floating);
    if (number.find_first_of(".eEn") == std::string::npos) number += ".0";
    if (!other.empty()) {
      const bool named = other.find(' ') == std::string::npos;
      error(location, fmt::format("the number {} is not an integer, and {} is {}; convert {} to a float first: "
                                  "cast({}, f32)", number, other, to_string(element), named ? other : "it",
                                  named ? other : "..."));
    } else
      error(location,
            fmt::format("the number {} is not an integer ({} is expected here)", number, to_string(element)));
    return builder_->constant(Attribute(int64_t{0}), Type::scalar(element));
  }
  // A number outside i8, i16, i32, u8, u16 or u32 would wrap silently: say so instead.
  auto range = element == ScalarKind::i1 ? std::nullopt : integer_range(element);
  if (range && (c.integer < range->lowest || c.integer > range->highest)) {
    if (other.empty()) {  // nothing to convert: the type is the one expected here (full<8, u8>(300))
      error(location, fmt::format("the number {} does not fit {} ({} to {}), the type expected here", c.integer,
                                  to_string(element), range->lowest, range->highest));
      return builder_->constant(Attribute(int64_t{0}), Type::scalar(element));
    }
    const bool named = other.find(' ') == std::string::npos;
    error(location, fmt::format("the number {} does not fit {} ({} to {}); convert {} to a wider type first: "
                                "cast({}, {})", c.integer, to_string(element), range->lowest, range->highest,
                                named ? other : "the other operand", named ? other : "...",
                                // i32 where it holds both the number and every value of the type
                                c.integer >= INT32_MIN && c.integer <= INT32_MAX && range->highest <= INT32_MAX
                                    ? "i32"
                                    : "i64"));
    return builder_->constant(Attribute(int64_t{0}), Type::scalar(element));
  }
  return builder_->constant(Attribute(c.integer), Type::scalar(element));
}

Value* Lowering::materialize(const Operand& operand, Location location) {
  if (operand.value) return operand.value;
  return materialize(operand, operand.constant->is_float ? ScalarKind::f32 : ScalarKind::index, location);
}

Value* Lowering::index_value(const Expr& expr, const char* what) {
  Operand operand = lower_expr(expr);
  if (!operand.ok()) return nullptr;
  Value* value = materialize(operand, ScalarKind::index, expr.location);
  if (value->type().is_scalar() && is_integer(value->type().element()) && value->type().element() != ScalarKind::i1 &&
      !value->type().is_index())  // an integer computed at run time (item() of a loaded id): as an index
    value = create(OpKind::cast, {value}, Type::scalar(ScalarKind::index), expr.location);
  if (!value->type().is_index()) {
    error(expr.location, fmt::format("{} must be an index, not {}", what, value->type().to_source_string()));
    return nullptr;
  }
  return value;
}

std::optional<int64_t> Lowering::const_int(const Expr& expr, const char* what, int64_t minimum) {
  Operand operand = lower_expr(expr);
  if (!operand.ok()) return std::nullopt;
  if (operand.constant && operand.constant->is_float) {  // known, but not an integer (-D BR=2.5)
    error(expr.location, fmt::format("{} must be an integer, not the number {}{}", what, float_text(operand.constant->floating),
                                     expr.kind == ExprKind::name ? set_by_define(expr.name) : ""));
    return std::nullopt;
  }
  if (!operand.constant) {
    error(expr.location, fmt::format("{} must be an integer known at compile time", what));
    return std::nullopt;
  }
  if (operand.constant->integer < minimum) {
    error(expr.location, fmt::format("{} must be at least {}, got {}{}", what, minimum, operand.constant->integer,
                                     defines_in({&expr})));
    return std::nullopt;
  }
  return operand.constant->integer;
}

std::optional<ScalarKind> Lowering::element_type(const std::string& name, Location location) {
  auto kind = parse_scalar_kind(name);
  if (!kind || *kind == ScalarKind::index || *kind == ScalarKind::i1) {
    error(location, fmt::format("unknown element type '{}' (expected f32, f16, bf16, f8e4m3, f8e5m2, i8, i16, i32, "
                                "i64, u8, u16 or u32){}",
                                name, kind == ScalarKind::index ? "; for an index, give an i32 or i64 and convert it "
                                                                  "where it is used: cast(x, index)"
                                                                : ""));
    return std::nullopt;
  }
  return kind;
}

Value* Lowering::create(OpKind kind, std::vector<Value*> operands, Type result, Location location,
              std::vector<std::pair<std::string, Attribute>> attributes) {
  builder_->set_location(location);
  return builder_->create(kind, operands, {std::move(result)}, std::move(attributes))->result();
}

std::optional<std::vector<int64_t>> Lowering::tile_shape(const std::vector<ExprPtr>& dims) {
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (const auto& d : dims) {
    auto extent = const_int(*d, "a tile dimension", 1);
    if (!extent) return std::nullopt;
    if (*extent > (int64_t{1} << 24)) {
      error(d->location, fmt::format("a tile dimension of {}: at most 2^24 (16777216) are allowed", *extent));
      return std::nullopt;
    }
    if (elements > (int64_t{1} << 30) / *extent) {
      error(d->location, fmt::format("tile of more than 2^30 elements (dimension {})", *extent));
      return std::nullopt;
    }
    elements *= *extent;
    shape.push_back(*extent);
  }
  return shape;
}

void Lowering::lower_block(const Block& block) {
  for (const auto& stmt : block) lower_stmt(*stmt);
}

void Lowering::lower_stmt(const Stmt& s) {
  Operation* anchor = nullptr;
  switch (s.kind) {
    case StmtKind::assign: {
      size_t before = builder_->region()->operations().size();
      Operand value = lower_expr(*s.value);
      if (!value.ok()) {
        // Uses of the name fail quietly from here: the error must have been said.
        if (!diagnostics_.has_errors())
          error(s.location, fmt::format("internal error: the value of '{}' failed without a message", s.name));
        failed_.insert(s.name);
        return;
      }
      failed_.erase(s.name);
      if (value.value && value.value->defining_op() && value.value->name_hint().empty() &&
          builder_->region()->operations().size() > before)
        value.value->set_name_hint(s.name);
      if (value.value && value.value->defining_op() && builder_->region()->operations().size() > before)
        anchor = value.value->defining_op();
      if (lookup(s.name) && lookup(s.name)->value && lookup(s.name)->value->type().is_tensor()) {
        error(s.location, fmt::format("'{}' is a tensor parameter and cannot be assigned", s.name));
        return;
      }
      assign(s.name, value, s.location);
      break;
    }
    case StmtKind::store: anchor = lower_store(s); break;
    case StmtKind::for_loop: anchor = lower_for(s); break;
    case StmtKind::if_else: anchor = lower_if(s); break;
    case StmtKind::assert_:
      // lower_kernel lowered those at the top level of the body, before the grid.
      if (frames_.size() > 1)
        error(s.location, "an assert goes at the top level of a kernel's body or of the file: it is checked once, "
                          "when the kernel is launched, not per tile or per iteration");
      break;
  }
  apply_annotations(s, anchor);
}

void Lowering::apply_annotations(const Stmt& s, Operation* op) {
  std::set<std::string> given;
  for (const Annotation& a : s.annotations) {
    if (!given.insert(a.name).second) {
      error(a.location, fmt::format("@{} is given twice on this statement; keep one", a.name));
      continue;
    }
    auto positional = [&](size_t n, const char* usage) {
      if (a.args.size() == n) return true;
      error(a.location, fmt::format("@{} takes {}", a.name, usage));
      return false;
    };
    if (a.name != "group" && a.name != "max_depth" && a.name != "serial") {
      error(a.location, fmt::format("unknown annotation '@{}' (expected @group, @max_depth or @serial)", a.name));
      continue;
    }
    for (size_t k = 0; k < a.keywords.size(); ++k) {
      const auto& [key, value] = a.keywords[k];
      if (!(a.name == "group" && key == "leader"))
        error(value->location, fmt::format("@{} takes no keyword '{}'", a.name, key));
      else if (k > 0 && a.keywords[0].first == key)
        error(value->location, fmt::format("@{} takes '{}' once", a.name, key));
    }
    if (!op) {
      error(a.location, fmt::format("@{} needs a statement that creates an operation", a.name));
      continue;
    }
    // Checked here, on the loops the author wrote: persistent-tiles puts a tensor-core kernel's
    // body in a loop of its own, where parse-constraints would take any op as inside one.
    const bool in_loop = std::any_of(frames_.begin(), frames_.end(), [](const Frame& f) { return f.kind == Frame::loop; });
    if (a.name == "max_depth" && !in_loop) {
      error(a.location, "@max_depth constrains a loop stage, so it goes on a statement inside a loop");
      continue;
    }
    if (a.name == "serial" && !in_loop && s.kind != StmtKind::for_loop) {
      error(a.location, "@serial goes on a loop or on a statement inside one");
      continue;
    }
    if (a.name == "serial") {
      if (positional(0, "no arguments")) op->set_attr("tileas.schedule.constraint.force_serial_execution", UnitAttr{});
    } else if (a.name == "max_depth") {
      if (!positional(1, "one argument: @max_depth(depth)")) continue;
      if (auto d = const_int(*a.args[0], "the max depth", 1))
        op->set_attr("tileas.schedule.constraint.max_depth", Attribute(*d));
    } else {
      if (!positional(1, "a group id: @group(id) or @group(id, leader = id)")) continue;
      if (auto g = const_int(*a.args[0], "the group id", 0))
        op->set_attr("tileas.schedule.constraint.gid", Attribute(*g));
      for (const auto& [key, value] : a.keywords)
        if (key == "leader")
          if (auto l = const_int(*value, "the leader group id", 0))
            op->set_attr("tileas.schedule.constraint.leader_gid", Attribute(*l));
    }
  }
}

void Lowering::warn_coordinate_per_element(const std::vector<ExprPtr>& indices, const std::string& tensor_name,
                                           const Type& tensor, const std::vector<int64_t>& tile, Location location,
                                           const char* verb) {
  const size_t rank = tensor.rank();
  if (indices.size() != rank || tile.size() > rank) return;
  for (size_t k = 0; k < tile.size(); ++k) {
    const size_t axis = rank - tile.size() + k;  // the slice rule: a tile's dims are the tensor's last
    const Expr& index = *indices[axis];
    const Dim& dim = tensor.dims()[axis];
    if (tile[k] <= 1 || index.kind != ExprKind::name) continue;
    auto extent = coordinate_extents_.find(index.name);
    if (extent == coordinate_extents_.end()) continue;
    const CoordinateExtent& runs = extent->second;
    if (dim.symbol.empty() ? runs.value != dim.extent : runs.symbol != dim.symbol) continue;
    const std::string dim_name = dim.symbol.empty() ? fmt::format("{} (of extent {})", axis, dim.extent) : dim.symbol;
    // A column <N, 1> meant along the last dimension is the usual case: say how to write it.
    std::string column_hint;
    if (tile.size() == 2 && tile[1] == 1)
      column_hint = std::string_view(verb).rfind("store", 0) == 0
                        ? fmt::format(" (store reshape<{}>(x): a vector along the last dimension)", tile[k])
                        : fmt::format(" (reshape<{}, 1>(load ... : <{}>) reads a column of the last dimension)",
                                      tile[k], tile[k]);
    diagnostics_.warning(
        location,
        fmt::format("this {} {} elements along {}'s dimension {} at tile coordinate {} (elements {}·{} .. {}·{} + "
                    "{}), but the grid runs {} over every element of that dimension; for element {} of it, give "
                    "the tile extent 1 there{}",
                    verb, tile[k], tensor_name, dim_name, index.name, index.name, tile[k], index.name, tile[k],
                    tile[k] - 1, index.name, index.name, column_hint));
    return;
  }
}

// A masked store's mask (`store T[i] = x if m`): i1, a scalar or a tile that broadcasts to the
// stored tile, given the tile's rank (leading 1s added or dropped as for the tile); null after an
// error.
Value* Lowering::lower_store_mask(const Expr& e, const Type& tile) {
  Operand mask = lower_expr(e);
  if (!mask.ok()) return nullptr;
  if (mask.constant) {
    error(e.location, "a store's mask is a comparison of tiles or scalars (store T[i] = x if row < n); for a store "
                      "that always or never happens, drop the mask or the store");
    return nullptr;
  }
  const Type& type = mask.value->type();
  if (type.element() != ScalarKind::i1 || !(type.is_tile() || type.is_scalar())) {
    error(e.location, fmt::format("a store's mask is an i1 mask (a comparison such as row < n), not {}; the elements "
                                  "where it holds are written", type.to_source_string()));
    return nullptr;
  }
  Value* value = mask.value;
  if (type.is_tile() && leading_ones(type, tile.rank())) value = without_leading_ones(value, tile.rank(), e.location);
  if (value->type().is_tile()) value = with_rank(value, tile.rank(), e.location);
  if (!mask_fits(value->type(), tile)) {
    error(e.location, fmt::format("the mask {} does not broadcast to the stored {} (aligned at their last dimension, "
                                  "as in NumPy, each dimension must be equal or 1)",
                                  type.to_source_string(), tile.to_source_string()));
    return nullptr;
  }
  return value;
}

Operation* Lowering::lower_store(const Stmt& s) {
  Value* tensor = tensor_named(s.name, s.name_location);
  if (!tensor) return nullptr;
  std::vector<Value*> operands{tensor};
  if (!coordinates(s.indices, tensor->type(), s.name_location, s.elements, operands)) return nullptr;
  Operand value = lower_expr(*s.value);
  if (!value.ok()) {
    // A store is never dropped without a word: the error must have been said.
    if (!diagnostics_.has_errors()) error(s.location, "internal error: the stored value failed without a message");
    return nullptr;
  }
  const Type& t = tensor->type();
  if (!value.value || !value.value->type().is_tile()) {
    error(s.value->location, "store writes a tile; make one with full<...>(value)");
    return nullptr;
  }
  // NumPy-style: extra leading dims of extent 1 go (sum(x, axis = 0) into a vector).
  if (leading_ones(value.value->type(), t.rank()))
    value.value = without_leading_ones(value.value, t.rank(), s.value->location);
  const Type& tile = value.value->type();
  if (tile.rank() > t.rank()) {
    // A per-row result (a <BM, 1> column, a row reduction's) into a vector: say how to store it.
    const bool column = tile.rank() == 2 && t.rank() == 1 && tile.shape()[1] == 1;
    error(s.value->location, fmt::format("storing a rank-{} tile into the rank-{} tensor '{}' (a tile may have "
                                         "fewer dimensions than its tensor, or more of extent 1 in front, not more){}",
                                         tile.rank(), t.rank(), s.name,
                                         column ? fmt::format("; for one value per row, store {}[...] = "
                                                              "reshape<{}>(column)", s.name, tile.shape()[0])
                                                : ""));
    return nullptr;
  }
  if (tile.element() != t.element()) {
    error(s.value->location, fmt::format("storing {} tile into the {} tensor '{}' (convert with cast({}, {}))",
                                         with_article(tile.element()), to_string(t.element()), s.name,
                                         s.value->kind == ExprKind::name ? s.value->name : "...", to_string(t.element())));
    return nullptr;
  }
  if (s.combine != StoreCombine::none && !combines_atomically(s.combine, t.element())) {
    error(s.location, fmt::format("'store {}{}[...] {}' {} atomically, which the GPU does for {} elements, not {}: "
                                  "combine into a tensor of one of those types, or write {} tensor with '='",
                                  s.name, s.elements ? " at " : "", store_combine_spelling(s.combine),
                                  store_combine_verb(s.combine), combinable_elements(s.combine, "and"),
                                  to_string(t.element()), with_article(t.element())));
    return nullptr;
  }
  if (!s.elements) warn_coordinate_per_element(s.indices, s.name, t, tile.shape(), s.location, "store writes");
  if (s.mask) {
    Value* mask = lower_store_mask(*s.mask, tile);
    if (!mask) return nullptr;
    operands.push_back(mask);
  }
  operands.push_back(value.value);
  builder_->set_location(s.location);
  std::vector<std::pair<std::string, Attribute>> attributes;
  if (s.elements) attributes.push_back({"elements", Attribute()});  // the coordinates are element indices
  if (s.mask) attributes.push_back({"masked", Attribute()});  // the operand before the tile is the mask
  // `+=` is a unit `accumulate` (added to the tensor's elements); the others name their combine.
  if (s.combine == StoreCombine::add) attributes.push_back({"accumulate", Attribute()});
  else if (const char* how = store_combine_attribute(s.combine)) attributes.push_back({"accumulate", Attribute(how)});
  return builder_->create(OpKind::store, operands, {}, attributes);
}

// Bounds that fold to an empty range (`0 .. BQ / BKV` with BQ < BKV) leave a loop that never
// runs: nearly always a mistake, often a -D away from the values the kernel was written for.
void Lowering::warn_if_no_iteration(const Stmt& s, const Value* lower, const Value* upper) {
  if (!lower || !upper) return;
  auto lo = constant_integer(lower), hi = constant_integer(upper);
  if (!lo || !hi || *hi > *lo) return;
  diagnostics_.warning(s.location, fmt::format("this loop never runs: its bounds fold to {} .. {}{}", *lo, *hi,
                                               defines_in({s.lower.get(), s.upper.get()})));
}

std::string Lowering::defines_in(std::initializer_list<const Expr*> expressions) const {
  std::vector<std::string> defined;
  for (const Expr* expression : expressions)
    visit_expressions(*expression, [&](const Expr& e) {
      if (e.kind == ExprKind::name && options_.defines.count(e.name) &&
          std::find(defined.begin(), defined.end(), e.name) == defined.end())
        defined.push_back(e.name);
    });
  std::string with;
  for (const std::string& name : defined)
    with += fmt::format("{}-D {}={}", with.empty() ? " (with " : ", ", name, options_.defines.at(name));
  return with.empty() ? "" : with + ")";
}

Operation* Lowering::lower_for(const Stmt& s) {
  // A dim, a grid coordinate or a constant named again would mean the loop index inside the
  // loop and itself outside it (scalar parameters may be rebound, as by an assignment).
  auto fixed = kernel_names_.find(s.name);
  if (constants_.count(s.name) || (fixed != kernel_names_.end() && fixed->second != "a parameter")) {
    error(s.location,
          fmt::format("'{}' is {}; name the loop variable differently (it would hide it in the loop)", s.name,
                      fixed != kernel_names_.end() ? fixed->second + " of the kernel" : "a constant"));
    return nullptr;
  }
  if (auto enclosing = loop_variables_.find(s.name); enclosing != loop_variables_.end()) {
    error(s.location, fmt::format("'{}' is already the variable of the loop at {}:{}; name this loop's variable "
                                  "differently (it would hide it in the loop)",
                                  s.name, enclosing->second.line, enclosing->second.column));
    return nullptr;
  }
  const int errors_before = diagnostics_.error_count();
  Value* lower = index_value(*s.lower, "a loop bound");
  Value* upper = index_value(*s.upper, "a loop bound");
  // A bound refused above stands in as 0: no warning about what it folds to.
  if (diagnostics_.error_count() == errors_before) warn_if_no_iteration(s, lower, upper);
  std::optional<int64_t> stages;
  if (s.pipeline) stages = const_int(*s.pipeline, "the pipeline stage count", 1);
  if (stages && *stages > kMaxPipelineStages) {
    error(s.pipeline->location, fmt::format("the pipeline stage count is {}; at most {} stages are supported",
                                            *stages, kMaxPipelineStages));
    stages.reset();
  }
  std::vector<Value*> inits;
  bool ok = lower && upper && (!s.pipeline || stages);
  std::set<std::string> carried;
  for (const auto& [name, location] : s.carried) {
    if (!carried.insert(name).second) {
      error(location, fmt::format("'{}' is carried twice; name it once in carry(...)", name));
      ok = false;
      continue;
    }
    if (auto fixed_name = kernel_names_.find(name);
        fixed_name != kernel_names_.end() && fixed_name->second != "a parameter") {
      error(location, fmt::format("'{}' is {} of the kernel and cannot be carried (the loop cannot assign it)", name,
                                  fixed_name->second));
      ok = false;
      continue;
    }
    if (name == s.name || loop_variables_.count(name)) {
      const Location loop = name == s.name ? s.location : loop_variables_.at(name);
      error(location, fmt::format("'{}' is the variable of the loop at {}:{}, which counts it, and cannot be carried",
                                  name, loop.line, loop.column));
      ok = false;
      continue;
    }
    Operand* found = lookup(name);
    if (!found) {
      // A name whose assignment failed has its error already (-D BM=0 in zeros<BM, ...>).
      if (!failed_.count(name) && !refused_constants_.count(name))
        error(location, fmt::format("carried variable '{}' is not defined before the loop", name));
      ok = false;
      continue;
    }
    inits.push_back(materialize(*found, location));
  }
  if (!ok) return nullptr;
  builder_->set_location(s.location);
  Value* step = builder_->constant_index(1);
  std::vector<Value*> operands{lower, upper, step};
  std::vector<Type> types;
  for (Value* init : inits) {
    operands.push_back(init);
    types.push_back(init->type());
  }
  std::vector<std::pair<std::string, Attribute>> attributes;
  if (stages) attributes.push_back({"pipeline", Attribute(*stages)});
  Operation* loop = builder_->create(OpKind::for_, operands, types, attributes);
  Region& body = loop->region();
  Frame frame{Frame::loop, {}, {}};
  frame.vars[s.name] = Operand{body.add_argument(Type::scalar(ScalarKind::index), s.name)};
  for (size_t i = 0; i < s.carried.size(); ++i)
    frame.vars[s.carried[i].first] = Operand{body.add_argument(inits[i]->type(), s.carried[i].first)};
  Builder* outer = builder_;
  Builder inner(&body);
  builder_ = &inner;
  frames_.push_back(std::move(frame));
  loop_variables_[s.name] = s.location;
  lower_block(s.body);
  loop_variables_.erase(s.name);
  std::vector<Value*> yielded;
  for (size_t i = 0; i < s.carried.size(); ++i) {
    const auto& [name, location] = s.carried[i];
    Value* v = materialize(frames_.back().vars[name], inits[i]->type().element(), location);
    if (!(v->type() == inits[i]->type())) {
      // Broadcasting with a tile of higher rank gives a row 1 x N for a vector N: say how to start it so.
      const Type& end = v->type();
      std::string hint;
      if (end.is_tile() && inits[i]->type().is_tile() && end.rank() > inits[i]->type().rank() &&
          end.element_count() == inits[i]->type().element_count() && end.element() == inits[i]->type().element()) {
        std::string extents;
        for (int64_t extent : end.shape()) extents += std::to_string(extent) + ", ";
        hint = fmt::format(" (start it with the shape it ends with, e.g. zeros<{}{}>())", extents,
                           to_string(end.element()));
      }
      error(location, fmt::format("carried '{}' changes type in the loop: {} before, {} at the end of the body{}",
                                  name, inits[i]->type().to_source_string(), end.to_source_string(), hint));
    }
    yielded.push_back(v);
  }
  inner.set_location(s.location);
  inner.create(OpKind::yield, yielded, {});
  Frame finished = std::move(frames_.back());
  frames_.pop_back();
  for (const auto& [name, _] : finished.vars)
    if (!lookup(name) && name != s.name)
      note_out_of_scope(name, fmt::format("it is defined inside the loop at {}:{}; to use it after the loop, give it a "
                                          "value before the loop and list it in carry({})", s.location.line, s.location.column, name));
  builder_ = outer;
  for (size_t i = 0; i < s.carried.size(); ++i) {
    loop->result(i)->set_name_hint(s.carried[i].first);
    assign(s.carried[i].first, Operand{loop->result(i)}, s.carried[i].second);
  }
  return loop;
}

Operation* Lowering::lower_if(const Stmt& s) {
  Operand cond = lower_expr(*s.value);
  if (!cond.ok()) return nullptr;
  if (!cond.value || !(cond.value->type() == Type::scalar(ScalarKind::i1))) {
    const bool tile = cond.value && cond.value->type().is_tile();
    error(s.value->location,
          tile ? fmt::format("the condition of 'if' must be a scalar comparison, not {}; to choose element by "
                             "element, write where(condition, a, b)", cond.value->type().to_source_string())
               : std::string("the condition of 'if' must be a scalar comparison"));
    // The branches are still lowered (on a stand-in condition), so that the names they assign
    // are not reported as unknown after the if.
    builder_->set_location(s.value->location);
    cond.value = builder_->constant(Attribute(int64_t{0}), Type::scalar(ScalarKind::i1));
  }
  builder_->set_location(s.location);
  Operation* branch = builder_->create(OpKind::if_, {cond.value}, {});
  std::vector<Frame> frames;
  Builder* outer = builder_;
  for (size_t r = 0; r < 2; ++r) {
    Builder inner(&branch->region(r));
    builder_ = &inner;
    frames_.push_back({Frame::branch, {}, {}});
    lower_block(r == 0 ? s.body : s.else_body);
    frames.push_back(std::move(frames_.back()));
    frames_.pop_back();
  }
  builder_ = outer;
  // Every outer name assigned in either branch becomes a result of the if, and so does a new
  // name both branches define; a name only one defines is noted for the "unknown name" error.
  std::vector<std::string> names = frames[0].updated;
  for (const auto& name : frames[1].updated)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::vector<std::string> locals;  // sorted: the order of results must not depend on hashing
  for (const auto& [name, _] : frames[0].vars)
    if (!lookup(name)) locals.push_back(name);
  std::sort(locals.begin(), locals.end());
  for (const auto& name : locals)
    if (frames[1].vars.count(name)) names.push_back(name);
    else note_out_of_scope(name, fmt::format("it is defined only in the then-branch of the if at {}:{}; give it a value before the if, or in both branches", s.location.line, s.location.column));
  for (const auto& [name, _] : frames[1].vars)
    if (!lookup(name) && !frames[0].vars.count(name))
      note_out_of_scope(name, fmt::format("it is defined only in the else-branch of the if at {}:{}; give it a value before the if, or in both branches", s.location.line, s.location.column));
  std::vector<std::vector<Value*>> yields(2);
  for (const auto& name : names) {
    Operand* before = lookup(name);
    Value* values[2];
    for (size_t r = 0; r < 2; ++r) {
      Builder inner(&branch->region(r));
      builder_ = &inner;
      auto it = frames[r].vars.find(name);
      const Operand& operand = it != frames[r].vars.end() ? it->second : *before;
      ScalarKind element = before && before->value ? before->value->type().element()
                           : operand.value ? operand.value->type().element()
                           : (operand.constant->is_float ? ScalarKind::f32 : ScalarKind::index);
      values[r] = materialize(operand, element, s.location);
    }
    builder_ = outer;
    if (!(values[0]->type() == values[1]->type())) {
      error(s.location, fmt::format("'{}' has type {} after the then-branch but {} after the else-branch",
                                    name, values[0]->type().to_source_string(), values[1]->type().to_source_string()));
    }
    yields[0].push_back(values[0]);
    yields[1].push_back(values[1]);
  }
  for (size_t r = 0; r < 2; ++r) {
    Builder inner(&branch->region(r));
    inner.set_location(s.location);
    inner.create(OpKind::yield, yields[r], {});
  }
  // On a type mismatch (reported) the names still take the then-branch's type, so that their
  // uses after the if are not reported as unknown too.
  for (size_t i = 0; i < names.size(); ++i) {
    Value* result = branch->add_result(yields[0][i]->type());
    result->set_name_hint(names[i]);
    assign(names[i], Operand{result}, s.location);
  }
  return branch;
}

std::unique_ptr<Operation> Lowering::lower_kernel(const Kernel& k) {
  auto kernel = std::make_unique<Operation>(OpKind::kernel, k.location);
  kernel->set_attr("sym_name", k.name);
  Region& body = kernel->add_region();
  Builder builder(&body);
  builder_ = &builder;
  frames_.clear();
  frames_.push_back({Frame::kernel, constants_, {}});
  kernel_names_.clear();
  coordinate_extents_.clear();
  out_of_scope_.clear();
  failed_.clear();

  // 1. parameters and symbolic dims
  std::vector<std::tuple<std::string, Value*, int64_t, Location>> symbols;
  std::set<std::string> seen_symbols;
  for (const Param& p : k.params) {
    if (!kernel_names_.emplace(p.name, "a parameter").second) {
      error(p.location, fmt::format("parameter '{}' is declared twice", p.name));
      continue;
    }
    refuse_hiding_a_constant(p.name, p.location, "parameter");
    // An unknown element type is reported; the parameter still exists (as f32), so that its uses
    // are not reported as unknown names too.
    const std::optional<ScalarKind> known = element_type(p.element, p.element_location);
    const std::optional<ScalarKind> element = known.value_or(ScalarKind::f32);
    if (!p.is_tensor) {
      frames_.back().vars[p.name] = Operand{body.add_argument(Type::scalar(*element), p.name)};
      if (!known) failed_.insert(p.name);  // its uses, of a type it does not have, are not errors of their own
      continue;
    }
    std::vector<Dim> dims;
    std::vector<std::pair<std::string, size_t>> named;
    for (size_t axis = 0; axis < p.dims.size(); ++axis) {
      const auto& [text, location] = p.dims[axis];
      if (std::isdigit(static_cast<unsigned char>(text[0]))) {
        int64_t n = 0;
        if (parse_integer_literal(text, n) != std::errc() || n <= 0)
          error(location, fmt::format("bad tensor dimension '{}': a dimension is a positive integer (up to 2^63 - 1) "
                                      "or a symbol such as N",
                                      text));
        dims.push_back(Dim::fixed(n));
      } else if (auto c = constants_.find(text); c != constants_.end()) {
        if (c->second.constant->is_float || c->second.constant->integer <= 0)
          error(location, fmt::format("dimension '{}' names a constant that is not a positive integer{}", text,
                                      set_by_define(text)));
        dims.push_back(Dim::fixed(c->second.constant->integer));
      } else {
        dims.push_back(Dim::named(text));
        named.push_back({text, axis});
      }
    }
    Value* tensor = body.add_argument(Type::tensor(dims, *element), p.name);
    frames_.back().vars[p.name] = Operand{tensor};
    for (const auto& [symbol, axis] : named)
      if (seen_symbols.insert(symbol).second)
        symbols.push_back({symbol, tensor, static_cast<int64_t>(axis), p.dims[axis].second});
  }
  for (const auto& [symbol, tensor, axis, location] : symbols) {
    if (kernel_names_.count(symbol)) error(location, fmt::format("'{}' names both a parameter and a dimension", symbol));
    builder.set_location(location);
    Value* extent = builder.create(OpKind::dim, {tensor}, {Type::scalar(ScalarKind::index)}, {{"axis", Attribute(axis)}})->result();
    extent->set_name_hint(symbol);
    frames_.back().vars[symbol] = Operand{extent};
    kernel_names_.emplace(symbol, "a dimension");
  }

  // 1b. asserts at the top level of the body: the launcher checks them before the grid
  for (size_t i = 0; i < k.body.size(); ++i) {
    const Stmt& s = *k.body[i];
    if (s.kind == StmtKind::assert_) lower_assertion(*s.value, s.text, s.location, &k, i);
  }

  // 2. the grid
  const Grid& grid = k.grid;
  std::vector<Value*> extents;
  for (const auto& e : grid.extents)
    if (Value* v = index_value(*e, "a grid extent")) {
      // A negative extent known here is refused here (the interpreter refuses one computed at launch).
      if (auto constant = constant_integer(v); constant && *constant < 0)
        error(e->location, fmt::format("a grid extent must not be negative; this one is {}", *constant));
      extents.push_back(v);
    }
  if (grid.extents.size() != grid.coordinates.size())
    error(grid.location, fmt::format("the grid has {} extent{} but names {} coordinate{}; give one name per extent",
                                     grid.extents.size(), grid.extents.size() == 1 ? "" : "s", grid.coordinates.size(),
                                     grid.coordinates.size() == 1 ? "" : "s"));
  if (grid.extents.size() > 3) error(grid.location, "a grid has at most 3 dimensions");
  std::vector<std::pair<std::string, Attribute>> attributes{{"schedule", Attribute(grid.kind)}};
  std::set<std::string> given;
  for (const auto& [key, key_location, value] : grid.options) {
    const bool known = key == "order" || key == "swizzle" || key == "cluster" || key == "workers";
    if (!known) {
      error(key_location, fmt::format("unknown grid option '{}' ({}swizzle, cluster, order and workers are those of "
                                      "persistent grids)",
                                      key, grid.kind == "persistent" ? "" : "a tiles grid takes none; "));
      continue;
    }
    if (grid.kind != "persistent") {
      error(key_location, fmt::format("'{}' is an option of persistent grids; a tiles grid takes none (write grid "
                                      "persistent(...) for it)",
                                      key));
      continue;
    }
    if (!given.insert(key).second) {
      error(key_location, fmt::format("grid option '{}' is given twice", key));
      continue;
    }
    if (key == "order") {
      if (value->kind != ExprKind::name || (value->name != "row" && value->name != "column"))
        error(value->location, "order is 'row' or 'column'");
      else attributes.push_back({key, Attribute(value->name)});
    } else if (key == "swizzle" || key == "cluster" || key == "workers") {
      const char* what = key == "swizzle" ? "the swizzle panel width" : key == "cluster" ? "the cluster size" : "the worker count";
      if (auto n = const_int(*value, what, 1))
        attributes.push_back({key, Attribute(*n)});
    }
  }
  if (extents.size() == grid.extents.size() && extents.size() == grid.coordinates.size() && !extents.empty()) {
    builder.set_location(grid.location);
    std::vector<Type> index_types(extents.size(), Type::scalar(ScalarKind::index));
    Operation* ids = builder.create(OpKind::grid_ids, extents, index_types, attributes);
    for (size_t i = 0; i < grid.coordinates.size(); ++i) {
      const auto& [name, location] = grid.coordinates[i];
      if (!kernel_names_.emplace(name, "a grid coordinate").second)
        error(location, fmt::format("'{}' is already defined", name));
      refuse_hiding_a_constant(name, location, "grid coordinate");
      ids->result(i)->set_name_hint(name);
      frames_.back().vars[name] = Operand{ids->result(i)};
      const Expr& extent = *grid.extents[i];
      if (extent.kind == ExprKind::integer) coordinate_extents_[name] = {"", extent.integer};
      if (extent.kind == ExprKind::name) {
        auto constant = constants_.find(extent.name);
        coordinate_extents_[name] = constant != constants_.end() && !constant->second.constant->is_float
                                        ? CoordinateExtent{"", constant->second.constant->integer}
                                        : CoordinateExtent{extent.name, std::nullopt};
      }
    }
  } else {
    // The grid was reported; its names still stand for indices, so that the body's uses of
    // them are not reported as unknown too.
    builder.set_location(grid.location);
    for (const auto& [name, location] : grid.coordinates) {
      if (!kernel_names_.emplace(name, "a grid coordinate").second) continue;
      frames_.back().vars[name] = Operand{builder.constant(Attribute(int64_t{0}), Type::scalar(ScalarKind::index))};
    }
  }

  // 3. statements
  lower_block(k.body);
  builder.set_location({});
  builder.create(OpKind::return_, {}, {});
  builder_ = nullptr;
  // A kernel writes only through its stores: without one, a launch has no effect (unless a store
  // was written and failed, here or through a constant that failed before the kernel).
  bool stores = false;
  walk(kernel->region(), [&](const Operation& op) { stores = stores || op.kind() == OpKind::store; });
  if (!stores && diagnostics_.error_count() == 0)
    diagnostics_.warning(k.location, fmt::format("kernel {} stores nothing: launching it has no effect (write its "
                                                 "results with `store T[...] = value`)",
                                                 k.name));
  return kernel;
}

}  // namespace detail

std::unique_ptr<Module> lower_program(const Program& program, const LowerOptions& options,
                                      DiagnosticEngine& diagnostics) {
  return detail::Lowering(options, diagnostics).lower(program);
}

}  // namespace tilec::frontend
