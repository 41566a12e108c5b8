#include "support/hostile_driver.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>

#include "support/hostile_reader.hpp"
#include "support/tls_channel.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test::hostile {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t no_request = std::size_t(-1);
constexpr std::size_t recv_bytes_max = 64 * 1024;
// The last bytes received on a connection, kept for a failure's report.
constexpr std::size_t received_tail_bytes_max = 600;
// poll() never sleeps longer than this, so timers are checked often enough.
constexpr auto poll_ms_max = 20ms;
// How much sooner than its idle timeout, measured from the client's last
// sent byte, the server may close an idle connection. The server's idle
// time starts at its last receive or send completion, so no sooner than
// it received that byte (the last answer's sends may complete well before
// the client reads them: the socket buffers megabytes); both clocks are
// CLOCK_MONOTONIC, the server's in whole milliseconds.
constexpr auto idle_early_ms_max = 50ms;
// A header section that took this much less than the header timeout to
// send may still have been timed out: the server checks once per tick.
constexpr auto header_timeout_margin = 300ms;
// The name the TLS session is for: sent as SNI, and the certificate's.
constexpr std::string_view tls_host = "localhost";

std::string errno_text(int e) { return std::strerror(e); }

bool is_peer_gone(int e) { return e == ECONNRESET || e == EPIPE; }

// One connection running its script, checked against its model.
class Client {
 public:
  // `tls`: the round's client context over HTTPS, nullptr over HTTP.
  Client(Script script, std::uint16_t port, const DriverOptions& options, ringhttp::tls::ClientContext* tls,
         Clock::time_point now)
      : script_(std::move(script)),
        options_(options),
        rng_(script_.seed * 31 + script_.index + 7),
        last_progress_(now),
        last_sent_at_(now),
        begun_at_(script_.requests.size()),
        head_sent_at_(script_.requests.size()) {
    next_ = first_answered_from(0);
    connect_to(port);
    if (tls != nullptr && !done_) start_tls(*tls);
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs the script as far as it goes without blocking.
  void advance(Clock::time_point now) {
    while (!done_ && handshaking_ && handshake_step()) progress(now);
    while (!done_ && !handshaking_) {
      if (can_read(now)) read_available();
      if (done_ || !run_step(now)) break;
      progress(now);
    }
    if (!done_ && now - last_progress_ > options_.stall_ms_max) {
      fail("no progress for " + std::to_string(options_.stall_ms_max.count()) + " ms " +
           (handshaking_ ? "in the TLS handshake" : "at step " + step_text()) +
           ": the server has stopped serving this connection");
    }
  }

  // The round's deadline has passed with this connection unfinished.
  void abandon() { fail("still unfinished when the round's time ran out, at step " + step_text()); }

  bool done() const { return done_; }
  int fd() const { return fd_; }
  const std::optional<std::string>& failure() const { return failure_; }
  std::uint32_t index() const { return script_.index; }

  short events(Clock::time_point now) const {
    if (done_ || fd_ < 0) return 0;
    short e = 0;
    if (can_read(now)) e |= POLLIN;
    if (want_write_) e |= POLLOUT;
    return e;
  }

  Clock::time_point wake_at(Clock::time_point now) const {
    Clock::time_point at = last_progress_ + options_.stall_ms_max;
    if (read_stopped_until_ > now) at = std::min(at, read_stopped_until_);
    if (send_ready_at_ > now) at = std::min(at, send_ready_at_);
    if (step_started_ && step_until_ > now) at = std::min(at, step_until_);
    return at;
  }

  // What this connection adds to the round's tally, once it is done.
  void add_to(Tally& tally) const {
    tally.add(tally_);
    add_handshake_to(tally);
    if (clean_end_) return;
    // Requests whose answer never came on a connection that ended early:
    // the server may have parsed those it received whole.
    for (std::size_t i = 0; i < script_.requests.size(); ++i) {
      const Request& q = script_.requests[i];
      if (!q.answered || next_ == no_request || i < next_) continue;
      if (q.expect_continue && sent_ >= q.head_end && continue_for_ != i) ++tally.status_unsure[100];
      if (q.expected.routed && sent_ >= q.end) {
        ++tally.routed_unsure;
        ++tally.status_unsure[q.expected.status];
      } else if (!q.expected.routed && sent_ > q.begin) {
        ++tally.refusal_unsure[q.expected.refusal_metric];
        ++tally.status_unsure[q.expected.status];
      }
    }
  }

 private:
  void connect_to(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail("socket: " + errno_text(errno));
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // each piece leaves as its own segment
    if (script_.receive_buffer_bytes) {
      const int bytes = *script_.receive_buffer_bytes;
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);  // before connect, so the window honours it
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Blocking: a loopback connect completes in the kernel, before accept.
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      return fail("connect: " + errno_text(errno));
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    tally_.connections = 1;
  }

  // ---- TLS

  void start_tls(ringhttp::tls::ClientContext& context) {
    channel_.emplace();
    std::string error;
    if (!channel_->start(context, tls_host, error)) return fail("TLS: " + error);
    handshaking_ = true;
  }

  // One pass of the handshake: its messages sent, what came received and
  // read. True when it moved. Once the client's last flight has left, the
  // script starts.
  bool handshake_step() {
    bool moved = send_ciphertext();
    if (done_) return false;
    if (channel_->handshake_done()) {
      if (!channel_->pending().empty()) return moved;  // the client's Finished is still leaving
      begin_script();
      return true;
    }
    std::array<char, recv_bytes_max> buffer;
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n == 0) {
      fail("the server closed the connection in the TLS handshake");
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return moved;
      fail("recv in the TLS handshake: " + errno_text(errno));
      return false;
    }
    tally_.bytes_received += std::uint64_t(n);
    channel_->received(std::string_view(buffer.data(), std::size_t(n)));
    const TlsChannel::Status status = channel_->handshake();
    if (status == TlsChannel::Status::error || status == TlsChannel::Status::closed) {
      fail("TLS handshake: " + channel_->session().error_reason());
      return false;
    }
    return true;
  }

