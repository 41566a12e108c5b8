#include "support/h2_server_session.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string_view>
#include <vector>

namespace socket_test {
namespace {

constexpr std::string_view body_text = "Hello, World!";
constexpr std::size_t cut_body_bytes = 7;  // rst_mid_response sends "Hello, " of it
static_assert(cut_body_bytes < body_text.size());

// The hand-written frame of bad_hpack (RFC 9113 section 4.1): a 9-byte
// header, then a header block of one byte, 0x80, an indexed field with
// index 0, which RFC 7541 section 6.1 makes a decoding error.
constexpr std::uint8_t frame_type_headers = 0x1;
constexpr std::uint8_t flags_end_stream_end_headers = 0x1 | 0x4;
constexpr std::uint8_t hpack_index_zero = 0x80;
constexpr std::size_t frame_header_bytes = 9;

// goaway_in_flight: how long the covered stream's answer waits for the
// client to send the refused streams again on a new connection.
constexpr std::chrono::milliseconds retry_wait{2'000};

nghttp2_nv field(const char* name, const char* value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name)),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value)), std::strlen(name), std::strlen(value),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

H2ServerSession::H2ServerSession(H2Behaviour behaviour, const H2ServerOptions& options, H2ServerCounts& counts,
                                 std::atomic<std::uint32_t>& request_serial)
    : behaviour_(behaviour), options_(options), counts_(counts), request_serial_(request_serial) {
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, on_frame_send);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  // A window that never opens: nghttp2 would otherwise send WINDOW_UPDATE
  // for what it has received, the connection's and the stream's.
  nghttp2_option_set_no_auto_window_update(option, behaviour_ == H2Behaviour::window_never_opens ? 1 : 0);
  nghttp2_session_server_new2(&session_, callbacks, this, option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);

  std::vector<nghttp2_settings_entry> settings = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
       behaviour_ == H2Behaviour::zero_streams ? 0 : options_.max_concurrent_streams}};
  if (behaviour_ == H2Behaviour::window_never_opens) settings.push_back({NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0});
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
}

H2ServerSession::~H2ServerSession() { nghttp2_session_del(session_); }

bool H2ServerSession::received(const char* bytes, std::size_t n) {
  const ssize_t rc = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(bytes), n);
  failed_ = failed_ || rc < 0;
  return !failed_;
}

std::string H2ServerSession::take_output() {
  std::string out = std::move(raw_output_);
  raw_output_.clear();
  const std::uint8_t* data = nullptr;
  ssize_t n;
  while ((n = nghttp2_session_mem_send(session_, &data)) > 0) out.append(reinterpret_cast<const char*>(data), n);
  failed_ = failed_ || n < 0;
  return out;
}

bool H2ServerSession::finished() const {
  if (failed_) return true;
  if (nghttp2_session_want_write(session_) != 0) return false;
  if (nghttp2_session_want_read(session_) == 0) return true;
  if (goaway_last_stream_id_ < 0) return false;
  // Streams above last_stream_id are the client's to retry elsewhere.
  return streams_.empty() || streams_.begin()->first > goaway_last_stream_id_;
}

void H2ServerSession::request_began(std::int32_t id) {
  // After a GOAWAY, nghttp2 ignores new streams above it; one that came in
  // the same read is ignored here.
  if (goaway_last_stream_id_ >= 0 && id > goaway_last_stream_id_) return;
  Stream& stream = streams_[id];
  ++requests_;
  counts_.requests.fetch_add(1);
  if (behaviour_ == H2Behaviour::rst_refused && requests_ == 1) {
    stream.reset = true;
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
  }
  if (options_.requests_per_connection != 0 && requests_ == options_.requests_per_connection) {
    send_goaway(id, NGHTTP2_NO_ERROR);
  }
}

void H2ServerSession::request_complete(std::int32_t id) {
  const auto found = streams_.find(id);
  if (found == streams_.end() || found->second.reset) return;
  switch (behaviour_) {
    case H2Behaviour::rst_mid_response: {
      const std::uint32_t serial = request_serial_.fetch_add(1) + 1;
      respond(id, serial % std::max<std::uint32_t>(options_.reset_every, 1) == 0 ? Body::cut : Body::whole);
      return;
    }
    case H2Behaviour::goaway_in_flight: hold_for_goaway(id); return;
    case H2Behaviour::response_stalls: respond(id, Body::stalled); return;
    case H2Behaviour::bad_hpack: send_bad_header_block(id); return;
    case H2Behaviour::normal:
    case H2Behaviour::window_never_opens:
    case H2Behaviour::zero_streams:
    case H2Behaviour::rst_refused: respond(id, Body::whole); return;
  }
}

