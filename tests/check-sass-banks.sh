#!/bin/sh
# bench/sass_banks.py on a small made-up SASS listing: the main loop is the
# narrowest loop holding nearly all the FFMAs (in the second function, the
# inner of two loops, as in the stream-K kernels), FFMAs outside it do not
# count, a .reuse operand is not read from the register file, and a function
# without a loop is left out.
set -eu
here=$(dirname "$0")
out=$(python3 "$here/../bench/sass_banks.py" <<'SASS'
        Function : _ZN5tgemm7kernels11sgemm_tiledINS0_9TileShapeINS0_11Tile64x64x8EEELb0ELb0ELb1ELb0EEEvNS_10GemmParamsENS_6SplitKE
        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x00000a0000017a02 */
        /*0010*/                   FFMA R4, R8.reuse, R12, R4 ;           /* 0x0000000c08047223 */
        /*0020*/                   FFMA R5, R8, R13, R5 ;                 /* 0x0000000d08057223 */
        /*0030*/                   FFMA R6, R9.reuse, R12, R7 ;           /* 0x0000000c09067223 */
        /*0040*/               @P0 BRA 0x10 ;                             /* 0xfffffffc00000947 */
        /*0050*/                   FFMA R4, R2, R4, R6 ;                  /* 0x0000000402047223 */
        /*0060*/                   EXIT ;                                 /* 0x000000000000794d */
        Function : _ZN5tgemm7kernels13sgemm_streamkINS0_9TileShapeINS0_11Tile64x64x8EEELb0ELb0ELb1EEEvNS_10GemmParamsENS_7StreamKE
        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x00000a0000017a02 */
        /*0010*/                   FFMA R4, R8, R10, R4 ;                 /* 0x0000000a08047223 */
        /*0020*/                   FFMA R4, R8.reuse, R12, R4 ;           /* 0x0000000c08047223 */
        /*0030*/                   FFMA R5, R8, R13, R5 ;                 /* 0x0000000d08057223 */
        /*0040*/                   FFMA R6, R9, R11, R7 ;                 /* 0x0000000b09067223 */
        /*0050*/                   FFMA R6, R9.reuse, R10, R7 ;           /* 0x0000000a09067223 */
        /*0060*/               @P0 BRA 0x20 ;                             /* 0xfffffff800000947 */
        /*0070*/               @P1 BRA 0x10 ;                             /* 0xfffffff400000947 */
        /*0080*/                   EXIT ;                                 /* 0x000000000000794d */
        Function : no_loop
        /*0000*/                   EXIT ;                                 /* 0x000000000000794d */
SASS
)
echo "$out"
lines=$(echo "$out" | wc -l)
row=$(echo "$out" | sed -n 2p | tr -s ' ')
row2=$(echo "$out" | sed -n 3p | tr -s ' ')
if [ "$lines" -ne 3 ] || [ "$row" != "64x64x8 0010 7 4 3 2 0.67" ] ||
   [ "$row2" != "streamk 64x64x8 001 9 5 4 3 0.75" ]; then
    echo "check-sass-banks: unexpected output (want two kernel rows: 64x64x8 0010 7 4 3 2 0.67," \
         "streamk 64x64x8 001 9 5 4 3 0.75)" >&2
    exit 1
fi
echo "check-sass-banks: OK"