  // The handshake is over: the script starts, and its clocks with it. The
  // server's idle clock starts when it has read the client's Finished,
  // after it left here, as a plain connection's starts at its accept.
  void begin_script() {
    handshaking_ = false;
    tls_done_ = true;
    tls_resumed_ = channel_->session().resumed();
    last_sent_at_ = Clock::now();
    decrypt_available();  // anything that came with the server's last flight
  }

  // Sends pending ciphertext as far as the socket takes it. True when some
  // left. Once the record of a script's piece has left whole, its bytes
  // count as sent (the server can read them now, and not before).
  bool send_ciphertext() {
    bool moved = false;
    while (!channel_->pending().empty()) {
      const std::string_view bytes = channel_->pending();
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n > 0) {
        channel_->sent(std::size_t(n));
        tally_.bytes_sent += std::uint64_t(n);
        moved = true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        want_write_ = true;
        return moved;
      }
      on_send_error(n < 0 ? errno : EIO);
      return moved;
    }
    want_write_ = false;
    if (record_end_ > sent_) {
      tally_.plaintext_sent += record_end_ - sent_;
      sent_ = record_end_;
      last_sent_at_ = Clock::now();
      note_sent(last_sent_at_);
    }
    return moved;
  }

  // The next piece of a send step as one record, sent as far as it goes.
  bool seal_piece(const Step& s, std::uint64_t piece) {
    piece = std::min<std::uint64_t>(piece, ringhttp::tls::record_plaintext_bytes_max);
    if (!channel_->seal(std::string_view(script_.stream).substr(std::size_t(sent_), std::size_t(piece)))) {
      fail("TLS: a record cannot be made: " + channel_->session().error_reason());
      return false;
    }
    record_end_ = sent_ + piece;
    // As for a plain piece: due gap_ms after the last one was.
    send_ready_at_ += std::chrono::milliseconds(s.gap_ms);
    send_ciphertext();
    return !done_;
  }

  // Reads the records received: their plaintext goes to the model as a
  // plain connection's bytes do. The server's close_notify must be the
  // last record; its FIN (on_eof) ends the connection as the model says.
  void decrypt_available() {
    std::array<char, ringhttp::tls::record_plaintext_bytes_max> plain;
    while (!done_) {
      if (close_notify_received_) {
        if (channel_->unread() > 0) fail("TLS records after the server's close_notify");
        return;
      }
      std::size_t n = 0;
      switch (channel_->read(plain.data(), plain.size(), n)) {
        case TlsChannel::Status::done:
          server_spoke_ = true;
          tally_.plaintext_received += n;
          take_bytes(std::string_view(plain.data(), n));
          break;
        case TlsChannel::Status::want_io: return;
        case TlsChannel::Status::closed:
          close_notify_received_ = true;
          ++tally_.close_notifies_received;
          break;
        case TlsChannel::Status::error:
          return fail("TLS: the server's records cannot be read: " + channel_->session().error_reason());
      }
    }
  }

  // How the server counts this connection's handshake (see Tally).
  void add_handshake_to(Tally& tally) const {
    if (!channel_ || tally_.connections == 0) return;
    if (!tls_done_) {
      ++tally.tls_unfinished;
      return;
    }
    const bool sure = clean_end_ || server_spoke_;
    if (tls_resumed_) {
      ++(sure ? tally.tls_resumed_seen : tally.tls_resumed_unsure);
    } else {
      ++(sure ? tally.tls_full_seen : tally.tls_full_unsure);
    }
  }

  std::size_t first_answered_from(std::size_t i) const {
    for (; i < script_.requests.size(); ++i) {
      if (script_.requests[i].answered) return i;
    }
    return no_request;
  }

  bool can_read(Clock::time_point now) const { return fd_ >= 0 && !eof_ && now >= read_stopped_until_; }

  void progress(Clock::time_point now) { last_progress_ = now; }

  void next_step() {
    ++step_;
    step_started_ = false;
  }

  // ---- reading and checking

  void read_available() {
    std::array<char, recv_bytes_max> buffer;
    while (!done_ && !eof_) {
      const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
      if (n > 0) {
        const std::string_view bytes(buffer.data(), std::size_t(n));
        tally_.bytes_received += std::uint64_t(n);
        last_progress_ = Clock::now();
        if (channel_) {
          channel_->received(bytes);
          decrypt_available();
        } else {
          take_bytes(bytes);
        }
        continue;
      }
      if (n == 0) return on_eof();
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == ECONNRESET) return on_peer_reset("reading");
      return fail("recv: " + errno_text(errno));
    }
  }

  // Response bytes (plaintext): to the reader, and the responses it makes to the model.
  void take_bytes(std::string_view bytes) {
    received_tail_.append(bytes);
    if (received_tail_.size() > received_tail_bytes_max) {
      received_tail_.erase(0, received_tail_.size() - received_tail_bytes_max);
    }
    reader_.append(bytes);
    take_responses();
  }

  void take_responses() {
    while (!done_) {
      const bool head = next_ != no_request && script_.requests[next_].head;
      std::optional<Response> response;
      try {
        response = reader_.next(head);
      } catch (const MalformedResponse& e) {
        return fail(e.what());
      }
      if (!response) return;
      on_response(*response);
    }
  }

  void on_response(const Response& r) {
    if (next_ == no_request) {
      return fail("a response (" + std::to_string(r.status) + " " + r.reason + ", body \"" + escaped(r.body, 200) +
                  "\") after the last one expected" + (closed_expected_ ? ", which closes the connection" : ""));
    }
    const Request& q = script_.requests[next_];
    if (r.status == 100) {
      if (!q.expect_continue) return fail("100 Continue to request " + request_text(next_) + ", which has no Expect");
      if (continue_for_ == next_) return fail("a second 100 Continue to request " + request_text(next_));
      if (sent_ < q.head_end) {
        return fail("100 Continue to request " + request_text(next_) + " before its header section was sent (" +
                    std::to_string(sent_) + " of " + std::to_string(q.head_end) + " bytes)");
      }
      continue_for_ = next_;
      ++tally_.status_seen[100];
      return;
    }
    if (r.status == 408 && q.expected.status != 408 && sent_slowly(next_)) {
      // The driver was late: the header section took about as long as the
      // server's header timeout, which the server rightly enforced.
      ++tally_.slow_header_timeouts;
      ++tally_.status_seen[408];
      ++tally_.refusal_seen[timeout_refusal];
      // To an unfinished HEAD request the 408 may carry its body all the
      // same (the request never became one), which the reader, expecting a
      // HEAD's answer, leaves unread; the close follows it.
      if (q.head) head_408_body_bytes_ = r.content_length().value_or(0);
      closed_expected_ = true;
      next_ = no_request;
      return;
    }
    if (const std::string wrong = mismatch(q, r); !wrong.empty()) {
      return fail("request " + request_text(next_) + ": " + wrong);
    }
    ++tally_.status_seen[r.status];
    if (q.expected.routed) {
      ++tally_.routed_seen;
    } else {
      ++tally_.refusal_seen[q.expected.refusal_metric];
    }
    if (q.expected.closes) closed_expected_ = true;
    ++finals_;
    answered_end_ = q.end;
    next_ = first_answered_from(next_ + 1);
    if (closed_expected_ && next_ != no_request) {
      return fail("the model expects responses after one that closes the connection (a bug in the driver)");
    }
  }

  // Why `r` is not the answer to `q`, or empty when it is.
  static std::string mismatch(const Request& q, const Response& r) {
    const Expected& e = q.expected;
    const std::string got =
        " (got " + std::to_string(r.status) + " " + r.reason + ", body \"" + escaped(r.body, 200) + "\")";
    if (r.status != e.status) return "expected status " + std::to_string(e.status) + got;
    switch (e.body_check) {
      case Expected::Body::exact:
        if (r.body != e.body) return "expected body \"" + escaped(e.body, 200) + "\"" + got;
        break;
      case Expected::Body::contains:
        if (r.body.find(e.body) == std::string::npos) return "expected a body containing \"" + e.body + "\"" + got;
        break;
      case Expected::Body::stream:
        if (r.body.size() != e.stream_bytes) {
          return "expected " + std::to_string(e.stream_bytes) + " stream bytes, got " + std::to_string(r.body.size());
        }
        if (const auto at = first_pattern_mismatch(r.body, 0)) {
          return "stream byte " + std::to_string(*at) + " breaks the i mod 251 pattern";
        }
        break;
      case Expected::Body::none:
        if (!r.body.empty()) return "expected no body" + got;
        if (q.head && r.content_length() != 13) return "HEAD /plaintext without Content-Length: 13" + got;
        break;
    }
    if (r.has_token("Connection", "close") != e.closes) {
      return e.closes ? "expected Connection: close" + got : "Connection: close on a kept-alive connection" + got;
    }
    if (e.keep_alive_header && !r.has_token("Connection", "keep-alive")) {
      return "expected Connection: keep-alive for HTTP/1.0" + got;
    }
    if (!r.header("Date") || !r.header("Server")) return "no Date or no Server header" + got;
    return {};
  }

  void on_eof() {
    eof_ = true;
    const bool only_a_408s_body = closed_expected_ && reader_.pending_bytes() == head_408_body_bytes_;
    if (reader_.pending_bytes() > 0 && !only_a_408s_body) {
      return fail("the server closed the connection in the middle of a response (" +
                  std::to_string(reader_.pending_bytes()) + " bytes of it received)");
    }
    if (closed_expected_ || (half_closed_ && next_ == no_request)) {
      ++tally_.server_closes;
      return;
    }
    if (script_.ends_idle && next_ == no_request && step_ + 1 == script_.steps.size()) {
      // Idle since its last answer: closed by the idle timeout, not before.
      const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_sent_at_);
      if (idle < options_.idle_timeout - idle_early_ms_max) {
        return fail("the server closed an idle connection " + std::to_string(idle.count()) +
                    " ms after its last request was sent, before its idle timeout (" +
                    std::to_string(options_.idle_timeout.count()) + " ms)");
      }
      ++tally_.server_closes;
      ++tally_.idle_timeouts;
      return;
    }
    if (closed_idle_while_late()) return;
    if (next_ == no_request) return fail("the server closed a keep-alive connection with every request answered");
    fail("the server closed the connection with request " + request_text(next_) + " unanswered");
  }

  // A connection the driver left idle (every byte sent belongs to a request
  // whose final response has arrived) for at least the server's idle
  // timeout since its last byte was sent: the driver's loop was late (a
  // loaded machine, a sanitizer), and the server rightly closed it. The
  // server's idle clock starts no earlier than that last byte arrived, so
  // a close sooner than the timeout after it is still a failure. Ends the
  // connection, with nothing left unsure: nothing unanswered was sent.
  bool closed_idle_while_late() {
    if (sent_ != answered_end_ || reader_.pending_bytes() > 0) return false;
    if (Clock::now() - last_sent_at_ < options_.idle_timeout - idle_early_ms_max) return false;
    ++tally_.server_closes;
    ++tally_.idle_timeouts;
    ++tally_.late_idle_timeouts;
    ::close(fd_);
    fd_ = -1;
    clean_end_ = true;
    done_ = true;
    return true;
  }

  void on_peer_reset(const char* doing) {
    if (closed_expected_) {
      // The server reset after its last response had arrived whole: closed all the same.
      eof_ = true;
      ++tally_.server_closes;
      return;
    }
    if (closed_idle_while_late()) return;
    fail(std::string("connection reset by the server while ") + doing +
         (next_ == no_request ? std::string(" with every request answered")
                              : " with request " + request_text(next_) + " unanswered"));
  }

  // ---- the steps

  // Returns true when the step made progress (bytes sent, or moved on).
  bool run_step(Clock::time_point now) {
    if (step_ >= script_.steps.size()) {
      fail("the script ended without a finish step (a bug in the driver)");
      return false;
    }
    const Step& s = script_.steps[step_];
    switch (s.op) {
      case Op::send: return send_some(s, now);
      case Op::pause:
        if (!step_started_) {
          step_started_ = true;
          step_until_ = now + std::chrono::milliseconds(s.ms);
        }
        if (now < step_until_) return false;
        next_step();
        return true;
      case Op::stop_reading:
        read_stopped_until_ = now + std::chrono::milliseconds(s.ms);
        next_step();
        return true;
      case Op::await_responses:
        if (finals_ < s.count && !closed_expected_) return false;
        next_step();
        return true;
      case Op::await_continue: return await_continue(s, now);
      case Op::half_close: return half_close();
      case Op::reset: {
        const linger abortive{1, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
        ::close(fd_);
        fd_ = -1;
        ++tally_.resets;
        done_ = true;
        return false;
      }
      case Op::finish:
        if (next_ != no_request || (script_.expects_eof && !eof_)) return false;
        ::close(fd_);
        fd_ = -1;
        clean_end_ = true;
        done_ = true;
        return false;
    }
    return false;
  }

  // Waits, bounded, for request s.count's 100 Continue (or its answer).
  bool await_continue(const Step& s, Clock::time_point now) {
    if (!step_started_) {
      step_started_ = true;
      step_until_ = now + options_.continue_wait_ms_max;
    }
    const bool answered = next_ == no_request || next_ > s.count;
    if (continue_for_ == s.count || answered || sending_stopped_) {
      next_step();
      return true;
    }
    if (now >= step_until_) {
      fail("neither 100 Continue nor a final response to request " + request_text(s.count) + " within " +
           std::to_string(options_.continue_wait_ms_max.count()) + " ms while its body waited for one");
    }
    return false;
  }

  bool half_close() {
    if (channel_ && !sending_stopped_) {
      // Over TLS: the close_notify first, then the FIN after it.
      if (!channel_->session().close_queued()) channel_->close();
      send_ciphertext();
      if (done_ || !channel_->pending().empty()) return false;
    }
    if (::shutdown(fd_, SHUT_WR) != 0 && !closed_expected_) {
      fail("shutdown: " + errno_text(errno));
      return false;
    }
    half_closed_ = true;
    ++tally_.half_closes;
    next_step();
    return true;
  }

  bool send_some(const Step& s, Clock::time_point now) {
    if (channel_ && !channel_->pending().empty()) {
      // The last piece's record is still leaving.
      const bool moved = send_ciphertext();
      return !done_ && (moved || sending_stopped_);
    }
    if (sending_stopped_ || sent_ >= s.end) {
      next_step();
      return true;
    }
    if (!step_started_) {
      step_started_ = true;
      send_ready_at_ = now;
    }
    if (now < send_ready_at_) return false;
    const std::uint64_t left = s.end - sent_;
    const std::uint64_t piece = std::min<std::uint64_t>(left, rng_.between(1, s.piece_bytes_max));
    if (channel_) return seal_piece(s, piece);
    const ssize_t n = ::send(fd_, script_.stream.data() + sent_, std::size_t(piece), MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += std::uint64_t(n);
      tally_.bytes_sent += std::uint64_t(n);
      want_write_ = false;
      last_sent_at_ = Clock::now();
      note_sent(last_sent_at_);
      // Pieces are due gap_ms apart from the step's start: a loop that fell
      // behind catches up, so a step lasts as long as its script says.
      send_ready_at_ += std::chrono::milliseconds(s.gap_ms);
      return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      want_write_ = true;
      return false;
    }
    on_send_error(n < 0 ? errno : EIO);
    return !done_ && sending_stopped_;
  }

  // A send failed with errno `e`.
  void on_send_error(int e) {
    if (handshaking_) return fail("send in the TLS handshake: " + errno_text(e));
    if (is_peer_gone(e) && closed_idle_while_late()) return;
    if (is_peer_gone(e) && (closed_expected_ || terminal_begun())) {
      // The server refused a request and closed: what follows it is not
      // read. Its answer is still to be read.
      sending_stopped_ = true;
      if (channel_) channel_->drop_pending();
      return;
    }
    fail("send: " + errno_text(e) +
         (next_ == no_request ? std::string() : " with request " + request_text(next_) + " unanswered"));
  }

  // Keeps when each request's first byte and its header section's last
  // byte were sent, for sent_slowly(): `at`, the time the send returned,
  // not the loop's `now`, which is older by as long as the connections
  // advanced before this one took (a long stream read under a sanitizer
  // can take a second), and would make a slow header section look fast.
  void note_sent(Clock::time_point at) {
    for (; begun_ < script_.requests.size() && script_.requests[begun_].begin < sent_; ++begun_) {
      begun_at_[begun_] = at;
    }
    for (; headed_ < script_.requests.size() && script_.requests[headed_].head_end <= sent_; ++headed_) {
      head_sent_at_[headed_] = at;
    }
  }

  // Whether request i's header section took so long to send (or is still
  // unsent so long after its first byte) that the server may have timed
  // it out: within a margin of the header timeout.
  bool sent_slowly(std::size_t i) const {
    if (i >= begun_) return false;
    const Clock::time_point end = i < headed_ ? head_sent_at_[i] : Clock::now();
    return end - begun_at_[i] >= options_.header_timeout - header_timeout_margin;
  }

  // A request that ends the connection has at least begun to be sent.
  bool terminal_begun() const {
    return std::any_of(script_.requests.begin(), script_.requests.end(),
                       [&](const Request& q) { return q.terminal && sent_ > q.begin; });
  }

  // ---- reports

  std::string request_text(std::size_t i) const {
    const Request& q = script_.requests[i];
    std::string out = "#";
    out += std::to_string(i);
    out += " (";
    out += kind_name(q.kind);
    if (q.expect_continue) out += ", Expect: 100-continue";
    out += ", bytes [" + std::to_string(q.begin) + "," + std::to_string(q.end) + "): \"";
    out += escaped(std::string_view(script_.stream).substr(q.begin, q.end - q.begin), 300);
    out += "\")";
    return out;
  }

  std::string step_text() const {
    if (step_ >= script_.steps.size()) return "end";
    static constexpr std::array<const char*, 8> names{"send",      "pause",      "stop reading", "await responses",
                                                      "await 100", "half-close", "reset",        "finish"};
    return std::to_string(step_) + " (" + names[std::size_t(script_.steps[step_].op)] + ")";
  }

  void fail(const std::string& what) {
    if (done_) return;
    done_ = true;
    std::string message =
        "seed " + std::to_string(script_.seed) + ", connection " + std::to_string(script_.index) + ": " + what;
    message += "\n  at step " + step_text() + "; sent " + std::to_string(sent_) + " of " +
               std::to_string(script_.stream.size()) + " bytes; " + std::to_string(finals_) +
               " final responses received";
    message += "\n  last bytes received: \"" + escaped(received_tail_, 700) + "\"";
    message += "\n" + describe(script_);
    message += "\n  replay it alone: hostile_driver --seed " + std::to_string(script_.seed) + " --connection " +
               std::to_string(script_.index);
    failure_ = std::move(message);
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

  Script script_;
  const DriverOptions& options_;
  Rng rng_;  // piece sizes
  int fd_ = -1;
  std::size_t step_ = 0;
  bool step_started_ = false;
  Clock::time_point step_until_{};     // a pause's end, or an await's deadline
  Clock::time_point send_ready_at_{};  // the next piece, after a gap
  Clock::time_point read_stopped_until_{};
  Clock::time_point last_progress_;
  Clock::time_point last_sent_at_;  // the last byte sent (or the connect)
  std::uint64_t sent_ = 0;          // bytes of script_.stream sent
  // When requests [0, begun_) had their first byte sent, and requests
  // [0, headed_) their header section's last byte.
  std::vector<Clock::time_point> begun_at_;
  std::vector<Clock::time_point> head_sent_at_;
  std::size_t begun_ = 0;
  std::size_t headed_ = 0;
  bool want_write_ = false;
  bool sending_stopped_ = false;  // the peer refused and closed; the rest is not sent
  ResponseReader reader_;
  std::size_t next_ = no_request;          // the request whose final response comes next
  std::size_t continue_for_ = no_request;  // the request whose 100 Continue arrived last
  std::uint64_t finals_ = 0;
  std::uint64_t answered_end_ = 0;         // the end of the last request whose final response arrived
  std::uint64_t head_408_body_bytes_ = 0;  // a slow-header 408 to a HEAD request: its body, left unread
  bool closed_expected_ = false;           // a response that closes the connection has arrived
  bool half_closed_ = false;
  bool eof_ = false;
  bool clean_end_ = false;  // finished as the model says (every answer in)
  bool done_ = false;
  std::string received_tail_;
  std::optional<std::string> failure_;
  Tally tally_;
  // Over TLS only.
  std::optional<TlsChannel> channel_;
  bool handshaking_ = false;      // the script waits for the handshake
  bool tls_done_ = false;         // the handshake completed
  bool tls_resumed_ = false;      // by resuming a session
  std::uint64_t record_end_ = 0;  // the script's bytes sealed in records so far (sent_ once they have left)
  bool server_spoke_ = false;     // a record with plaintext has come
  bool close_notify_received_ = false;
};

}  // namespace

