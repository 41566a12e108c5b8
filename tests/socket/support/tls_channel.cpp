#include "support/tls_channel.hpp"

#include <cassert>

namespace socket_test {

namespace tls = ringhttp::tls;

namespace {

// Room lent to a handshake() or read() call: a full record and more. The
// client's flights are far smaller; a read writes only a key update's
// answer, and a call that wants more room is made again (repeat()).
constexpr std::size_t call_room_bytes = tls::wire_out_record_bytes;

}  // namespace

bool TlsChannel::start(tls::ClientContext& context, std::string_view host, std::string& error) {
  if (!context.start(session_, host, error)) return false;
  if (handshake() == Status::error) {
    error = session_.error_reason();
    return false;
  }
  return true;
}

tls::Wire TlsChannel::wire(std::size_t room) {
  const std::size_t at = out_.size();
  out_.resize(at + room);
  return tls::Wire{in_.data() + in_at_, in_.size() - in_at_, out_.data() + at, 0, room};
}

void TlsChannel::take(const tls::Wire& wire, std::size_t room) {
  in_at_ = in_.size() - wire.in_len;
  if (in_at_ == in_.size()) {
    in_.clear();
    in_at_ = 0;
  }
  out_.resize(out_.size() - room + wire.out_len);
}

template <typename Call>
TlsChannel::Status TlsChannel::repeat(Call call) {
  while (true) {
    const std::size_t unread_before = unread();
    tls::Wire w = wire(call_room_bytes);
    const Status status = call(w);
    take(w, call_room_bytes);
    // want_io with ciphertext left: the call stopped for room, which the
    // next call has afresh. Without progress, it waits for more input.
    const bool moved = unread() < unread_before || w.out_len > 0;
    if (status != Status::want_io || unread() == 0 || !moved) return status;
  }
}

TlsChannel::Status TlsChannel::handshake() {
  return repeat([&](tls::Wire& w) { return session_.handshake(w); });
}

TlsChannel::Status TlsChannel::read(char* out, std::size_t cap, std::size_t& n) {
  return repeat([&](tls::Wire& w) { return session_.read(w, out, cap, n); });
}

bool TlsChannel::seal(std::string_view plaintext) {
  assert(!plaintext.empty() && plaintext.size() <= tls::record_plaintext_bytes_max);
  // Room for this record and no second one: write() takes a record at a
  // time while the room holds write_reserve_bytes besides its plaintext.
  const std::size_t room = plaintext.size() + tls::write_reserve_bytes;
  const std::size_t at = out_.size();
  out_.resize(at + room);
  tls::Wire w{nullptr, 0, out_.data() + at, 0, room};
  const std::size_t taken = session_.write(w, plaintext.data(), plaintext.size());
  out_.resize(at + w.out_len);
  assert(taken == 0 || taken == plaintext.size());
  return taken == plaintext.size();
}

void TlsChannel::close() {
  const std::size_t at = out_.size();
  out_.resize(at + tls::write_reserve_bytes);
  tls::Wire w{nullptr, 0, out_.data() + at, 0, tls::write_reserve_bytes};
  [[maybe_unused]] const bool queued = session_.close(w);
  assert(queued);  // the room it asks for was given
  out_.resize(at + w.out_len);
}

void TlsChannel::sent(std::size_t n) {
  assert(n <= out_.size() - out_at_);
  out_at_ += n;
  if (out_at_ == out_.size()) drop_pending();
}

void TlsChannel::drop_pending() {
  out_.clear();
  out_at_ = 0;
}

}  // namespace socket_test
