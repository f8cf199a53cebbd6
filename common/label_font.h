// Text on the PNGs a run writes (previews, classes.png): a fixed 5x7 pixel
// font of lowercase letters, digits, space and , . : - / ( ), drawn dark on
// an 8-bit gray or RGB buffer, each font pixel a scale x scale square.
// Glyphs are 5 pixels wide with 1 pixel between them.
//
// Thread-safety: pure functions over the caller's buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cellgan {

inline constexpr int kGlyphWidth = 5, kGlyphHeight = 7, kGlyphAdvance = 6;

// Width in pixels of `text` at `scale` (0 for "").
std::int64_t text_width(const std::string& text, int scale);

// Draws `text` with its top-left corner at (x, y) into `pixels`, an image
// `width` pixels wide of `channels` (1 or 3) bytes per pixel, setting every
// channel of a glyph's pixels to `value`; what falls outside is clipped.
// Throws std::invalid_argument for a character the font lacks.
void draw_text(std::vector<std::uint8_t>& pixels, std::int64_t width, int channels, std::int64_t x, std::int64_t y,
               const std::string& text, int scale, std::uint8_t value);

}  // namespace cellgan
