// The status server over Boost.Beast (see status_server.h). One
// io_context, run by one thread: every handler below runs on it, so the
// sessions and the acceptor need no locks.
#include "master/status_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <list>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "common/image_files.h"
#include "common/log.h"
#include "master/page_assets.h"
#include "master/run_history.h"
#include "master/status_page.h"
#include "master/status_render.h"

namespace cellgan {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Response = http::response<http::string_body>;

// What the sessions share with the server; kept alive by every session, so
// it outlives the io_context's last handler.
class Session;
struct Shared {
  const StatusBoard& board;
  StatusServerOptions options;
  int connections = 0;  // open sessions (the server thread only)
  std::list<std::weak_ptr<Session>> sessions;  // in the order they were accepted (the server thread only)
};

Response make_response(http::status status, const std::string& type, std::string body, bool keep_alive) {
  Response r{status, 11};
  r.set(http::field::server, "cellgan");
  r.set(http::field::content_type, type);
  r.set(http::field::cache_control, "no-store");
  r.keep_alive(keep_alive);
  r.body() = std::move(body);
  r.prepare_payload();
  return r;
}

Response error_response(http::status status, const std::string& why, bool keep_alive) {
  return make_response(status, "text/plain; charset=utf-8",
                       fmt::format("{} {}: {}\n", static_cast<unsigned>(status), std::string(http::obsolete_reason(status)), why),
                       keep_alive);
}

constexpr const char* kPaths = "the paths are /, /status, /metrics, /history, /chart.js, /preview.png";

// The GET answers that do not need the board's snapshot; none for the others.
std::optional<Response> answer_constant(const std::string& path, const StatusServerOptions& options, bool keep_alive) {
  if (path == "/") return make_response(http::status::ok, "text/html; charset=utf-8", status_page_html(), keep_alive);
  if (path == "/chart.js")
    return make_response(http::status::ok, "text/javascript; charset=utf-8", std::string(chart_js()), keep_alive);
  if (path != "/history") return std::nullopt;
  try {
    return make_response(http::status::ok, "application/json",
                         run_history_json(options.metrics_path, options.objective), keep_alive);
  } catch (const std::exception& e) {
    return error_response(http::status::internal_server_error, e.what(), keep_alive);
  }
}

Response answer(const http::request<http::string_body>& request, const Shared& shared) {
  const bool keep_alive = request.keep_alive();
  const beast::string_view target = request.target();
  const std::string path(target.substr(0, target.find('?')));
  const bool known = path == "/" || path == "/status" || path == "/metrics" || path == "/preview.png" ||
                     path == "/history" || path == "/chart.js";
  if (!known) return error_response(http::status::not_found, kPaths, keep_alive);
  if (request.method() != http::verb::get) {
    Response r = error_response(http::status::method_not_allowed, "only GET", keep_alive);
    r.set(http::field::allow, "GET");
    return r;
  }
  if (auto constant = answer_constant(path, shared.options, keep_alive)) return std::move(*constant);
  const StatusSnapshot s = shared.board.snapshot(StatusBoard::Clock::now());
  if (path == "/status") return make_response(http::status::ok, "application/json", status_json(s), keep_alive);
  if (path == "/metrics")
    return make_response(http::status::ok, "text/plain; version=0.0.4; charset=utf-8", status_metrics(s), keep_alive);
  std::optional<std::string> png;
  if (!s.preview_path.empty()) png = read_file(s.preview_path);
  if (!png) return error_response(http::status::not_found, "no preview yet", keep_alive);
  return make_response(http::status::ok, "image/png", std::move(*png), keep_alive);
}

// The answer to a request that could not be read, or none (close at once).
std::optional<Response> answer_to_failure(const beast::error_code& ec) {
  if (ec == http::error::header_limit)
    return error_response(http::status::request_header_fields_too_large, "the request's header is too large", false);
  if (ec == http::error::body_limit)
    return error_response(http::status::payload_too_large, "the request's body is too large", false);
  if (ec == beast::error::timeout) return std::nullopt;  // the stream is closed already
  if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return error_response(http::status::bad_request, "not an HTTP/1.x request: " + ec.message(), false);
  return std::nullopt;  // the client left
}

// One connection: read a request, answer it, and again while it keeps alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)),
        shared_(std::move(shared)),
        buffer_(shared_->options.header_limit + shared_->options.body_limit + 1024) {
    ++shared_->connections;
  }
  ~Session() { --shared_->connections; }

