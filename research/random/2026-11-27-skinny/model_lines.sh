#!/bin/bash
# model_lines.sh SHAPES: for each problem of a bench_random --shapes file, "== problem" and
# plan_dump --model's lines (the streaming and tiled models' times) and its plan line.
# Run from the repository root after `make build/bench/plan_dump`.
grep -v '^#' "$1" | sed 's/#.*//' | while read -r m n k ta tb lda ldb ldc al be; do
  [ -z "$m" ] && continue
  echo "== $m $n $k $ta $tb $lda $ldb $ldc $al $be"
  ${PLAN_DUMP:-build/bench/plan_dump} --shape "$m" "$n" "$k" "$ta" "$tb" "$lda" "$ldb" "$ldc" --beta "$be" --model
done
