#pragma once
// One load connection: a fixed slot in its worker's table, reopened in place
// whenever the peer or an error closes it. Its parser and the state of its
// one send live here, so the request path allocates nothing.
//
// Lifetime of a socket: the generation is bumped for each new socket, and
// the descriptor is closed only when no operation on it is in flight, so a
// late completion can never touch the next socket of the same slot.

#include <cstdint>
#include <memory>

#include "client/load/h2_link.hpp"
#include "client/load/pacing.hpp"
#include "core/http/response_parser.hpp"
#include "core/io/engine.hpp"
#include "core/tls/session.hpp"
#include "core/tls/stream.hpp"

namespace ringhttp::client {

class LoadSession;

enum class ConnState : std::uint8_t {
  idle,        // no socket; (re)connects when reconnect_at_ns is due
  connecting,  // io_uring connect in flight
  handshake,   // https: connected, the TLS handshake under way
  open,        // sending requests, reading responses
  closing,     // every in-flight operation cancelled; the socket closes when none is left
};

// The engine's part (slot, generation, socket, operations in flight, the
// send's cursor) is the io::Link it derives from.
struct Connection final : io::Link, http::ResponseEvents {
  LoadSession* session = nullptr;  // the parsers' callbacks go to it
  std::uint32_t global_index = 0;  // among all workers' connections: the rate model's phase
  ConnState state = ConnState::idle;
  bool connect_failed = false;  // the last attempt failed: back off before the next
  bool was_open = false;        // reopening this slot counts as a reconnect
  bool peer_closing = false;    // a response said Connection: close; nothing more will come
  bool unsolicited = false;     // a response arrived with no request outstanding

  std::uint32_t address_index = 0;  // the target's address this slot connects to; the next after a failure
  std::uint32_t outstanding = 0;  // requests handed to a send whose responses have not arrived
  std::uint32_t sent_on_socket = 0;  // requests sent on this socket (--requests-per-connection)
  std::uint32_t socket_quota = 0;    // ... and how many it may send: its last says Connection: close
  std::uint32_t expect_index = 0;  // which of the run's distinct requests the next response answers
  const char* send_base = nullptr;  // the batch being sent (in the run's serialized requests)
  std::uint32_t send_offset = 0;  // the send in flight: offset in the batch bytes
  std::uint32_t send_end = 0;     // ... and its end (short sends resume at send_offset)
  // What the send continues with once the range above is sent: a closing
  // batch's last request, which lives apart (RequestBytes::closing).
  const char* then_base = nullptr;
  std::uint32_t then_len = 0;
  std::uint64_t sent_at_ns = 0;   // when the outstanding requests were handed to the ring
  std::uint64_t intended_ns = 0;  // rate model: the outstanding request's intended send time
  std::uint64_t deadline_ns = 0;  // the outstanding requests (or the connect) time out then
  std::uint64_t reconnect_at_ns = 0;

  Pacing pacing;  // rate model: when this connection's requests are due
  http::ResponseParser parser;
  // https: the connection's TLS, between the socket and the parser. With
  // it, send_offset counts the batch's bytes handed to it for encryption,
  // and the send in flight carries ciphertext from the output area.
  tls::Session tls;
  // https: the ciphertext to send, in `tls_out` (LoadSession::tls_out_bytes,
  // allocated with the slot), as core/tls/stream.hpp keeps it.
  std::unique_ptr<char[]> tls_out;
  tls::Outbox tls_box;
  // Received ciphertext the session could not read yet: reading stopped
  // for room in the output area (to answer a key update, say). It is read
  // once the area's send is done; what arrives meanwhile queues behind it.
  // Allocated on first need (LoadSession::tls_held_bytes_max) and kept.
  std::unique_ptr<char[]> tls_held;
  std::uint32_t tls_held_len = 0;
  bool tls_held_eof = false;  // the peer's FIN arrived behind held ciphertext
  // HTTP/2: the session in place of the parser, its streams in place of
  // the batch (outstanding counts the streams in flight), and its output
  // as the range being sent. Made with the slot; null for HTTP/1.1.
  std::unique_ptr<H2Link> h2;

  void on_response(const http::ResponseHead& head) override;
};

}  // namespace ringhttp::client
