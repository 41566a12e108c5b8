// TLS as a pure transform: a client Session and a server Session talk
// through memory, with a throwaway CA and certificates made here. No
// socket: the test moves the ciphertext, as the engine will.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/tls/context.hpp"
#include "core/tls/session.hpp"

namespace ringhttp::tls {
namespace {

using Status = Session::Status;

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

bool add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value);
  if (extension == nullptr) return false;
  const bool ok = X509_add_ext(cert, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return ok;
}

// A certificate for `key`, named `common_name`, signed by `issuer_key`
// (itself when `issuer` is null: a self-signed CA). `alt_names` is a
// subjectAltName value for a server certificate.
Cert make_certificate(EVP_PKEY* key, const char* common_name, X509* issuer, EVP_PKEY* issuer_key,
                      const char* alt_names) {
  static long serial = 1;
  Cert cert(X509_new());
  X509* x = cert.get();
  const bool ca = issuer == nullptr;
  if (ca) issuer = x;
  X509_NAME* name = X509_get_subject_name(x);
  bool ok = X509_set_version(x, X509_VERSION_3) == 1 && ASN1_INTEGER_set(X509_get_serialNumber(x), serial++) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(x), -3600) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600) != nullptr &&
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name),
                                       -1, -1, 0) == 1 &&
            X509_set_issuer_name(x, X509_get_subject_name(issuer)) == 1 && X509_set_pubkey(x, key) == 1 &&
            add_extension(x, issuer, NID_subject_key_identifier, "hash");
  if (ca) {
    ok = ok && add_extension(x, x, NID_basic_constraints, "critical,CA:TRUE") &&
         add_extension(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && add_extension(x, issuer, NID_basic_constraints, "critical,CA:FALSE") &&
         add_extension(x, issuer, NID_authority_key_identifier, "keyid:always") &&
         add_extension(x, issuer, NID_key_usage, "critical,digitalSignature") &&
         add_extension(x, issuer, NID_ext_key_usage, "serverAuth") &&
         add_extension(x, issuer, NID_subject_alt_name, alt_names);
  }
  ok = ok && X509_sign(x, issuer_key, EVP_sha256()) > 0;
  return ok ? std::move(cert) : nullptr;
}

bool write_pem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  bool ok = cert != nullptr ? PEM_write_X509(file, cert) == 1
                            : PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  ok = std::fclose(file) == 0 && ok;
  return ok;
}

// The test's PKI, made once: a CA, a server certificate from it for
// localhost, 127.0.0.1 and ::1, and a second CA that signed nothing.
struct Pki {
  std::string ca_file, other_ca_file, certificate_file, key_file, other_key_file;
  bool ok = false;

  Pki() {
    const std::string prefix = testing::TempDir() + "ringhttp_tls_" + std::to_string(getpid()) + "_";
    ca_file = prefix + "ca.pem";
    other_ca_file = prefix + "other_ca.pem";
    certificate_file = prefix + "server.pem";
    key_file = prefix + "server.key";
    other_key_file = prefix + "other.key";
    Key ca_key(EVP_EC_gen("P-256"));
    Key other_ca_key(EVP_EC_gen("P-256"));
    Key server_key(EVP_EC_gen("P-256"));
    if (!ca_key || !other_ca_key || !server_key) return;
    Cert ca = make_certificate(ca_key.get(), "ringhttp test CA", nullptr, ca_key.get(), nullptr);
    Cert other_ca = make_certificate(other_ca_key.get(), "ringhttp other CA", nullptr, other_ca_key.get(), nullptr);
    if (!ca || !other_ca) return;
    Cert server =
        make_certificate(server_key.get(), "localhost", ca.get(), ca_key.get(), "DNS:localhost,IP:127.0.0.1,IP:::1");
    ok = server && write_pem(ca_file, ca.get(), nullptr) && write_pem(other_ca_file, other_ca.get(), nullptr) &&
         write_pem(certificate_file, server.get(), nullptr) && write_pem(key_file, nullptr, server_key.get()) &&
         write_pem(other_key_file, nullptr, other_ca_key.get());
  }
  ~Pki() {
    for (const std::string* file : {&ca_file, &other_ca_file, &certificate_file, &key_file, &other_key_file}) {
      std::remove(file->c_str());
    }
  }
  Pki(const Pki&) = delete;
  Pki& operator=(const Pki&) = delete;
};

