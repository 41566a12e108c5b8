#pragma once
// One database connection's pipeline: the statements sent on it and not yet
// answered, oldest first, each with room for the one row it may return.
// Postgres answers a pipeline in the order it was sent, so every message
// that arrives is for the oldest entry. A ring of fixed capacity whose
// entries and rows are allocated at construction: nothing is allocated
// once running. No libpq and no I/O here; the pool does both.

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "server/db/result.hpp"
#include "server/db/statements.hpp"

namespace ringhttp::server::db {

class PipelineQueue {
 public:
  // A row kept from its result to its Sync: an id's digits and a name. A
  // larger one (a table without db/schema.sql's CHECK) is answered failed.
  static constexpr std::size_t row_bytes_max = 512;

  enum class Kind : std::uint8_t { prepare, query };

  struct Entry {
    Kind kind = Kind::query;
    Statement statement = Statement::user_by_id;
    bool completed = false;  // its result (a row, none, or an error) came; its Sync's answer is still to come
    bool has_row = false;
    Outcome error = Outcome::row;  // unavailable or failed once an error came; row: none
    std::uint16_t id_len = 0;      // the row, in the row storage at this entry's index
    std::uint16_t name_len = 0;
    std::uint64_t sent_ms = 0;
    Waiter waiter;
  };
  static_assert(row_bytes_max <= UINT16_MAX, "a row's lengths fit an entry's 16-bit fields");

  PipelineQueue() = default;  // holds nothing: a link's queue is sized by the pool
  explicit PipelineQueue(std::size_t capacity);

  std::size_t size() const { return count_; }
  std::size_t capacity() const { return fifo_.size(); }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == fifo_.size(); }

  // A statement just sent joins at the back. The caller checks full() first.
  Entry& push(Kind kind, Statement statement, const Waiter& waiter, std::uint64_t sent_ms);
  // The oldest entry: the one the next message is for.
  Entry& front() {
    assert(!empty());
    return fifo_[head_];
  }
  // The oldest entry leaves (its Sync was answered). It and its row stay
  // readable until the next push.
  const Entry& pop();
  // Keeps `e`'s row: the first only (these statements return one), and
  // one past row_bytes_max makes it failed rather than shortened.
  void keep_row(Entry& e, std::string_view id, std::string_view name);
  // What a query's waiter hears once its Sync was answered: its error, its
  // row (viewing this queue's storage), or none.
  Result result(const Entry& e) const;
  // A link reset: every entry, oldest first, is handed to `each`, and the
  // queue starts over empty.
  template <class Each>
  void clear(Each&& each) {
    for (std::size_t k = 0; k < count_; ++k) each(fifo_[(head_ + k) % fifo_.size()]);
    head_ = 0;
    count_ = 0;
  }

 private:
  std::size_t index_of(const Entry& e) const { return std::size_t(&e - fifo_.data()); }

  std::vector<Entry> fifo_;
  std::vector<char> rows_;  // row_bytes_max per entry, at the entry's index
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace ringhttp::server::db
