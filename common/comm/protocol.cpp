// Encoding and decoding of the protocol messages (see protocol.h).
#include "common/comm/protocol.h"

#include <stdexcept>

#include "common/bytes.h"
#include "common/config.h"

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

std::vector<int> global_ranks(int workers) {
  std::vector<int> ranks;
  for (int r = 0; r <= workers; ++r) ranks.push_back(r);
  return ranks;
}

std::vector<int> worker_ranks(int workers) {
  std::vector<int> ranks;
  for (int r = 1; r <= workers; ++r) ranks.push_back(r);
  return ranks;
}

std::chrono::milliseconds start_timeout() { return std::chrono::milliseconds(RuntimeConfig{}.dead_after_ms); }

Bytes encode(const StartMessage& m) {
  ByteWriter w;
  w.put<std::uint8_t>(m.ok ? 1 : 0);
  w.put<std::int32_t>(m.exit_code);
  w.put_string(m.error);
  w.put_string(m.config_yaml);
  w.put_string(m.config_source);
  w.put<std::int64_t>(m.resume_generation);
  w.put_string(m.resume_folder);
  return w.take();
}

StartMessage decode_start(const Bytes& b) {
  ByteReader r(b, "start message");
  StartMessage m;
  m.ok = r.get<std::uint8_t>() != 0;
  m.exit_code = r.get<std::int32_t>();
  m.error = r.get_string();
  m.config_yaml = r.get_string();
  m.config_source = r.get_string();
  m.resume_generation = r.get<std::int64_t>();
  m.resume_folder = r.get_string();
  return m;
}

Bytes encode(const HelloMessage& m) {
  ByteWriter w;
  w.put_string(m.blas_kernels);
  w.put_string(m.device);
  return w.take();
}

HelloMessage decode_hello(const Bytes& b) {
  ByteReader r(b, "hello message");
  HelloMessage m;
  m.blas_kernels = r.get_string();
  m.device = r.get_string();
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

namespace {

void put_doubles(ByteWriter& w, const std::map<std::string, double>& values) {
  w.put<std::uint32_t>(static_cast<std::uint32_t>(values.size()));
  for (const auto& [name, value] : values) {
    w.put_string(name);
    w.put<double>(value);
  }
}

std::map<std::string, double> get_doubles(ByteReader& r) {
  std::map<std::string, double> values;
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string name = r.get_string();
    values[std::move(name)] = r.get<double>();
  }
  return values;
}

void put_record(ByteWriter& w, const GenerationRecord& g) {
  w.put<std::int32_t>(g.cell);
  w.put<std::int64_t>(g.generation);
  w.put<double>(g.generator_loss);
  w.put<double>(g.discriminator_loss);
  put_doubles(w, g.scores);
  w.put_vector(g.generator_lrs);
  w.put_vector(g.discriminator_lrs);
  w.put_vector(g.mixture_weights);
  w.put<std::int32_t>(g.generators_replaced);
  w.put<std::int32_t>(g.discriminators_replaced);
  w.put<std::uint8_t>(g.mixture_improved ? 1 : 0);
  w.put_vector(g.preview);
  put_doubles(w, g.seconds);
  put_doubles(w, g.counts);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(g.events.size()));
  for (const std::string& line : g.events) w.put_string(line);
}

GenerationRecord get_record(ByteReader& r) {
  GenerationRecord g;
  g.cell = r.get<std::int32_t>();
  g.generation = r.get<std::int64_t>();
  g.generator_loss = r.get<double>();
  g.discriminator_loss = r.get<double>();
  g.scores = get_doubles(r);
  g.generator_lrs = r.get_vector<double>();
  g.discriminator_lrs = r.get_vector<double>();
  g.mixture_weights = r.get_vector<double>();
  g.generators_replaced = r.get<std::int32_t>();
  g.discriminators_replaced = r.get<std::int32_t>();
  g.mixture_improved = r.get<std::uint8_t>() != 0;
  g.preview = r.get_vector<float>();
  g.seconds = get_doubles(r);
  g.counts = get_doubles(r);
  const auto events = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < events; ++i) g.events.push_back(r.get_string());
  return g;
}

}  // namespace

