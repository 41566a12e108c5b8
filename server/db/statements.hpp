#pragma once
// The statements the database routes run, prepared once per connection
// (the same text as bench/peers/node_pg.js and the pgbench ceiling's
// scripts, over db/schema.sql's table).

#include <array>
#include <cstdint>

namespace ringhttp::server::db {

enum class Statement : std::uint8_t { user_by_id, user_insert };
inline constexpr std::size_t statement_count = 2;

struct StatementText {
  const char* name;
  const char* sql;
};

inline constexpr std::array<StatementText, statement_count> statements = {{
    {"user_by_id", "SELECT id, name FROM users WHERE id = $1"},
    {"user_insert", "INSERT INTO users (name) VALUES ($1) RETURNING id, name"},
}};

}  // namespace ringhttp::server::db
