// Every errno a socket operation may complete with has one class, and the
// handlers of the server and the client act on the class.
#include <gtest/gtest.h>

#include <cerrno>

#include "core/io/errno_class.hpp"

namespace ringhttp::io {
namespace {

TEST(ErrnoClass, results_at_or_above_zero_are_ok) {
  EXPECT_EQ(classify(0), ErrnoClass::ok);
  EXPECT_EQ(classify(1 << 20), ErrnoClass::ok);
}

TEST(ErrnoClass, our_cancel_is_its_own_class) { EXPECT_EQ(classify(-ECANCELED), ErrnoClass::cancelled); }

TEST(ErrnoClass, a_peer_that_left_is_peer_gone) {
  for (int e : {EPIPE, ECONNRESET, ETIMEDOUT, ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ENOTCONN}) {
    EXPECT_EQ(classify(-e), ErrnoClass::peer_gone) << e;
  }
}

TEST(ErrnoClass, running_out_is_exhausted_not_a_peer_gone) {
  for (int e : {EMFILE, ENFILE, ENOMEM, ENOBUFS, EADDRNOTAVAIL}) EXPECT_EQ(classify(-e), ErrnoClass::exhausted) << e;
}

TEST(ErrnoClass, transient_results_are_retried) {
  for (int e : {EINTR, EAGAIN, ECONNABORTED}) EXPECT_EQ(classify(-e), ErrnoClass::retry) << e;
}

TEST(ErrnoClass, an_operation_built_wrongly_is_a_bug) {
  for (int e : {EBADF, EFAULT, EINVAL, ENOTSOCK, EOPNOTSUPP}) EXPECT_EQ(classify(-e), ErrnoClass::bug) << e;
}

TEST(ErrnoClass, an_errno_not_named_is_a_peer_gone_never_a_bug) {
  // Something a future kernel may return for network reasons must not
  // reach an assertion: it drops the connection.
  EXPECT_EQ(classify(-EPROTO), ErrnoClass::peer_gone);
  EXPECT_EQ(classify(-EHOSTDOWN), ErrnoClass::peer_gone);
}

}  // namespace
}  // namespace ringhttp::io
