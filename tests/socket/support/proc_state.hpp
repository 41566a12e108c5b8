// States the kernel shows in /proc and poll(2), for tests that must wait for
// an event instead of sleeping: a connection still in a listen queue, a
// process's descriptor table, a socket with something to read. Header-only,
// so any test (or support file) can use it without a build change.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "support/connection.hpp"
#include "support/proc_file.hpp"

namespace socket_test {

// The number of connections waiting in the accept queue of the listening
// TCP socket on `port` (any local address, IPv4 or IPv6), or nothing when no
// socket listens there. For a socket in LISTEN state /proc/net/tcp shows the
// accept queue's length in the rx_queue column; a connection the kernel
// has completed but the server has not yet accepted is counted there, and
// leaves it the moment accept(2) takes it.
inline std::optional<std::size_t> accept_queue_length(std::uint16_t port) {
  constexpr const char* listen_state = "0A";
  std::optional<std::size_t> total;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream in(read_proc_file(table));
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx_queue:rx_queue ...
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues;
      if (!(fields >> slot >> local >> remote >> state >> queues)) continue;
      if (state != listen_state) continue;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos || std::stoul(local.substr(colon + 1), nullptr, 16) != port) continue;
      const auto queue_colon = queues.find(':');
      if (queue_colon == std::string::npos) continue;
      total = total.value_or(0) + std::stoul(queues.substr(queue_colon + 1), nullptr, 16);
    }
  }
  return total;
}

// The bytes the other end of a loopback connection has received but its
// owner has not read yet (rx_queue of the peer's socket in /proc/net/tcp or
// tcp6), or nothing when that socket is not found. Zero once the server
// has taken in what the client sent (a receive consumed it).
inline std::optional<std::size_t> peer_unread_bytes(const Connection& connection) {
  sockaddr_storage local{}, remote{};
  socklen_t local_len = sizeof local, remote_len = sizeof remote;
  if (::getsockname(connection.fd(), reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return std::nullopt;
  if (::getpeername(connection.fd(), reinterpret_cast<sockaddr*>(&remote), &remote_len) != 0) return std::nullopt;
  const auto port_of = [](const sockaddr_storage& a) -> unsigned long {
    return a.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port)
                                   : ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  };
  const unsigned long own_port = port_of(local), peer_port = port_of(remote);
  const auto port_in = [](const std::string& address) {
    const auto colon = address.rfind(':');
    return colon == std::string::npos ? 0ul : std::stoul(address.substr(colon + 1), nullptr, 16);
  };
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::istringstream in(read_proc_file(table));
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local_address, remote_address, state, queues;
      if (!(fields >> slot >> local_address >> remote_address >> state >> queues)) continue;
      if (port_in(local_address) != peer_port || port_in(remote_address) != own_port) continue;
      const auto colon = queues.find(':');
      if (colon == std::string::npos) continue;
      return std::stoul(queues.substr(colon + 1), nullptr, 16);
    }
  }
  return std::nullopt;
}

// How many descriptors the process has open (entries of /proc/PID/fd); 0
// when the process is gone.
inline std::size_t open_descriptors(pid_t pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// How many direct descriptors (io_uring's fixed-files) the process's rings
// hold: the entries each ring's /proc/PID/fdinfo lists after "UserFiles:".
// The kernel lists them only when it gets the ring's lock at once, so a
// caller that needs an exact count asks until it holds still.
inline std::size_t direct_descriptors(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(proc + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(it->path(), link_ec).string() != "anon_inode:[io_uring]") continue;
    std::istringstream info(read_proc_file(proc + "/fdinfo/" + it->path().filename().string()));
    bool listing = false;
    for (std::string line; std::getline(info, line);) {
      if (line.starts_with("UserFiles:")) {
        listing = true;
      } else if (listing && line.starts_with(" ")) {
        ++n;
      } else {
        listing = false;
      }
    }
  }
  return n;
}

// Every descriptor the process holds: its own and its rings' direct ones.
inline std::size_t held_descriptors(pid_t pid) { return open_descriptors(pid) + direct_descriptors(pid); }

// The scheduler's state of one of this process's threads, from
// /proc/self/task/TID/stat: 'R' running, 'S' asleep (blocked in a system
// call such as a send(2) waiting for room), ...; '?' when it is gone.
inline char thread_state(pid_t tid) {
  const std::string text = read_proc_file("/proc/self/task/" + std::to_string(tid) + "/stat");
  const auto paren = text.rfind(')');  // the name in parentheses may hold anything
  if (paren == std::string::npos || paren + 2 >= text.size()) return '?';
  return text[paren + 2];
}

// True when every thread of process `pid` is stopped ('T', by SIGSTOP):
// from then on its sockets take what arrives, and it handles none of it
// until SIGCONT.
inline bool process_stopped(pid_t pid) {
  std::error_code error;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    const std::string text = read_proc_file(task.path().string() + "/stat");
    const auto paren = text.rfind(')');
    if (paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] != 'T') return false;
    any = true;
  }
  return any;
}

// True when a read on the connection would not block now: bytes already
// buffered, bytes in the socket, or the peer's FIN or reset.
inline bool input_ready(Connection& connection) { return connection.input_ready(); }

}  // namespace socket_test
