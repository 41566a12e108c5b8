#include "core/http2/client_session.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cassert>
#include <cstring>

namespace ringhttp::http2 {

// nghttp2's callbacks, each with the session as its user data.
struct Callbacks {
  static ClientSession& of(void* user_data) { return *static_cast<ClientSession*>(user_data); }
  static ClientSession::Stream* stream(nghttp2_session* session, std::int32_t id) {
    return static_cast<ClientSession::Stream*>(nghttp2_session_get_stream_user_data(session, id));
  }

  static int on_header(nghttp2_session* session, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t name_len, const std::uint8_t* value, std::size_t value_len, std::uint8_t, void*) {
    // Every field of every response comes here: the name first, and the
    // stream (a lookup in nghttp2's map) only for :status.
    if (frame->hd.type != NGHTTP2_HEADERS ||
        std::string_view(reinterpret_cast<const char*>(name), name_len) != ":status") {
      return 0;
    }
    ClientSession::Stream* s = stream(session, frame->hd.stream_id);
    if (s == nullptr) return 0;
    // nghttp2 has checked it is three digits (RFC 9113 section 8.3.2).
    std::uint16_t status = 0;
    for (std::size_t i = 0; i < value_len; ++i) status = std::uint16_t(status * 10 + (value[i] - '0'));
    s->result.head.status = status;  // a 1xx is replaced by the final response's
    return 0;
  }

  static int on_data_chunk(nghttp2_session* session, std::uint8_t, std::int32_t id, const std::uint8_t* data,
                           std::size_t len, void*) {
    ClientSession::Stream* s = stream(session, id);
    if (s == nullptr) return 0;
    http::ResponseHead& head = s->result.head;
    if (s->check_body && head.body_matches) {
      const std::string_view got(reinterpret_cast<const char*>(data), len);
      head.body_matches = head.body_bytes + len <= s->expected_body.size() &&
                          s->expected_body.substr(std::size_t(head.body_bytes), len) == got;
    }
    head.body_bytes += len;
    return 0;
  }

  static int on_frame(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
    ClientSession& self = of(user_data);
    switch (frame->hd.type) {
      case NGHTTP2_HEADERS:
      case NGHTTP2_DATA:
        if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
          if (ClientSession::Stream* s = stream(session, frame->hd.stream_id); s != nullptr) {
            s->complete = s->result.head.status >= 200;
          }
        }
        break;
      case NGHTTP2_RST_STREAM:
        if (ClientSession::Stream* s = stream(session, frame->hd.stream_id); s != nullptr) s->reset_by_peer = true;
        break;
      case NGHTTP2_GOAWAY:
        self.goaway_ = true;
        self.goaway_last_id_ = frame->goaway.last_stream_id;
        self.events_->on_goaway(frame->goaway.last_stream_id, frame->goaway.error_code);
        break;
      default: break;
    }
    return 0;
  }

  static int on_stream_close(nghttp2_session* session, std::int32_t id, std::uint32_t error_code, void* user_data) {
    ClientSession& self = of(user_data);
    ClientSession::Stream* s = stream(session, id);
    if (s == nullptr) return 0;
    StreamResult& r = s->result;
    if (s->complete) {
      r.end = StreamEnd::complete;
      r.error_code = 0;
      if (s->check_body && r.head.body_bytes != s->expected_body.size()) r.head.body_matches = false;
    } else {
      r.end = error_code == NGHTTP2_REFUSED_STREAM ? StreamEnd::refused
              : s->reset_by_peer                   ? StreamEnd::reset
                                                   : StreamEnd::broken;
      r.error_code = error_code;
    }
    nghttp2_session_set_stream_user_data(session, id, nullptr);
    self.finish(*s);
    return 0;
  }

  // A GOAWAY this side sends is nghttp2 ending the connection for an
  // error it found in what it read (a bad header block, a frame against
  // the rules): it queues the GOAWAY and stops reading.
  static int on_frame_sent(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      ClientSession& self = of(user_data);
      if (self.leaving_) return 0;  // this side's own GOAWAY(NO_ERROR) (leave), not an error found
      self.broken_ = true;
      self.broken_code_ = frame->goaway.error_code;
    }
    return 0;
  }

  // A request body, read straight from where the caller keeps it.
  static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                           nghttp2_data_source* source, void*) {
    auto* s = static_cast<ClientSession::Stream*>(source->ptr);
    const std::size_t n = std::min(length, s->body.size());
    std::memcpy(buf, s->body.data(), n);
    s->body.remove_prefix(n);
    if (s->body.empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return ssize_t(n);
  }
};

ClientSession::~ClientSession() { close(); }

