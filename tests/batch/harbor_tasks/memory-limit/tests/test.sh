#!/bin/bash
# Three times over the task's 128 MiB: each time the kernel kills that python3 alone and the test goes on, as in a
# container with a memory limit.
killed=0
for attempt in 1 2 3; do
    python3 -c "b = bytearray(512 * 2**20); print(len(b))" >/dev/null 2>&1 || killed=$((killed + 1))
done
if [ "$killed" = 3 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
