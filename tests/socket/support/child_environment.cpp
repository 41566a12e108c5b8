#include "support/child_environment.hpp"

#include <unistd.h>

#include <string_view>

namespace socket_test {

std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry = *e;
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || name_of(x) == name_of(entry);
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace socket_test
