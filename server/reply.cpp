#include "server/reply.hpp"

#include "server/counters.hpp"

namespace ringhttp::server {

void Reply::stream(std::uint16_t status, std::string_view head, std::uint64_t bytes) {
  set(status, head, {}, BodySource::none);
  content_length_ = bytes;
  if (!head_only_ && bytes > 0) {
    response_.source = BodySource::stream;
    response_.stream_offset = 0;
    response_.stream_remaining = bytes;
  }
}

void Reply::metrics(std::string_view head) {
  metrics_text_.clear();
  render_metrics(all_shards_, metrics_text_);
  set(200, head, metrics_text_, BodySource::metrics);
}

}  // namespace ringhttp::server