// goaway_in_flight: once enough requests are held, the GOAWAY covers only
// the lowest of them; after it, a covered request is answered at once.
void H2ServerSession::hold_for_goaway(std::int32_t id) {
  if (goaway_last_stream_id_ >= 0) {
    respond(id, Body::whole);
    return;
  }
  streams_[id].held = true;
  if (++held_ < std::max<std::uint32_t>(options_.goaway_open_streams, 2)) return;
  const auto lowest = std::find_if(streams_.begin(), streams_.end(), [](const auto& open) { return open.second.held; });
  send_goaway(lowest->first, options_.goaway_error);
  if (!options_.covered_answer_waits_for_retry) {
    respond(lowest->first, Body::whole);
    return;
  }
  answer_after_retry_ = lowest->first;
  connections_at_goaway_ = counts_.connections.load();
  answer_by_ = std::chrono::steady_clock::now() + retry_wait;
}

void H2ServerSession::on_poll() {
  if (answer_after_retry_ < 0) return;
  if (counts_.connections.load() == connections_at_goaway_ && std::chrono::steady_clock::now() < answer_by_) return;
  respond(answer_after_retry_, Body::whole);
  answer_after_retry_ = -1;
}

void H2ServerSession::respond(std::int32_t id, Body body) {
  Stream& stream = streams_[id];
  stream.body = body;
  static constexpr char length[] = "13";
  static_assert(sizeof length - 1 == 2 && body_text.size() == 13);
  const nghttp2_nv head[] = {field(":status", "200"), field("content-length", length),
                             field("content-type", "text/plain")};
  nghttp2_data_provider provider{};
  provider.source.ptr = &stream;
  provider.read_callback = read_body;
  nghttp2_submit_response(session_, id, head, std::size(head), &provider);
}

void H2ServerSession::send_goaway(std::int32_t last_stream_id, std::uint32_t error_code) {
  if (goaway_last_stream_id_ >= 0) return;
  goaway_last_stream_id_ = last_stream_id;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, last_stream_id, error_code, nullptr, 0);
}

void H2ServerSession::send_bad_header_block(std::int32_t id) {
  const std::uint8_t frame[frame_header_bytes + 1] = {0,
                                                      0,
                                                      1,  // payload length
                                                      frame_type_headers,
                                                      flags_end_stream_end_headers,
                                                      std::uint8_t(id >> 24 & 0x7f),
                                                      std::uint8_t(id >> 16),
                                                      std::uint8_t(id >> 8),
                                                      std::uint8_t(id),
                                                      hpack_index_zero};
  raw_output_.append(reinterpret_cast<const char*>(frame), sizeof frame);
  counts_.bad_headers.fetch_add(1);
}

int H2ServerSession::on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    static_cast<H2ServerSession*>(self)->request_began(frame->hd.stream_id);
  }
  return 0;
}

int H2ServerSession::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  H2ServerCounts& counts = static_cast<H2ServerSession*>(self)->counts_;
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    counts.client_goaway_error = frame->goaway.error_code;
    counts.client_goaways.fetch_add(1);
  }
  const bool request_part = frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA;
  if (request_part && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
    static_cast<H2ServerSession*>(self)->request_complete(frame->hd.stream_id);
  }
  return 0;
}

int H2ServerSession::on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  H2ServerCounts& counts = static_cast<H2ServerSession*>(self)->counts_;
  switch (frame->hd.type) {
    case NGHTTP2_RST_STREAM: counts.resets.fetch_add(1); break;
    case NGHTTP2_GOAWAY: counts.goaways.fetch_add(1); break;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
      if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) counts.responses.fetch_add(1);
      break;
    default: break;
  }
  return 0;
}

int H2ServerSession::on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t, const std::uint8_t*, std::size_t len,
                                   void* self) {
  static_cast<H2ServerSession*>(self)->counts_.body_bytes.fetch_add(len);
  return 0;
}

int H2ServerSession::on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t, void* self) {
  static_cast<H2ServerSession*>(self)->streams_.erase(id);
  return 0;
}

// The response body as the stream's Body says: whole, cut after
// cut_body_bytes by RST_STREAM(INTERNAL_ERROR) (nghttp2 sends it when this
// returns NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE), or never.
ssize_t H2ServerSession::read_body(nghttp2_session*, std::int32_t, std::uint8_t* out, std::size_t cap,
                                   std::uint32_t* flags, nghttp2_data_source* source, void*) {
  Stream& stream = *static_cast<Stream*>(source->ptr);
  if (stream.body == Body::stalled) return NGHTTP2_ERR_DEFERRED;
  const std::size_t end = stream.body == Body::cut ? cut_body_bytes : body_text.size();
  if (stream.sent == end) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // only a cut body gets here
  const std::size_t n = std::min(cap, end - stream.sent);
  std::memcpy(out, body_text.data() + stream.sent, n);
  stream.sent += n;
  if (stream.body == Body::whole && stream.sent == end) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return ssize_t(n);
}

}  // namespace socket_test
