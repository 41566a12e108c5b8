// The start-up probes of io_uring's features, against the running kernel:
// each finds what the kernel's version says it has.
#include <sys/utsname.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/uring/features.hpp"

namespace ringhttp::uring {
namespace {

// The running kernel is at least major.minor.
bool kernel_at_least(int major, int minor) {
  utsname name{};
  if (::uname(&name) != 0) return false;
  int have_major = 0;
  int have_minor = 0;
  if (std::sscanf(name.release, "%d.%d", &have_major, &have_minor) != 2) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

TEST(UringProbe, no_sqarray_is_found_exactly_on_kernels_from_6_6) {
  const Features kernel = probe_kernel();
  EXPECT_EQ(kernel.no_sqarray, kernel_at_least(6, 6));
}

// Direct descriptors allocated by the kernel and close_direct are 5.19's,
// a registered ring descriptor 5.18's.
TEST(UringProbe, fixed_files_are_found_exactly_on_kernels_from_5_19) {
  const Features kernel = probe_kernel();
  EXPECT_EQ(kernel.fixed_files, kernel_at_least(5, 19));
}

TEST(UringProbe, min_wait_is_found_exactly_on_kernels_from_6_12) {
  const Features kernel = probe_kernel();
  EXPECT_EQ(kernel.min_wait, kernel_at_least(6, 12));
}

TEST(UringProbe, recv_bundle_is_found_exactly_on_kernels_from_6_10) {
  const Features kernel = probe_kernel();
  EXPECT_EQ(kernel.recv_bundle, kernel_at_least(6, 10));
}

TEST(UringProbe, incremental_buffers_are_found_exactly_on_kernels_from_6_12) {
  const Features kernel = probe_kernel();
  EXPECT_EQ(kernel.incremental_buffers, kernel_at_least(6, 12));
}

}  // namespace
}  // namespace ringhttp::uring
