#pragma once
// What a database query hands back to whoever asked for it: the waiter it
// was queued for, and its outcome. Shared by the pool and its pipeline
// queue, with no libpq in it.

#include <cstdint>
#include <string_view>

#include "server/db/statements.hpp"

namespace ringhttp::server::db {

// Who waits for a query's result; opaque to the pool.
struct Waiter {
  std::uint64_t tag = 0;     // the waiting HTTP connection (its slot and generation)
  void* response = nullptr;  // what the result fills
};

enum class Outcome : std::uint8_t {
  row,          // a row: id and name
  no_row,       // the query returned none
  unavailable,  // no answer: the connection was lost or timed out, or the
                // database refused for a reason of availability (SQLSTATE
                // classes 08, 40, 53, 57): worth retrying
  failed,       // the database refused the query for another reason (or
                // answered what this server cannot use)
};

struct Result {
  Statement statement;
  Outcome outcome;
  std::string_view id;    // the row's id as Postgres wrote it (digits)
  std::string_view name;  // the row's name; both valid only during on_result
};

}  // namespace ringhttp::server::db
