#pragma once
// A throwaway PKI for the unit tests that speak TLS without a socket
// (tls_test.cpp, shard_session_test.cpp): a CA, a server certificate from
// it for localhost, 127.0.0.1 and ::1, and a second CA that signed
// nothing, made once per process in the test's temporary directory.

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

namespace ringhttp::testing_support {
namespace pki_detail {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

inline bool add_extension(X509* cert, X509* issuer, int nid, const char* value) {
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
inline Cert make_certificate(EVP_PKEY* key, const char* common_name, X509* issuer, EVP_PKEY* issuer_key,
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

inline bool write_pem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  bool ok = cert != nullptr ? PEM_write_X509(file, cert) == 1
                            : PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  ok = std::fclose(file) == 0 && ok;
  return ok;
}

}  // namespace pki_detail

// The files, and whether they were all made.
struct Pki {
  std::string ca_file, other_ca_file, certificate_file, key_file, other_key_file;
  bool ok = false;

  Pki() {
    using namespace pki_detail;
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

inline const Pki& pki() {
  static const Pki made;
  return made;
}

}  // namespace ringhttp::testing_support
