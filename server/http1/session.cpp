// The session's set-up, its part of the shard's tick and stop, the work
// after each batch, a connection's start, and the parser's way back to it.

#include "server/http1/session.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace ringhttp::server {

void Connection::on_request_headers(const http::RequestHead& head) { session->on_request_headers(*this, head); }
bool Connection::on_request(const http::RequestHead& head) { return session->on_request(*this, head); }

}  // namespace ringhttp::server

namespace ringhttp::server::http1 {

Session::Session(const Config& config, io::SlotTable<Connection>& table, io::DirtyList& dirty, ConnectionIo& io)
    : options_(config.options),
      app_config_(config.app_config),
      cors_(config.cors),
      counters_(config.counters),
      all_shards_(config.all_shards),
      tls_(config.tls),
      zero_copy_(config.zero_copy),
      table_(table),
      dirty_(dirty),
      io_(io),
      output_pool_(table) {
  limits_.request_line_bytes_max = options_.request_line_bytes_max;
  limits_.header_bytes_max = options_.header_bytes_max;
  limits_.body_bytes_max = options_.body_bytes_max;
}

Session::~Session() {
  if (spill_ != nullptr) ::munmap(spill_, std::size_t(spill_blocks) * recv_buffer_bytes);
}

std::string Session::init(std::uint64_t now_ms) {
  // The output blocks: reserved whole, touched as lent, and the warmest
  // reused first.
  const std::uint32_t blocks = options_.output_blocks == 0 ? options_.connections_max
                                                           : std::min(options_.output_blocks, options_.connections_max);
  if (std::string e = output_pool_.init(blocks); !e.empty()) return e;
  // Held rings: one per connection at most, so as many as the table (never
  // short), touched only as connections pause.
  if (std::string e = held_blocks_.init(options_.connections_max); !e.empty()) return e;
  void* spill = ::mmap(nullptr, std::size_t(spill_blocks) * recv_buffer_bytes, PROT_READ | PROT_WRITE,
                       MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (spill == MAP_FAILED) return std::string("spill blocks: ") + std::strerror(errno);
  spill_ = static_cast<char*>(spill);
  spill_free_.reserve(spill_blocks);
  for (std::uint32_t b = spill_blocks; b > 0; --b) spill_free_.push_back(b - 1);
  if (tls_ != nullptr) tls_plain_ = std::make_unique<char[]>(tls::record_plaintext_bytes_max);
  app_ = std::make_unique<App>(app_config_, cors_, counters_);
  now_ms_ = now_ms;
  wall_s_ = std::time(nullptr);
  date_.refresh(wall_s_);
  return {};
}

void Session::on_tick() {
  if (spill_touched_ && spill_free_.size() == spill_blocks) {
    // Spill memory is lent for a flood, not kept after it.
    ::madvise(spill_, std::size_t(spill_blocks) * recv_buffer_bytes, MADV_DONTNEED);
    spill_touched_ = false;
  }
  wall_s_ = std::time(nullptr);
  date_.refresh(wall_s_);
}

void Session::tick(Connection& conn) {
  // A paused connection is re-armed when it resumes (resume_input), not
  // here: a receive armed while paused would fill its held share.
  if (io::rearm_due(conn) && wants_receive(conn)) arm_recv(conn);
  check_timeouts(conn);
}

void Session::begin_stop() {
  if (stopping_) return;
  stopping_ = true;
  for (std::uint32_t i = 0; i < table_.constructed(); ++i) {
    Connection& conn = table_[i];
    if (conn.state != ConnState::open) continue;
    const bool idle = conn.output_empty() && !conn.send_inflight && !conn.parser.in_message();
    if (idle) {
      abort(conn);
    } else {
      // Let what is queued (a stream included) finish, then close.
      begin_drain(conn);
      dirty_.mark(conn);
    }
  }
}

void Session::start(Connection& conn, const ClientKey& peer) {
  conn.session = this;
  conn.peer = peer;
  conn.state = ConnState::open;
  conn.written_responses = 0;
  conn.input_paused = conn.peer_eof = conn.single_shot = conn.metrics_queued = false;
  conn.last_activity_ms = now_ms_;
  conn.header_deadline_ms = 0;
  conn.body_start_ms = 0;
  conn.send_progress_ms = now_ms_;
  conn.requests_done = 0;
  conn.parser.reset(limits_, &conn);
  assert(conn.output == nullptr && !conn.waiting_output && !conn.parser.has_buffers());
  conn.output_granted = false;
  assert(conn.held == nullptr);
  conn.held_buffers = 0;
  counters_.connections_accepted.add();
  if (tls_ != nullptr) tls_start(conn);
  if (conn.state != ConnState::open) return;
  assert(wants_receive(conn));
  arm_recv(conn);
}

// Cork: everything the batch's receives produced leaves now, one send per
// connection.
void Session::after_batch(Connection& conn) {
  if (conn.state == ConnState::free) return;
  if (conn.state == ConnState::closing) return maybe_release(conn);
  // A paused connection is re-armed when it resumes (resume_input), not
  // here: a receive armed while paused would fill its held share.
  if (io::rearm_due(conn) && wants_receive(conn)) arm_recv(conn);
  if (conn.output_granted) {
    conn.output_granted = false;
    if (conn.state == ConnState::open && conn.input_paused && can_take_more(conn)) resume_input(conn);
  }
  flush(conn);
  maybe_finish_drain(conn);
  maybe_return_output(conn);
}

void Session::on_db_result(Connection& conn, PendingResponse& r, const db::Result& result) {
  if (conn.state != ConnState::open && conn.state != ConnState::draining) {
    dirty_.mark(conn);  // the client left: the result is dropped, then the slot freed
    return;
  }
  assert(r.source == BodySource::deferred);
  Reply reply(r, r.head_only, conn.output->metrics_text, all_shards_);
  App::answer(result, reply);
  finish_response(r, reply.content_length(), r.close_after, r.http10_keep_alive);
  conn.last_activity_ms = now_ms_;
  dirty_.mark(conn);
}

}  // namespace ringhttp::server::http1
