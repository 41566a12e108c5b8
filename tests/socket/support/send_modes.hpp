// The server's --send modes, for the suites whose behaviour must hold in
// each: instantiate a TestWithParam<std::string> with
// testing::ValuesIn(send_modes), send_mode_test_name.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace socket_test {

inline const std::vector<std::string> send_modes = {"writev", "sendmsg", "zc"};

inline std::string send_mode_test_name(const testing::TestParamInfo<std::string>& param_info) {
  return param_info.param;
}

}  // namespace socket_test
