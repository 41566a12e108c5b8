// The --uring grammar that server and client share: an optional profile
// first, then no-FEATURE switches and/or sqpoll, applied in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "core/uring/compat.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::uring {
namespace {

Features parsed(const std::string& text) {
  Features wanted;
  std::string error;
  EXPECT_TRUE(parse_switches(text, wanted, error)) << text << ": " << error;
  return wanted;
}

std::string refusal(const std::string& text) {
  Features wanted;
  std::string error;
  EXPECT_FALSE(parse_switches(text, wanted, error)) << text << " was accepted";
  return error;
}

bool same(const Features& a, const Features& b) { return a.describe() == b.describe(); }

// What kernel 5.19 added: coop taskrun, multishot accept, provided-buffer
// rings, direct descriptors the kernel allocates.
Features profile_5_19() {
  Features f;
  f.coop_taskrun = true;
  f.multishot_accept = true;
  f.bufring = true;
  f.fixed_files = true;
  return f;
}

TEST(UringSwitches, an_empty_value_and_all_are_everything_but_sqpoll) {
  EXPECT_TRUE(same(parsed(""), Features::all()));
  EXPECT_TRUE(same(parsed("all"), Features::all()));
  EXPECT_FALSE(parsed("all").sqpoll);
}

TEST(UringSwitches, profiles_alone_keep_their_old_meaning) {
  EXPECT_TRUE(same(parsed("6.12"), Features::all()));
  Features six_ten = Features::all();
  six_ten.incremental_buffers = false;
  EXPECT_TRUE(same(parsed("6.10"), six_ten));
  Features six_six = six_ten;
  six_six.recv_bundle = false;
  EXPECT_TRUE(same(parsed("6.6"), six_six));
  Features six_one = six_six;
  six_one.no_sqarray = false;
  EXPECT_TRUE(same(parsed("6.1"), six_one));
  Features six_zero = six_one;
  six_zero.defer_taskrun = false;
  EXPECT_TRUE(same(parsed("6.0"), six_zero));
  EXPECT_TRUE(same(parsed("5.19"), profile_5_19()));
  EXPECT_TRUE(same(parsed("5.10"), Features{}));
}

// Each profile is exactly what its kernel generation had: 5.19 brought coop
// taskrun, multishot accept, provided-buffer rings and direct descriptors;
// 6.0 multishot receive and single issuer; 6.1 defer taskrun (which
// replaces coop taskrun); 6.6 rings without an SQ array; 6.10 receive
// bundles; 6.12 incremental buffers.
TEST(UringSwitches, each_profile_is_exactly_what_its_kernel_had) {
  EXPECT_EQ(parsed("5.10").describe(), "basic");
  EXPECT_EQ(parsed("5.19").describe(), "coop-taskrun,multishot-accept,bufring,fixed-files");
  EXPECT_EQ(parsed("6.0").describe(),
            "single-issuer,coop-taskrun,multishot-accept,multishot-recv,bufring,fixed-files");
  EXPECT_EQ(parsed("6.1").describe(),
            "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files");
  EXPECT_EQ(parsed("6.6").describe(),
            "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files,no-sqarray");
  EXPECT_EQ(parsed("6.10").describe(),
            "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files,no-sqarray,recv-bundle");
  EXPECT_EQ(parsed("6.12").describe(),
            "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files,no-sqarray,recv-bundle,"
            "incremental-buffers");
  EXPECT_EQ(parsed("all").describe(), parsed("6.12").describe());
}

// Each profile turns on exactly the features of the one before it and its
// own, in kernel order.
TEST(UringSwitches, each_profile_adds_exactly_its_kernels_features) {
  const auto names = [](const Features& f) {
    std::vector<std::string> out;
    const std::string text = f.describe();
    for (std::size_t start = 0; start <= text.size();) {
      std::size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      if (text.substr(start, comma - start) != "basic") out.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto added = [&](const char* older, const char* newer) {
    const std::vector<std::string> before = names(parsed(older));
    const std::vector<std::string> after = names(parsed(newer));
    std::vector<std::string> gained;
    std::vector<std::string> lost;
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(gained));
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(lost));
    std::string out;
    for (const std::string& name : gained) out += "+" + name + " ";
    for (const std::string& name : lost) out += "-" + name + " ";
    return out;
  };
  EXPECT_EQ(added("5.10", "5.19"), "+bufring +coop-taskrun +fixed-files +multishot-accept ");
  EXPECT_EQ(added("5.19", "6.0"), "+multishot-recv +single-issuer ");
  // DEFER_TASKRUN replaces COOP_TASKRUN where both are on.
  EXPECT_EQ(added("6.0", "6.1"), "+defer-taskrun -coop-taskrun ");
  EXPECT_EQ(added("6.1", "6.6"), "+no-sqarray ");
  EXPECT_EQ(added("6.6", "6.10"), "+recv-bundle ");
  EXPECT_EQ(added("6.10", "6.12"), "+incremental-buffers ");
  EXPECT_EQ(added("6.12", "all"), "");
}

TEST(UringSwitches, no_profile_turns_sqpoll_on) {
  for (const char* profile : {"all", "6.12", "6.10", "6.6", "6.1", "6.0", "5.19", "5.10"}) {
    EXPECT_FALSE(parsed(profile).sqpoll) << profile;
  }
}

TEST(UringSwitches, switches_alone_apply_to_all) {
  const Features f = parsed("no-bufring,no-multishot-accept");
  EXPECT_FALSE(f.bufring);
  EXPECT_FALSE(f.multishot_recv) << "multishot receive needs a buffer ring";
  EXPECT_FALSE(f.multishot_accept);
  EXPECT_TRUE(f.single_issuer);
  EXPECT_TRUE(f.defer_taskrun);
  EXPECT_FALSE(f.sqpoll);
}

TEST(UringSwitches, sqpoll_alone_is_all_with_sqpoll) {
  Features expected = Features::all();
  expected.sqpoll = true;
  EXPECT_TRUE(same(parsed("sqpoll"), expected));
  EXPECT_TRUE(same(parsed("all,sqpoll"), expected));
}

TEST(UringSwitches, a_profile_first_then_switches_and_sqpoll) {
  Features expected = profile_5_19();
  expected.sqpoll = true;
  EXPECT_TRUE(same(parsed("5.19,sqpoll"), expected));

  expected = Features{};
  expected.sqpoll = true;
  EXPECT_TRUE(same(parsed("5.10,sqpoll"), expected));

  expected = Features::all();
  expected.recv_bundle = false;
  expected.incremental_buffers = false;
  expected.no_sqarray = false;
  expected.defer_taskrun = false;
  expected.bufring = false;
  expected.multishot_recv = false;
  expected.sqpoll = true;
  EXPECT_TRUE(same(parsed("6.0,no-bufring,sqpoll"), expected));
  EXPECT_TRUE(same(parsed("6.0,sqpoll,no-bufring"), expected)) << "switches in any order";

  expected = profile_5_19();
  expected.multishot_accept = false;
  EXPECT_TRUE(same(parsed("5.19,no-multishot-accept"), expected));
}

TEST(UringSwitches, a_profile_after_the_first_item_is_refused) {
  EXPECT_NE(refusal("sqpoll,5.19").find("must come first"), std::string::npos);
  EXPECT_NE(refusal("5.10,6.0").find("must come first"), std::string::npos);
  EXPECT_NE(refusal("no-bufring,all").find("must come first"), std::string::npos);
}

TEST(UringSwitches, unknown_names_and_empty_items_are_refused_with_the_valid_names) {
  const std::string unknown = refusal("5.19,sqpol");
  EXPECT_NE(unknown.find("'sqpol'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("sqpoll"), std::string::npos) << "the message lists the valid names: " << unknown;
  EXPECT_NE(refusal("4.19").find("'4.19'"), std::string::npos);
  EXPECT_NE(refusal("5.10,,sqpoll").find("empty"), std::string::npos);
  EXPECT_NE(refusal("sqpoll,").find("empty"), std::string::npos);
  EXPECT_NE(refusal(",sqpoll").find("empty"), std::string::npos);
}

TEST(UringSwitches, sqpoll_in_use_drops_the_taskrun_modes_the_kernel_refuses_with_it) {
  Features kernel = Features::all();
  kernel.sqpoll = true;
  const Features in_use = kernel.intersect(parsed("sqpoll"));
  EXPECT_TRUE(in_use.sqpoll);
  EXPECT_FALSE(in_use.defer_taskrun);
  EXPECT_FALSE(in_use.coop_taskrun);
  EXPECT_TRUE(in_use.single_issuer);
  EXPECT_EQ(in_use.describe(),
            "single-issuer,multishot-accept,multishot-recv,bufring,fixed-files,sqpoll,no-sqarray,recv-bundle,"
            "incremental-buffers");
  EXPECT_EQ(setup_flags(in_use) & (IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_COOP_TASKRUN), 0u);
  EXPECT_NE(setup_flags(in_use) & IORING_SETUP_SQPOLL, 0u);
  EXPECT_EQ(unavailable_note(parsed("sqpoll"), kernel), "");
}

TEST(UringSwitches, sqpoll_the_kernel_refuses_is_off_and_said_so) {
  const Features kernel = Features::all();  // sqpoll refused at the probe
  const Features in_use = kernel.intersect(parsed("sqpoll"));
  EXPECT_FALSE(in_use.sqpoll);
  EXPECT_TRUE(in_use.defer_taskrun) << "without sqpoll nothing else is dropped";
  EXPECT_NE(unavailable_note(parsed("sqpoll"), kernel).find("sqpoll"), std::string::npos);
  EXPECT_EQ(unavailable_note(parsed("all"), kernel), "") << "nothing was asked for";
}

// fixed-files (5.19): on in `all` and from the 5.19 profile on, switched
// by name either way.
TEST(UringSwitches, fixed_files_are_5_19s_and_switched_by_name) {
  EXPECT_TRUE(parsed("").fixed_files);
  EXPECT_TRUE(parsed("5.19").fixed_files);
  EXPECT_FALSE(parsed("5.10").fixed_files);
  EXPECT_TRUE(parsed("5.10,fixed-files").fixed_files);
  EXPECT_FALSE(parsed("no-fixed-files").fixed_files);
  EXPECT_FALSE(parsed("6.6,no-fixed-files").fixed_files);
  EXPECT_TRUE(parsed("no-fixed-files").no_sqarray) << "the other switches stay";
  Features kernel = Features::all();
  kernel.fixed_files = false;
  EXPECT_FALSE(kernel.intersect(parsed("all")).fixed_files) << "off where the kernel lacks it";
  EXPECT_EQ(unavailable_note(parsed("all"), kernel), "") << "on by default: simply off";
  EXPECT_NE(unavailable_note(parsed("5.10,fixed-files"), kernel).find("fixed-files"), std::string::npos)
      << "asked for by name: said";
  EXPECT_EQ(unavailable_note(parsed("5.10,fixed-files,no-fixed-files"), kernel), "");
}

// no-sqarray (6.6): on in `all` and in the 6.6 profile, off in the older
// ones, turned on by name on top of them and off by `sqarray`.
TEST(UringSwitches, no_sqarray_is_6_6s_and_switched_by_name) {
  EXPECT_TRUE(parsed("").no_sqarray);
  EXPECT_TRUE(parsed("6.6").no_sqarray);
  EXPECT_FALSE(parsed("6.1").no_sqarray);
  EXPECT_FALSE(parsed("5.10").no_sqarray);
  EXPECT_TRUE(parsed("6.1,no-sqarray").no_sqarray);
  EXPECT_FALSE(parsed("all,sqarray").no_sqarray);
  EXPECT_FALSE(parsed("sqarray").no_sqarray);
  EXPECT_NE(setup_flags(parsed("6.6")) & IORING_SETUP_NO_SQARRAY, 0u);
  EXPECT_EQ(setup_flags(parsed("6.1")) & IORING_SETUP_NO_SQARRAY, 0u);
}

// min-wait (6.12) trades latency for fewer wake-ups: no profile turns it
// on, only its name; sqpoll rings do without it.
TEST(UringSwitches, min_wait_is_on_only_by_name_and_not_with_sqpoll) {
  for (const char* text : {"", "all", "6.6", "6.1", "5.10", "sqpoll"}) EXPECT_FALSE(parsed(text).min_wait) << text;
  EXPECT_TRUE(parsed("min-wait").min_wait);
  EXPECT_TRUE(parsed("6.1,min-wait").min_wait);
  Features kernel = Features::all();
  kernel.min_wait = true;
  kernel.sqpoll = true;
  EXPECT_TRUE(kernel.intersect(parsed("min-wait")).min_wait);
  EXPECT_FALSE(kernel.intersect(parsed("min-wait,sqpoll")).min_wait);
  EXPECT_EQ(kernel.intersect(parsed("min-wait")).describe(),
            "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files,no-sqarray,min-wait,"
            "recv-bundle,incremental-buffers");
  kernel.min_wait = false;
  EXPECT_NE(unavailable_note(parsed("min-wait"), kernel).find("MIN_TIMEOUT (6.12)"), std::string::npos);
  EXPECT_EQ(unavailable_note(parsed("all"), kernel), "");
}

// A kernel before 6.6: asked for by name (the switch or the 6.6 profile),
// its absence is said; under `all` it is simply off.
TEST(UringSwitches, no_sqarray_the_kernel_lacks_is_off_and_said_so_when_asked_for) {
  Features kernel = Features::all();
  kernel.no_sqarray = false;
  EXPECT_FALSE(kernel.intersect(parsed("6.6")).no_sqarray);
  EXPECT_NE(unavailable_note(parsed("6.6"), kernel).find("no-sqarray"), std::string::npos);
  EXPECT_NE(unavailable_note(parsed("6.1,no-sqarray"), kernel).find("NO_SQARRAY (6.6)"), std::string::npos);
  EXPECT_EQ(unavailable_note(parsed("all"), kernel), "");
  EXPECT_EQ(unavailable_note(parsed("6.6,sqarray"), kernel), "") << "turned off again";
  EXPECT_EQ(unavailable_note(parsed("6.6"), Features::all()), "") << "this kernel has it";
}

// recv-bundle (6.10) and incremental-buffers (6.12): on in `all` and from
// their profiles on, off in the older ones, turned on by name on top of
// them and off by no-NAME; both need a buffer ring.
TEST(UringSwitches, recv_bundle_and_incremental_buffers_are_switched_by_name) {
  for (const char* text : {"", "all", "6.12", "6.10"}) EXPECT_TRUE(parsed(text).recv_bundle) << text;
  for (const char* text : {"6.6", "6.1", "6.0", "5.19", "5.10"}) EXPECT_FALSE(parsed(text).recv_bundle) << text;
  for (const char* text : {"", "all", "6.12"}) EXPECT_TRUE(parsed(text).incremental_buffers) << text;
  for (const char* text : {"6.10", "6.6", "6.1", "5.19", "5.10"}) {
    EXPECT_FALSE(parsed(text).incremental_buffers) << text;
  }
  EXPECT_TRUE(parsed("6.1,recv-bundle").recv_bundle);
  EXPECT_FALSE(parsed("6.1,recv-bundle").incremental_buffers);
  EXPECT_TRUE(parsed("6.1,incremental-buffers").incremental_buffers);
  EXPECT_FALSE(parsed("6.1,incremental-buffers").recv_bundle);
  EXPECT_FALSE(parsed("no-recv-bundle").recv_bundle);
  EXPECT_TRUE(parsed("no-recv-bundle").incremental_buffers);
  EXPECT_FALSE(parsed("6.12,no-incremental-buffers").incremental_buffers);
  EXPECT_TRUE(parsed("6.12,no-incremental-buffers").recv_bundle);
  EXPECT_FALSE(parsed("no-bufring").recv_bundle);
  EXPECT_FALSE(parsed("no-bufring").incremental_buffers);
  const Features kernel = Features::all();
  EXPECT_FALSE(kernel.intersect(parsed("5.10,recv-bundle")).recv_bundle) << "no buffer ring to take them from";
  EXPECT_FALSE(kernel.intersect(parsed("5.10,incremental-buffers")).incremental_buffers);
  EXPECT_TRUE(kernel.intersect(parsed("5.19,recv-bundle,incremental-buffers")).recv_bundle);
  EXPECT_TRUE(kernel.intersect(parsed("5.19,recv-bundle,incremental-buffers")).incremental_buffers);
}

// A kernel before 6.10 or 6.12: asked for by name or by profile, the
// absence is said; under `all` each is simply off.
TEST(UringSwitches, recv_bundle_and_incremental_buffers_the_kernel_lacks_are_said_when_asked_for) {
  Features kernel = Features::all();
  kernel.recv_bundle = kernel.incremental_buffers = false;
  EXPECT_FALSE(kernel.intersect(parsed("6.12")).recv_bundle);
  EXPECT_FALSE(kernel.intersect(parsed("6.12")).incremental_buffers);
  EXPECT_NE(unavailable_note(parsed("6.10"), kernel).find("RECVSEND_BUNDLE (6.10)"), std::string::npos);
  EXPECT_EQ(unavailable_note(parsed("6.10"), kernel).find("PBUF_RING_INC"), std::string::npos);
  EXPECT_NE(unavailable_note(parsed("6.12"), kernel).find("IOU_PBUF_RING_INC (6.12)"), std::string::npos);
  EXPECT_NE(unavailable_note(parsed("6.1,recv-bundle"), kernel).find("recv-bundle"), std::string::npos);
  EXPECT_NE(unavailable_note(parsed("6.1,incremental-buffers"), kernel).find("incremental-buffers"),
            std::string::npos);
  EXPECT_EQ(unavailable_note(parsed("all"), kernel), "");
  EXPECT_EQ(unavailable_note(parsed("6.12,no-recv-bundle,no-incremental-buffers"), kernel), "") << "turned off again";
  EXPECT_EQ(unavailable_note(parsed("6.1,recv-bundle,no-recv-bundle"), kernel), "") << "turned off again";
  EXPECT_EQ(unavailable_note(parsed("6.12"), Features::all()), "") << "this kernel has them";
}

}  // namespace
}  // namespace ringhttp::uring
