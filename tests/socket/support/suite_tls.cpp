#include "support/suite_tls.hpp"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

namespace socket_test {
namespace {

std::mutex ports_mutex;
std::set<std::uint16_t> tls_ports;

}  // namespace

bool suite_tls() {
  const char* env = std::getenv("RINGHTTP_SERVER_TLS");
  return env != nullptr && std::string(env) == "1";
}

const Certificates& suite_certificates() {
  static const TempCertificates certificates;  // thread-safe static initialization
  return certificates.files();
}

ringhttp::tls::ClientContext& suite_tls_client() {
  static const std::unique_ptr<ringhttp::tls::ClientContext> context = [] {
    ringhttp::tls::ClientConfig config;
    config.ca_file = suite_certificates().ca_file;
    config.alpn = "http/1.1";
    config.resume = false;  // no session kept: the context is shared by the test's threads
    std::string error;
    std::unique_ptr<ringhttp::tls::ClientContext> made = ringhttp::tls::ClientContext::make(config, error);
    if (made == nullptr) throw std::runtime_error("TLS client context: " + error);
    return made;
  }();
  return *context;
}

void add_tls_port(std::uint16_t port) {
  const std::lock_guard lock(ports_mutex);
  tls_ports.insert(port);
}

void remove_tls_port(std::uint16_t port) {
  const std::lock_guard lock(ports_mutex);
  tls_ports.erase(port);
}

bool is_tls_port(std::uint16_t port) {
  const std::lock_guard lock(ports_mutex);
  return tls_ports.contains(port);
}

}  // namespace socket_test
