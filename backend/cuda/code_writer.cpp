// backend/cuda/code_writer.cpp — CodeWriter (code_writer.h).
#include "backend/cuda/code_writer.h"

#include <utility>

namespace tilec::cuda {

void CodeWriter::line(std::string_view text) {
  if (!text.empty()) {
    out_.append(2 * static_cast<size_t>(depth_), ' ');
    out_ += text;
  }
  out_ += '\n';
}

void CodeWriter::lines(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
}

CodeWriter::Block CodeWriter::block(std::string_view opening, std::string closing) {
  line(opening);
  ++depth_;
  return Block(this, std::move(closing));
}

CodeWriter::Block CodeWriter::indented() {
  ++depth_;
  return Block(this, std::string());
}

CodeWriter::Block::Block(Block&& other) noexcept
    : writer_(std::exchange(other.writer_, nullptr)), closing_(std::move(other.closing_)) {}

CodeWriter::Block::~Block() {
  if (!writer_) return;
  --writer_->depth_;
  if (!closing_.empty()) writer_->line(closing_);
}

void CodeWriter::Block::next(std::string_view text) {
  --writer_->depth_;
  writer_->line(text);
  ++writer_->depth_;
}

}  // namespace tilec::cuda
