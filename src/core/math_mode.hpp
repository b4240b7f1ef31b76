// The process's math (tgemm_set_math, TGEMM_MATH) and what the last call
// that could take the fp32-tc math did with it, for the trace and the
// verbose log. Both are process-wide: the setting applies to every call
// that starts after it; the record is informational (with calls running at
// once on several threads it holds one of theirs).
#pragma once

#include "core/settings.hpp"

namespace tgemm {

// The math of calls starting now: the last set_process_math, else
// TGEMM_MATH (strict where it is invalid: the call fails on the setting).
Math process_math();
void set_process_math(Math m);

// The invalid setting a call starting now fails on, empty if none: the
// first invalid variable, else an invalid TGEMM_MATH unless set_process_math
// has overridden it.
const std::string &setting_error_for_calls();

// Why a call under the fp32-tc math ran the strict path instead.
enum class StrictWhy {
    None,         // it did not: the fp32-tc math ran
    Disabled,     // TGEMM_FP32_TC=never
    Device,       // not compute capability 9.0, or built without sm_90a code
    Small,        // TGEMM_FP32_TC=auto: m, n or k below the size from which the mode gains
    Shape,        // alpha == 0, k outside the certificate's range [3, 32768], or a size limit of the kernels
    Special,      // Inf or NaN in A or B
    Uncertified,  // no N up to the maximum keeps every element within strict's bound,
                  // or K balancing would not be exact
    Workspace,    // its scratch memory could not be had
    Capture,      // the stream is being captured into a graph (the mode waits for its stream)
};

const char *strict_why_name(StrictWhy why);

struct MathRecord {
    bool tc = false;  // the fp32-tc math ran
    int moduli = 0;   // its N
    StrictWhy why = StrictWhy::None;
};

void record_math(const MathRecord &r);
// The last record; false where no call under the fp32-tc math has run yet.
bool last_math(MathRecord *r);
// How many records have been made: a caller that reads it before and after
// a call knows whether the call made one.
unsigned math_records();

}  // namespace tgemm
