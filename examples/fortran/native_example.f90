! tgemm's native API from Fortran, through the ISO_C_BINDING module in
! tgemm.f90 (installed next to tgemm.h). Build it with
!
!     gfortran $(pkg-config --variable=includedir tgemm)/tgemm.f90 native_example.f90 $(pkg-config --libs tgemm)
!
! Multiplies small-integer matrices, so the product is exact. Passes with
! TGEMM_SUCCESS and the exact product, or with TGEMM_ERROR_NO_DEVICE and C
! unchanged when no GPU is visible (it says which); fails otherwise.
program native_example
    use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_loc, c_null_ptr
    use tgemm
    implicit none
    integer(c_int64_t), parameter :: m = 6, n = 5, k = 4
    real(c_float), target :: a(m, k), b(k, n), c(m, n), c2(m, n)
    real(c_float) :: want(m, n)
    integer(c_int) :: status, status_ex
    integer :: i, j

    do j = 1, int(k)
        do i = 1, int(m)
            a(i, j) = real(mod(i * j, 7) - 3, c_float)
        end do
    end do
    do j = 1, int(n)
        do i = 1, int(k)
            b(i, j) = real(mod(i + 2 * j, 5) - 2, c_float)
        end do
    end do
    c = -1.0_c_float
    c2 = -1.0_c_float
    want = matmul(a, b)

    print '(a, i0, 3a, i0)', 'native_example: tgemm ', tgemm_version(), ' (', tgemm_version_text(), &
        '), module for ', TGEMM_VERSION_MAJOR * 10000 + TGEMM_VERSION_MINOR * 100 + TGEMM_VERSION_PATCH
    status = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0_c_float, a, m, b, k, 0.0_c_float, c, m)
    ! The same product with the layout/stream entry point, operands by address.
    status_ex = tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0_c_float, &
                               c_loc(a), m, c_loc(b), k, 0.0_c_float, c_loc(c2), m, c_null_ptr)

    if (status == TGEMM_SUCCESS .and. status_ex == TGEMM_SUCCESS) then
        if (all(c == want) .and. all(c2 == want)) then
            print '(a)', 'native_example: PASS (TGEMM_SUCCESS, the exact product, computed on the GPU)'
            stop
        end if
        print '(a)', 'native_example: FAIL (TGEMM_SUCCESS but a wrong product)'
    else if (status == TGEMM_ERROR_NO_DEVICE .and. status_ex == TGEMM_ERROR_NO_DEVICE) then
        if (all(c == -1.0_c_float) .and. all(c2 == -1.0_c_float)) then
            print '(a)', 'native_example: PASS (TGEMM_ERROR_NO_DEVICE: ' // tgemm_status_message(status) // &
                ': ' // tgemm_error_message() // '; C unchanged)'
            stop
        end if
        print '(a)', 'native_example: FAIL (TGEMM_ERROR_NO_DEVICE but C was written)'
    else
        print '(a, i0, a, i0, 4a)', 'native_example: FAIL (statuses ', status, ' and ', status_ex, ': ', &
            tgemm_status_message(status_ex), ': ', tgemm_error_message()
    end if
    error stop 1
end program native_example
