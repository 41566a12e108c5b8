"""The TLS rows: the run's own CA and server certificate (the openssl
command), nginx's log of each connection's session, and the handshake
figures of a run.

The CA is made once per run, in the run's private directory, which is
removed at the end of the run whatever happens (Context.remove). Its key
signs one certificate, for the names the servers are reached by, and nothing
else; both live no longer than the run.
"""
import collections
import dataclasses
import os
import shutil
import ssl

from .constants import TLS_CERTIFICATE_DAYS, TLS_CERTIFICATE_NAMES, TLS_OPENSSL_WAIT_S
from .processes import StartError, run_bounded

# openssl req's configuration of the CA, then of the server's request, then
# the extensions the CA signs the server's certificate with.
CA_CONFIG = """[req]
distinguished_name = dn
prompt = no
x509_extensions = ca
[dn]
CN = ringhttp benchmark CA (one run's, removed after it)
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
"""
SERVER_CONFIG = """[req]
distinguished_name = dn
prompt = no
[dn]
CN = localhost
"""
SERVER_EXTENSIONS = f"""basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = {TLS_CERTIFICATE_NAMES}
"""
P256_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def openssl_missing():
    """Why no certificate can be made here, or None."""
    return None if shutil.which("openssl") else "the openssl command is not installed (Debian: openssl)"


@dataclasses.dataclass(frozen=True)
class Certificates:
    directory: str
    ca: str            # the CA's certificate (PEM): what the client is told to trust
    certificate: str   # the server's, signed by the CA
    key: str           # the server's key


def make_certificates(directory):
    """A CA (P-256, self-signed) and a server certificate it signs for
    TLS_CERTIFICATE_NAMES, made by the openssl command in `directory`
    (created, private). StartError naming openssl's reason if a step fails."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for name, text in (("ca.cnf", CA_CONFIG), ("server.cnf", SERVER_CONFIG), ("server.ext", SERVER_EXTENSIONS)):
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)
    days = str(TLS_CERTIFICATE_DAYS)

    def at(name):
        return os.path.join(directory, name)

    steps = [
        ["openssl", "req", "-x509", "-new", *P256_KEY, "-keyout", at("ca.key"), "-out", at("ca.pem"), "-days", days,
         "-config", at("ca.cnf")],
        ["openssl", "req", "-new", *P256_KEY, "-keyout", at("server.key"), "-out", at("server.csr"), "-config",
         at("server.cnf")],
        ["openssl", "x509", "-req", "-in", at("server.csr"), "-CA", at("ca.pem"), "-CAkey", at("ca.key"),
         "-CAcreateserial", "-days", days, "-extfile", at("server.ext"), "-out", at("server.pem")],
    ]
    for argv in steps:
        code, out, err = run_bounded(argv, TLS_OPENSSL_WAIT_S)
        if code != 0:
            raise StartError(f"openssl could not make the run's certificates ({' '.join(argv[:3])} exited {code}): "
                             f"{(err or out).strip()[-300:]}")
    made = Certificates(directory, os.path.join(directory, "ca.pem"), os.path.join(directory, "server.pem"),
                        os.path.join(directory, "server.key"))
    for path in (made.ca, made.certificate, made.key):
        if not os.path.isfile(path):
            raise StartError(f"openssl exited 0 but wrote no {os.path.basename(path)}")
    return made


def client_context(certificates):
    """What the harness's own requests (the start-up check, cold start) use:
    the run's CA trusted, the host name checked, as the client does."""
    context = ssl.create_default_context(cafile=certificates.ca)
    context.check_hostname = True
    return context


def connection_log(path):
    """nginx's log of the nginx-tls rows (bench/peers/nginx-tls.conf), one
    line per connection: {"connections", "resumed", "negotiated": {"protocol
    cipher group": connections}}; None when there is no log."""
    try:
        with open(path) as f:
            lines = f.read().split("\n")[:-1]  # complete lines: one being written is not yet counted
    except OSError:
        return None
    negotiated = collections.Counter()
    resumed = 0
    for line in lines:
        fields = line.split()
        if fields:
            resumed += fields[0] == "r"
            negotiated[" ".join(fields[1:4])] += 1
    return {"connections": sum(negotiated.values()), "resumed": resumed, "negotiated": dict(negotiated)}


def log_difference(after, before):
    """The connections a log gained between two readings (one generator's measured window)."""
    if after is None or before is None:
        return None
    return {"connections": after["connections"] - before["connections"],
            "resumed": after["resumed"] - before["resumed"]}


def handshake_figures(handshakes, resumed, seconds, client_cpu_s, server_cpu_s):
    """A run's handshake figures: per second (all, full, resumed) and the CPU
    each side spent per handshake (its whole CPU over the window ÷ the
    handshakes of the window: the request each carried is in it too)."""
    if not handshakes:
        return {"handshakes": handshakes or 0, "resumed": resumed or 0}
    return {
        "handshakes": handshakes, "resumed": resumed,
        "handshakes_per_s": handshakes / seconds if seconds else None,
        "full_handshakes_per_s": (handshakes - resumed) / seconds if seconds else None,
        "resumed_handshakes_per_s": resumed / seconds if seconds else None,
        "resumed_share": resumed / handshakes,
        "client_cpu_us_per_handshake": client_cpu_s * 1e6 / handshakes if client_cpu_s is not None else None,
        "server_cpu_us_per_handshake": server_cpu_s * 1e6 / handshakes if server_cpu_s is not None else None,
    }
