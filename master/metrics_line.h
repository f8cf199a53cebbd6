// A GenerationRecord as one line of metrics.jsonl (docs/operations.md, "The run folder"): the typed
// record becomes JSON here, and only here.
//
// Thread-safety: a pure function.
#pragma once

#include <string>

#include "common/generation_record.h"

namespace cellgan {

// One line, with its '\n'. The preview samples are not part of it.
std::string to_json_line(const GenerationRecord& record);

}  // namespace cellgan
