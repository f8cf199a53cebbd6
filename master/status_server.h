// The status server: HTTP/1.1 on its own thread, serving a StatusBoard
// (status_board.h) to people and tools while the run goes on.
//
//   GET /             a page that polls /status every second and draws the grid
//   GET /status       JSON (status_render.h)
//   GET /metrics      the same figures in the Prometheus text format
//   GET /preview.png  the latest preview (404 before the first)
//   GET /history      the run's curves so far (run_history.h), read from
//                     options.metrics_path at each request
//   GET /chart.js     Chart.js, for the page (page_assets.h)
//
// Any other path is 404, any other method 405. A request is read within
// `read_timeout` (else the connection is dropped), and its header and body
// must fit their limits (else it is answered 431 or 413); what is not
// HTTP/1.x is answered 400. After an error the connection is closed; a
// client that leaves mid-request costs nothing.
// At most `max_connections` are open at once. When a new one comes and
// all are taken, the oldest connection waiting for a request (idle) is
// closed to make room, so clients that hold connections open and send
// nothing cannot lock out a normal one; only when every connection is busy
// answering is the new one closed at once.
//
// Thread-safety: the constructor and destructor on one thread (the
// master's); the server's own thread only reads the board (which is
// thread-safe) and must not outlive it: destroy the server first.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "master/status_board.h"

namespace cellgan {

struct StatusServerOptions {
  std::string bind = "127.0.0.1";  // an IPv4 or IPv6 address of this host
  int port = 0;                    // 0: any free port; port() says which
  std::chrono::milliseconds read_timeout{5000};
  std::size_t header_limit = 8 * 1024;  // bytes of request line and headers
  std::size_t body_limit = 1024;        // bytes of request body
  int max_connections = 32;
  std::string metrics_path;  // the run's metrics.jsonl, for /history ("": no generation yet)
  std::string objective;     // its objective's name ("": as run_history.h finds it)
};

// The server could not listen (address not of this host, port in use or
// not allowed): what() says where and why ("127.0.0.1:8080: Address
// already in use").
class StatusServerError : public std::runtime_error {
 public:
  explicit StatusServerError(const std::string& what) : std::runtime_error(what) {}
};

class StatusServer {
 public:
  // Listens (throws StatusServerError if it cannot), logs the URL once,
  // and starts serving on a thread of its own.
  StatusServer(const StatusBoard& board, const StatusServerOptions& options);
  // Stops accepting, drops open connections and joins the thread.
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  int port() const;         // the port it listens on
  std::string url() const;  // http://ADDRESS:PORT/

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cellgan
