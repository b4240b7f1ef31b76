! A plain Fortran program that calls SGEMM, the BLAS routine, and nothing
! else from tgemm. Build and run it with
!
!     gfortran sgemm_example.f90 $(pkg-config --libs tgemm)
!     ./a.out
!
! Calls whose work is large enough run on the GPU, smaller ones in the
! system's CPU BLAS, or the one TGEMM_CPU_BLAS names (see the README's
! "BLAS ABI" section). The
! inputs are small integers, so every product is exact in single precision
! and the result is checked with == (gfortran -Wextra warns about such
! comparisons; here they are meant). Prints PASS, or FAIL and stops with
! code 1.
program sgemm_example
    implicit none
    integer, parameter :: m = 5, n = 4, k = 3, ldc = m + 2
    real :: a(m, k), at(k, m), b(k, n), c(ldc, n), want(m, n)
    integer :: i, j, l
    logical :: ok

    do l = 1, k
        do i = 1, m
            a(i, l) = real(mod(i + 2 * l, 5) - 2)
        end do
    end do
    at = transpose(a)
    do j = 1, n
        do l = 1, k
            b(l, j) = real(mod(3 * l + j, 7) - 3)
        end do
    end do

    ! C := 2 * A * B + 0 * C; rows m+1 .. ldc of C must stay as they are.
    c = -99.0
    call sgemm('N', 'N', m, n, k, 2.0, a, m, b, k, 0.0, c, ldc)
    want = 2.0 * matmul(a, b)
    ok = all(c(1:m, :) == want) .and. all(c(m + 1:ldc, :) == -99.0)

    ! C := AT**T * B - C = A * B - C: A stored transposed, passed with 't'.
    call sgemm('t', 'N', m, n, k, 1.0, at, k, b, k, -1.0, c, ldc)
    want = matmul(a, b) - want
    ok = ok .and. all(c(1:m, :) == want) .and. all(c(m + 1:ldc, :) == -99.0)

    if (ok) then
        print '(a)', 'sgemm_example: PASS'
    else
        print '(a)', 'sgemm_example: FAIL'
        do i = 1, m
            print '(4f8.1, a, 4f8.1)', c(i, :), '   want', want(i, :)
        end do
        error stop 1
    end if
end program sgemm_example