const Pki& pki() {
  static const Pki made;
  return made;
}

// Moves at most `limit` bytes of ciphertext from `from` to `to`, as a send
// and a receive would, stopping early when `to` is full. Returns how many.
std::size_t transfer(Session& from, Session& to, std::size_t limit = SIZE_MAX) {
  std::size_t moved = 0;
  while (moved < limit) {
    const std::string_view pending = from.pending_ciphertext();
    if (pending.empty()) break;
    const std::size_t taken = to.put_ciphertext(pending.data(), std::min(pending.size(), limit - moved));
    if (taken == 0) break;
    from.consume_ciphertext(taken);
    moved += taken;
  }
  return moved;
}

struct Outcome {
  Status client = Status::want_io;
  Status server = Status::want_io;
};

// Drives both handshakes, moving at most `limit` bytes each way between
// calls, until nothing moves any more.
Outcome handshake(Session& client, Session& server, std::size_t limit = SIZE_MAX) {
  Outcome out;
  for (;;) {
    if (out.client == Status::want_io) out.client = client.handshake();
    if (out.server == Status::want_io) out.server = server.handshake();
    if (transfer(client, server, limit) + transfer(server, client, limit) == 0) break;
  }
  return out;
}

// Reads until read() stops returning done; `last` gets the status it ended with.
std::string read_all(Session& session, Status* last = nullptr) {
  std::string text;
  char buffer[4096];
  Status status;
  std::size_t n = 0;
  while ((status = session.read(buffer, sizeof buffer, n)) == Status::done) text.append(buffer, n);
  if (last != nullptr) *last = status;
  return text;
}

// Writes all of `text` from `from`, delivering and reading as it goes.
// Returns what `to` read; `partial_writes` counts writes that took less
// than what was left.
std::string send_all(Session& from, Session& to, std::string_view text, int* partial_writes = nullptr) {
  std::string received;
  std::size_t offset = 0;
  while (offset < text.size()) {
    const std::size_t taken = from.write(text.data() + offset, text.size() - offset);
    if (taken < text.size() - offset && partial_writes != nullptr) ++*partial_writes;
    offset += taken;
    const std::size_t moved = transfer(from, to);
    received += read_all(to);
    if (taken == 0 && moved == 0) break;  // stuck: the test fails below
  }
  transfer(from, to);
  received += read_all(to);
  return received;
}

std::unique_ptr<ClientContext> client_context(ClientConfig config) {
  std::string error;
  auto ctx = ClientContext::make(config, error);
  EXPECT_NE(ctx, nullptr) << error;
  return ctx;
}

ClientConfig trusting(const std::string& ca_file) {
  ClientConfig config;
  config.ca_file = ca_file;
  return config;
}

class TlsSession : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pki().ok);
    std::string error;
    server_ctx_ = ServerContext::make({pki().certificate_file, pki().key_file}, error);
    ASSERT_NE(server_ctx_, nullptr) << error;
  }

  // Starts both sides of a connection to `host` and runs the handshake.
  Outcome connect(ClientContext& ctx, std::string_view host, std::size_t limit = SIZE_MAX) {
    std::string error;
    EXPECT_TRUE(ctx.start(client_, host, error)) << error;
    EXPECT_TRUE(server_ctx_->start(server_, error)) << error;
    return handshake(client_, server_, limit);
  }

  std::unique_ptr<ServerContext> server_ctx_;
  Session client_;
  Session server_;
};

TEST_F(TlsSession, handshake_verifies_and_data_flows_both_ways) {
  auto ctx = client_context(trusting(pki().ca_file));
  const Outcome out = connect(*ctx, "localhost");
  ASSERT_EQ(out.client, Status::done) << client_.error_reason();
  ASSERT_EQ(out.server, Status::done) << server_.error_reason();
  EXPECT_STREQ(client_.protocol(), "TLSv1.3");
  EXPECT_STREQ(server_.protocol(), "TLSv1.3");
  EXPECT_STRNE(client_.cipher(), "(NONE)");
  EXPECT_FALSE(client_.resumed());

  const std::string request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(send_all(client_, server_, request), request);
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
  EXPECT_EQ(send_all(server_, client_, response), response);
  EXPECT_FALSE(client_.failed());
  EXPECT_FALSE(server_.failed());
}

