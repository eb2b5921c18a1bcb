#!/bin/bash
# The reward is written before the allocation: past the limit the kernel kills a process of this verifier, and which
# one is its choice (some kernels, gVisor's among them, may take this script itself), so the script may not live to
# write it afterwards. Only an allocation the limit let through takes the reward back.
echo 1 > /logs/verifier/reward.txt
if python3 -c "b = bytearray(512 * 2**20); print(len(b))" >/dev/null 2>&1; then echo 0 > /logs/verifier/reward.txt; fi
