#!/bin/bash
if python3 -c "b = bytearray(512 * 2**20); print(len(b))" >/dev/null 2>&1; then echo 0 > /logs/verifier/reward.txt; else echo 1 > /logs/verifier/reward.txt; fi
