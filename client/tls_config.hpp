#pragma once
// The client's TLS settings from its options: one place for the start-up
// check's handshake, every worker's context and the flags' own check.

#include "client/options.hpp"
#include "core/tls/context.hpp"

namespace ringhttp::client {

inline tls::ClientConfig tls_config(const Options& o) {
  tls::ClientConfig config;
  config.verify = !o.insecure;
  config.resume = !o.no_sessionid;
  config.ca_file = o.cacert;
  config.alpn = o.http2 ? "h2" : "http/1.1";
  config.ciphers = o.ciphers;
  config.tls13_ciphers = o.tls13_ciphers;
  return config;
}

}  // namespace ringhttp::client