TEST_F(TlsSession, a_large_write_goes_out_in_many_partial_writes) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  std::string body(1 << 20, '\0');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = char(i * 7 + i / 4096);
  int partial_writes = 0;
  const std::string received = send_all(client_, server_, body, &partial_writes);
  EXPECT_EQ(received.size(), body.size());
  EXPECT_TRUE(received == body);
  // The output side holds two records, so a mebibyte takes dozens of writes.
  EXPECT_GE(partial_writes, int(body.size() / output_bytes));
}

TEST_F(TlsSession, ciphertext_delivered_a_byte_at_a_time) {
  auto ctx = client_context(trusting(pki().ca_file));
  const Outcome out = connect(*ctx, "localhost", 1);
  ASSERT_EQ(out.client, Status::done) << client_.error_reason();
  ASSERT_EQ(out.server, Status::done) << server_.error_reason();

  const std::string request(3000, 'q');
  ASSERT_EQ(client_.write(request.data(), request.size()), request.size());
  std::string received;
  while (transfer(client_, server_, 1) == 1) received += read_all(server_);
  EXPECT_EQ(received, request);
  EXPECT_FALSE(server_.failed());
}

TEST_F(TlsSession, put_ciphertext_takes_only_what_fits_and_the_rest_follows) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  // Gather far more ciphertext than the client's input side holds.
  const std::string body(200 * 1024, 'r');
  std::string wire;
  for (std::size_t offset = 0; offset < body.size();) {
    offset += server_.write(body.data() + offset, body.size() - offset);
    for (std::string_view pending; !(pending = server_.pending_ciphertext()).empty();) {
      wire += pending;
      server_.consume_ciphertext(pending.size());
    }
  }
  std::string received = read_all(client_);  // the server's session tickets, no data
  EXPECT_TRUE(received.empty());
  std::string_view rest = wire;
  const std::size_t first = client_.put_ciphertext(rest.data(), rest.size());
  EXPECT_EQ(first, input_bytes);
  rest.remove_prefix(first);
  while (!rest.empty()) {
    received += read_all(client_);
    const std::size_t taken = client_.put_ciphertext(rest.data(), rest.size());
    ASSERT_GT(taken, 0u);
    rest.remove_prefix(taken);
  }
  received += read_all(client_);
  EXPECT_TRUE(received == body);
}

TEST_F(TlsSession, sni_carries_the_host_name_to_the_server) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").server, Status::done);
  EXPECT_EQ(server_.server_name(), "localhost");
}

TEST_F(TlsSession, an_ip_literal_is_verified_and_sends_no_sni) {
  auto ctx = client_context(trusting(pki().ca_file));
  Outcome out = connect(*ctx, "127.0.0.1");
  ASSERT_EQ(out.client, Status::done) << client_.error_reason();
  EXPECT_EQ(server_.server_name(), "");
  // A bracketed IPv6 literal, as in a URL.
  out = connect(*ctx, "[::1]");
  ASSERT_EQ(out.client, Status::done) << client_.error_reason();
  EXPECT_EQ(server_.server_name(), "");
}

TEST_F(TlsSession, a_second_connection_resumes_with_the_ticket_read_after_the_first_handshake) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_FALSE(client_.resumed());
  // TLS 1.3: the tickets follow the handshake and are taken by a read.
  EXPECT_FALSE(ctx->has_resumable_session());
  Status last;
  EXPECT_EQ(read_all(client_, &last), "");
  EXPECT_EQ(last, Status::want_io);
  EXPECT_TRUE(ctx->has_resumable_session());

  // The same Session objects, started again, as a connection slot's are.
  const Outcome out = connect(*ctx, "localhost");
  ASSERT_EQ(out.client, Status::done) << client_.error_reason();
  ASSERT_EQ(out.server, Status::done) << server_.error_reason();
  EXPECT_TRUE(client_.resumed());
  EXPECT_TRUE(server_.resumed());
  const std::string request = "GET /again HTTP/1.1\r\n\r\n";
  EXPECT_EQ(send_all(client_, server_, request), request);
}

TEST_F(TlsSession, a_session_is_not_offered_to_another_host) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  ASSERT_TRUE(ctx->has_resumable_session());
  ASSERT_EQ(connect(*ctx, "127.0.0.1").client, Status::done);
  EXPECT_FALSE(client_.resumed());
}

TEST_F(TlsSession, resume_off_keeps_no_session) {
  ClientConfig config = trusting(pki().ca_file);
  config.resume = false;
  auto ctx = client_context(config);
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  EXPECT_FALSE(ctx->has_resumable_session());
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_FALSE(client_.resumed());
}

