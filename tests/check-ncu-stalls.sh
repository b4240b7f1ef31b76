#!/bin/sh
# bench/ncu_stalls.py on a small made-up ncu source page (two kernels): the
# main loop is the instructions executed at least 90% as often as the most
# executed one, a predicated FFMA counts as FFMA, instructions are placed
# before (-i), in (+i) and after (>i) the loop, the "(Not Issued)" copies and
# the selected / not-selected states are not reported as stalls, and a
# reason is listed only where it has samples.
set -eu
here=$(dirname "$0")
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
cat > "$csv" <<'CSV'
"Kernel Name","first_kernel",""
"Address","Source","Instructions Executed","stall_no_inst","stall_wait","stall_selected","stall_not_selected","stall_no_inst (Not Issued)"
"0x1000","      MOV R1, c[0x0][0x28]","8","2","0","1","0","90"
"0x1010","      IADD3 R2, R2, 0x1, RZ","100","30","1","5","3","90"
"0x1020","      FFMA R4, R8, R12, R4","100","0","4","50","40","90"
"0x1030","  @P0 FFMA R5, R8, R13, R5","95","1","0","50","40","90"
"0x1040","  @P1 BRA 0x1010","100","0","9","5","3","90"
"0x1050","      EXIT","8","0","5","1","0","90"
"Kernel Name","second_kernel",""
"Address","Source","Instructions Executed","stall_no_inst","stall_wait","stall_selected","stall_not_selected","stall_no_inst (Not Issued)"
"0x2000","      FFMA R4, R8, R12, R4","10","0","0","3","0","0"
CSV
out=$(python3 "$here/../bench/ncu_stalls.py" --top 2 "$csv")
echo "$out"
want='== first_kernel
   instructions 6; main loop: 4 instructions (+0 to +3), 2 FFMA, each executed ~100 times
   samples per reason: selected 112, not_selected 86, no_inst 33, wait 19
   no_inst: 33 samples, 32 on these 2:
          +0      30  IADD3 R2, R2, 0x1, RZ
          -1       2  MOV R1, c[0x0][0x28]
   wait: 19 samples, 14 on these 2:
          +3       9  @P1 BRA 0x1010
          >1       5  EXIT
== second_kernel
   instructions 1; main loop: 1 instructions (+0 to +0), 1 FFMA, each executed ~10 times
   samples per reason: selected 3'
if [ "$out" != "$want" ]; then
    echo "check-ncu-stalls: unexpected output; wanted:" >&2
    echo "$want" >&2
    exit 1
fi
echo "check-ncu-stalls: OK"
