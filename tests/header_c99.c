/* The public header alone, as strict C99 (make test-headers). */
#include <tgemm.h>

int header_c99_uses_everything(void);

int header_c99_uses_everything(void)
{
    tgemm_int m = 1;
    tgemm_stream stream = 0;
    tgemm_layout layout = TGEMM_LAYOUT_COL_MAJOR;
    tgemm_operation op = TGEMM_OP_C;
    tgemm_status s = TGEMM_SUCCESS;
    const char *v = TGEMM_VERSION_STRING;
    (void)stream;
    (void)layout;
    (void)op;
    (void)s;
    (void)v;
    return (int)m + TGEMM_VERSION_NUMBER;
}