TEST_F(TlsSession, a_certificate_from_another_ca_fails_verification) {
  auto ctx = client_context(trusting(pki().other_ca_file));
  const Outcome out = connect(*ctx, "localhost");
  ASSERT_EQ(out.client, Status::error);
  EXPECT_TRUE(client_.failed());
  const std::string reason = client_.error_reason();
  EXPECT_NE(reason.find("certificate verify failed: unable to get local issuer certificate"), std::string::npos)
      << reason;
  // The client's alert tells the server why.
  EXPECT_EQ(out.server, Status::error);
  EXPECT_NE(server_.error_reason().find("unknown CA"), std::string::npos) << server_.error_reason();
}

TEST_F(TlsSession, a_certificate_for_another_name_fails_verification) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "example.com").client, Status::error);
  std::string reason = client_.error_reason();
  EXPECT_NE(reason.find("hostname mismatch"), std::string::npos) << reason;
  EXPECT_NE(reason.find("example.com"), std::string::npos) << reason;

  ASSERT_EQ(connect(*ctx, "127.0.0.2").client, Status::error);
  reason = client_.error_reason();
  EXPECT_NE(reason.find("IP address mismatch"), std::string::npos) << reason;
  EXPECT_NE(reason.find("127.0.0.2"), std::string::npos) << reason;
}

TEST_F(TlsSession, verify_off_accepts_an_unknown_ca_and_another_name) {
  ClientConfig config = trusting(pki().other_ca_file);
  config.verify = false;
  auto ctx = client_context(config);
  Outcome out = connect(*ctx, "localhost");
  EXPECT_EQ(out.client, Status::done) << client_.error_reason();
  out = connect(*ctx, "example.com");
  EXPECT_EQ(out.client, Status::done) << client_.error_reason();
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(send_all(client_, server_, request), request);
}

TEST_F(TlsSession, alpn_selects_http11) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_EQ(client_.alpn(), "http/1.1");
  EXPECT_EQ(server_.alpn(), "http/1.1");

  ClientConfig both = trusting(pki().ca_file);
  both.alpn = "h2,http/1.1";
  auto ctx_both = client_context(both);
  ASSERT_EQ(connect(*ctx_both, "localhost").client, Status::done);
  EXPECT_EQ(client_.alpn(), "http/1.1");
}

TEST_F(TlsSession, no_alpn_offered_means_none_selected) {
  ClientConfig config = trusting(pki().ca_file);
  config.alpn.clear();
  auto ctx = client_context(config);
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_EQ(client_.alpn(), "");
  EXPECT_EQ(server_.alpn(), "");
}

TEST_F(TlsSession, a_client_offering_only_h2_is_refused_with_no_application_protocol) {
  ClientConfig config = trusting(pki().ca_file);
  config.alpn = "h2";
  auto ctx = client_context(config);
  const Outcome out = connect(*ctx, "localhost");
  EXPECT_EQ(out.server, Status::error);
  ASSERT_EQ(out.client, Status::error);
  const std::string reason = client_.error_reason();
  EXPECT_NE(reason.find("no application protocol"), std::string::npos) << reason;
  EXPECT_NE(reason.find("alert"), std::string::npos) << reason;
}

TEST_F(TlsSession, garbage_instead_of_a_server_hello_is_an_error_with_a_reason) {
  auto ctx = client_context(trusting(pki().ca_file));
  std::string error;
  ASSERT_TRUE(ctx->start(client_, "localhost", error)) << error;
  ASSERT_EQ(client_.handshake(), Status::want_io);
  const std::string_view hello = client_.pending_ciphertext();
  ASSERT_FALSE(hello.empty());
  client_.consume_ciphertext(hello.size());
  const std::string garbage = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(client_.put_ciphertext(garbage.data(), garbage.size()), garbage.size());
  EXPECT_EQ(client_.handshake(), Status::error);
  EXPECT_EQ(client_.handshake(), Status::error);  // and stays failed
  const std::string reason = client_.error_reason();
  EXPECT_FALSE(reason.empty());
  EXPECT_EQ(reason.find("without a reason"), std::string::npos) << reason;
  EXPECT_EQ(client_.write("x", 1), 0u);
}

