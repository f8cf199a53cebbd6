// Stop signals through Boost.Asio (see stop_signals.h).
#include "master/stop_signals.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>

namespace cellgan {

namespace {

volatile std::sig_atomic_t g_held_signal = 0;

extern "C" void hold_signal(int number) { g_held_signal = number; }

}  // namespace

void hold_stop_signal_early() { std::signal(SIGUSR1, hold_signal); }

struct StopSignals::Impl {
  explicit Impl(std::function<void(int)> handler)
      : on_signal(std::move(handler)), signals(io, SIGTERM, SIGINT, SIGUSR1) {
    arm();
  }
  void arm() {
    signals.async_wait([this](const boost::system::error_code& error, int number) {
      if (error) return;  // cancelled: the set is going away
      arm();               // first: on_signal may throw (out of poll())
      on_signal(number);
    });
  }
  std::function<void(int)> on_signal;
  boost::asio::io_context io;
  boost::asio::signal_set signals;
};

StopSignals::StopSignals(std::function<void(int)> on_signal) : impl_(std::make_unique<Impl>(std::move(on_signal))) {}

StopSignals::~StopSignals() {
  boost::system::error_code ignored;
  impl_->signals.cancel(ignored);
  impl_->io.poll();
}

void StopSignals::poll() {
  if (const int held = g_held_signal; held != 0) {
    g_held_signal = 0;
    impl_->on_signal(held);
  }
  impl_->io.poll();
  impl_->io.restart();
}

}  // namespace cellgan
