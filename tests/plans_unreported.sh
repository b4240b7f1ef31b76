#!/bin/sh
# A device whose driver reports no SM clock, memory clock or bus width is
# planned as the device the dispatcher's factors were measured on, not with
# zero or infinite rates: on the H100 description the plans must be the
# same as with the clocks reported (make test-plans).
#
#   tests/plans_unreported.sh PLAN_DUMP
set -u
dump=$1
a=$("$dump" --device h100 --count 3000 --seed 3 | tail -n +2) || { echo "[  FAILED  ] plan_dump failed"; exit 1; }
b=$("$dump" --device h100 --count 3000 --seed 3 --unreported-clocks | tail -n +2) ||
    { echo "[  FAILED  ] plan_dump --unreported-clocks failed"; exit 1; }
if [ -n "$a" ] && [ "$a" = "$b" ]; then
    echo "[       OK ] unreported clocks: the measured device's rates, 3000 plans the same"
else
    echo "[  FAILED  ] unreported clocks change the plans (or no plans were made)"
    exit 1
fi