  // Serves the connection; it can be evicted from now on.
  void start() {
    shared_->sessions.push_back(weak_from_this());
    read();
  }
  // Closes the connection if it is waiting for a request (not answering
  // one); returns whether it did.
  bool evict_if_idle() {
    if (!reading_) return false;
    close();
    return true;
  }

  void read() {
    reading_ = true;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(shared_->options.header_limit));
    parser_->body_limit(shared_->options.body_limit);
    stream_.expires_after(shared_->options.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    reading_ = false;
    if (ec) {
      if (auto r = answer_to_failure(ec)) return write(std::move(*r));
      return close();
    }
    try {
      write(answer(parser_->get(), *shared_));
    } catch (const std::exception& e) {
      log::warn("status server: {}", e.what());
      write(error_response(http::status::internal_server_error, e.what(), false));
    }
  }

  void write(Response response) {
    response_ = std::move(response);
    stream_.expires_after(shared_->options.read_timeout);
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec && self->response_.keep_alive()) return self->read();
      self->close();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Response response_;
  bool reading_ = false;  // waiting for a request
};

// Makes room for a new connection when the server is full: closes the
// oldest connection that waits for a request (an idle keep-alive, or a
// client that opened a connection and sent nothing). Returns false when
// every connection is busy answering.
bool evict_oldest_idle(Shared& shared) {
  for (auto it = shared.sessions.begin(); it != shared.sessions.end();) {
    const std::shared_ptr<Session> session = it->lock();
    if (!session) {
      it = shared.sessions.erase(it);
      continue;
    }
    if (session->evict_if_idle()) {
      shared.sessions.erase(it);
      return true;
    }
    ++it;
  }
  return false;
}

}  // namespace

struct StatusServer::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::shared_ptr<Shared> shared;
  std::string url;
  int port = 0;
  std::thread thread;

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) {
        log::warn("status server: accept: {}", ec.message());
      } else if (shared->connections >= shared->options.max_connections && !evict_oldest_idle(*shared)) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<Session>(std::move(socket), shared)->start();
      }
      accept();
    });
  }
};

StatusServer::StatusServer(const StatusBoard& board, const StatusServerOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->shared = std::make_shared<Shared>(Shared{board, options, 0, {}});
  const std::string where = fmt::format("{}:{}", options.bind, options.port);
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.bind, ec);
  if (ec) throw StatusServerError(fmt::format("{}: not an IP address", options.bind));
  if (options.port < 0 || options.port > 65535) throw StatusServerError(fmt::format("{}: not a port", where));
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  tcp::acceptor& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  // A port left in TIME_WAIT by a previous run may be reused; one that
  // another process listens on may not (Linux refuses a second listener).
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw StatusServerError(fmt::format("{}: {}", where, ec.message()));
  impl_->port = acceptor.local_endpoint().port();
  impl_->url = address.is_v6() ? fmt::format("http://[{}]:{}/", address.to_string(), impl_->port)
                               : fmt::format("http://{}:{}/", address.to_string(), impl_->port);
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] {
    log::set_thread_name("status");
    // A handler that throws costs its connection, never the run.
    for (;;) {
      try {
        impl->io.run();
        return;
      } catch (const std::exception& e) {
        log::warn("status server: {}", e.what());
      }
    }
  });
  log::info("status: serving {} (JSON at /status, Prometheus at /metrics)", impl_->url);
}

StatusServer::~StatusServer() {
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->io.stop();
  });
  impl_->thread.join();
}

int StatusServer::port() const { return impl_->port; }
std::string StatusServer::url() const { return impl_->url; }

}  // namespace cellgan