void Tally::add(const Tally& o) {
  connections += o.connections;
  routed_seen += o.routed_seen;
  routed_unsure += o.routed_unsure;
  for (const auto& [k, v] : o.status_seen) status_seen[k] += v;
  for (const auto& [k, v] : o.status_unsure) status_unsure[k] += v;
  for (const auto& [k, v] : o.refusal_seen) refusal_seen[k] += v;
  for (const auto& [k, v] : o.refusal_unsure) refusal_unsure[k] += v;
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  resets += o.resets;
  half_closes += o.half_closes;
  server_closes += o.server_closes;
  idle_timeouts += o.idle_timeouts;
  slow_header_timeouts += o.slow_header_timeouts;
  late_idle_timeouts += o.late_idle_timeouts;
  tls_full_seen += o.tls_full_seen;
  tls_full_unsure += o.tls_full_unsure;
  tls_resumed_seen += o.tls_resumed_seen;
  tls_resumed_unsure += o.tls_resumed_unsure;
  tls_unfinished += o.tls_unfinished;
  plaintext_sent += o.plaintext_sent;
  plaintext_received += o.plaintext_received;
  close_notifies_received += o.close_notifies_received;
}

std::string Tally::summary() const {
  std::string out = std::to_string(connections) + " connections, " + std::to_string(routed_seen) +
                    " requests answered (+" + std::to_string(routed_unsure) + " unsure), statuses";
  for (const auto& [status, n] : status_seen) {
    out += ' ';
    out += std::to_string(status);
    out += ':';
    out += std::to_string(n);
  }
  out += ", refusals";
  for (const auto& [kind, n] : refusal_seen) {
    out += ' ';
    out += kind;
    out += ':';
    out += std::to_string(n);
  }
  out += ", " + std::to_string(resets) + " resets, " + std::to_string(half_closes) + " half-closes, " +
         std::to_string(server_closes) + " closes by the server (" + std::to_string(idle_timeouts) +
         " idle timeouts, " + std::to_string(late_idle_timeouts) + " of them while the driver was late), " +
         std::to_string(slow_header_timeouts) + " 408s to header sections sent slowly, " + std::to_string(bytes_sent) +
         " bytes sent, " + std::to_string(bytes_received) + " received";
  const std::uint64_t handshakes =
      tls_full_seen + tls_full_unsure + tls_resumed_seen + tls_resumed_unsure + tls_unfinished;
  if (handshakes == 0) return out;
  out += "; TLS: " + std::to_string(tls_full_seen + tls_full_unsure) + " full handshakes, " +
         std::to_string(tls_resumed_seen + tls_resumed_unsure) + " resumed (" +
         std::to_string(tls_full_unsure + tls_resumed_unsure) + " unsure), " + std::to_string(tls_unfinished) +
         " unfinished, " + std::to_string(close_notifies_received) + " close_notifies received, " +
         std::to_string(plaintext_sent) + " plaintext bytes sent, " + std::to_string(plaintext_received) + " received";
  return out;
}

