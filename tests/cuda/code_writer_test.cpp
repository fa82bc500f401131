// tests/cuda/code_writer_test.cpp — CodeWriter (backend/cuda/code_writer.h): the depth of each
// line follows the blocks around it, and every block writes its closing line when it ends.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "backend/cuda/code_writer.h"

namespace tilec::cuda {
namespace {

TEST(CodeWriter, NestedBlocksIndentTheirLinesAndCloseInReverseOrder) {
  std::string out;
  CodeWriter writer(out);
  writer.line("void f() {");
  {
    CodeWriter::Block body = writer.indented();
    writer.line("#pragma unroll");
    CodeWriter::Block loop = writer.block("for (int i = 0; i < 4; ++i) {");
    EXPECT_EQ(writer.depth(), 2);
    CodeWriter::Block branch = writer.block("if (i % 2 == 0) {");
    writer.line("x[i] = 0;");
  }
  writer.line("}");
  EXPECT_EQ(writer.depth(), 0);
  EXPECT_EQ(out,
            "void f() {\n"
            "  #pragma unroll\n"
            "  for (int i = 0; i < 4; ++i) {\n"
            "    if (i % 2 == 0) {\n"
            "      x[i] = 0;\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(CodeWriter, NextClosesOnePartAndOpensTheOtherAtTheSameDepth) {
  std::string out;
  CodeWriter writer(out, 1);
  {
    CodeWriter::Block branches = writer.block("if (c) {");
    writer.line("a();");
    branches.next("} else {");
    writer.line("b();");
  }
  EXPECT_EQ(out, "  if (c) {\n    a();\n  } else {\n    b();\n  }\n");
}

TEST(CodeWriter, LinesKeepTheirOwnIndentAndEmptyLinesHaveNoSpaces) {
  std::string out;
  CodeWriter writer(out, 2);
  writer.lines("if (status != 0)\n  return status;\n\nreturn 0;");
  writer.line("");
  EXPECT_EQ(out, "    if (status != 0)\n      return status;\n\n    return 0;\n\n");
}

TEST(CodeWriter, AClosingTextOtherThanABraceAndAMovedBlockCloseOnce) {
  std::string out;
  CodeWriter writer(out);
  {
    CodeWriter::Block table = writer.block("const int table[] = {", "};");
    writer.line("1, 2,");
    CodeWriter::Block moved = std::move(table);  // the moved-from block closes nothing
  }
  EXPECT_EQ(out, "const int table[] = {\n  1, 2,\n};\n");
  EXPECT_EQ(writer.depth(), 0);
}

}  // namespace
}  // namespace tilec::cuda
