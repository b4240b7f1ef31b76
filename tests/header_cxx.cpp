// The public header alone, as C++ (make test-headers): extern "C" linkage
// and no dependence on CUDA headers.
#include <tgemm.h>

#include <type_traits>

static_assert(std::is_same<tgemm_int, int64_t>::value, "64-bit dimensions");
static_assert(TGEMM_OP_T == 112, "CBLAS values");

int header_cxx_uses_everything()
{
    tgemm_status (*f)(tgemm_layout, tgemm_operation, tgemm_operation, tgemm_int, tgemm_int, tgemm_int, float,
                      const float *, tgemm_int, const float *, tgemm_int, float, float *, tgemm_int,
                      tgemm_stream) = tgemm_sgemm_ex;
    return f != nullptr ? TGEMM_VERSION_MAJOR : -1;
}
