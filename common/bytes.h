// Little binary writer/reader for messages, individuals and checkpoints,
// and a 64-bit FNV-1a checksum to detect corrupt or truncated payloads.
//
// ByteReader throws InputError("<what>: truncated ...") when asked to read
// past the end, so a short or foreign payload is one clear error.
//
// Thread-safety: plain values; one object per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.h"

namespace cellgan {

// A message's, an individual's or a checkpoint file's bytes: the one
// definition every module uses.
using Bytes = std::vector<std::uint8_t>;

inline std::uint64_t fnv1a64(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

class ByteWriter {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  void put_raw(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    put_raw(s.data(), s.size());
  }
  void put_bytes(const std::vector<std::uint8_t>& b) {
    put<std::uint64_t>(b.size());
    put_raw(b.data(), b.size());
  }
  template <typename T>
  void put_vector(const std::vector<T>& v) {
    put<std::uint64_t>(v.size());
    put_raw(v.data(), v.size() * sizeof(T));
  }
  // A length-prefixed block written in place: begin_block(), the block's
  // bytes, then end_block(mark) give the same bytes as put_bytes(block),
  // without the block ever being held apart.
  std::size_t begin_block() {
    put<std::uint64_t>(0);
    return bytes_.size();
  }
  void end_block(std::size_t mark) {
    const std::uint64_t length = bytes_.size() - mark;
    std::memcpy(bytes_.data() + mark - sizeof length, &length, sizeof length);
  }
  // Room for `size` bytes in all: a writer that knows its size up front
  // allocates once instead of growing (and copying) as it goes.
  void reserve(std::size_t size) { bytes_.reserve(size); }
  std::size_t size() const { return bytes_.size(); }
  std::vector<std::uint8_t>& bytes() { return bytes_; }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<std::uint8_t> bytes_;
};

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}
  explicit ByteReader(const std::vector<std::uint8_t>& b, std::string what = "payload")
      : ByteReader(b.data(), b.size(), std::move(what)) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  void get_raw(void* out, std::size_t size) { std::memcpy(out, take(size), size); }
  void skip(std::size_t size) { take(size); }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    const auto* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  std::vector<std::uint8_t> get_bytes() {
    const auto n = get<std::uint64_t>();
    const auto* p = take(n);
    return std::vector<std::uint8_t>(p, p + n);
  }
  template <typename T>
  std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    if (n > (size_ - pos_) / sizeof(T)) fail(n * sizeof(T));
    std::vector<T> v(n);
    get_raw(v.data(), n * sizeof(T));
    return v;
  }
  std::size_t remaining() const { return size_ - pos_; }
  const std::string& what() const { return what_; }

 private:
  const std::uint8_t* take(std::size_t n) {
    if (n > size_ - pos_) fail(n);
    const std::uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  [[noreturn]] void fail(std::size_t n) const {
    throw InputError(what_ + ": truncated: needed " + std::to_string(n) + " more bytes at offset " +
                     std::to_string(pos_) + " of " + std::to_string(size_));
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace cellgan
