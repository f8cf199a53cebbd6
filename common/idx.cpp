// IDX reading and writing (see common/idx.h for the contract).
//
// Reading goes through zlib's gzopen/gzread, which reads gzip files and
// passes plain files through unchanged, so ".gz" and plain files share one
// path. The payload is read in chunks and never beyond the announced size
// plus one byte, so a bogus header cannot make us allocate gigabytes.
//
// Thread-safety: free functions over independent files.
#include "common/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/error.h"
#include "common/image_files.h"

namespace cellgan {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;
constexpr std::uint32_t kLabelsMagic = 0x00000801;
constexpr std::size_t kChunk = std::size_t{1} << 20;

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

std::uint32_t big_endian32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

void append_big_endian32(std::string& out, std::uint64_t v) {
  out.push_back(static_cast<char>((v >> 24) & 0xFF));
  out.push_back(static_cast<char>((v >> 16) & 0xFF));
  out.push_back(static_cast<char>((v >> 8) & 0xFF));
  out.push_back(static_cast<char>(v & 0xFF));
}

// An open gzip (or plain) file; closes itself.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      const int err = errno;
      throw InputError(path + ": cannot open: " + (err != 0 ? std::strerror(err) : "out of memory"));
    }
  }
  ~GzReader() { gzclose(file_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to `n` bytes into `out`; returns how many were read (fewer
  // only at the end of the data). Throws on corrupt compressed data.
  std::size_t read(unsigned char* out, std::size_t n) {
    std::size_t total = 0;
    while (total < n) {
      const unsigned want = static_cast<unsigned>(std::min(kChunk, n - total));
      const int got = gzread(file_, out + total, want);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_, &code);
        throw InputError(path_ + ": cannot read: " + (message != nullptr ? message : "unknown zlib error"));
      }
      if (got == 0) break;
      total += static_cast<std::size_t>(got);
    }
    if (total < n) {
      // A truncated gzip stream reads as a short read plus an error.
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      if (code != Z_OK && code != Z_STREAM_END) {
        throw InputError(path_ + ": cannot read: " + (message != nullptr ? message : "unknown zlib error"));
      }
    }
    return total;
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

// Reads the header (magic plus `dims` sizes) and the payload, checking the
// magic and that the payload holds exactly the announced number of bytes.
// `what` names the payload in messages ("pixel bytes", "labels").
std::vector<std::uint8_t> read_idx(const std::string& path, std::uint32_t magic, int dims, const char* kind,
                                   const char* what, std::vector<std::uint32_t>& sizes) {
  GzReader reader(path);
  const std::size_t header_size = 4 + 4 * static_cast<std::size_t>(dims);
  unsigned char header[16];
  const std::size_t got_header = reader.read(header, header_size);
  if (got_header < 4) {
    throw InputError(path + ": truncated: expected a " + std::to_string(header_size) + "-byte IDX " + kind +
                     " header, found " + std::to_string(got_header) + " bytes");
  }
  const std::uint32_t found_magic = big_endian32(header);
  if (found_magic != magic) {
    throw InputError(path + ": not an IDX " + kind + " file: expected magic " + hex32(magic) + ", found " +
                     hex32(found_magic));
  }
  if (got_header < header_size) {
    throw InputError(path + ": truncated: expected a " + std::to_string(header_size) + "-byte IDX " + kind +
                     " header, found " + std::to_string(got_header) + " bytes");
  }
  sizes.clear();
  unsigned __int128 expected = 1;
  for (int d = 0; d < dims; ++d) {
    sizes.push_back(big_endian32(header + 4 + 4 * d));
    expected *= sizes.back();
  }
  // Never read more than one byte past the announced payload.
  const unsigned __int128 cap = expected + 1;
  std::vector<std::uint8_t> payload;
  payload.reserve(static_cast<std::size_t>(std::min<unsigned __int128>(cap, 64 * kChunk)));
  while (payload.size() < cap) {
    const std::size_t old = payload.size();
    const std::size_t want = static_cast<std::size_t>(std::min<unsigned __int128>(kChunk, cap - old));
    payload.resize(old + want);
    const std::size_t got = reader.read(payload.data() + old, want);
    payload.resize(old + got);
    if (got < want) break;
  }
  if (payload.size() != expected) {
    // Sizes are 32-bit, so `expected` needs up to 96 bits; print it whole.
    std::string expected_text;
    for (unsigned __int128 v = expected; expected_text.empty() || v > 0; v /= 10) {
      expected_text.insert(expected_text.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    }
    if (payload.size() < expected) {
      throw InputError(path + ": truncated: expected " + expected_text + " " + what + ", found " +
                       std::to_string(payload.size()));
    }
    throw InputError(path + ": expected " + expected_text + " " + what + ", found more (trailing data)");
  }
  return payload;
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  std::vector<std::uint32_t> sizes;
  IdxImages images;
  images.pixels = read_idx(path, kImagesMagic, 3, "image", "pixel bytes", sizes);
  images.count = sizes[0];
  images.rows = sizes[1];
  images.cols = sizes[2];
  if (images.rows < 1 || images.cols < 1) {
    throw InputError(path + ": bad dimensions: expected rows and cols >= 1, found " + std::to_string(images.rows) +
                     " x " + std::to_string(images.cols));
  }
  return images;
}

std::vector<std::uint8_t> read_idx_labels(const std::string& path) {
  std::vector<std::uint32_t> sizes;
  return read_idx(path, kLabelsMagic, 1, "label", "labels", sizes);
}

void write_idx_images(const std::string& path, const IdxImages& images) {
  constexpr std::int64_t kMax = 0xFFFFFFFFLL;
  if (images.count < 0 || images.count > kMax || images.rows < 1 || images.rows > kMax || images.cols < 1 ||
      images.cols > kMax) {
    throw std::invalid_argument(path + ": write_idx_images: bad dimensions");
  }
  const auto expected = static_cast<unsigned __int128>(images.count) * static_cast<std::uint64_t>(images.rows) *
                        static_cast<std::uint64_t>(images.cols);
  if (images.pixels.size() != expected) {
    throw std::invalid_argument(path + ": write_idx_images: pixel count does not match count * rows * cols");
  }
  std::string bytes;
  bytes.reserve(16 + images.pixels.size());
  append_big_endian32(bytes, kImagesMagic);
  append_big_endian32(bytes, static_cast<std::uint64_t>(images.count));
  append_big_endian32(bytes, static_cast<std::uint64_t>(images.rows));
  append_big_endian32(bytes, static_cast<std::uint64_t>(images.cols));
  bytes.append(reinterpret_cast<const char*>(images.pixels.data()), images.pixels.size());
  write_file_atomic(path, bytes);
}

void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels) {
  if (labels.size() > 0xFFFFFFFFULL) throw std::invalid_argument(path + ": write_idx_labels: too many labels");
  std::string bytes;
  bytes.reserve(8 + labels.size());
  append_big_endian32(bytes, kLabelsMagic);
  append_big_endian32(bytes, labels.size());
  bytes.append(reinterpret_cast<const char*>(labels.data()), labels.size());
  write_file_atomic(path, bytes);
}

}  // namespace cellgan