RoundReport run_round(std::uint16_t port, const DriverOptions& options) {
  RoundReport report;
  const Clock::time_point start = Clock::now();
  std::vector<std::uint32_t> indices;
  if (!options.only_connections.empty()) {
    indices = options.only_connections;
  } else {
    for (std::uint32_t i = 0; i < options.connections; ++i) indices.push_back(i);
  }
  std::unique_ptr<ringhttp::tls::ClientContext> tls;
  if (options.tls) {
    ringhttp::tls::ClientConfig config;
    config.ca_file = options.tls_ca_file;
    std::string error;
    tls = ringhttp::tls::ClientContext::make(config, error);
    if (tls == nullptr) {
      report.failures.push_back({0, "TLS client context: " + error});
      return report;
    }
  }
  std::size_t next = 0;
  std::vector<std::unique_ptr<Client>> live;
  std::vector<pollfd> fds;
  const auto retire = [&](Client& c) {
    c.add_to(report.tally);
    if (c.failure()) report.failures.push_back({c.index(), *c.failure()});
  };
  while (next < indices.size() || !live.empty()) {
    Clock::time_point now = Clock::now();
    const bool late = now - start > options.round_ms_max;
    while (!late && live.size() < std::max<std::uint32_t>(options.concurrency, 1) && next < indices.size()) {
      live.push_back(std::make_unique<Client>(generate_script(options.seed, indices[next++], options.script), port,
                                              options, tls.get(), now));
    }
    for (auto& c : live) {
      if (late) c->abandon();
      c->advance(now);
    }
    std::erase_if(live, [&](const std::unique_ptr<Client>& c) {
      if (!c->done()) return false;
      retire(*c);
      return true;
    });
    if (late) break;
    if (live.empty()) continue;
    fds.clear();
    Clock::time_point wake = now + poll_ms_max;
    for (const auto& c : live) {
      const short events = c->events(now);
      fds.push_back({events != 0 ? c->fd() : -1, events, 0});
      wake = std::min(wake, c->wake_at(now));
    }
    const auto timeout = std::chrono::ceil<std::chrono::milliseconds>(wake - now);
    ::poll(fds.data(), fds.size(), int(std::max<std::int64_t>(timeout.count(), 0)));
  }
  report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return report;
}

}  // namespace socket_test::hostile
