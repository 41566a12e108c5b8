#include "core/http/date_cache.hpp"

#include <cassert>
#include <cstdio>

namespace ringhttp::http {

void DateCache::format(std::time_t now, char (&out)[line_bytes + 1]) {
  static constexpr const char* days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&now, &tm);
  const int n = std::snprintf(out, sizeof out, "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n", days[tm.tm_wday],
                              tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  assert(n == int(line_bytes));
  (void)n;
}

bool DateCache::refresh(std::time_t now) {
  if (now == second_) return false;
  const unsigned next = (current_ + 1) % generations;
  format(now, slots_[next]);
  current_ = next;
  second_ = now;
  return true;
}

}  // namespace ringhttp::http
