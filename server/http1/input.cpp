// A connection's input: receives (multishot while it keeps up, single-shot
// once it has pipelined far enough ahead to pause), parsing, and the chunks
// held while its input is paused (a share of the provided buffers, then
// spill blocks). Asks the output side for a block before parsing
// (lend_output) and the close side to abort an overflowing connection.

#include "server/http1/session.hpp"

#include <cassert>
#include <cerrno>
#include <cstring>

#include "core/io/errno_class.hpp"

namespace ringhttp::server::http1 {

// The one answer to "should a receive be armed now?": while the connection
// is open and its input not paused, and while it drains or lingers (what
// arrives then is read and discarded); never after the peer's FIN, and one
// receive at a time. A pending re-arm (-ENOBUFS) is the caller's to weigh.
bool Session::wants_receive(const Connection& conn) const {
  if (conn.recv_armed || conn.peer_eof) return false;
  switch (conn.state) {
    case ConnState::open: return !conn.input_paused;
    case ConnState::draining:
    case ConnState::lingering: return true;
    case ConnState::free:
    case ConnState::closing: return false;
  }
  return false;
}

void Session::arm_recv(Connection& conn) {
  assert(wants_receive(conn));
  assert(conn.state != ConnState::closing && conn.state != ConnState::free);
  io_.arm_receive(conn, !conn.single_shot);
}

void Session::release_chunk(InputChunk chunk) {
  if (chunk.buffer_id >= spill_id_base) return release_spilled(chunk);
  io_.give_back(chunk.buffer_id);
}

// Out of line: the rare case, kept from the usual one's register saves.
void Session::release_spilled(InputChunk chunk) {
  spill_free_.push_back(std::uint32_t(chunk.buffer_id - spill_id_base));
  counters_.spill_blocks_used.set(spill_blocks - spill_free_.size());
}

// Copies a provided buffer's bytes into a spill block and gives the buffer
// back to the ring. False when every spill block is taken.
bool Session::spill(InputChunk& chunk) {
  assert(chunk.len <= recv_buffer_bytes);
  std::int32_t id = 0;
  char* to = take_spill_block(id);
  if (to == nullptr) return false;
  std::memcpy(to, chunk.data, chunk.len);
  io_.give_back(chunk.buffer_id);
  chunk = InputChunk{to, chunk.len, id, chunk.decrypted};
  return true;
}

// A free spill block and its buffer id; null when every one is taken.
char* Session::take_spill_block(std::int32_t& buffer_id) {
  if (spill_free_.empty()) return nullptr;
  const std::uint32_t block = spill_free_.back();
  spill_free_.pop_back();
  spill_touched_ = true;
  counters_.spill_blocks_used.set(spill_blocks - spill_free_.size());
  buffer_id = spill_id_base + std::int32_t(block);
  return spill_ + std::size_t(block) * recv_buffer_bytes;
}

// Appends `chunk` to the newest held chunk when that one is in a spill
// block with room for it (a provided buffer is first copied into one), and
// gives `chunk`'s buffer back. False when it does not fit.
bool Session::join_last_held(Connection& conn, const InputChunk& chunk) {
  InputChunk& last = conn.held->chunks.back();
  if (last.buffer_id == io::own_buffer || last.decrypted != chunk.decrypted || last.len + chunk.len > recv_buffer_bytes) {
    return false;
  }
  if (last.buffer_id < spill_id_base) {
    // A provided buffer: its bytes move to a spill block first.
    if (!spill(last)) return false;
    assert(conn.held_buffers > 0 && held_buffers_ > 0);
    --conn.held_buffers;
    --held_buffers_;
    counters_.input_buffers_held.set(held_buffers_);
  }
  const char* block_end = spill_ + std::size_t(last.buffer_id - spill_id_base + 1) * recv_buffer_bytes;
  if (last.data + last.len + chunk.len > block_end) return false;
  std::memcpy(const_cast<char*>(last.data) + last.len, chunk.data, chunk.len);
  last.len += chunk.len;
  release_chunk(chunk);
  return true;
}

// The receive's end, after its pieces (if it brought bytes).
void Session::after_receive(Connection& conn, io::Received::Kind kind, std::int32_t res) {
  if (kind == io::Received::Kind::eof) {
    // The peer finished sending. Answer what is queued, then close; what
    // it sent before its FIN and is held while input is paused is parsed
    // and answered first (resume_input drains once it is all read).
    if (conn.state == ConnState::open && conn.input_paused) {
      conn.peer_eof = true;
    } else if (conn.state == ConnState::open && (!conn.output_empty() || conn.send_inflight)) {
      conn.peer_eof = true;
      begin_drain(conn);
      dirty_.mark(conn);
    } else if (conn.state == ConnState::draining) {
      // Already answering what is queued before closing (a request that
      // ends the connection, a TLS close_notify): that answer, perhaps not
      // even sent yet, still goes out; the close follows it at once, with
      // no linger, since the peer has nothing more to send.
      conn.peer_eof = true;
      maybe_finish_drain(conn);
    } else {
      abort(conn);
    }
  } else if (kind != io::Received::Kind::data) {
    // Not an end of stream when the buffer ring ran dry (-ENOBUFS): re-armed
    // once buffers have been given back (after this batch), or on the tick
    // if it repeats. Cancelled: ours (input paused, or the connection closing).
    if (res == -ENOBUFS) counters_.recv_no_buffers.add();
    if (kind == io::Received::Kind::peer_gone) abort(conn);
  }
  // Re-arm a receive that ended: a single-shot one after data, and a
  // multishot one cancelled to pause input if input has since resumed.
  const bool ended_normally = kind == io::Received::Kind::data || kind == io::Received::Kind::cancelled;
  if (ended_normally && !conn.rearm_recv && wants_receive(conn)) arm_recv(conn);
  if (conn.state == ConnState::closing) dirty_.mark(conn);  // to be freed
}

// Bytes alone are not activity: between requests only empty lines can
// arrive without starting one, and a client trickling those must still
// idle out. A request's start has its own deadline (header, then body); a
// finished request or a send's progress counts as activity.
void Session::on_received_piece(Connection& conn, InputChunk chunk) {
  if (conn.state != ConnState::open) {
    release_chunk(chunk);  // draining, lingering, closing or released: input is discarded
  } else if (conn.input_paused) {
    hold(conn, chunk, false);
  } else {
    consume(conn, chunk);
  }
}

void Session::consume(Connection& conn, InputChunk chunk) {
  assert(conn.state == ConnState::open);
  assert(!conn.input_paused);
  if (conn.output == nullptr && !lend_output(conn)) {
    // Every block is lent: the chunk waits, input paused, and the
    // connection is handed the next block given back (in arrival order).
    hold(conn, chunk, true);
    if (conn.state == ConnState::open) {
      pause_input(conn);
      wait_for_output(conn);
    }
    return;
  }
  if (conn.tls.started() && !chunk.decrypted) return tls_consume(conn, chunk);
  const Parsed parsed = parse(conn, chunk.data, chunk.len);
  if (!parsed.paused) return release_chunk(chunk);
  chunk.data += parsed.consumed;
  chunk.len -= parsed.consumed;
  if (conn.state != ConnState::open || chunk.len == 0) {
    release_chunk(chunk);
  } else {
    hold(conn, chunk, true);
  }
  if (conn.state == ConnState::open) pause_input(conn);
}

// Feeds received plaintext to the parser (the connection has its output
// block). Not paused: it took every byte, or refused the request (the
// error is queued and the rest of the bytes mean nothing now).
Session::Parsed Session::parse(Connection& conn, const char* data, std::uint32_t len) {
  assert(conn.output != nullptr);
  const bool was_in_header = conn.parser.in_header_section();
  const bool was_in_body = conn.parser.in_body();
  const std::uint64_t done_before = conn.requests_done;
  const http::RequestParser::Result result = conn.parser.feed(data, len);
  // A header section or a body that started during this feed starts its
  // timeout now.
  const bool new_request = conn.requests_done != done_before;
  if (conn.parser.in_header_section() && (!was_in_header || new_request)) {
    conn.header_deadline_ms = now_ms_ + options_.header_timeout_ms;
  }
  if (conn.parser.in_body() && (!was_in_body || new_request)) conn.body_start_ms = now_ms_;
  dirty_.mark(conn);
  switch (result.status) {
    case http::RequestParser::Status::done: return {};
    case http::RequestParser::Status::paused: return {true, std::uint32_t(result.consumed)};
    case http::RequestParser::Status::error: {
      const http::ParseError error = conn.parser.error();
      counters_.parse_errors[std::size_t(error)].add();
      queue_error(conn, http::status_for(error));
      return {};
    }
  }
  return {};
}

void Session::hold(Connection& conn, InputChunk chunk, bool at_front) {
  const auto is_provided = [](const InputChunk& c) {
    return c.buffer_id != io::own_buffer && c.buffer_id < spill_id_base;
  };
  // A peer that trickles its bytes is delivered them in as many small
  // pieces: once the ring is full they join the newest held chunk, so what a
  // connection holds is bounded by its bytes, not by its pieces.
  if (!at_front && conn.held != nullptr && conn.held->chunks.full() && join_last_held(conn, chunk)) return;
  // Input held beyond the connection's share of provided buffers, or the
  // shard's, is copied out so the buffer serves other clients (the chunk
  // being parsed, put back at the front, included); beyond what the spill
  // blocks hold, or 64 chunks, the connection is closed.
  const bool over_share = conn.held_buffers >= Connection::held_buffers_max || held_buffers_ >= held_buffers_shard_max;
  const bool fits =
      (conn.held == nullptr || !conn.held->chunks.full()) && (!is_provided(chunk) || !over_share || spill(chunk));
  if (!fits) {
    counters_.input_overflow.add();
    release_chunk(chunk);
    abort(conn);
    return;
  }
  if (conn.held == nullptr) {
    // As many rings as slots, one per connection at most: never short.
    conn.held = held_blocks_.acquire();
    assert(conn.held != nullptr);
    conn.held->chunks.clear();
    counters_.held_rings_lent.set(++held_rings_lent_);
  }
  if (at_front) {
    conn.held->chunks.push_front(chunk);
  } else {
    conn.held->chunks.push_back(chunk);
  }
  if (is_provided(chunk)) {
    ++conn.held_buffers;
    ++held_buffers_;
    counters_.input_buffers_held.set(held_buffers_);
  }
}

// Takes the oldest held chunk; the ring goes back with the last one.
InputChunk Session::unhold(Connection& conn) {
  assert(!conn.held_empty());
  const InputChunk chunk = conn.held->chunks.pop_front();
  if (conn.held->chunks.empty()) {
    held_blocks_.release(*conn.held);
    conn.held = nullptr;
    assert(held_rings_lent_ > 0);
    counters_.held_rings_lent.set(--held_rings_lent_);
  }
  if (chunk.buffer_id != io::own_buffer && chunk.buffer_id < spill_id_base) {
    assert(conn.held_buffers > 0 && held_buffers_ > 0);
    --conn.held_buffers;
    --held_buffers_;
    counters_.input_buffers_held.set(held_buffers_);
  }
  return chunk;
}

void Session::drop_held(Connection& conn) {
  while (!conn.held_empty()) release_chunk(unhold(conn));
  assert(conn.held == nullptr);
}

void Session::pause_input(Connection& conn) {
  if (conn.input_paused) return;
  conn.input_paused = true;
  conn.single_shot = true;
  // A multishot receive would go on delivering: cancel it, so the socket's
  // buffer fills and TCP pushes back on the client. A single-shot receive is
  // simply not re-armed.
  io_.stop_receiving(conn);
}

bool Session::can_take_more(const Connection& conn) const {
  // Unsent output is what the send in flight has left, and over TLS the
  // rest of its batch, not yet encrypted (the queue behind it is bounded by
  // its length, and its bodies live elsewhere).
  const std::uint64_t tls_left = conn.output != nullptr ? conn.output->tls_plain_left : 0;
  const bool output_backlog = conn.send_inflight && conn.send_left + tls_left >= options_.output_bytes_max;
  // The next request must find room for every response it may queue.
  const bool room = Connection::responses_max - conn.output_size() >= Connection::responses_per_request_max;
  return room && !conn.metrics_queued && !output_backlog && !conn.waiting_output;
}

void Session::resume_input(Connection& conn) {
  assert(conn.input_paused);
  conn.input_paused = false;
  while (!conn.held_empty() && !conn.input_paused && conn.state == ConnState::open) consume(conn, unhold(conn));
  if (conn.state != ConnState::open || conn.input_paused) return;
  if (conn.peer_eof) {
    // Everything the peer sent before its FIN has been read: answer, close.
    begin_drain(conn);
    dirty_.mark(conn);
  } else if (wants_receive(conn)) {
    arm_recv(conn);
  }
}

}  // namespace ringhttp::server::http1
