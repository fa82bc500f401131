// backend/cuda/code_writer.h — writes C++ source a line at a time, indented by the blocks that
// enclose it.
//
// Every emitter writes through one CodeWriter instead of passing an indent along: a block's
// opening line indents what follows, and the scope object it returns closes the block (writes
// its `}` and dedents) when it goes out of scope, so a brace is never left open and a line is
// never written at the wrong depth.
//
//   writer.line("#pragma unroll");
//   {
//     CodeWriter::Block loop = writer.block(fmt::format("for (int i = 0; i < {}; ++i) {{", n));
//     writer.line("y[i] = x[i];");
//   }                                            // writes "}"
//
// Depth is two spaces a level. `indented()` indents without writing a line (a case body, a
// statement under an `if` without braces); `Block::next` closes one part and opens the next
// (`} else {`).
#pragma once

#include <string>
#include <string_view>

namespace tilec::cuda {

class CodeWriter {
 public:
  // Appends to `out`, starting `depth` levels in.
  explicit CodeWriter(std::string& out, int depth = 0) : out_(out), depth_(depth) {}
  CodeWriter(const CodeWriter&) = delete;
  CodeWriter& operator=(const CodeWriter&) = delete;

  // One line at the current depth; an empty `text` writes an empty line (no trailing spaces).
  void line(std::string_view text);
  // Each line of `text` (lines end in '\n'; the last one may not) at the current depth, so a
  // line's own leading spaces indent it further.
  void lines(std::string_view text);

  // What a scope returns: when it ends, it dedents and writes its closing line (if any).
  class [[nodiscard]] Block {
   public:
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    Block(Block&& other) noexcept;
    Block& operator=(Block&&) = delete;
    ~Block();
    // Closes this part and opens the next at the same depth: `next("} else {")`.
    void next(std::string_view text);

   private:
    friend class CodeWriter;
    Block(CodeWriter* writer, std::string closing) : writer_(writer), closing_(std::move(closing)) {}
    CodeWriter* writer_;
    std::string closing_;
  };

  // Writes `opening` (e.g. `if (x) {`), indents, and closes with `closing` at the end.
  Block block(std::string_view opening, std::string closing = "}");
  // Indents one level until the scope ends; writes nothing.
  Block indented();

  int depth() const { return depth_; }
  std::string& text() { return out_; }

 private:
  std::string& out_;
  int depth_;
};

}  // namespace tilec::cuda
