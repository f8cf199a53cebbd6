// How gradient values travel between workers (configuration key
// data_parallel.compression): float32 as is, or rounded to 16 bits — IEEE
// half (`fp16`) or bfloat16 (`bf16`), round to nearest even, by c10's
// conversions — and summed in float32 by the receiver.
//
// Tolerance: one rounding to fp16 changes a value x by at most
// |x|·2⁻¹¹ + 2⁻²⁵ (the 2⁻²⁵ below fp16's normal range, |x| < 2⁻¹⁴;
// beyond 65504 values become ±inf), one rounding to bf16 by at most
// |x|·2⁻⁸ (float32's range). An all-reduce of W workers rounds at most W
// values bounded by S = Σ|x_r|, so its sum is within W·(u·S + 2⁻²⁵) of the
// exact one, u = 2⁻¹¹ (fp16) or 2⁻⁸ (bf16); tests/worker/
// gradient_allreduce_test.cpp checks that bound.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/comm/communicator.h"
#include "common/config.h"

namespace cellgan {

// Bytes per value on the wire: 4, or 2 for fp16 and bf16.
std::size_t wire_bytes_per_value(WireCompression compression);

// `count` values from `values` in wire form.
Bytes encode_wire(WireCompression compression, const float* values, std::size_t count);
// out[i] = the wire value i of `bytes` (count values; std::logic_error if
// the length differs).
void decode_wire(WireCompression compression, const Bytes& bytes, float* out, std::size_t count);
// out[i] += the wire value i of `bytes`.
void add_wire(WireCompression compression, const Bytes& bytes, float* out, std::size_t count);
// Rounds `values` in place to what they become on the wire (a no-op for
// none), so that a worker keeps the very bits it sends.
void round_to_wire(WireCompression compression, float* values, std::size_t count);

}  // namespace cellgan
