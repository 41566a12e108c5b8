#pragma once
// Which of two idle connections a full table closes first to make room
// (Session::make_room): the one idle longer, by the shard's millisecond
// clock. Within one step of that clock, a connection already answered goes
// before one that has not sent its first request: that one was accepted
// while the others were being answered, and its request may be on its way
// (on a fast machine a whole table's activity fits in a millisecond).
// Connection needs last_activity_ms and requests_done.

namespace ringhttp::server {

template <typename Connection>
bool reclaimed_before(const Connection& a, const Connection& b) {
  if (a.last_activity_ms != b.last_activity_ms) return a.last_activity_ms < b.last_activity_ms;
  return a.requests_done > 0 && b.requests_done == 0;
}

}  // namespace ringhttp::server
