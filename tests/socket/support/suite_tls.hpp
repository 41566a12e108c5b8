// The socket suite over HTTPS: with RINGHTTP_SERVER_TLS=1 (meson's
// socket_tls run), every server a test starts (support/server_process.hpp)
// serves HTTPS with certificates made once per run, unless the test chose
// its own TLS or send mode or another responder. Connections to such a
// server (support/connection.hpp) run a TLS handshake and then carry every
// send in records of their own, and the client runs (support/client_process.hpp)
// load it over https:// with the run's CA. Each test then checks the same
// HTTP behaviour over TLS, unchanged.
#pragma once

#include <cstdint>
#include <string>

#include "core/tls/context.hpp"
#include "support/certificates.hpp"

namespace socket_test {

// True when RINGHTTP_SERVER_TLS is set to 1.
bool suite_tls();

// The run's certificates, made on first use (in a directory removed at exit).
const Certificates& suite_certificates();

// The client context connections use: trusts the run's CA, offers http/1.1.
ringhttp::tls::ClientContext& suite_tls_client();

// The ports of the servers serving HTTPS for the suite, kept while they run.
void add_tls_port(std::uint16_t port);
void remove_tls_port(std::uint16_t port);
bool is_tls_port(std::uint16_t port);

}  // namespace socket_test
