#pragma once
// What a route handler fills in: one PendingResponse, described by where its
// bytes live. The connection adds the framing tail afterwards.

#include <cassert>
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
  // A 204 (or other bodiless status): no body and no Content-Length.
  void no_content(std::uint16_t status, std::string_view head) {
    set(status, head, {}, BodySource::none);
    response_.no_content = true;
  }

  // No answer yet: a database query's result fills this response later
  // (Session::on_db_result); nothing queued after it is sent before it.
  void defer() {
    response_.status = 0;
    response_.source = BodySource::deferred;
    response_.head_only = head_only_;
  }

  // Headers added by middleware, between the fixed ones and the framing.
  // A block is static bytes built at start-up, pointed at, never copied.
  void add_header_block(std::string_view block) {
    for (std::string_view& b : response_.header_blocks) {
      if (b.empty()) {
        b = block;
        return;
      }
    }
    assert(false && "more header blocks than PendingResponse::header_blocks_max");
  }
  // Formatted headers: the rest of the slot's header bytes, to be written
  // and then committed with header_text_written().
  char* header_text_end() { return response_.header_bytes + response_.header_text.size(); }
  std::size_t header_text_room() const { return PendingResponse::header_bytes_max - response_.header_text.size(); }
  void header_text_written(std::size_t len) {
    assert(len <= header_text_room());
    response_.header_text = std::string_view(response_.header_bytes, response_.header_text.size() + len);
  }
  std::uint16_t status() const { return response_.status; }
  bool head_only() const { return head_only_; }

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
