/* The bad calls of the test programs that define no error handlers
 * (preload_prog built with -DNO_HANDLERS, handlers_prog): sgemm_ with
 * m < 0, cblas_sgemm with layout 7, a row-major cblas_sgemm with N < 0,
 * each reported by tgemm's default handlers (SGEMM's argument 3, CBLAS's
 * 1 and 5). `before_layout` and `after_layout`, where not NULL, run around
 * the second call. Returns 1 when C came back untouched. Include it after
 * the declarations of sgemm_ and cblas_sgemm. */
#ifndef TGEMM_TESTS_BAD_CALLS_H
#define TGEMM_TESTS_BAD_CALLS_H

static inline int bad_calls_leave_c(void (*before_layout)(void), void (*after_layout)(void))
{
    float a[16], b[16], c[16];
    for (int i = 0; i < 16; ++i) {
        a[i] = b[i] = 1.0f;
        c[i] = -7.0f;
    }
    const float one = 1.0f;
    int m = -1, n = 2, k = 2, ld = 2;
    sgemm_("N", "N", &m, &n, &k, &one, a, &ld, b, &ld, &one, c, &ld, 1, 1);
    if (before_layout)
        before_layout();
    cblas_sgemm(7, 111, 111, 2, 2, 2, 1.0f, a, 2, b, 2, 1.0f, c, 2);
    if (after_layout)
        after_layout();
    cblas_sgemm(101, 111, 111, 2, -1, 2, 1.0f, a, 2, b, 2, 1.0f, c, 2);
    for (int i = 0; i < 16; ++i)
        if (c[i] != -7.0f)
            return 0;
    return 1;
}

#endif
