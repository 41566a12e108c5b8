// The database routes: validated as /users/:id and /echo are, then a query
// whose result answers later (Session::on_db_result calls answer()).
#include "server/app/app.hpp"

#include "core/http/json_writer.hpp"
#include "server/app/context.hpp"
#include "server/heads.hpp"

namespace ringhttp::server {
namespace {

constexpr std::string_view db_not_configured_body = "{\"error\":\"no database configured (--db)\"}";
constexpr std::string_view db_unavailable_body = "{\"error\":\"database unavailable\"}";
constexpr std::string_view db_queue_full_body = "{\"error\":\"database queue full\"}";
constexpr std::string_view db_failed_body = "{\"error\":\"database error\"}";
constexpr std::string_view no_such_user_body = "{\"error\":\"no such user\"}";

}  // namespace

void App::db_user(Context& ctx) {
  std::uint64_t id = 0;
  if (!user_id(ctx, id)) return;
  if (ctx.app.db_ == nullptr) {
    ctx.reply.fixed(503, heads::service_unavailable_json, db_not_configured_body);
    return;
  }
  submitted(ctx, ctx.app.db_->read_user(ctx.params[0], ctx.request.waiter));  // the id's one spelling
}

void App::db_insert(Context& ctx) {
  json::EchoParse parsed;
  if (!json_body(ctx, json::EchoShape::name_only, parsed)) return;
  if (ctx.app.db_ == nullptr) {
    ctx.reply.fixed(503, heads::service_unavailable_json, db_not_configured_body);
    return;
  }
  static_assert(json::echo_name_chars_max * 4 <= db::Pool::name_bytes_max);
  submitted(ctx, ctx.app.db_->insert_user(parsed.name, ctx.request.waiter));
}

void App::submitted(Context& ctx, db::Submit outcome) {
  switch (outcome) {
    case db::Submit::accepted: ctx.reply.defer(); return;
    case db::Submit::unavailable: ctx.reply.fixed(503, heads::service_unavailable_json, db_unavailable_body); return;
    case db::Submit::queue_full: ctx.reply.fixed(503, heads::service_unavailable_json, db_queue_full_body); return;
  }
}

void App::answer(const db::Result& result, Reply& reply) {
  switch (result.outcome) {
    case db::Outcome::row: {
      // {"id":…,"name":…}: the id as Postgres wrote it (a bigint's digits), the
      // name escaped. db/schema.sql's 100 characters fit the scratch; a row
      // from a database without that CHECK may not, and is a 500, not a crash.
      http::JsonWriter w(reply.scratch(), Reply::scratch_bytes());
      w.begin_object().key("id").integer_digits(result.id).key("name").string(result.name).end_object();
      if (!w.ok()) break;
      const bool created = result.statement == db::Statement::user_insert;
      reply.scratch_body(created ? 201 : 200, created ? heads::created_json : heads::ok_json, w.size());
      return;
    }
    case db::Outcome::no_row:
      if (result.statement == db::Statement::user_by_id) {
        reply.fixed(404, heads::not_found_json, no_such_user_body);
        return;
      }
      break;  // an INSERT … RETURNING with no row: the database misbehaved
    case db::Outcome::unavailable: reply.fixed(503, heads::service_unavailable_json, db_unavailable_body); return;
    case db::Outcome::failed: break;
  }
  reply.fixed(500, heads::internal_error_json, db_failed_body);
}

}  // namespace ringhttp::server
