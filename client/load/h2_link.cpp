#include "client/load/h2_link.hpp"

#include <cassert>

#include "client/load/connection.hpp"
#include "client/load/session.hpp"

namespace ringhttp::client {

H2Link::H2Link(Connection& c, std::uint32_t max_streams)
    : conn(c), streams(max_streams), out(std::make_unique_for_overwrite<char[]>(out_bytes)) {
  free.reserve(max_streams);
  clear_streams();
}

void H2Link::clear_streams() {
  free.clear();
  for (std::uint32_t i = 0; i < streams.size(); ++i) {
    streams[i].in_flight = false;
    free.push_back(std::uint32_t(streams.size()) - 1 - i);
  }
  goaway = false;
  ending = false;
  broken = false;
  leaving = false;
  oldest_sent_ns = UINT64_MAX;
}

StreamRequest* H2Link::take_place() {
  if (free.empty()) return nullptr;
  StreamRequest* s = &streams[free.back()];
  free.pop_back();
  assert(!s->in_flight);
  s->in_flight = true;
  return s;
}

void H2Link::on_stream_done(void* user, const http2::StreamResult& result) {
  auto* s = static_cast<StreamRequest*>(user);
  assert(s->in_flight && s >= streams.data() && s < streams.data() + streams.size());
  s->in_flight = false;
  free.push_back(std::uint32_t(s - streams.data()));
  conn.session->on_stream_done(conn, *s, result);
}

void H2Link::on_goaway(std::int32_t last_stream_id, std::uint32_t error_code) {
  goaway = true;
  conn.session->on_goaway(conn, last_stream_id, error_code);
}

}  // namespace ringhttp::client
