// A bare HTTP/1.1 client for the status server's tests, over a POSIX
// socket, so that a test can send any bytes (malformed, oversized, half a
// request) and see exactly what comes back.
//
// Thread-safety: free functions; each call has its own socket.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace cellgan::test {

// A connected socket to 127.0.0.1:port (closed by its destructor), whose
// reads give up after `timeout`. valid() is false if the connection failed.
class ClientSocket {
 public:
  explicit ClientSocket(int port, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~ClientSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  ClientSocket(const ClientSocket&) = delete;
  ClientSocket& operator=(const ClientSocket&) = delete;

  bool valid() const { return fd_ >= 0; }
  // Sends all of `bytes` (false if the server closed the connection first).
  bool send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  void close_sending() { ::shutdown(fd_, SHUT_WR); }
  // Everything until the server closes the connection or the timeout.
  std::string receive_all() {
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = n == 0;
        return out;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  // The last receive_all() ended because the server closed (not a timeout or reset).
  bool closed_by_server() const { return closed_; }

 private:
  int fd_ = -1;
  bool closed_ = false;
};

// A port of 127.0.0.1 nobody listens on now: the kernel's choice of a
// free one, released at once (for a server configured by its port).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0)
    throw std::runtime_error("free_port: no free port");
  ::close(fd);
  return ntohs(address.sin_port);
}

struct HttpAnswer {
  int status = 0;       // 0: no answer
  std::string headers;  // the status line and headers
  std::string body;
};

inline HttpAnswer parse_answer(const std::string& raw) {
  HttpAnswer a;
  const auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return a;
  a.status = std::stoi(raw.substr(9, 3));
  a.headers = raw.substr(0, end);
  a.body = raw.substr(end + 4);
  return a;
}

// Sends `request` as is and returns the server's answer, read until it closes.
inline HttpAnswer http_exchange(int port, const std::string& request) {
  ClientSocket socket(port);
  if (!socket.valid() || !socket.send(request)) return {};
  return parse_answer(socket.receive_all());
}

inline HttpAnswer http_request(int port, const std::string& method, const std::string& path) {
  return http_exchange(port, method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

inline HttpAnswer http_get(int port, const std::string& path) { return http_request(port, "GET", path); }

}  // namespace cellgan::test