TEST_F(TlsSession, plain_http_to_the_server_is_an_error_with_a_reason) {
  std::string error;
  ASSERT_TRUE(server_ctx_->start(server_, error)) << error;
  const std::string request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(server_.put_ciphertext(request.data(), request.size()), request.size());
  EXPECT_EQ(server_.handshake(), Status::error);
  EXPECT_NE(server_.error_reason().find("http request"), std::string::npos) << server_.error_reason();
}

TEST_F(TlsSession, close_notify_reads_as_closed) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  ASSERT_TRUE(client_.close());
  ASSERT_TRUE(client_.close());  // once only
  ASSERT_GT(transfer(client_, server_), 0u);
  EXPECT_TRUE(client_.pending_ciphertext().empty());
  Status last;
  EXPECT_EQ(read_all(server_, &last), "");
  EXPECT_EQ(last, Status::closed);
  EXPECT_EQ(read_all(server_, &last), "");
  EXPECT_EQ(last, Status::closed);
  EXPECT_FALSE(server_.failed());

  // The server answers with its own, and the client sees it the same way.
  ASSERT_TRUE(server_.close());
  ASSERT_GT(transfer(server_, client_), 0u);
  EXPECT_EQ(read_all(client_, &last), "");
  EXPECT_EQ(last, Status::closed);
}

TEST_F(TlsSession, close_before_the_handshake_queues_nothing) {
  auto ctx = client_context(trusting(pki().ca_file));
  std::string error;
  ASSERT_TRUE(ctx->start(client_, "localhost", error)) << error;
  EXPECT_TRUE(client_.close());
  EXPECT_TRUE(client_.pending_ciphertext().empty());
  EXPECT_FALSE(client_.failed());
}

TEST_F(TlsSession, a_moved_session_carries_on) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  Session moved = std::move(client_);
  EXPECT_FALSE(client_.started());
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(send_all(moved, server_, request), request);
}

TEST(TlsSessionLayout, a_session_is_a_few_pointers) {
  // The per-connection state lives in OpenSSL's objects; the connection
  // table holds only this.
  EXPECT_LE(sizeof(Session), 4 * sizeof(void*));
}

TEST(TlsContext, a_missing_ca_file_is_an_error_naming_it) {
  ClientConfig config;
  config.ca_file = "/nonexistent/ringhttp-ca.pem";
  std::string error;
  EXPECT_EQ(ClientContext::make(config, error), nullptr);
  EXPECT_NE(error.find("/nonexistent/ringhttp-ca.pem"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST(TlsContext, a_file_without_certificates_is_not_a_ca_file) {
  ASSERT_TRUE(pki().ok);
  ClientConfig config;
  config.ca_file = pki().key_file;
  std::string error;
  EXPECT_EQ(ClientContext::make(config, error), nullptr);
  EXPECT_NE(error.find(pki().key_file), std::string::npos) << error;
}

TEST(TlsContext, an_empty_alpn_name_is_refused) {
  ClientConfig config;
  config.alpn = "http/1.1,,h2";
  std::string error;
  EXPECT_EQ(ClientContext::make(config, error), nullptr);
  EXPECT_NE(error.find("ALPN"), std::string::npos) << error;
}

TEST(TlsContext, hosts_openssl_cannot_use_are_refused_at_start) {
  ASSERT_TRUE(pki().ok);
  auto ctx = client_context(trusting(pki().ca_file));
  Session session;
  std::string error;
  EXPECT_FALSE(ctx->start(session, std::string(256, 'a'), error));
  EXPECT_FALSE(session.started());
  EXPECT_FALSE(ctx->start(session, std::string("local\0host", 10), error));
  EXPECT_FALSE(ctx->start(session, "", error));
  EXPECT_NE(error.find("no host name"), std::string::npos) << error;
}

TEST(TlsContext, a_key_that_does_not_match_the_certificate_is_refused) {
  ASSERT_TRUE(pki().ok);
  std::string error;
  EXPECT_EQ(ServerContext::make({pki().certificate_file, pki().other_key_file}, error), nullptr);
  EXPECT_NE(error.find(pki().other_key_file), std::string::npos) << error;
  EXPECT_NE(error.find("mismatch"), std::string::npos) << error;
  EXPECT_EQ(ServerContext::make({"/nonexistent/cert.pem", pki().key_file}, error), nullptr);
  EXPECT_NE(error.find("/nonexistent/cert.pem"), std::string::npos) << error;
}

}  // namespace
}  // namespace ringhttp::tls
