#pragma once
// What a route handler fills in: one PendingResponse, described by where its
// bytes live. The connection adds the framing tail afterwards.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "server/response.hpp"

namespace ringhttp::server {

struct ShardCounters;

class Reply {
 public:
  Reply(PendingResponse& response, bool head_only, std::string& metrics_text,
        std::span<const ShardCounters* const> all_shards)
      : response_(response), head_only_(head_only), metrics_text_(metrics_text), all_shards_(all_shards) {}

  // A body whose bytes outlive the response (static data).
  void fixed(std::uint16_t status, std::string_view head, std::string_view body) {
    set(status, head, body, body.empty() ? BodySource::none : BodySource::fixed);
  }
  // A body the handler writes into the slot's scratch (at most scratch_bytes()).
  char* scratch() { return response_.scratch; }
  static constexpr std::size_t scratch_bytes() { return PendingResponse::scratch_bytes_max; }
  void scratch_body(std::uint16_t status, std::string_view head, std::size_t len) {
    set(status, head, std::string_view(response_.scratch, len), BodySource::scratch);
  }
  // `bytes` bytes of the stream pattern, produced as the socket drains.
  void stream(std::uint16_t status, std::string_view head, std::uint64_t bytes);
  // The Prometheus text of every shard's counters.
  void metrics(std::string_view head);

  std::uint64_t content_length() const { return content_length_; }

 private:
  void set(std::uint16_t status, std::string_view head, std::string_view body, BodySource source) {
    response_.status = status;
    response_.head = head;
    content_length_ = body.size();
    response_.body = head_only_ ? std::string_view() : body;
    response_.source = head_only_ ? BodySource::none : source;
  }

  PendingResponse& response_;
  bool head_only_;
  std::string& metrics_text_;
  std::span<const ShardCounters* const> all_shards_;
  std::uint64_t content_length_ = 0;
};

}  // namespace ringhttp::server
