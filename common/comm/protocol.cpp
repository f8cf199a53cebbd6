// Encoding and decoding of the protocol messages (see protocol.h).
#include "common/comm/protocol.h"

#include <stdexcept>

#include "common/bytes.h"

namespace cellgan {

const char* to_string(WorkerState state) {
  switch (state) {
    case WorkerState::kInactive: return "inactive";
    case WorkerState::kProcessing: return "processing";
    case WorkerState::kFinished: return "finished";
    case WorkerState::kFailed: return "failed";
  }
  return "?";
}

Bytes encode(const StartMessage& m) {
  ByteWriter w;
  w.put<std::uint8_t>(m.ok ? 1 : 0);
  w.put_string(m.error);
  w.put_string(m.config_yaml);
  w.put_string(m.config_source);
  return w.take();
}

StartMessage decode_start(const Bytes& b) {
  ByteReader r(b, "start message");
  StartMessage m;
  m.ok = r.get<std::uint8_t>() != 0;
  m.error = r.get_string();
  m.config_yaml = r.get_string();
  m.config_source = r.get_string();
  return m;
}

Bytes encode(const HeartbeatMessage& m) {
  ByteWriter w;
  w.put<std::uint8_t>(static_cast<std::uint8_t>(m.state));
  w.put<std::int64_t>(m.generation);
  return w.take();
}

HeartbeatMessage decode_heartbeat(const Bytes& b) {
  ByteReader r(b, "heartbeat");
  HeartbeatMessage m;
  m.state = static_cast<WorkerState>(r.get<std::uint8_t>());
  m.generation = r.get<std::int64_t>();
  return m;
}

Bytes encode(const HaloMessage& m) {
  ByteWriter w;
  w.put<std::int64_t>(m.generation);
  w.put<std::int32_t>(m.cell);
  w.put_bytes(m.generator);
  w.put_bytes(m.discriminator);
  return w.take();
}

HaloMessage decode_halo(const Bytes& b) {
  ByteReader r(b, "halo message");
  HaloMessage m;
  m.generation = r.get<std::int64_t>();
  m.cell = r.get<std::int32_t>();
  m.generator = r.get_bytes();
  m.discriminator = r.get_bytes();
  return m;
}

Bytes encode(const RecordsMessage& m) {
  ByteWriter w;
  w.put<std::int64_t>(m.generation);
  w.put<std::int32_t>(m.cells);
  w.put_string(m.json_lines);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.previews.size()));
  for (const auto& [cell, samples] : m.previews) {
    w.put<std::int32_t>(cell);
    w.put_vector(samples);
  }
  return w.take();
}

RecordsMessage decode_records(const Bytes& b) {
  ByteReader r(b, "records message");
  RecordsMessage m;
  m.generation = r.get<std::int64_t>();
  m.cells = r.get<std::int32_t>();
  m.json_lines = r.get_string();
  const auto previews = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < previews; ++i) {
    const int cell = r.get<std::int32_t>();
    m.previews[cell] = r.get_vector<float>();
  }
  return m;
}

Bytes encode(const ResultMessage& m) {
  if (m.ensembles.size() != m.cells.size())
    throw std::logic_error("result message: the counts of cells and ensembles differ");
  std::size_t size = 0;
  for (const auto& e : m.ensembles) size += e.size();
  return encode_result(m.cells, size, [&m](std::size_t i, ByteWriter& w) {
    w.put_raw(m.ensembles[i].data(), m.ensembles[i].size());
  });
}

Bytes encode_result(const std::vector<std::int32_t>& cells, std::size_t size_bound,
                    const std::function<void(std::size_t, ByteWriter&)>& write) {
  ByteWriter w;
  w.reserve(sizeof(std::uint64_t) + cells.size() * (sizeof(std::int32_t) + sizeof(std::uint64_t)) +
            sizeof(std::uint32_t) + size_bound);
  w.put_vector(cells);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(cells.size()));
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::size_t mark = w.begin_block();
    write(i, w);
    w.end_block(mark);
  }
  return w.take();
}

ResultMessage decode_result(const Bytes& b) {
  ByteReader r(b, "result message");
  ResultMessage m;
  m.cells = r.get_vector<std::int32_t>();
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) m.ensembles.push_back(r.get_bytes());
  return m;
}

}  // namespace cellgan
