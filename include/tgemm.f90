! tgemm for Fortran: the native C API through ISO_C_BINDING.
!
! Compile this file together with your program (it is installed next to
! tgemm.h) and link with tgemm:
!
!     gfortran -c $(pkg-config --variable=includedir tgemm)/tgemm.f90
!     gfortran prog.f90 tgemm.o $(pkg-config --libs tgemm)
!
! Every C enum value is an integer(c_int) parameter of the same name.
! Dimensions and leading dimensions are integer(c_int64_t): pass literals as
! 4_c_int64_t or convert with int(n, c_int64_t). alpha and beta are
! real(c_float). tgemm_sgemm takes Fortran arrays (column-major, as
! Fortran stores them); tgemm_sgemm_ex takes type(c_ptr) operands (c_loc of
! a host array, or device memory) and a stream (c_null_ptr for the default
! stream). The C strings (tgemm_status_string, tgemm_last_error_detail,
! tgemm_version_string) come as type(c_ptr); tgemm_status_message(status),
! tgemm_error_message() and tgemm_version_text() give them as Fortran
! strings, tgemm_c_string(p) any of them. A program that only calls SGEMM
! needs none of this: it links with tgemm and calls SGEMM as usual.
module tgemm
    use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_ptr, c_char, c_size_t, &
                                           c_f_pointer, c_associated
    implicit none
    private :: c_int, c_int64_t, c_float, c_ptr, c_char, c_size_t, c_f_pointer, c_associated, c_strlen

    ! Version of the tgemm.h this module matches.
    integer(c_int), parameter :: TGEMM_VERSION_MAJOR = 0
    integer(c_int), parameter :: TGEMM_VERSION_MINOR = 3
    integer(c_int), parameter :: TGEMM_VERSION_PATCH = 0

    ! tgemm_operation
    integer(c_int), parameter :: TGEMM_OP_N = 111
    integer(c_int), parameter :: TGEMM_OP_T = 112
    integer(c_int), parameter :: TGEMM_OP_C = 113

    ! tgemm_layout
    integer(c_int), parameter :: TGEMM_LAYOUT_ROW_MAJOR = 101
    integer(c_int), parameter :: TGEMM_LAYOUT_COL_MAJOR = 102

    ! tgemm_math_t
    integer(c_int), parameter :: TGEMM_MATH_STRICT = 0
    integer(c_int), parameter :: TGEMM_MATH_FP32_TC = 1

    ! tgemm_status
    integer(c_int), parameter :: TGEMM_SUCCESS = 0
    integer(c_int), parameter :: TGEMM_ERROR_NO_DEVICE = 1
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_DEVICE = 2
    integer(c_int), parameter :: TGEMM_ERROR_OUT_OF_MEMORY = 3
    integer(c_int), parameter :: TGEMM_ERROR_CUDA = 4
    integer(c_int), parameter :: TGEMM_ERROR_UNSUPPORTED = 5
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_SETTING = 6
    integer(c_int), parameter :: TGEMM_ERROR_INTERNAL = 7
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_LAYOUT = 100
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_TRANSA = 101
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_TRANSB = 102
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_M = 103
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_N = 104
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_K = 105
    integer(c_int), parameter :: TGEMM_ERROR_NULL_A = 107
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_LDA = 108
    integer(c_int), parameter :: TGEMM_ERROR_NULL_B = 109
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_LDB = 110
    integer(c_int), parameter :: TGEMM_ERROR_NULL_C = 112
    integer(c_int), parameter :: TGEMM_ERROR_INVALID_LDC = 113

    interface
        ! C := alpha * op(A) * op(B) + beta * C, column-major; returns when C
        ! is written. See tgemm_sgemm() in tgemm.h.
        function tgemm_sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) &
                bind(c, name='tgemm_sgemm') result(status)
            import :: c_int, c_int64_t, c_float
            integer(c_int), value :: transa, transb
            integer(c_int64_t), value :: m, n, k
            real(c_float), value :: alpha
            real(c_float), intent(in) :: a(*)
            integer(c_int64_t), value :: lda
            real(c_float), intent(in) :: b(*)
            integer(c_int64_t), value :: ldb
            real(c_float), value :: beta
            real(c_float), intent(inout) :: c(*)
            integer(c_int64_t), value :: ldc
            integer(c_int) :: status
        end function tgemm_sgemm

        ! The same with a layout and a CUDA stream; operands by address.
        ! See tgemm_sgemm_ex() in tgemm.h.
        function tgemm_sgemm_ex(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream) &
                bind(c, name='tgemm_sgemm_ex') result(status)
            import :: c_int, c_int64_t, c_float, c_ptr
            integer(c_int), value :: layout, transa, transb
            integer(c_int64_t), value :: m, n, k
            real(c_float), value :: alpha
            type(c_ptr), value :: a
            integer(c_int64_t), value :: lda
            type(c_ptr), value :: b
            integer(c_int64_t), value :: ldb
            real(c_float), value :: beta
            type(c_ptr), value :: c
            integer(c_int64_t), value :: ldc
            type(c_ptr), value :: stream
            integer(c_int) :: status
        end function tgemm_sgemm_ex

        ! Frees the streams, pinned staging and device tile buffers that
        ! calls on host operands keep. See tgemm_release_resources() in tgemm.h.
        function tgemm_release_resources() bind(c, name='tgemm_release_resources') result(status)
            import :: c_int
            integer(c_int) :: status
        end function tgemm_release_resources

        ! A static C string describing a status; tgemm_status_message()
        ! returns it as a Fortran string.
        function tgemm_status_string(status) bind(c, name='tgemm_status_string') result(text)
            import :: c_int, c_ptr
            integer(c_int), value :: status
            type(c_ptr) :: text
        end function tgemm_status_string

        ! The reference SGEMM argument number a status names, or 0.
        function tgemm_status_argument(status) bind(c, name='tgemm_status_argument') result(arg)
            import :: c_int
            integer(c_int), value :: status
            integer(c_int) :: arg
        end function tgemm_status_argument

        ! The process's math (TGEMM_MATH_STRICT or TGEMM_MATH_FP32_TC) for the
        ! calls that start after it.
        function tgemm_set_math(math) bind(c, name='tgemm_set_math') result(status)
            import :: c_int
            integer(c_int), value :: math
            integer(c_int) :: status
        end function tgemm_set_math

        function tgemm_get_math() bind(c, name='tgemm_get_math') result(math)
            import :: c_int
            integer(c_int) :: math
        end function tgemm_get_math

        ! Details of the last error status returned to the calling thread,
        ! as a C string ('' after a success); tgemm_error_message() gives it
        ! as a Fortran string.
        function tgemm_last_error_detail() bind(c, name='tgemm_last_error_detail') result(detail)
            import :: c_ptr
            type(c_ptr) :: detail
        end function tgemm_last_error_detail

        ! The library's version, MAJOR * 10000 + MINOR * 100 + PATCH.
        function tgemm_version() bind(c, name='tgemm_version') result(version)
            import :: c_int
            integer(c_int) :: version
        end function tgemm_version

        ! The library's version as "MAJOR.MINOR.PATCH", a C string;
        ! tgemm_version_text() gives it as a Fortran string.
        function tgemm_version_string() bind(c, name='tgemm_version_string') result(version)
            import :: c_ptr
            type(c_ptr) :: version
        end function tgemm_version_string

        function c_strlen(s) bind(c, name='strlen') result(length)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: s
            integer(c_size_t) :: length
        end function c_strlen
    end interface

contains

    ! A NUL-terminated C string as a Fortran string ('' for a null pointer).
    function tgemm_c_string(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: chars(:)
        integer :: i, length
        if (.not. c_associated(p)) then
            s = ''
            return
        end if
        length = int(c_strlen(p))
        call c_f_pointer(p, chars, [length])
        allocate (character(len=length) :: s)
        do i = 1, length
            s(i:i) = chars(i)
        end do
    end function tgemm_c_string

    ! tgemm_status_string() as a Fortran string.
    function tgemm_status_message(status) result(s)
        integer(c_int), intent(in) :: status
        character(len=:), allocatable :: s
        s = tgemm_c_string(tgemm_status_string(status))
    end function tgemm_status_message

    ! tgemm_last_error_detail() as a Fortran string.
    function tgemm_error_message() result(s)
        character(len=:), allocatable :: s
        s = tgemm_c_string(tgemm_last_error_detail())
    end function tgemm_error_message

    ! tgemm_version_string() as a Fortran string.
    function tgemm_version_text() result(s)
        character(len=:), allocatable :: s
        s = tgemm_c_string(tgemm_version_string())
    end function tgemm_version_text

end module tgemm
