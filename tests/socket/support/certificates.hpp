// Certificates for the tests' HTTPS servers (ours and nginx), made by the
// openssl command: a CA, a server certificate it signed for every name and
// address the tests use, and a second CA that signed nothing, for "wrong
// CA" tests. P-256 keys: they take milliseconds to make, where RSA ones can
// take a good part of a second.
#pragma once

#include <string>

namespace socket_test {

struct Certificates {
  std::string ca_file;        // PEM
  std::string ca_key_file;
  std::string cert_file;      // the server's, signed by the CA: localhost, a.test, b.test, 127.0.0.1, ::1
  std::string key_file;
  std::string wrong_ca_file;  // an unrelated CA
};

// Makes them in `dir` (which must exist). Throws std::runtime_error with
// openssl's output when it fails.
Certificates make_certificates(const std::string& dir);

// A temporary directory holding a fresh set, removed by the destructor.
class TempCertificates {
 public:
  TempCertificates();
  ~TempCertificates();
  TempCertificates(const TempCertificates&) = delete;
  TempCertificates& operator=(const TempCertificates&) = delete;

  const Certificates& files() const { return files_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  Certificates files_;
};

}  // namespace socket_test