Bytes encode(const RecordsMessage& m) {
  ByteWriter w;
  w.put<std::int64_t>(m.generation);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.records.size()));
  for (const GenerationRecord& g : m.records) put_record(w, g);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.events.size()));
  for (const std::string& line : m.events) w.put_string(line);
  return w.take();
}

RecordsMessage decode_records(const Bytes& b) {
  ByteReader r(b, "records message");
  RecordsMessage m;
  m.generation = r.get<std::int64_t>();
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) m.records.push_back(get_record(r));
  const auto events = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < events; ++i) m.events.push_back(r.get_string());
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

Bytes encode(const IdentityMessage& m) {
  ByteWriter w;
  w.put<std::int64_t>(m.pid);
  w.put_string(m.host);
  return w.take();
}

IdentityMessage decode_identity(const Bytes& b) {
  ByteReader r(b, "identity message");
  IdentityMessage m;
  m.pid = r.get<std::int64_t>();
  m.host = r.get_string();
  return m;
}

Bytes encode(const MembersMessage& m) {
  ByteWriter w;
  w.put_vector(m.members);
  w.put<std::int64_t>(m.generation);
  w.put_string(m.folder);
  w.put<std::int32_t>(m.local_tag);
  return w.take();
}

MembersMessage decode_members(const Bytes& b, const char* what) {
  ByteReader r(b, what);
  MembersMessage m;
  m.members = r.get_vector<std::int32_t>();
  m.generation = r.get<std::int64_t>();
  m.folder = r.get_string();
  m.local_tag = r.get<std::int32_t>();
  return m;
}

Bytes encode(const CheckpointMessage& m) {
  ByteWriter w;
  w.put<std::int64_t>(m.generation);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.files.size()));
  for (const auto& f : m.files) {
    w.put<std::int32_t>(f.cell);
    w.put_string(f.name);
    w.put<std::uint64_t>(f.bytes);
    w.put<std::uint32_t>(f.crc32);
  }
  w.put<double>(m.seconds);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m.events.size()));
  for (const auto& e : m.events) w.put_string(e);
  return w.take();
}

CheckpointMessage decode_checkpoint(const Bytes& b) {
  ByteReader r(b, "checkpoint message");
  CheckpointMessage m;
  m.generation = r.get<std::int64_t>();
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) {
    CheckpointFile f;
    f.cell = r.get<std::int32_t>();
    f.name = r.get_string();
    f.bytes = r.get<std::uint64_t>();
    f.crc32 = r.get<std::uint32_t>();
    m.files.push_back(std::move(f));
  }
  m.seconds = r.get<double>();
  const auto events = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < events; ++i) m.events.push_back(r.get_string());
  return m;
}

Bytes encode(const GenerationMessage& m) {
  ByteWriter w;
  w.put<std::int64_t>(m.generation);
  return w.take();
}

GenerationMessage decode_generation(const Bytes& b, const char* what) {
  ByteReader r(b, what);
  GenerationMessage m;
  m.generation = r.get<std::int64_t>();
  return m;
}

Bytes encode(const FailureMessage& m) {
  ByteWriter w;
  w.put_string(m.reason);
  w.put<std::int32_t>(m.exit_code);
  return w.take();
}

FailureMessage decode_failure(const Bytes& b) {
  ByteReader r(b, "failure message");
  FailureMessage m;
  m.reason = r.get_string();
  m.exit_code = r.get<std::int32_t>();
  return m;
}

Bytes encode(const AbortMessage& m) {
  ByteWriter w;
  w.put<std::int32_t>(m.exit_code);
  w.put_string(m.reason);
  return w.take();
}

AbortMessage decode_abort(const Bytes& b) {
  ByteReader r(b, "abort message");
  AbortMessage m;
  m.exit_code = r.get<std::int32_t>();
  m.reason = r.get_string();
  return m;
}

}  // namespace cellgan
