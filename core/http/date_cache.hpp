#pragma once
// The "Date: ...\r\n" header line, formatted once a second per shard and
// pointed at by every response's iovecs instead of being copied.
//
// Lifetime: a queued response holds a pointer to one generation's bytes
// until the kernel has copied them. Each refresh writes the next of
// `generations` slots, so a pointer stays valid and unchanged for that many
// seconds; a send that stalls longer may carry a later date of the same
// length, never a torn one (the slot is rewritten whole, in this thread,
// and the kernel copies a socket send's bytes in this thread's context).

#include <cstdint>
#include <ctime>
#include <string_view>

namespace ringhttp::http {

class DateCache {
 public:
  static constexpr std::size_t line_bytes = 37;  // "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
  static constexpr unsigned generations = 16;

  DateCache() { refresh(std::time(nullptr)); }

  // Rewrites the line when the second changed. Returns true if it did.
  bool refresh(std::time_t now);
  std::string_view line() const { return {slots_[current_], line_bytes}; }

  static void format(std::time_t now, char (&out)[line_bytes + 1]);

 private:
  char slots_[generations][line_bytes + 1] = {};
  unsigned current_ = 0;
  std::time_t second_ = -1;
};

}  // namespace ringhttp::http