bool ClientSession::start(ClientEvents* events, const ClientSettings& settings) {
  assert(events != nullptr && settings.max_streams > 0);
  close();
  events_ = events;
  max_streams_ = settings.max_streams;
  if (streams_.size() != max_streams_) {
    streams_.assign(max_streams_, Stream{});
    free_.clear();
  }
  free_.resize(max_streams_);
  for (std::uint32_t i = 0; i < max_streams_; ++i) {
    streams_[i] = Stream{};
    streams_[i].index = i;
    free_[i] = max_streams_ - 1 - i;
  }
  open_ = 0;
  goaway_ = false;
  goaway_last_id_ = 0;
  broken_ = false;
  broken_code_ = 0;
  leaving_ = false;
  pending_ = nullptr;
  pending_len_ = 0;

  nghttp2_session_callbacks* callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks) != 0) return false;
  nghttp2_session_callbacks_set_on_header_callback(callbacks, Callbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Callbacks::on_data_chunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Callbacks::on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Callbacks::on_stream_close);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, Callbacks::on_frame_sent);
  const int made = nghttp2_session_client_new(&session_, callbacks, this);
  nghttp2_session_callbacks_del(callbacks);
  if (made != 0) {
    session_ = nullptr;
    return false;
  }
  const nghttp2_settings_entry entries[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, settings.stream_window_bytes},
  };
  if (nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, entries, std::size(entries)) != 0 ||
      nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0,
                                            std::int32_t(settings.connection_window_bytes)) != 0) {
    close();
    return false;
  }
  return true;
}

void ClientSession::close() {
  if (session_ == nullptr) return;
  nghttp2_session* session = session_;
  session_ = nullptr;
  for (Stream& s : streams_) {
    if (!s.in_use) continue;
    // Above a GOAWAY's last stream the server did not and will not read
    // it (RFC 9113 section 6.8): a request whose HEADERS were still
    // queued here when the GOAWAY came, say. Safe to send again.
    s.result.end = goaway_ && s.id > goaway_last_id_ ? StreamEnd::refused : StreamEnd::broken;
    finish(s);
  }
  nghttp2_session_del(session);
  pending_ = nullptr;
  pending_len_ = 0;
}

void ClientSession::finish(Stream& s) {
  assert(s.in_use && open_ > 0);
  s.in_use = false;
  --open_;
  free_.push_back(s.index);
  const StreamResult result = s.result;
  void* user = s.user;
  events_->on_stream_done(user, result);
}

std::uint32_t ClientSession::server_max_streams() const {
  return session_ == nullptr ? 0
                             : nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

bool ClientSession::can_submit() const {
  return session_ != nullptr && !goaway_ && open_ < max_streams_ && open_ < server_max_streams();
}

bool ClientSession::submit(const ClientRequest& request, void* user) {
  if (!can_submit()) return false;
  assert(!free_.empty());
  Stream& s = streams_[free_.back()];
  s.result = StreamResult{};
  s.user = user;
  s.body = request.body;
  s.expected_body = request.expected_body;
  s.check_body = request.check_body;
  s.complete = false;
  s.reset_by_peer = false;
  nghttp2_data_provider body{};
  body.source.ptr = &s;
  body.read_callback = Callbacks::read_body;
  const std::int32_t id = nghttp2_submit_request(session_, nullptr, request.headers.data(), request.headers.size(),
                                                 request.body.empty() ? nullptr : &body, &s);
  if (id < 0) return false;
  s.id = id;
  free_.pop_back();
  s.in_use = true;
  ++open_;
  return true;
}

ClientSession::Status ClientSession::receive(const char* data, std::size_t len) {
  if (session_ == nullptr) return Status::error;
  const ssize_t read = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), len);
  return read < 0 || std::size_t(read) != len || broken_ ? Status::error : Status::ok;
}

std::size_t ClientSession::take_output(char* out, std::size_t room) {
  std::size_t taken = 0;
  while (session_ != nullptr && taken < room) {
    if (pending_len_ == 0) {
      const ssize_t n = nghttp2_session_mem_send(session_, &pending_);
      if (n <= 0) break;
      pending_len_ = std::size_t(n);
    }
    const std::size_t n = std::min(room - taken, pending_len_);
    std::memcpy(out + taken, pending_, n);
    taken += n;
    pending_ += n;
    pending_len_ -= n;
  }
  return taken;
}

bool ClientSession::leave() {
  assert(open_ == 0);
  if (session_ == nullptr || nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR) != 0) return false;
  leaving_ = true;
  return true;
}

bool ClientSession::has_output() const {
  return pending_len_ > 0 || (session_ != nullptr && nghttp2_session_want_write(session_) != 0);
}

bool ClientSession::finished() const {
  return session_ == nullptr ||
         (pending_len_ == 0 && nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0);
}

}  // namespace ringhttp::http2
