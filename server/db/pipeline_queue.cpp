#include "server/db/pipeline_queue.hpp"

#include <cstring>

namespace ringhttp::server::db {

PipelineQueue::PipelineQueue(std::size_t capacity) : fifo_(capacity), rows_(capacity * row_bytes_max) {}

PipelineQueue::Entry& PipelineQueue::push(Kind kind, Statement statement, const Waiter& waiter, std::uint64_t sent_ms) {
  assert(count_ < fifo_.size());
  Entry& e = fifo_[(head_ + count_) % fifo_.size()];
  e = Entry{};
  e.kind = kind;
  e.statement = statement;
  e.sent_ms = sent_ms;
  e.waiter = waiter;
  ++count_;
  return e;
}

const PipelineQueue::Entry& PipelineQueue::pop() {
  assert(count_ > 0);
  const Entry& e = fifo_[head_];
  head_ = (head_ + 1) % fifo_.size();
  --count_;
  return e;
}

void PipelineQueue::keep_row(Entry& e, std::string_view id, std::string_view name) {
  if (e.has_row) return;  // one row is all these statements return
  if (id.size() + name.size() > row_bytes_max) {
    e.error = Outcome::failed;  // not ours to shorten
    return;
  }
  char* row = rows_.data() + index_of(e) * row_bytes_max;
  std::memcpy(row, id.data(), id.size());
  std::memcpy(row + id.size(), name.data(), name.size());
  e.id_len = std::uint16_t(id.size());
  e.name_len = std::uint16_t(name.size());
  e.has_row = true;
}

Result PipelineQueue::result(const Entry& e) const {
  Result result{e.statement, Outcome::failed, {}, {}};
  if (e.error != Outcome::row) {
    result.outcome = e.error;
  } else if (!e.completed) {
    result.outcome = Outcome::failed;  // a Sync answered with no result before it
  } else if (e.has_row) {
    const char* row = rows_.data() + index_of(e) * row_bytes_max;
    result.outcome = Outcome::row;
    result.id = std::string_view(row, e.id_len);
    result.name = std::string_view(row + e.id_len, e.name_len);
  } else {
    result.outcome = Outcome::no_row;
  }
  return result;
}

}  // namespace ringhttp::server::db
